"""The Arista EOS platform driver (issue 44): the profile's 3750 terms in EOS terms (traffic
classes, strict and round-robin tx-queues, drop thresholds equal to the emulated 3750 queue's),
refusals with file and line, the CLI, and the queue counters over a real EOS recording and the
JSON forms eAPI returns, with hostile outputs refused by line or field."""

from __future__ import annotations

import contextlib
import io
import json
import sys

import pytest

from conftest import ECENET, REPO
from qoslab.errors import QoslabError
from qoslab.ios import RunningConfig, load_config, qos_model
from qoslab.platforms import get_platform
from qoslab.platforms.arista_eos.counters import parse_eos_counters
from qoslab.platforms.arista_eos.mapping import TC_OF_QUEUE, drop_precedences, map_lines, tx_queues
from qoslab.profiles import load_profile
from qoslab.profiles.render import render
from qoslab.topology import load_topology
from qoslab.vswitch.tccompile import port_queue_limits

DATA = REPO / "tests" / "data" / "platforms" / "arista_eos"
EOS = get_platform("arista_eos")


def _profile(tmp_path, body: str):
    f = tmp_path / "p.yaml"
    f.write_text(body)
    return load_profile(f)


def test_thesis_queues_map_to_traffic_classes_eos_already_uses():
    topo = load_topology(ECENET)
    txq = {t.tc: t for t in tx_queues(load_profile("thesis"), topo)}
    assert sorted(txq) == [1, 2, 4, 5] and TC_OF_QUEUE == {1: 5, 2: 1, 3: 2, 4: 4}
    assert txq[5].strict and txq[5].lines() == []  # the expedite queue: EOS's default strict priority
    assert [t.percent for t in (txq[1], txq[2], txq[4])] == [33, 33, 33]
    assert txq[1].lines()[:2] == ["no priority", "bandwidth percent 33"]
    # DSCP 40-47 (TC 5) and 0-7 (TC 1) are where EOS puts them anyway: no map lines for them
    assert not any(f" {d} " in f" {line.split(' to ')[0]} " for line in map_lines(load_profile("thesis"), topo)
                   for d in (0, 7, 40, 46))


@pytest.mark.parametrize("name", ["thesis", "police-flood", "rmi-ports", "trust-dscp"])
def test_drop_thresholds_equal_the_emulated_3750_queue_limits(name):
    """Each tx-queue's tail-drop bytes (or none: the whole port buffer) equal the bfifo limit the
    virtual 3750 builds for the same profile (tccompile.wtd_limits)."""
    topo, prof = load_topology(ECENET), load_profile(name)
    rc = RunningConfig.factory("s", topo.switch.ports)
    assert load_config("\n".join(render(prof, topo)), rc) == []
    limits = port_queue_limits(qos_model(rc), topo, "Gi1/0/1")
    for t in tx_queues(prof, topo):
        want = limits[t.queue - 1].limit_bytes
        got = t.limits[0][1] if t.limits else topo.buffers.switch_port_bytes
        assert got == min(want, topo.buffers.switch_port_bytes), (t, want)


def test_mixed_wtd_thresholds_become_drop_precedences(tmp_path):
    prof = _profile(tmp_path, "name: mixed\nmls_qos: true\negress:\n  apply_to: workload\n  share: [10, 20, 30, 40]\n"
                              "  queue_set: 1\nqueue_sets:\n  1: {buffers: [25, 25, 25, 25], thresholds: "
                              "{2: [20, 60, 100, 100]}}\ndscp_output_map:\n  2: [10]\n")
    topo = load_topology(ECENET)
    dps = drop_precedences(prof, topo)
    assert dps[10][0] == 0 and dps[0][0] == 1  # DSCP 10 at threshold 3 (the queue's maximum), DSCP 0 at 1
    q1 = next(t for t in tx_queues(prof, topo) if t.tc == 1)
    assert q1.lines() == ["no priority", "bandwidth percent 20",
                          "random-detect drop minimum-threshold 32768 bytes maximum-threshold 32768 bytes "
                          "drop-probability 100",
                          "random-detect drop drop-precedence 1 minimum-threshold 6553 bytes maximum-threshold "
                          "6553 bytes drop-probability 100"]
    assert map_lines(prof, topo)[:2] == ["qos map dscp 10 to traffic-class 1",
                                        "qos map dscp 0 1 2 3 4 5 6 7 8 9 11 12 13 14 15 to traffic-class 1 drop-precedence 1"]
    lines = EOS.render(prof, topo)
    assert " ".join(lines).count("tx-queue 5") == 4  # no expedite: queue 1 (TC 5) is round robin too


