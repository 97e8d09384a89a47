"""The tc compiler on hand-written configurations."""

from __future__ import annotations

import re

from conftest import ECENET
from qoslab.ios import Mode, RunningConfig, interpret, qos_model
from qoslab.profiles import load_profile, render
from qoslab.testbedplan import build_plan
from qoslab.topology import load_topology
from qoslab.vswitch.tccompile import MIN_LIMIT_BYTES, compile_tc, queue_rates, wtd_limits

TOPO = load_topology(ECENET)


def qos_of(*lines):
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in lines:
        mode = interpret(rc, mode, l)
    return qos_model(rc)


def plan_of(*lines):
    return compile_tc(qos_of(*lines), TOPO)


def classes(lines):
    return {m.group(1): m for l in lines if (m := re.search(r"classid 1:(1\d) htb rate (\d+)bit ceil (\d+)bit .* prio (\d)", l))}


def test_qos_off_is_the_testbed_fifo():
    p = plan_of()
    assert p.ports["Gi1-0-3"] == build_plan(TOPO).switch_tc[6:9]
    assert set(p.ports) == {f"Gi1-0-{i}" for i in range(1, 9)}


def test_defaults_with_qos_on_shape_queue_1_and_share_the_rest():
    p = plan_of("mls qos")
    c = classes(p.ports["Gi1-0-1"])
    rate = TOPO.link.rate
    assert c["11"].group(2) == c["11"].group(3) == str(rate // 25)  # shape 25 0 0 0: 1/25 of the port
    assert c["12"].group(3) == str(rate) and int(c["12"].group(2)) == (rate - rate // 25) // 3
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
    rate = TOPO.link.rate
    assert c["11"].group(2) == str(rate * 99 // 100) and c["11"].group(4) == "0"
    assert all(c[q].group(4) == "1" and c[q].group(3) == str(rate) for q in ("12", "13", "14"))
    # queue selection is nftables' (skb priority, qoslab.vswitch.nftcompile): no classifying filters here
    assert not any(l.startswith("filter add dev Gi1-0-1 parent 1:") for l in p.ports["Gi1-0-1"])
    # queue-set 2 (Appendix B): queue 1 buffers 50 %, DSCP 40 at threshold 1 = 400 % -> 2 x 128 KiB;
    # queue 2 (the flood, DSCP 0) 40 % at threshold 1 = 40 % -> 16 % of 128 KiB
    assert TOPO.buffers.switch_port_bytes == 131072
    assert "bfifo limit 262144" in p.ports["Gi1-0-1"][3] and p.ports["Gi1-0-1"][5].endswith("bfifo limit 20971")
    assert not any(n.startswith("approximated") or "threshold" in n for n in p.notes), p.notes
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


KIB128 = 131072


def test_wtd_defaults_queue_2_holds_twice_its_buffer():
    """Factory queue-set 1: buffers 25 % each, threshold1 100 200 100 100, every DSCP at threshold 1."""
    lim = wtd_limits(qos_of("mls qos"), 1, KIB128)
    assert [(x.threshold, x.percent, x.limit_bytes, x.mixed) for x in lim] == [
        (1, 100, 32768, ()), (1, 200, 65536, ()), (1, 100, 32768, ()), (1, 100, 32768, ())]
    assert "bfifo limit 65536" in plan_of("mls qos").ports["Gi1-0-1"][5]


def test_wtd_threshold_2_and_3_and_the_maximum_cap():
    q = qos_of("mls qos", "mls qos queue-set output 1 threshold 2 30 70 50 150",
               "mls qos queue-set output 1 threshold 4 800 900 50 300",
               *[f"mls qos srr-queue output dscp-map queue 2 threshold 2 {' '.join(map(str, range(i, i + 8)))}"
                 for i in (0, 8)],
               "mls qos srr-queue output dscp-map queue 4 threshold 3 32 33 34 35 36 37 38 39",
               "mls qos srr-queue output dscp-map queue 4 threshold 3 48 49 50 51 52 53 54 55",
               "mls qos srr-queue output dscp-map queue 4 threshold 3 56 57 58 59 60 61 62 63")
    lim = wtd_limits(q, 1, KIB128)
    assert (lim[1].threshold, lim[1].percent, lim[1].limit_bytes) == (2, 70, KIB128 * 25 * 70 // 10000)
    # queue 4: all its DSCPs at threshold 3 = maximum 300 %; 800/900 % would be above it
    assert (lim[3].threshold, lim[3].percent, lim[3].limit_bytes, lim[3].mixed) == (3, 300, 98304, ())


def test_wtd_mixed_thresholds_take_the_highest_and_say_so():
    lines = ("mls qos", "mls qos srr-queue output dscp-map queue 3 threshold 3 46")
    lim = wtd_limits(qos_of(*lines), 1, KIB128)
    assert (lim[2].threshold, lim[2].percent, lim[2].mixed) == (3, 400, (1, 3)) and lim[2].limit_bytes == KIB128
    notes = plan_of(*lines).notes
    assert any(n.startswith("approximated: queue-set 1 queue 3 has DSCPs at WTD thresholds 1, 3; one tail drop "
                            "at threshold 3 (400 % of the queue's buffer)") for n in notes), notes


def test_wtd_limit_never_below_two_frames():
    q = qos_of("mls qos", "mls qos queue-set output 2 buffers 97 1 1 1",
               "mls qos queue-set output 2 threshold 2 1 1 1 1")
    assert wtd_limits(q, 2, KIB128)[1].limit_bytes == MIN_LIMIT_BYTES == 3028
    assert wtd_limits(q, 2, KIB128)[0].limit_bytes == KIB128 * 97 // 100
