"""The tc compiler on hand-written configurations."""

from __future__ import annotations

import re

from conftest import ECENET
from qoslab.ios import Mode, RunningConfig, interpret, qos_model
from qoslab.netplan import build_plan
from qoslab.profiles import load_profile, render
from qoslab.tccompile import compile_tc, queue_rates
from qoslab.topology import load_topology

TOPO = load_topology(ECENET)


def plan_of(*lines):
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in lines:
        mode = interpret(rc, mode, l)
    return compile_tc(qos_model(rc), TOPO)


def classes(lines):
    return {m.group(1): m for l in lines if (m := re.search(r"classid 1:(1\d) htb rate (\d+)bit ceil (\d+)bit .* prio (\d)", l))}


def test_qos_off_is_the_testbed_fifo():
    p = plan_of()
    assert p.ports["Gi1-0-3"] == build_plan(TOPO).switch_tc[6:9]
    assert set(p.ports) == {f"Gi1-0-{i}" for i in range(1, 9)}


def test_defaults_with_qos_on_shape_queue_1_and_share_the_rest():
    p = plan_of("mls qos")
    c = classes(p.ports["Gi1-0-1"])
    assert c["11"].group(2) == c["11"].group(3) == str(50_000_000 // 25)  # shape 25 0 0 0: 1/25 of the port
    assert c["12"].group(3) == "50000000" and int(c["12"].group(2)) == (50_000_000 - 2_000_000) // 3
    assert "htb default 12" in p.ports["Gi1-0-1"][0]  # untrusted -> DSCP 0 -> queue 2
    assert not any("filter" in l for l in p.ports["Gi1-0-1"])
    assert "bfifo limit 32768" in p.ports["Gi1-0-1"][3]  # queue-set 1: 25 % of 128 KiB


def test_thesis_priority_queue_buffers_and_span():
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in render(load_profile("thesis"), TOPO):
        mode = interpret(rc, mode, l)
    p = compile_tc(qos_model(rc), TOPO)
    c = classes(p.ports["Gi1-0-1"])
    assert c["11"].group(2) == "49500000" and c["11"].group(4) == "0"
    assert all(c[q].group(4) == "1" and c[q].group(3) == "50000000" for q in ("12", "13", "14"))
    # queue selection is nftables' (skb priority, qoslab.nftcompile): no classifying filters here
    assert not any(l.startswith("filter add dev Gi1-0-1 parent 1:") for l in p.ports["Gi1-0-1"])
    assert "bfifo limit 65536" in p.ports["Gi1-0-1"][3] and "bfifo limit 6553" in p.ports["Gi1-0-1"][7]
    # SPAN: Gi1/0/1 mirrored both ways to Gi1/0/21 before queueing
    span = [l for l in p.ports["Gi1-0-1"] if "mirred" in l]
    assert len(span) == 2 and all("mirror dev Gi1-0-21" in l for l in span)
    assert {l.split()[4] for l in span} == {"ingress", "egress"}
    assert any("not emulated: mls qos srr-queue input buffers 70 30" == n for n in p.notes)


def test_share_shape_priority_rates():
    assert queue_rates(50_000_000, [97, 1, 1, 1], [25, 0, 0, 0], True)[0] == (49_500_000, 50_000_000, 0)
    r = queue_rates(100_000_000, [10, 20, 30, 40], [0, 0, 0, 0], False)
    assert [x[0] for x in r] == [10_000_000, 20_000_000, 30_000_000, 40_000_000]
    r = queue_rates(100_000_000, [25, 25, 25, 25], [0, 10, 0, 0], False)
    assert r[1] == (10_000_000, 10_000_000, 1) and r[0][0] == 30_000_000