def test_shape_weights_become_percent_and_too_small_ones_are_refused_with_file_and_line(tmp_path):
    topo = load_topology(ECENET)
    ok = _profile(tmp_path, "name: s\nmls_qos: true\negress:\n  apply_to: workload\n  shape: [0, 25, 0, 3]\n")
    shaped = {t.tc: t.shape_percent for t in tx_queues(ok, topo)}
    assert shaped == {1: 4, 2: None, 4: 33, 5: None}
    bad = _profile(tmp_path, "name: s\nmls_qos: true\negress:\n  apply_to: workload\n  shape: [0, 250, 0, 0]\n")
    with pytest.raises(QoslabError, match=r"p.yaml:5: egress.shape: arista_eos: shape weight 250"):
        EOS.render(bad, topo)


def test_refusals_name_the_field_or_the_topology(tmp_path):
    with pytest.raises(QoslabError, match=r"p.yaml:4: rules\[0\].name: rule name 'class-default' is reserved"):
        _profile(tmp_path, "name: d\nmls_qos: true\nrules:\n  - {name: class-default, kind: any, set_dscp: 8}\n")
    stacked = load_topology(ECENET, switch={"model": "DCS-7280SR3-48YC8", "hostname": "leaf1",
                                            "ports": ["Gi1/0/1-22", "Gi2/0/1"]})
    with pytest.raises(QoslabError, match=r"topology ecenet: 'Gi2/0/1' has no EOS counterpart"):
        EOS.render(load_profile("fifo"), stacked)


def test_marking_only_and_trust_cos_render_what_eos_needs(tmp_path):
    prof = _profile(tmp_path, "name: m\nmls_qos: true\ntrust: {workload: cos}\nrules:\n"
                              "  - {name: bulk, kind: ports, protocol: udp, ports: [9000], set_dscp: 10}\n")
    lines = EOS.render(prof, load_topology(ECENET))
    assert lines[:3] == ["ip access-list QOSLAB-bulk", "   10 permit udp any any eq 9000",
                         "   20 permit udp any eq 9000 any"]
    assert "      set traffic-class 1" in lines  # DSCP 10 queues with DSCP 0 (the 3750's queue 2): TC 1
    assert not [line for line in lines if "trust" in line or "tx-queue" in line or line.startswith("qos map")]


@pytest.mark.parametrize(("first", "then"), [("rr", "police-flood"), ("police-flood", "rr"), ("rr", "fifo"),
                                             ("thesis", "rr")])
def test_pushes_between_profiles_send_only_lines_eos_takes(tmp_path, first, then):
    """From any profile to any other, the push's remediation (hier-config's EOS driver, with the
    platform's negation fixes) is taken line by line by the EOS interpreter and leaves exactly the
    second profile's QoS lines: a round-robin tx-queue with drop thresholds turning strict again
    is undone with ``priority strict`` (hier-config writes ``priority``, which EOS refuses)."""
    from qoslab.eos import EosConfig, Mode, eos_port, interpret
    from qoslab.eos import load_config as eos_load
    from qoslab.ios.configdiff import intended_config, remediation
    from qoslab.ios.qoswalk import normalized_qos

    rr = _profile(tmp_path, "name: rr\nmls_qos: true\negress:\n  apply_to: workload\n  share: [40, 30, 20, 10]\n"
                            "  queue_set: 2\nqueue_sets:\n  2: {buffers: [50, 40, 5, 5]}\n")
    prof = {"rr": rr, **{n: load_profile(n) for n in ("police-flood", "fifo", "thesis")}}
    topo, rules = load_topology(ECENET), EOS.qos_rules
    cfg = EosConfig.factory("s", [eos_port(p) for p in topo.switch.ports])
    assert eos_load("\n".join(EOS.render(prof[first], topo)), cfg) == []
    run, want = cfg.render(), EOS.render(prof[then], topo)
    lines = remediation(run, intended_config(run, want, rules), rules.hier_platform, rules.negations)
    mode = Mode()
    for line in lines:
        mode = interpret(cfg, mode, line)  # raises EosError for a line EOS refuses
    goal = EosConfig.factory("s", [eos_port(p) for p in topo.switch.ports])
    assert eos_load("\n".join(want), goal) == []
    assert normalized_qos(cfg.render(), rules) == normalized_qos(goal.render(), rules)


