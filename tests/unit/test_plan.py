"""The testbed plan is a pure function of the topology: check what it would build."""

from __future__ import annotations

from conftest import ECENET
from qoslab.testbedplan import (
    build_plan,
    host_namespace,
    owns_namespace,
    shaping_lines,
    span_namespace,
    switch_namespace,
)
from qoslab.topology import load_topology


def test_plan_for_ecenet():
    t = load_topology(ECENET)
    plan = build_plan(t)
    sw, span = switch_namespace("ecenet"), span_namespace("ecenet")
    assert plan.namespaces[0] == sw and span in plan.namespaces
    assert len(plan.namespaces) == 8 + 2
    assert plan.root_ip == [f"netns add {ns}" for ns in plan.namespaces]
    # one veth per host, created from the switch namespace straight into the host's namespace
    for i in range(1, 9):
        assert f"link add Gi1-0-{i} type veth peer name eth0 netns qsl-ecenet-jp-{i}" in plan.links
        assert f'link set Gi1-0-{i} master br0 alias "GigabitEthernet1/0/{i}"' in plan.links
        assert plan.ip[host_namespace("ecenet", f"jp-{i}")][1] == f"addr add 198.18.0.{i}/24 dev eth0"
    # SPAN destinations are not bridged and their far end lives in the span namespace
    assert "link add Gi1-0-21 type veth peer name Gi1-0-21 netns qsl-ecenet@span" in plan.links
    assert not any("Gi1-0-21 master" in line for line in plan.links)
    # HTB with explicit burst at the link rate on both ends of every link: the host ends are the
    # testbed's, the switch ports' factory FIFO belongs to the virtual Catalyst (switch_tc)
    shaped = "htb rate 10000000bit ceil 10000000bit burst 3125b cburst 3125b"  # 2.5 ms at 10 Mbit/s
    # two per host: the link class 1:1 and the host queue's leaf 1:10 under it (issue 48)
    assert sum(shaped in l for lines in plan.tc.values() for l in lines) == 16
    assert sum(shaped in l for l in plan.switch_tc) == 8
    assert all(ns not in (span, sw) for ns in plan.tc)
    # IPv6 off everywhere, offloads off on both ends
    assert all(cmds[0][:2] == ["sysctl", "-qw"] for cmds in plan.prepare.values())
    assert ["ethtool", "-K", "eth0", "tso", "off", "gso", "off", "gro", "off"] in plan.prepare["qsl-ecenet-jp-1"]


def test_plan_with_offloads_on_and_no_span(write_yaml, ecenet_data):
    ecenet_data["link"]["offloads"] = True
    ecenet_data["link"]["rate"] = "100Mbit"
    ecenet_data["switch"]["span_destinations"] = []
    plan = build_plan(load_topology(write_yaml(ecenet_data)))
    assert not any(c[0] == "ethtool" for cmds in plan.prepare.values() for c in cmds)
    assert span_namespace("ecenet") not in plan.namespaces
    assert any("rate 100000000bit" in l and "burst 31250b" in l for l in plan.tc["qsl-ecenet-jp-1"])


def test_shaping_lines_quantum_and_limit():
    lines = shaping_lines("eth0", 1_000_000, 3028, 5000)
    assert "quantum 12500" in lines[1]
    assert lines[2].endswith("bfifo limit 5000")
    assert "quantum 200000" in shaping_lines("eth0", 10**9, 300000, 5000)[1]


def test_namespace_ownership():
    assert owns_namespace("ecenet", "qsl-ecenet-jp-1")
    assert owns_namespace("ecenet", "qsl-ecenet@switch")
    assert not owns_namespace("ecenet", "qsl-ecenet2-jp-1")
    assert not owns_namespace("ecenet", "other")


def test_host_shaping_has_a_leaf_under_the_link_class_for_flood_classes():
    """Issue 48: a host's egress is root 1: (default 10) -> 1:1 at the link rate -> leaf 1:10 with
    the host queue, so a kernel-paced flood's class can sit beside 1:10 under the link."""
    from qoslab.testbedplan import host_shaping_lines

    lines = host_shaping_lines("eth0", 10_000_000, 3028, 5000)
    assert lines[0] == "qdisc replace dev eth0 root handle 1: htb default 10"
    assert "parent 1: classid 1:1 htb rate 10000000bit ceil 10000000bit" in lines[1]
    assert "parent 1:1 classid 1:10 htb rate 10000000bit ceil 10000000bit" in lines[2]
    assert lines[3] == "qdisc replace dev eth0 parent 1:10 handle 10: bfifo limit 5000"
