"""The virtual Arista 7280R3 on real packets (issue 44): the thesis profile rendered as EOS QoS and
pushed with Netmiko ``arista_eos`` compiles to eight tx-queues per port (the expedite class's
traffic class 5 a strict-priority HTB class, traffic classes 1, 2, 4 round robin); under the
thesis flood it wins the link back for cluster traffic as on the Catalysts, the flood's drops show
in traffic class 1 of ``show interfaces Ethernet1 counters queue | json``, and those counters are
the tc counters of the port's queues."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from conftest import REPO
from qoslab.platforms import get_platform
from qoslab.platforms.counters import read_queue_counters
from qoslab.profiles import load_profile
from qoslab.switch.backends import VirtualSwitch, virtual_endpoint
from qoslab.switch.push import push

from .conftest import DATAPATHS, datapath_variant, module_testbed, tcp_under_flood

ECENETEOS = REPO / "playbooks" / "topologies" / "eceneteos.yaml"
EOS = get_platform("arista_eos")


#: Not yet on the ingress path (issue 52): there the fifo baseline of the TCP-under-flood test
#: gave TCP 15.8 % (9300) and 16.5 % (EOS) of the link where the bridge path gives < 10 %
#: (2026-11-29, one run each, the thesis part passed); not understood yet, so not claimed equal.
MODULE_DATAPATHS = [d for d in DATAPATHS if d == "bridge"]


@pytest.fixture(scope="module", params=MODULE_DATAPATHS)
def testbed(request):
    """eceneteos (the thesis cluster on a DCS-7280SR3-48YC8) under a unique name, up for the module,
    on each switch data path."""
    yield from module_testbed(datapath_variant("e", request.param, ECENETEOS))


def _tc_queues(testbed) -> list[tuple[int, int]]:
    """(packets sent + dropped, dropped) of tx-queues 0-7 of Gi1-0-1, from tc itself."""
    doc = json.loads(subprocess.run(["tc", "-n", testbed.switch_ns, "-s", "-j", "qdisc", "show", "dev", "Gi1-0-1"],
                                    capture_output=True, text=True, check=True).stdout)
    by = {q["handle"]: (q["packets"] + q["drops"], q["drops"]) for q in doc if q["kind"] == "bfifo"}
    return [by[f"2{n}:"] for n in range(8)]


def test_thesis_on_eos_protects_cluster_traffic_and_counts_the_drops_per_traffic_class(testbed, calibrated, tmp_path):
    dev = virtual_endpoint(testbed.topo)
    assert dev.platform == "arista_eos" and dev.ssh_profile == "modern"
    push(EOS.render(load_profile("fifo"), testbed.topo), dev, tmp_path, "fifo")
    fifo = tcp_under_flood(testbed, tmp_path / "fifo")
    rep = push(EOS.render(load_profile("thesis"), testbed.topo), dev, tmp_path, "thesis")
    assert rep.changed and "no priority" in [line.strip() for line in rep.lines_sent]
    classes = subprocess.run(["tc", "-n", testbed.switch_ns, "class", "show", "dev", "Gi1-0-1"],
                             capture_output=True, text=True, check=True).stdout
    assert f"class htb 1:25 parent 1:1 leaf 25: prio 2 rate {testbed.topo.link.rate * 99 // 100 // 1000}Kbit" in classes
    sw = VirtualSwitch(testbed.topo)
    try:
        before = read_queue_counters(sw, ["Gi1/0/1"], "arista_eos")["GigabitEthernet1/0/1"]
        thesis = tcp_under_flood(testbed, tmp_path / "thesis")
        time.sleep(0.5)  # the port's queues drain
        tc_before = _tc_queues(testbed)
        after = read_queue_counters(sw, ["Gi1/0/1"], "arista_eos")["GigabitEthernet1/0/1"]
        tc_after = _tc_queues(testbed)
    finally:
        sw.close()
    assert not push(EOS.render(load_profile("thesis"), testbed.topo), dev, tmp_path, "thesis").changed
    push(EOS.render(load_profile("fifo"), testbed.topo), dev, tmp_path, "fifo")
    assert after.enqueued_packets is not None and after.dropped_packets is not None
    for tc in range(8):  # the switch's counters are tc's, read between two tc readings
        assert tc_before[tc][0] <= after.enqueued_packets[tc][0] <= tc_after[tc][0], (tc, tc_before, after)
        assert tc_before[tc][1] <= after.dropped_packets[tc][0] <= tc_after[tc][1], (tc, tc_before, after)
    d = after.minus(before)
    assert d.queues == [f"TC{n}" for n in range(8)]
    assert d.dropped_packets is not None and d.dropped_packets[1][0] > 0, d   # the flood's drops: TC 1
    assert d.enqueued_bytes is not None and d.enqueued_bytes[5][0] > 0, d    # the cluster's TCP: TC 5
    assert d.dropped_packets[5][0] == 0, d
    assert fifo < 0.10, f"fifo: TCP got {fifo:.1%} of the link"
    assert thesis > 0.80, f"thesis: TCP got {thesis:.1%} of the link"
