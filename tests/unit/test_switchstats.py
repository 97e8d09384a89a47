"""TextFSM templates (switch-configs/textfsm/) on the virtual switch's renderers and on real
3560/3750 samples (tests/data/ios-samples/, sources in its README), through qoslab.platforms.counters."""

from __future__ import annotations

import pytest

from conftest import REPO
from qoslab.errors import QoslabError
from qoslab.ios.show_qos import (
    PortCounters,
    QueueSet,
    default_dscp_output_q,
    dscp_output_q_from_config,
    queue_sets_from_config,
    render_dscp_output_q,
    render_queue_set,
    render_statistics,
)
from qoslab.platforms.counters import (
    parse_dscp_output_q,
    parse_policy_map_interface,
    parse_queue_set,
    parse_statistics,
    policer_deltas,
    queue_deltas,
    read_statistics,
)
from qoslab.vswitch.dialects.catalyst3750.show_mqc import ClassMapView, PolicyView, render_policy_map_interface
from qoslab.vswitch.facts import ClassCounters

SAMPLES = REPO / "tests" / "data" / "ios-samples"


def _counters(seed: int) -> PortCounters:
    c = PortCounters()
    c.enqueued = [[seed * 100 + q * 10 + t for t in range(3)] for q in range(4)]
    c.dropped = [[seed + q * 3 + t for t in range(3)] for q in range(4)]
    c.dscp_in = [seed * d for d in range(64)]
    c.dscp_out = [d + 7 for d in range(64)]
    c.cos_in, c.cos_out = [seed + i for i in range(8)], [i * i for i in range(8)]
    c.policer_in, c.policer_out = 123456789, seed
    return c


def test_statistics_round_trip_through_the_template():
    text = render_statistics("GigabitEthernet1/0/1", _counters(3)) + render_statistics("GigabitEthernet1/0/2",
                                                                                      _counters(5))
    got = parse_statistics(text)
    assert got == {"GigabitEthernet1/0/1": _counters(3), "GigabitEthernet1/0/2": _counters(5)}


def test_statistics_real_filtered_sample_gives_policer_and_zero_queues():
    got = parse_statistics((SAMPLES / "c3560-statistics-include-policer.txt").read_text())
    assert set(got) == {"GigabitEthernet0/1", "GigabitEthernet0/2"}
    assert got["GigabitEthernet0/1"] == PortCounters()


def test_statistics_header_without_suffix_and_garbage_is_a_clear_error():
    text = render_statistics("GigabitEthernet1/0/7", _counters(1)).replace(" (All statistics are in packets)", "")
    assert parse_statistics(text)["GigabitEthernet1/0/7"] == _counters(1)
    with pytest.raises(QoslabError, match="cisco_ios_show_mls_qos_interface_statistics.textfsm"):
        parse_statistics("GigabitEthernet1/0/1\n  dscp: incoming\n  bogus line\n")


def test_queue_deltas_and_policer_deltas():
    before, after = _counters(1), _counters(1)
    after.dropped[1][0] += 40
    after.enqueued[3][2] += 7
    after.policer_out += 9
    rows = queue_deltas({"Gi": before}, {"Gi": after})
    assert [r for r in rows if r["dropped"] or r["enqueued"]] == [
        {"port": "Gi", "queue": 2, "enqueued": 0, "dropped": 40}, {"port": "Gi", "queue": 4, "enqueued": 7, "dropped": 0}]
    assert policer_deltas({"Gi": before}, {"Gi": after}) == {"Gi": (0, 9)}


def test_queue_set_real_sample():
    got = parse_queue_set((SAMPLES / "c3560-queue-set.txt").read_text())
    assert got[1] == QueueSet([10, 10, 26, 54], [138, 138, 36, 20], [138, 138, 77, 50], [92, 92, 100, 67],
                              [138, 400, 318, 400])
    assert got[2].buffers == [16, 6, 17, 61] and got[2].maximum == [149, 235, 272, 242]


