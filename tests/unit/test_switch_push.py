"""Pure parts of the push: QoS split, intended config, remediation order and round trip."""

from __future__ import annotations

from conftest import ECENET
from qoslab.ios import RunningConfig, load_config
from qoslab.ios.configdiff import intended_config, merge_profile, order_for_ios, remediation
from qoslab.ios.qoswalk import normalized_qos, split_qos
from qoslab.profiles import load_profile, render
from qoslab.topology import load_topology

TOPO = load_topology(ECENET)


def test_split_keeps_non_qos_lines_and_interface_context():
    text = "hostname S\nmls qos\ninterface GigabitEthernet1/0/1\n description uplink\n priority-queue out\n" \
           "class-map match-all c\n match access-group 112\nip http server\n"
    other, qos = split_qos(text)
    assert other == ["hostname S", "interface GigabitEthernet1/0/1", " description uplink", "ip http server"]
    assert qos == ["mls qos", "interface GigabitEthernet1/0/1", " priority-queue out", "class-map match-all c",
                   " match access-group 112"]


def test_intended_config_merges_interface_lines():
    base = RunningConfig.factory("Switch", TOPO.switch.ports).render()
    want = intended_config(base, render(load_profile("thesis"), TOPO))
    assert want.count("interface GigabitEthernet1/0/1\n") == 1
    assert "interface GigabitEthernet1/0/1\n srr-queue bandwidth share 97 1 1 1\n" in want


def test_merge_profile_puts_interface_lines_in_their_sections_and_the_rest_at_the_end():
    """The one merge both the whole-QoS view (intended_config) and the ownership plan use: an
    interface's children go into the running-config's section of it, an interface it did not
    show comes after the rest, global lines at the end, ``end`` is dropped."""
    kept = ["hostname S", "interface GigabitEthernet1/0/1", " description up", "interface GigabitEthernet1/0/2",
            "end"]
    profile = ["mls qos", "interface GigabitEthernet1/0/2", " mls qos trust dscp  ", "interface GigabitEthernet1/0/9",
               " priority-queue out", "class-map match-all c", " match access-group 112"]
    assert merge_profile(kept, profile).splitlines() == [
        "hostname S", "interface GigabitEthernet1/0/1", " description up", "interface GigabitEthernet1/0/2",
        " mls qos trust dscp", "interface GigabitEthernet1/0/9", " priority-queue out", "mls qos",
        "class-map match-all c", " match access-group 112"]
    assert merge_profile([], []) == "\n"


def test_remediation_round_trip_through_the_interpreter():
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    base = rc.render()
    for name in ("thesis", "rmi-ports", "trust-dscp", "fifo", "thesis"):
        want = intended_config(rc.render(), render(load_profile(name), TOPO))
        lines = remediation(rc.render(), want)
        assert load_config("\n".join(lines), rc) == []
        assert normalized_qos(rc.render()) == normalized_qos(want), name
        assert remediation(rc.render(), want) == []  # a second push changes nothing
    back = remediation(rc.render(), base)
    load_config("\n".join(back), rc)
    assert normalized_qos(rc.render()) == normalized_qos(base) == []


def test_order_puts_references_after_their_targets():
    lines = ["interface GigabitEthernet1/0/1", "  service-policy input p", "no policy-map old",
             "policy-map p", "  class c", "    set ip dscp 40", "class-map match-all c", "  match access-group 112",
             "access-list 112 permit ip any any", "interface GigabitEthernet1/0/2", "  no service-policy input old"]
    out = order_for_ios(lines)
    idx = {l.strip(): i for i, l in enumerate(out)}
    assert idx["no service-policy input old"] < idx["no policy-map old"]
    assert idx["access-list 112 permit ip any any"] < idx["class-map match-all c"] < idx["policy-map p"] \
        < idx["service-policy input p"]


def test_replacement_removal_goes_before_the_new_line():
    lines = ["monitor session 1 destination interface Gi1/0/21 encapsulation replicate",
             "no monitor session 1 destination interface Gi1/0/21"]
    assert order_for_ios(lines) == list(reversed(lines))
