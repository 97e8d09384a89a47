"""The tc compiler on hand-written configurations."""

from __future__ import annotations

import re

from conftest import ECENET
from qoslab.ios import Mode, RunningConfig, interpret, qos_model
from qoslab.netplan import build_plan
from qoslab.profiles import load_profile, render
from qoslab.tccompile import compile_tc, dscp_blocks, queue_rates
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
    rate = TOPO.link.rate
    assert c["11"].group(2) == c["11"].group(3) == str(rate // 25)  # shape 25 0 0 0: 1/25 of the port
    assert c["12"].group(3) == str(rate) and int(c["12"].group(2)) == (rate - rate // 25) // 3
    assert "htb default 12" in p.ports["Gi1-0-1"][0]  # untrusted -> DSCP 0 -> queue 2
    assert not any("filter" in l for l in p.ports["Gi1-0-1"])
    assert "bfifo limit 32768" in p.ports["Gi1-0-1"][3]  # queue-set 1: 25 % of 128 KiB


def test_thesis_priority_queue_and_pair_filters():
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in render(load_profile("thesis"), TOPO):
        mode = interpret(rc, mode, l)
    p = compile_tc(qos_model(rc), TOPO)
    c = classes(p.ports["Gi1-0-1"])
    rate = TOPO.link.rate
    assert c["11"].group(2) == str(rate * 99 // 100) and c["11"].group(4) == "0"
    assert all(c[q].group(4) == "1" and c[q].group(3) == str(rate) for q in ("12", "13", "14"))
    filters = [l for l in p.ports["Gi1-0-1"] if l.startswith("filter add dev Gi1-0-1 parent 1:")]
    # traffic to jp-1 from jp-2..jp-4 (their ports carry police-jp): 3 pairs, pruned to this port
    assert [re.search(r"src (\S+) match ip dst (\S+)", f).groups() for f in filters] == [
        ("198.18.0.2/32", "198.18.0.1/32"), ("198.18.0.3/32", "198.18.0.1/32"), ("198.18.0.4/32", "198.18.0.1/32")]
    assert all(f.endswith("flowid 1:11") for f in filters)
    assert len({re.search(r"pref (\d+)", f).group(1) for f in filters}) == 3  # explicit, distinct prefs
    assert "bfifo limit 65536" in p.ports["Gi1-0-1"][3] and "bfifo limit 6553" in p.ports["Gi1-0-1"][7]
    # SPAN: Gi1/0/1 mirrored both ways to Gi1/0/21 before queueing
    span = [l for l in p.ports["Gi1-0-1"] if "mirred" in l]
    assert len(span) == 2 and all("mirror dev Gi1-0-21" in l for l in span)
    assert {l.split()[4] for l in span} == {"ingress", "egress"}
    # flooders' ports get no policy filters for the flood, jp-5's port gets the pair filters to jp-5? none
    assert not any("filter add dev Gi1-0-5 parent 1:" in l for l in p.ports["Gi1-0-5"])
    assert any("not emulated: mls qos srr-queue input buffers 70 30" == n for n in p.notes)


def test_trust_dscp_maps_the_packet_dscp():
    p = plan_of("mls qos", "interface Gi1/0/2", "mls qos trust dscp")
    f = [l for l in p.ports["Gi1-0-1"] if "filter" in l]
    assert "match ip src 198.18.0.2/32 match ip dsfield 0xa0 0xe0 flowid 1:11" in " ".join(f)
    assert len(f) == 5  # default map: 40-47 | 0-15 | 16-31 | 32-39 + 48-63
    assert not [l for l in p.ports["Gi1-0-2"] if "filter" in l]  # nothing else trusts


def test_rmi_ports_match_both_directions():
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in render(load_profile("rmi-ports"), TOPO):
        mode = interpret(rc, mode, l)
    f = [l for l in compile_tc(qos_model(rc), TOPO).ports["Gi1-0-1"] if "filter" in l]
    assert any("match ip protocol 6 0xff match ip dport 1099 0xffff flowid 1:11" in l for l in f)
    assert any("match ip sport 1100 0xffff flowid 1:11" in l for l in f)


def test_share_shape_priority_rates():
    assert queue_rates(50_000_000, [97, 1, 1, 1], [25, 0, 0, 0], True)[0] == (49_500_000, 50_000_000, 0)
    r = queue_rates(100_000_000, [10, 20, 30, 40], [0, 0, 0, 0], False)
    assert [x[0] for x in r] == [10_000_000, 20_000_000, 30_000_000, 40_000_000]
    r = queue_rates(100_000_000, [25, 25, 25, 25], [0, 10, 0, 0], False)
    assert r[1] == (10_000_000, 10_000_000, 1) and r[0][0] == 30_000_000


def test_dscp_blocks_cover_exactly():
    for s in [set(range(40, 48)), set(range(0, 16)), {0, 1, 2, 7, 8, 46, 63}, set(range(64)), set()]:
        covered = set()
        for v, bits in dscp_blocks(s):
            covered |= {d for d in range(64) if d >> (6 - bits) == v >> (6 - bits)}
        assert covered == s
    assert dscp_blocks(set(range(64))) == [(0, 0)]


def test_deny_entries_are_reported_not_emulated():
    p = plan_of("mls qos", "access-list 150 deny ip host 198.18.0.2 any", "access-list 150 permit ip any any",
                "class-map c", "match access-group 150", "policy-map pm", "class c", "set dscp 40",
                "interface Gi1/0/2", "service-policy input pm")
    assert "not emulated: deny entry in ACL 150" in p.notes