def test_queue_set_virtual_matches_the_config_lines_of_the_real_sample():
    # the sample's own author gives the config behind it: the virtual switch renders it identically
    lines = ["mls qos queue-set output 1 threshold 1 138 138 92 138", "mls qos queue-set output 1 threshold 2 138 138 92 400",
             "mls qos queue-set output 1 threshold 3 36 77 100 318", "mls qos queue-set output 1 threshold 4 20 50 67 400",
             "mls qos queue-set output 1 buffers 10 10 26 54",
             "mls qos queue-set output 2 threshold 1 149 149 100 149", "mls qos queue-set output 2 threshold 2 118 118 100 235",
             "mls qos queue-set output 2 threshold 3 41 68 100 272", "mls qos queue-set output 2 threshold 4 42 72 100 242",
             "mls qos queue-set output 2 buffers 16 6 17 61"]
    ours = render_queue_set(queue_sets_from_config(lines))
    real = (SAMPLES / "c3560-queue-set.txt").read_text()
    assert [l.rstrip() for l in ours.splitlines()] == [l.rstrip() for l in real.splitlines()]
    assert parse_queue_set(ours) == parse_queue_set(real)


def test_dscp_output_q_real_samples():
    assert parse_dscp_output_q((SAMPLES / "c3750-dscp-output-q-default.txt").read_text()) == default_dscp_output_q()
    tuned = parse_dscp_output_q((SAMPLES / "c3560-dscp-output-q.txt").read_text())
    assert tuned[46] == (1, 3) and tuned[10] == (4, 2) and tuned[8] == (4, 1) and tuned[0] == (4, 3)


def test_dscp_output_q_virtual_default_equals_the_real_3750_default():
    ours = render_dscp_output_q(default_dscp_output_q())
    real = (SAMPLES / "c3750-dscp-output-q-default.txt").read_text()
    assert [l.rstrip() for l in ours.splitlines() if l.strip()] == [l.rstrip() for l in real.splitlines() if l.strip()]
    m = dscp_output_q_from_config(["mls qos srr-queue output dscp-map queue 1 threshold 3 46",
                                   "mls qos srr-queue output dscp-map queue 4 threshold 2 10"])
    assert parse_dscp_output_q(render_dscp_output_q(m)) == m and m[46] == (1, 3) and m[10] == (4, 2)


def test_policy_map_interface_round_trip():
    cms = [ClassMapView("jp-1", "match-all", ["match access-group 101"]),
           ClassMapView("voice", "match-any", ["match ip dscp 46"])]
    pms = [PolicyView("police-jp", [("jp-1", ["set ip dscp 40", "police 10000000 8000 exceed-action drop"]),
                                    ("voice", ["trust dscp"])])]
    counters = {("GigabitEthernet1/0/1", "jp-1"): ClassCounters(10, 1500, 12000, 3400)}
    text = render_policy_map_interface([("GigabitEthernet1/0/1", "police-jp"), ("GigabitEthernet1/0/2", "police-jp")],
                                       cms, pms, counters)
    got = parse_policy_map_interface(text)
    assert set(got) == {(p, c) for p in ("GigabitEthernet1/0/1", "GigabitEthernet1/0/2")
                        for c in ("jp-1", "voice", "class-default")}
    j = got[("GigabitEthernet1/0/1", "jp-1")]
    assert (j.policy, j.direction, j.packets, j.bytes, j.police_bps, j.conformed_bytes, j.exceeded_bytes) == \
        ("police-jp", "input", 10, 1500, 10000000, 12000, 3400)
    assert j.actions == ["set dscp 40"] and got[("GigabitEthernet1/0/2", "voice")].actions == ["trust dscp"]
    assert got[("GigabitEthernet1/0/2", "jp-1")].conformed_bytes == 0


class _Device:
    """A SwitchDevice-like object (``show``) and a netmiko-like one (``send_command``) in one."""

    def __init__(self, texts):
        self.texts = texts

    def show(self, commands):
        return {c: self.texts[c] for c in commands}


def test_read_statistics_from_a_device_or_a_connection():
    text = render_statistics("GigabitEthernet1/0/2", _counters(2))
    dev = _Device({"show mls qos interface gi1/0/2 statistics": text})
    assert read_statistics(dev, ["gi1/0/2"]) == {"GigabitEthernet1/0/2": _counters(2)}

    class Conn:
        def send_command(self, c):
            return dev.texts[c]

    assert read_statistics(Conn(), ["gi1/0/2"]) == {"GigabitEthernet1/0/2": _counters(2)}
    bad = _Device({"show mls qos interface gi1/0/9 statistics": "          ^\n% Invalid input detected at '^' marker.\n"})
    with pytest.raises(QoslabError, match="switch rejected `show mls qos interface gi1/0/9 statistics`"):
        read_statistics(bad, ["gi1/0/9"])
    other = _Device({"show mls qos interface gi1/0/3 statistics": text})
    with pytest.raises(QoslabError, match="no statistics for GigabitEthernet1/0/3"):
        read_statistics(other, ["gi1/0/3"])
