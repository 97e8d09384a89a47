"""The nftables compiler (marking, policing, trust, queue selection) on hand-written configs."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from conftest import ECENET
from qoslab.ios import Mode, RunningConfig, interpret, qos_model
from qoslab.profiles import load_profile, render
from qoslab.topology import load_topology
from qoslab.vswitch.nftcompile import compile_nft, priority, trust_rules

TOPO = load_topology(ECENET)


def config(*lines):
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in lines:
        mode = interpret(rc, mode, l)
    return qos_model(rc)


def chain(text: str, name: str) -> list[str]:
    m = re.search(rf"\n  chain {name} {{\n(.*?)\n  }}", text, re.S)
    assert m, f"no chain {name}"
    return [l.strip() for l in m.group(1).splitlines()]


def test_qos_off_only_counts():
    t = compile_nft(config(), TOPO).text
    assert chain(t, "forward") == ["type filter hook forward priority 0; policy accept;",
                                   "meta protocol ip update @dscp_in { iifname . ip dscp }"]
    assert "update @dscp_out { oifname . ip dscp }" in " ".join(chain(t, "postrouting"))
    assert "dscp set" not in t and "priority set" not in t  # QoS off: the DS field passes through
    assert t.startswith("table bridge qoslab\ndelete table bridge qoslab\n")  # atomic replace


def test_untrusted_ports_remark_to_zero_and_queue_of_dscp_0():
    t = compile_nft(config("mls qos"), TOPO).text
    assert '"Gi1-0-8" : jump in_Gi1_0_8' in chain(t, "forward")[-1]
    assert chain(t, "in_Gi1_0_3") == ["goto t_Gi1_0_3"]
    assert chain(t, "t_Gi1_0_3") == ["meta protocol ip ip dscp set 0 meta priority set 1:12 accept",
                                     "meta priority set 1:12 accept"]


def test_no_rewrite_keeps_the_ds_field_but_the_label_picks_the_queue():
    q = config("mls qos", "no mls qos rewrite ip dscp", "access-list 101 permit ip any any", "class-map c",
               "match access-group 101", "policy-map p", "class c", "set dscp 46", "interface Gi1/0/1",
               "service-policy input p")
    t = compile_nft(q, TOPO).text
    assert "dscp set" not in t
    assert chain(t, "a_Gi1_0_1_1")[0] == 'counter meta protocol ip meta priority set 1:11 accept comment "class|Gi1/0/1|c"'


def test_trust_dscp_maps_the_packets_dscp_through_the_output_map():
    q = config("mls qos", "mls qos srr-queue output dscp-map queue 3 threshold 3 46", "interface Gi1/0/2",
               "mls qos trust dscp")
    r = chain(compile_nft(q, TOPO).text, "t_Gi1_0_2")
    assert r[0] == ("meta protocol ip meta priority set ip dscp map { 0-15 : 1:12, 16-31 : 1:13, 32-39 : 1:14, "
                    "40-45 : 1:11, 46 : 1:13, 47 : 1:11, 48-63 : 1:14 } accept")
    assert "dscp set" not in " ".join(r)


def test_trust_cos_untagged_is_cos_0_through_the_cos_dscp_map():
    q = config("mls qos", "mls qos map cos-dscp 10 8 16 24 32 40 48 56")
    assert trust_rules(q, "cos") == ["meta protocol ip ip dscp set 10 meta priority set 1:12 accept",
                                     "meta priority set 1:12 accept"]
    assert trust_rules(q, "ip-precedence")[5] == "meta protocol ip ip dscp 40-47 ip dscp set 40 meta priority set 1:11 accept"
    assert priority(q, 40) == "1:11" and priority(q, 0) == "1:12"


def test_thesis_marks_every_pair_at_ingress():
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in render(load_profile("thesis"), TOPO):
        mode = interpret(rc, mode, l)
    t = compile_nft(qos_model(rc), TOPO).text
    main = chain(t, "in_Gi1_0_2")
    assert len(main) == 13 and main[0] == "ip saddr 198.18.0.1/32 ip daddr 198.18.0.2/32 goto a_Gi1_0_2_1"
    assert chain(t, "a_Gi1_0_2_4")[0] == ('counter meta protocol ip ip dscp set 40 meta priority set 1:11 accept '
                                          'comment "class|Gi1/0/2|class121"')
    assert chain(t, "in_Gi1_0_5") == ["goto t_Gi1_0_5"]  # the flooders' ports: untrusted, no policy


def test_police_drops_over_the_rate_and_counts_both_sides():
    q = config("mls qos", "access-list 120 permit udp host 198.18.0.5 any", "class-map flood",
               "match access-group 120", "policy-map p", "class flood", "police 10000000 16000", "interface Gi1/0/5",
               "service-policy input p")
    t = compile_nft(q, TOPO).text
    assert chain(t, "in_Gi1_0_5")[0] == "ip saddr 198.18.0.5/32 ip protocol udp goto a_Gi1_0_5_1"
    assert chain(t, "a_Gi1_0_5_1") == [
        'limit rate over 1250000 bytes/second burst 16000 bytes counter drop comment "police-out|Gi1/0/5|flood"',
        'counter comment "police-in|Gi1/0/5|flood"',
        "goto t_Gi1_0_5"]  # no set: the port's trust state labels what conforms


def test_deny_entries_end_the_acl_top_down():
    q = config("mls qos", "access-list 150 deny ip host 198.18.0.2 any", "access-list 150 permit ip any any",
               "class-map c", "match access-group 150", "policy-map pm", "class c", "set dscp 40",
               "interface Gi1/0/2", "service-policy input pm")
    t = compile_nft(q, TOPO).text
    assert chain(t, "in_Gi1_0_2") == ["jump m_Gi1_0_2_1_0", "goto t_Gi1_0_2"]
    assert chain(t, "m_Gi1_0_2_1_0") == ["ip saddr 198.18.0.2/32 return", "meta protocol ip goto a_Gi1_0_2_1"]


def test_match_all_dscp_and_acl_is_an_and_and_ports_match():
    q = config("mls qos", "ip access-list extended rmi", "permit tcp any any eq 1099", "exit", "class-map c",
               "match access-group name rmi", "match ip dscp 40 46", "policy-map pm", "class c", "set dscp 46",
               "interface Gi1/0/1", "service-policy input pm")
    assert chain(compile_nft(q, TOPO).text, "in_Gi1_0_1")[0] == \
        "ip protocol tcp tcp dport 1099 ip dscp { 40, 46 } goto a_Gi1_0_1_1"


@pytest.mark.skipif(shutil.which("nft") is None, reason="nft (Debian nftables) not installed: make setup")
@pytest.mark.parametrize("profile", ["fifo", "thesis", "rmi-ports", "trust-dscp", "police-flood", "ef-sockperf", "ef-mpi"])
def test_every_profile_compiles_to_a_ruleset_nft_accepts(profile):
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in render(load_profile(profile), TOPO):
        mode = interpret(rc, mode, l)
    p = subprocess.run(["nft", "-c", "-f", "-"], input=compile_nft(qos_model(rc), TOPO).text,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_rmi_ports_match_both_directions_and_only_tcp():
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in render(load_profile("rmi-ports"), TOPO):
        mode = interpret(rc, mode, l)
    main = chain(compile_nft(qos_model(rc), TOPO).text, "in_Gi1_0_1")
    assert main[:4] == ["ip protocol tcp tcp dport 1099 goto a_Gi1_0_1_1", "ip protocol tcp tcp sport 1099 goto a_Gi1_0_1_1",
                        "ip protocol tcp tcp dport 1100 goto a_Gi1_0_1_1", "ip protocol tcp tcp sport 1100 goto a_Gi1_0_1_1"]


def test_unknown_references_are_notes_not_errors():
    """IOS refuses a policy-map class without its class-map (test_acl.py); a config loaded from
    elsewhere may still name one: a note, not an error."""
    q = config("mls qos", "class-map c", "match access-group 199", "class-map nope", "policy-map pm", "class c",
               "set dscp 40", "class nope", "set dscp 8", "interface Gi1/0/2", "service-policy input pm")
    del q.class_maps["nope"]
    p = compile_nft(q, TOPO)
    assert "class-map c: ACL 199 is not configured (matches nothing)" in p.notes
    assert "policy-map class nope: no such class-map (matches nothing)" in p.notes


def test_port_range_profile_matches_the_range_both_ways_and_marks_ef():
    """ef-mpi (issue 34): the TCP BTL's range 7400-7431 in either direction -> DSCP 46, queue 1."""
    rc = RunningConfig.factory("Switch", TOPO.switch.ports)
    mode = Mode()
    for l in render(load_profile("ef-mpi"), TOPO):
        mode = interpret(rc, mode, l)
    q = qos_model(rc)
    t = compile_nft(q, TOPO).text
    assert chain(t, "in_Gi1_0_1")[:2] == ["ip protocol tcp tcp dport 7400-7431 goto a_Gi1_0_1_1",
                                         "ip protocol tcp tcp sport 7400-7431 goto a_Gi1_0_1_1"]
    assert "ip dscp set 46" in "\n".join(chain(t, "a_Gi1_0_1_1")) and priority(q, 46) == "1:11"
