"""The IOS interpreter: commands, sub-modes, no-forms, IOS error carets, Appendix B, QoS model."""

from __future__ import annotations

import pytest

from conftest import APPENDIX_B
from qoslab.ios import (
    DEFAULT_DSCP_OUTPUT_QUEUE,
    IosError,
    Mode,
    RunningConfig,
    ace_text,
    interpret,
    load_config,
    qos_model,
)
from qoslab.ios.acl import Ports
from qoslab.portnames import expand_ports


def fresh() -> RunningConfig:
    return RunningConfig.factory("Switch", expand_ports("Gi1/0/1-24"))


def run(rc, *lines):
    mode = Mode()
    for l in lines:
        mode = interpret(rc, mode, l)
    return mode


def test_invalid_priority_queue_line_gets_the_caret_under_the_second_input():
    line = "mls qos srr-queue input priority-queue input 2 bandwidth 40"
    with pytest.raises(IosError) as e:
        interpret(fresh(), Mode(), line)
    assert e.value.kind == "invalid" and line[e.value.column:].startswith("input 2")
    assert e.value.column == line.index("input 2")
    prompt = "Switch(config)#"
    text = e.value.render(len(prompt))
    assert text.splitlines()[0] == " " * (len(prompt) + line.index("input 2")) + "^"
    assert text.splitlines()[1] == "% Invalid input detected at '^' marker."


def test_incomplete_and_unknown_commands():
    with pytest.raises(IosError) as e:
        interpret(fresh(), Mode(), "mls qos queue-set output 2 buffers 50 40")
    assert e.value.kind == "incomplete"
    with pytest.raises(IosError) as e:
        interpret(fresh(), Mode(), "frobnicate the switch")
    assert e.value.column == 0
    with pytest.raises(IosError) as e:
        interpret(fresh(), Mode(), "interface GigabitEthernet1/0/99")
    assert e.value.column == len("interface ")


def test_modes_and_submode_fallback():
    rc = fresh()
    m = run(rc, "class-map c1", "class-map c2", "policy-map p", "class c1", "set ip dscp 40", "class c2", "set dscp 46")
    assert m.name == "config-pmap-c" and m.sub == "c2"
    assert [s.header for s in rc.policy_maps["p"].subsections] == ["class c1", "class c2"]
    # `set ip dscp` is kept as `set dscp` (OL-21521-01), whichever form was typed
    assert [s.children for s in rc.policy_maps["p"].subsections] == [["set dscp 40"], ["set dscp 46"]]
    # a global command inside a sub-mode leaves it, as on IOS
    m = run(rc, "interface Gi1/0/3", "priority-queue out", "class-map match-any web", "match ip dscp 10 12")
    assert m.name == "config-cmap" and rc.interfaces["Gi1/0/3"].children == ["priority-queue out"]
    assert interpret(rc, m, "end").name == "exec"


def test_no_forms_remove_with_or_without_arguments():
    rc = fresh()
    run(rc, "mls qos", "access-list 112 permit ip host 198.18.0.1 host 198.18.0.2", "interface Gi1/0/1",
        "srr-queue bandwidth share 97 1 1 1", "service-policy input p", "monitor session 1 source interface Gi1/0/1")
    run(rc, "interface Gi1/0/1", "no srr-queue bandwidth share 97 1 1 1", "no service-policy input")
    assert rc.interfaces["Gi1/0/1"].children == []
    run(rc, "no access-list 112 permit ip host 198.18.0.1 host 198.18.0.2", "no mls qos", "no monitor session 1")
    assert rc.acls == {} and "mls qos" not in rc.globals_ and rc.monitor == []


def test_appendix_b_loads_with_exactly_the_invalid_lines_rejected():
    rc = fresh()
    errors = load_config(APPENDIX_B.read_text(), rc)
    bad = [e.line.split(": ", 1)[1] for e in errors]
    assert bad == ["mls qos srr-queue input priority-queue input 2 bandwidth 40",
                   "interface GigabitEthernet1/0/1.24",        # no subinterfaces on an L2 port
                   "srr-queue bandwidth share 97 1 1 1", "queue-set 2", "priority-queue out"]  # its body
    q = qos_model(rc)
    assert q.enabled and len(q.acls) == 13 and len(q.class_maps) == 12
    assert [c.set_dscp for c in q.policy_maps["police-jp"]] == [40] * 12
    for p in ("Gi1/0/1", "Gi1/0/2", "Gi1/0/3", "Gi1/0/4"):
        i = q.interfaces[p]
        assert i.service_policy_in == "police-jp" and i.priority_queue_out and i.queue_set == 2
        assert i.share == [97, 1, 1, 1]
    assert q.interfaces["Gi1/0/5"].service_policy_in is None
    assert q.queue_sets[2].buffers == [50, 40, 5, 5]
    assert q.monitor == {1: {"sources": [("Gi1/0/1", "both")], "destinations": ["Gi1/0/21"]},
                         2: {"sources": [("Gi1/0/2", "both")], "destinations": ["Gi1/0/22"]}}
    # what a tc compiler cannot do is listed, not dropped silently
    assert "mls qos srr-queue input buffers 70 30" in q.unsupported


