"""The virtual Catalyst 9300 on real packets (issue 36): the thesis profile rendered as IOS-XE MQC
and pushed with Netmiko ``cisco_xe`` compiles to the same tc data path as the 3750's (the
``priority level 1`` class is the expedite HTB class), and under the thesis flood it wins the
link back for cluster traffic as on the 3750 (tests/integration/test_switch.py); the drops show
in the 9300's queue counters as operators read them (issue 43): ``show platform hardware fed
switch active qos queue stats`` (the platform's counters source, with or without an output
policy), equal to the tc counters and to ``show policy-map interface``, its second source."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import REPO
from qoslab.platforms import get_platform
from qoslab.platforms.counters import read_queue_counters
from qoslab.profiles import load_profile
from qoslab.switch.backends import VirtualSwitch, virtual_endpoint
from qoslab.switch.push import push

from .conftest import DATAPATHS, datapath_variant, module_testbed, tcp_under_flood

ECENET9300 = REPO / "playbooks" / "topologies" / "ecenet9300.yaml"


#: Not yet on the ingress path (issue 52): there the fifo baseline of the TCP-under-flood test
#: gave TCP 15.8 % (9300) and 16.5 % (EOS) of the link where the bridge path gives < 10 %
#: (2026-11-29, one run each, the thesis part passed); not understood yet, so not claimed equal.
MODULE_DATAPATHS = [d for d in DATAPATHS if d == "bridge"]


@pytest.fixture(scope="module", params=MODULE_DATAPATHS)
def testbed(request):
    """ecenet9300 (the thesis cluster on a C9300-24T) under a unique name, up for the module, on each
    switch data path."""
    yield from module_testbed(datapath_variant("x", request.param, ECENET9300))


def _lines(testbed, name: str) -> list[str]:
    return get_platform("catalyst9300").render(load_profile(name), testbed.topo)


def test_thesis_on_a_9300_protects_cluster_traffic_under_the_flood(testbed, calibrated, tmp_path):
    dev = virtual_endpoint(testbed.topo)
    assert dev.platform == "catalyst9300"
    push(_lines(testbed, "fifo"), dev, tmp_path, "fifo")
    fifo = tcp_under_flood(testbed, tmp_path / "fifo")
    rep = push(_lines(testbed, "thesis"), dev, tmp_path, "thesis")
    assert rep.changed and "priority level 1" in [line.strip() for line in rep.lines_sent]
    classes = subprocess.run(["tc", "-n", testbed.switch_ns, "class", "show", "dev", "Gi1-0-1"],
                             capture_output=True, text=True, check=True).stdout
    assert "1:11" in classes and f"prio 0 rate {testbed.topo.link.rate * 99 // 100 // 1000}Kbit" in classes
    sw = VirtualSwitch(testbed.topo)
    try:
        before = read_queue_counters(sw, ["Gi1/0/1"], "catalyst9300")["GigabitEthernet1/0/1"]
        thesis = tcp_under_flood(testbed, tmp_path / "thesis")
        after = read_queue_counters(sw, ["Gi1/0/1"], "catalyst9300")["GigabitEthernet1/0/1"]
    finally:
        sw.close()
    assert not push(_lines(testbed, "thesis"), dev, tmp_path, "thesis").changed  # a second push is a no-op
    push([], dev, tmp_path, "fifo")
    d = after.minus(before)
    assert d.queues == [str(q) for q in range(8)]  # UADP queues 0-7: QOSLAB-Q1, Q3, Q4, class-default, unused
    assert d.dropped_bytes is not None and sum(d.dropped_bytes[3]) > 0, d  # the flood's drops (class-default)
    assert d.enqueued_bytes is not None and sum(d.enqueued_bytes[0]) > 0, d  # the cluster's TCP, expedited
    assert fifo < 0.10, f"fifo: TCP got {fifo:.1%} of the link"
    assert thesis > 0.80, f"thesis: TCP got {thesis:.1%} of the link"


def _tc_queues(testbed, dev: str) -> dict[str, dict]:
    """The bfifo statistics of switch port ``dev`` by handle (``11:`` ...; ``10:`` one FIFO)."""
    out = subprocess.run(["tc", "-n", testbed.switch_ns, "-s", "-j", "qdisc", "show", "dev", dev],
                         capture_output=True, text=True, check=True).stdout
    return {q["handle"]: q for q in json.loads(out) if q.get("kind") == "bfifo"}


def test_fed_counters_equal_tc_and_policy_map_interface_after_a_congested_trial(testbed, calibrated, tmp_path):
    """After a congested trial: per UADP queue the fed command's enqueued bytes (and, with ``qos
    queue-stats-frame-count``, enqueued and dropped frames) equal the tc counters of its emulated
    queue; ``show policy-map interface`` (xeparse) gives the same bytes and drops per class; a port
    with no output policy (profile fifo) reports its drops in queue 0 as a real 9300 does."""
    dev = virtual_endpoint(testbed.topo)
    push(_lines(testbed, "thesis") + ["qos queue-stats-frame-count"], dev, tmp_path, "thesis")
    tcp_under_flood(testbed, tmp_path / "thesis")
    plat = get_platform("catalyst9300")
    fed_cmd = "show platform hardware fed switch active qos queue stats interface GigabitEthernet1/0/1"
    sw = VirtualSwitch(testbed.topo)
    try:
        frames_text = sw.show([fed_cmd])[fed_cmd]
        tc = _tc_queues(testbed, "Gi1-0-1")
        push(_lines(testbed, "thesis"), dev, tmp_path, "thesis-bytes")  # drops the frame count: same tc plan
        texts = sw.show([fed_cmd, "show policy-map interface GigabitEthernet1/0/1"])
        tc_again = _tc_queues(testbed, "Gi1-0-1")
    finally:
        sw.close()
    assert tc_again == tc  # the bytes form read the same, unchanged counters
    frames = plat.parse_counters(frames_text, fed_cmd)["GigabitEthernet1/0/1"]
    fed = plat.parse_counters(texts[fed_cmd], fed_cmd)["GigabitEthernet1/0/1"]
    pmi = plat.parse_counters(texts["show policy-map interface GigabitEthernet1/0/1"])["GigabitEthernet1/0/1"]
    assert pmi.queues == ["QOSLAB-Q1", "QOSLAB-Q3", "QOSLAB-Q4", "class-default"]
    for i in range(4):
        q = tc[f"1{i + 1}:"]
        assert sum(frames.enqueued_packets[i]) == q["packets"] + q["qlen"]
        assert sum(frames.dropped_packets[i]) == q["drops"]
        assert sum(fed.enqueued_bytes[i]) == q["bytes"] + q["backlog"] == pmi.enqueued_bytes[i][0] + q["backlog"]
        assert sum(fed.dropped_bytes[i]) == pmi.dropped_bytes[i][0]
    assert sum(frames.dropped_packets[3]) > 0 and sum(frames.enqueued_packets[0]) > 0  # flood dropped, TCP sent
    push(["qos queue-stats-frame-count"], dev, tmp_path, "fifo")  # no policy: one FIFO per port
    tcp_under_flood(testbed, tmp_path / "fifo")
    sw = VirtualSwitch(testbed.topo)
    try:
        text = sw.show([fed_cmd])[fed_cmd]
    finally:
        sw.close()
    fifo = _tc_queues(testbed, "Gi1-0-1")["10:"]
    got = plat.parse_counters(text, fed_cmd)["GigabitEthernet1/0/1"]
    assert got.dropped_packets[0] == [0, 0, fifo["drops"]] and fifo["drops"] > 0
    assert got.enqueued_packets[0] == [0, 0, fifo["packets"] + fifo["qlen"]]
    push([], dev, tmp_path, "clean")