def test_cli_renders_the_thesis_for_eos():
    from qoslab.cli import main

    out, argv = io.StringIO(), sys.argv
    sys.argv = ["qoslab", "switch", "render", "thesis", "--platform", "arista_eos"]
    try:
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
            main()
    finally:
        sys.argv = argv
    assert e.value.code in (0, None)
    assert out.getvalue() == (REPO / "switch-configs" / "rendered" / "arista_eos" / "thesis-ecenet.eos").read_text()


# --------------------------------------------------------------------------------------------- counters
def test_counters_of_a_real_7500r_recording():
    """ntc-templates' recorded ``show interfaces counters queue detail`` egress table (a 7500R's
    modular ports Et3/1/1 ..., see the README): every row lands in its port and traffic class."""
    got = parse_eos_counters((DATA / "show_interfaces_counters_queue_detail_egress.raw").read_text())
    assert len(got) == 18 and "Ethernet3/9/1" in got
    p = got["Ethernet3/9/1"]
    assert p.queues == [f"TC{n}" for n in range(8)]
    assert p.enqueued_packets is not None and p.enqueued_bytes is not None
    assert p.enqueued_packets[1] == [64978] and p.enqueued_bytes[1] == [7248602]
    assert p.enqueued_packets[7] == [876430] and p.enqueued_bytes[7] == [238170896]
    assert got["Ethernet4/2/1"].dropped_packets == [[0]] * 7 + [[1]]
    assert got["Ethernet4/2/1"].dropped_bytes == [[0]] * 7 + [[110]]
    raw = (DATA / "show_interfaces_counters_queue_detail_egress.raw").read_text().splitlines()
    rows = [r.split() for r in raw if r.startswith("Et")]
    assert sum(int(r[4]) for r in rows) == sum(sum(x[0] for x in c.enqueued_packets or [])
                                                                for c in got.values())


def test_counters_json_voq_and_egress_forms():
    doc = json.loads((DATA / "show_interfaces_counters_queue_detail.json").read_text())
    got = parse_eos_counters(json.dumps(doc))["GigabitEthernet1/0/1"]
    # VOQ: TC1 enqueued 9120, dropped 321; egress: ucast + mcast drops of TC1 over DP0 and DP1
    assert got.enqueued_packets is not None and got.enqueued_packets[1] == [9120]
    assert got.dropped_packets is not None and got.dropped_packets[1] == [321 + 2 + 1]
    assert got.enqueued_packets[7] == [40 + 3]  # TC7: no VOQ entry, the egress queues' counts


@pytest.mark.parametrize(("text", "message"), [
    ("Egress Queue Counters\nEt1   TC1   DP0-3   UC   1   2   3\n", "line 2: cannot read"),
    ("Et1   TC1   DP0-3   UC   1   2   3   4\n", "line 1: cannot read"),
    ("Egress Queue Counters\nEt1   TC9   DP0-3   UC   1   2   3   4\n", "line 2: cannot read"),
    ("Egress Queue Counters\nXyz1   TC1   DP0-3   UC   1   2   3   4\n", "line 2: cannot read"),
    ("% Invalid input (at token 2: 'countrs')\n", "line 1: cannot read"),
    ('{"ingressVoqCounters": {"interfaces": {"Ethernet1": {"trafficClasses": {"TC0-3": {"enqueuedPackets": 1, '
     '"enqueuedBytes": 1, "droppedPackets": 0, "droppedBytes": 0}}}}}}', "traffic class 'TC0-3'"),
    ('{"egressQueueCounters": {"interfaces": {"Ethernet1": {"ucastQueues": {"trafficClasses": {"TC0": '
     '{"dropPrecedences": {"DP0": {"droppedPackets": 0}}}}}}}}}', "expected the integer counters"),
    ('{"interfaces": {}}', "without ingressVoqCounters"),
    ('{"ingressVoqCounters": ', "not JSON"),
])
def test_hostile_counter_outputs_are_refused_by_line_or_field(text, message):
    with pytest.raises(QoslabError, match=message):
        parse_eos_counters(text)


def test_counters_commands_and_an_unlisted_port():
    assert EOS.counters_commands(["GigabitEthernet1/0/3"]) == ["show interfaces Ethernet3 counters queue | json"]
    none = EOS.no_queues()
    assert none.queues == [f"TC{n}" for n in range(8)] and none.dropped_packets is None
