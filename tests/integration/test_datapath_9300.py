"""The virtual Catalyst 9300 on real packets (issue 36): the thesis profile rendered as IOS-XE MQC
and pushed with Netmiko ``cisco_xe`` compiles to the same tc data path as the 3750's (the
``priority level 1`` class is the expedite HTB class), and under the thesis flood it wins the
link back for cluster traffic as on the 3750 (tests/integration/test_switch.py); the drops show
in the 9300's ``show policy-map interface`` counters of ``class-default``."""

from __future__ import annotations

import subprocess

import pytest

from conftest import REPO
from qoslab.platforms import get_platform
from qoslab.profiles import load_profile
from qoslab.switch.backends import VirtualSwitch, virtual_endpoint
from qoslab.switch.counters import read_queue_counters
from qoslab.switch.push import push
from qoslab.testbed import Testbed
from qoslab.topology import load_variant

from .conftest import free_port, tcp_under_flood, unique_name

ECENET9300 = REPO / "playbooks" / "topologies" / "ecenet9300.yaml"


@pytest.fixture(scope="module")
def testbed():
    """ecenet9300 (the thesis cluster on a C9300-24T) under a unique name, up for the module."""
    tb = Testbed(load_variant(unique_name("x"), free_port(), ECENET9300))
    tb.up()
    yield tb
    tb.down()
    assert not tb.existing()


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
    assert d.queues[0] == "QOSLAB-Q1" and d.queues[-1] == "class-default"
    assert d.dropped_bytes is not None and d.dropped_bytes[-1][0] > 0, d  # the flood's drops
    assert d.enqueued_bytes is not None and d.enqueued_bytes[0][0] > 0, d  # the cluster's TCP, expedited
    assert fifo < 0.10, f"fifo: TCP got {fifo:.1%} of the link"
    assert thesis > 0.80, f"thesis: TCP got {thesis:.1%} of the link"
