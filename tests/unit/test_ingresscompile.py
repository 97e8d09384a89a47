"""The ``ingress`` data path's compiler (issue 52): the bridge ruleset rewritten into netdev
ingress chains that forward by the host-to-port map; hostile rulesets and ``switch.datapath``
values."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from conftest import ECENET
from qoslab.errors import ConfigError, QoslabError
from qoslab.ios import Mode, RunningConfig, interpret, qos_model
from qoslab.portnames import linux_ifname
from qoslab.profiles import load_profile, render
from qoslab.topology import load_topology
from qoslab.vswitch.dialects.eos import Eos
from qoslab.vswitch.dialects.eos.datapath import compile_eos_nft
from qoslab.vswitch.ingresscompile import FAMILY, compile_ingress
from qoslab.vswitch.nftcompile import NftPlan, compile_nft

TOPO = load_topology(ECENET)


def profile_qos(name: str):
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for line in render(load_profile(name), TOPO):
        mode = interpret(rc, mode, line)
    return qos_model(rc)


def netdev(text: str) -> str:
    i = text.index(f"table {FAMILY} qoslab {{")
    return text[i:]


def chains(text: str) -> dict[str, list[str]]:
    return {m.group(1): [line.strip() for line in m.group(2).splitlines()]
            for m in re.finditer(r"\n  chain (\S+) \{\n(.*?)\n  \}", text, re.S)}


def test_the_bridge_table_stays_as_the_slow_path():
    bridge = compile_nft(profile_qos("police-flood"), TOPO)
    plan = compile_ingress(bridge, TOPO)
    assert plan.text.startswith(bridge.text)
    assert plan.notes == bridge.notes
    assert plan.text.count(f"delete table {FAMILY} qoslab") == 1


def test_every_host_port_gets_an_ingress_chain_that_only_takes_unicast_to_other_hosts():
    c = chains(netdev(compile_ingress(compile_nft(profile_qos("police-flood"), TOPO), TOPO).text))
    for h in TOPO.hosts:
        dev = linux_ifname(h.port)
        rules = c[f"p_{dev.replace('-', '_')}"]
        assert rules[0] == f'type filter hook ingress device "{dev}" priority 0; policy accept;'
        assert rules[1] == "meta protocol != ip accept"  # ARP and the rest: to the bridge
        others = rules[2].removeprefix("ip daddr != { ").removesuffix(" } accept").split(", ")
        assert sorted(others) == sorted(x.ip for x in TOPO.hosts if x is not h)  # not its own host
        assert rules[3] == "meta protocol ip update @dscp_in { iifname . ip dscp }"
        assert rules[4] == f"goto in_{dev.replace('-', '_')}"


def test_classification_chains_are_the_bridge_tables_with_accept_turned_into_forwarding():
    bridge = compile_nft(profile_qos("police-flood"), TOPO)
    b, n = chains(bridge.text), chains(netdev(compile_ingress(bridge, TOPO).text))
    shared = set(b) - {"forward", "postrouting"}
    assert shared and shared <= set(n)
    for name in shared:
        assert len(b[name]) == len(n[name])
        for old, new in zip(b[name], n[name], strict=True):
            assert new == re.sub(r"\baccept( comment \"[^\"]*\")?$", r"goto to_port\1", old)
    flood = n["a_Gi1_0_1_13"]  # the policed flood class keeps its policer and comment
    assert flood[0].startswith("limit rate over 3125000 bytes/second burst 32000 bytes counter drop")
    assert flood[1].endswith('goto to_port comment "police-in|Gi1/0/1|flood"')
    assert not [r for name in shared for r in n[name] if r.endswith("accept")]


def test_to_port_forwards_by_the_static_map_and_counts_dscp_out_per_egress_port():
    c = chains(netdev(compile_ingress(compile_nft(profile_qos("thesis"), TOPO), TOPO).text))
    assert c["to_port"] == ["ip daddr vmap { " + ", ".join(
        f"{h.ip} : goto o_{linux_ifname(h.port).replace('-', '_')}" for h in TOPO.hosts) + " }", "accept"]
    assert c["o_Gi1_0_3"] == ['meta protocol ip update @dscp_out { "Gi1-0-3" . ip dscp }', 'fwd to "Gi1-0-3"']


def test_qos_off_counts_and_forwards():
    c = chains(netdev(compile_ingress(compile_nft(profile_qos("fifo"), TOPO), TOPO).text))
    assert c["p_Gi1_0_1"][-1] == "goto to_port"
    assert set(c) == {f"p_Gi1_0_{i}" for i in range(1, 9)} | {f"o_Gi1_0_{i}" for i in range(1, 9)} | {"to_port"}


def test_the_eos_ruleset_has_the_same_shape_and_compiles():
    cfg = Eos().factory("sw", TOPO.switch.ports)
    c = chains(netdev(compile_ingress(compile_eos_nft(cfg, TOPO), TOPO).text))
    assert c["p_Gi1_0_2"][-1] == "goto in_Gi1_0_2" and "in_Gi1_0_2" in c  # EOS classifies by trust always
    assert not [r for name, rules in c.items() if name.startswith(("in_", "t_", "a_")) for r in rules
                if r.endswith("accept")]


def test_a_single_host_has_no_fast_path():
    topo = load_topology(ECENET, hosts=[h.model_dump(mode="json") for h in TOPO.hosts[:1]])
    c = chains(netdev(compile_ingress(compile_nft(profile_qos("fifo"), topo), topo).text))
    assert c["p_Gi1_0_1"][-1] == "accept"


@pytest.mark.parametrize(("text", "expected"), [
    ("table bridge qoslab {\n  chain forward {\n    x\n  }\n}\n", "no chain postrouting"),
    ("table bridge qoslab {\n  chain postrouting {\n    x\n  }\n}\n", "no chain forward"),
    ("table bridge qoslab {\nflush ruleset\n}\n", "line 2: `flush ruleset` is not a set, chain or rule"),
    ("", "no chain forward"),
])
def test_a_ruleset_of_another_shape_is_refused_naming_the_line(text, expected):
    with pytest.raises(QoslabError, match=re.escape(expected)):
        compile_ingress(NftPlan(text), TOPO)


@pytest.mark.parametrize("value", ["ebpf", "", "Bridge", "[bridge]", "1"])
def test_an_unknown_datapath_names_the_field(write_yaml, ecenet_data, value):
    ecenet_data["switch"]["datapath"] = value
    path = write_yaml(ecenet_data)
    with pytest.raises(ConfigError) as e:
        load_topology(path)
    assert str(path) in str(e.value) and "switch.datapath" in str(e.value), str(e.value)


def test_the_default_datapath_is_the_bridge():
    assert TOPO.switch.datapath == "bridge"
    assert load_topology(ECENET, switch={**TOPO.switch.model_dump(mode="json"), "datapath": "ingress"}
                         ).switch.datapath == "ingress"


@pytest.mark.skipif(shutil.which("nft") is None or os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="needs root, nft and unshare (a throwaway network namespace with the ports)")
@pytest.mark.parametrize("profile", ["fifo", "thesis", "rmi-ports", "trust-dscp", "police-flood", "ef-sockperf", "ef-mpi"])
def test_every_profile_compiles_to_a_ruleset_nft_accepts(profile):
    text = compile_ingress(compile_nft(profile_qos(profile), TOPO), TOPO).text
    ports = " ".join(linux_ifname(h.port) for h in TOPO.hosts)
    script = f"for p in {ports}; do ip link add $p type veth peer name x$p || exit 3; done; nft -c -f -"
    p = subprocess.run(["unshare", "-n", "sh", "-c", script], input=text, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