def test_defaults_of_a_factory_switch():
    q = qos_model(fresh())
    assert not q.enabled
    assert q.dscp_output_queue == DEFAULT_DSCP_OUTPUT_QUEUE
    assert [DEFAULT_DSCP_OUTPUT_QUEUE[d] for d in (0, 15, 16, 31, 32, 39, 40, 47, 48, 63)] == [2, 2, 3, 3, 4, 4, 1, 1, 4, 4]
    i = q.interfaces["Gi1/0/7"]
    assert i.trust is None and i.share == [25, 25, 25, 25] and i.shape == [25, 0, 0, 0] and i.queue_set == 1
    assert q.queue_sets[1].buffers == [25, 25, 25, 25]


def test_running_config_round_trips():
    rc = fresh()
    load_config(APPENDIX_B.read_text(), rc)
    again = fresh()
    assert load_config(rc.render(), again) == []
    assert again.render() == rc.render()


def test_output_dscp_map_and_named_acl():
    rc = fresh()
    run(rc, "mls qos srr-queue output dscp-map queue 1 threshold 3 26", "ip access-list extended rmi",
        "permit tcp any any eq 1099", "permit tcp any eq 1099 any")
    q = qos_model(rc)
    assert q.dscp_output_queue[26] == 1 and q.dscp_output_queue[25] == 3
    assert [a.dport for a in q.acls["rmi"]] == [Ports("eq", 1099), None] and q.acls["rmi"][1].sport == Ports("eq", 1099)
    with pytest.raises(IosError):
        run(rc, "ip access-list extended x", "permit tcp any eq http any")


@pytest.mark.parametrize("name", ["thesis", "police-flood", "rmi-ports", "trust-dscp", "fifo"])
def test_rendered_profile_lines_are_what_ios_shows(name):
    """Every line the profile renderer emits appears verbatim (indentation aside) in the
    running-config that results: what IOS shows is what qoslab renders (``set dscp``, not ``set ip
    dscp``, OL-21521-01), so a second push (Ansible ``ios_config src``, hier-config) changes nothing."""
    from conftest import ECENET
    from qoslab.profiles import load_profile, render
    from qoslab.topology import load_topology

    topo = load_topology(ECENET)
    lines = render(load_profile(name), topo)
    rc = RunningConfig.factory("Switch", topo.switch.ports)
    assert load_config("\n".join(lines), rc) == []
    shown = {l.strip() for l in rc.render().splitlines()}
    assert [l for l in lines if l.strip() not in shown] == []


def test_exit_leaves_each_mode_for_its_parent():
    """``exit``: a policy-map class to its policy-map, other sub-modes to global configuration,
    global configuration to EXEC (IOS)."""
    rc = fresh()
    m = run(rc, "class-map c", "policy-map p", "class c")
    assert interpret(rc, m, "exit").name == "config-pmap"
    assert interpret(rc, run(rc, "interface Gi1/0/2"), "exit").name == "config"
    assert interpret(rc, Mode(), "exit").name == "exec"


def test_acl_port_ranges_parse_render_and_reject_a_reversed_range():
    """``range LO HI`` (inclusive) on either side of a TCP/UDP ACE, as Open MPI's TCP BTL port
    range is classified (issue 34); HI below LO and a missing HI are rejected like bad ports."""
    rc = fresh()
    run(rc, "ip access-list extended mpi", "permit tcp any any range 7400 7431", "permit tcp any range 7400 7431 any",
        "exit", "access-list 150 permit udp host 198.18.0.1 range 5000 5000 any eq 53")
    q = qos_model(rc)
    a, b = q.acls["mpi"]
    assert (a.dport, a.sport) == (Ports("range", 7400, 7431), None)
    assert (b.sport, b.dport) == (Ports("range", 7400, 7431), None)
    assert (q.acls["150"][0].sport, q.acls["150"][0].dport) == (Ports("range", 5000, 5000), Ports("eq", 53))
    assert ace_text(a) == "permit tcp any any range 7400 7431"
    assert ace_text(q.acls["150"][0]) == "permit udp host 198.18.0.1 range 5000 5000 any eq domain"  # IOS's name
    again = fresh()
    assert load_config(rc.render(), again) == [] and again.render() == rc.render()
    for bad in ("permit tcp any any range 7431 7400", "permit tcp any any range 7400", "permit ip any any range 1 2"):
        with pytest.raises(IosError):
            run(rc, "ip access-list extended y", bad)
