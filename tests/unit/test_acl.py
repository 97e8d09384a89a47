"""Access lists as a Catalyst takes them (qoslab.ios.acl, aclparse, aclinterp): sequence numbers
(IOS's "IP Access List Entry Sequence Numbering"), the extended and standard grammar of the
command reference, the text IOS prints (running-config on IOS 12.2 and IOS-XE, ``show
access-lists``), hostile lines with their carets, and the nftables match each entry compiles to."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import ECENET
from qoslab.ios import IosError, Mode, RunningConfig, interpret, load_config, qos_model
from qoslab.ios.acl import DUPLICATE_SEQ, Addr, Ports
from qoslab.portnames import expand_ports
from qoslab.topology import load_topology
from qoslab.vswitch.nftcompile import compile_nft

PORTS = expand_ports("Gi1/0/1-24")


def fresh(dialect: str = "c3750") -> RunningConfig:
    return RunningConfig.factory("Switch", PORTS, dialect)


def run(rc: RunningConfig, *lines: str) -> Mode:
    mode = Mode()
    for line in lines:
        mode = interpret(rc, mode, line)
    return mode


def entries(rc: RunningConfig, name: str) -> list[tuple[int, str]]:
    return rc.acls[name].show_entries()


def section(rc: RunningConfig, header: str) -> list[str]:
    """The lines of one running-config section (header and children)."""
    lines = rc.render().splitlines()
    i = lines.index(header)
    out = [header]
    for line in lines[i + 1:]:
        if not line.startswith(" "):
            break
        out.append(line)
    return out


# --------------------------------------------------------------------------------- sequence numbers
def test_entries_go_in_by_number_and_a_duplicate_number_is_refused_as_ios_refuses_it():
    rc = fresh()
    m = run(rc, "ip access-list extended flood", "10 permit udp any any eq 9", "30 permit udp any any eq 7")
    run(rc, "ip access-list extended flood", "20 permit tcp any any")
    assert [s for s, _ in entries(rc, "flood")] == [10, 20, 30]
    # the same entry again with a new number, or none, changes nothing, without a message
    interpret(rc, m, "40 permit udp any any eq 9")
    interpret(rc, m, "permit udp any any eq 9")
    assert len(entries(rc, "flood")) == 3
    # a number already present is refused, even for the same entry (a list pasted twice)
    for line in ("10 permit ip any any", "10 permit udp any any eq 9"):
        with pytest.raises(IosError) as e:
            interpret(rc, m, line)
        assert e.value.kind == "message" and e.value.render(20) == DUPLICATE_SEQ + "\n"
    assert entries(rc, "flood")[0] == (10, "permit udp any any eq discard")
    # no number: 10 more than the last one
    interpret(rc, m, "deny ip any any")
    assert entries(rc, "flood")[-1] == (40, "deny ip any any")


def test_no_seq_no_entry_and_resequence():
    rc = fresh()
    m = run(rc, "ip access-list extended a", "permit tcp any any eq 22", "permit tcp any any eq 23",
            "permit tcp any any eq 25", "no 20", "no permit tcp any any eq 25")
    assert entries(rc, "a") == [(10, "permit tcp any any eq 22")]
    interpret(rc, m, "5 permit udp any any")
    interpret(rc, m, "no 10 permit tcp any any eq 22")  # hier-config's form of a removal
    assert entries(rc, "a") == [(5, "permit udp any any")]
    run(rc, "ip access-list extended a", "permit icmp any any", "ip access-list resequence a 100 7")
    assert [s for s, _ in entries(rc, "a")] == [100, 107]
    # remarks: before the next entry; `no SEQ remark` / `no remark` (as cisco.ios sends them) clear them
    m = run(rc, "ip access-list extended a", "remark one", "permit tcp any any", "110 remark two", "110 remark three")
    assert rc.acls["a"].remarks == {110: ["two", "three"], 117: ["one"]}
    interpret(rc, m, "no 110 remark")
    assert rc.acls["a"].remarks == {117: ["one"]}
    interpret(rc, m, "no remark")
    assert rc.acls["a"].remarks == {}


def test_running_config_without_numbers_on_ios_12_2_with_them_on_ios_xe():
    lines = ("ip access-list extended flood", "20 deny udp any any eq 9", "remark the workload", "permit ip any any",
             "10 permit udp host 198.18.0.5 any")
    old, xe = fresh(), fresh("c9300")
    run(old, *lines)
    run(xe, *lines)
    assert section(old, "ip access-list extended flood") == [
        "ip access-list extended flood", " permit udp host 198.18.0.5 any", " deny   udp any any eq discard",
        " remark the workload", " permit ip any any"]
    assert section(xe, "ip access-list extended flood") == [
        "ip access-list extended flood", " 10 permit udp host 198.18.0.5 any", " 20 deny   udp any any eq discard",
        " 30 remark the workload", " 30 permit ip any any"]
    for rc in (old, xe):  # what the switch prints loads back to the same text
        again = fresh(rc.dialect)
        assert load_config(rc.render(), again) == [] and again.render() == rc.render()
    # numbered lists: access-list N lines on IOS 12.2, a numbered section on IOS-XE
    run(old, "access-list 10 remark mgmt", "access-list 10 deny 10.0.0.1")
    run(xe, "access-list 10 remark mgmt", "access-list 10 deny 10.0.0.1")
    assert [line for line in old.render().splitlines() if "access-list 10" in line] == [
        "access-list 10 remark mgmt", "access-list 10 deny   10.0.0.1"]
    assert section(xe, "ip access-list standard 10") == ["ip access-list standard 10", " 10 remark mgmt",
                                                         " 10 deny   10.0.0.1"]
    # 12.2 does not keep the numbers: after a reload they are 10, 20, 30 again (as on the 3750)
    again = fresh()
    load_config(old.render(), again)
    assert [s for s, _ in entries(again, "flood")] == [10, 20, 30]


# ------------------------------------------------------------------------------------------ grammar
#: (typed, as IOS prints it): the forms of the extended-entry grammar (module doc of aclparse).
EXTENDED = [
    ("permit icmp any any", "permit icmp any any"),
    ("permit icmp any any echo", "permit icmp any any echo"),
    ("permit icmp any any 8", "permit icmp any any echo"),
    ("permit icmp any any 3 3", "permit icmp any any port-unreachable"),
    ("permit icmp any any 3 99", "permit icmp any any 3 99"),
    ("permit igmp any any", "permit igmp any any"),
    ("permit gre host 198.18.0.1 any", "permit gre host 198.18.0.1 any"),
    ("permit ospf any any", "permit ospf any any"),
    ("permit 47 any any", "permit gre any any"),
    ("permit 103 any any", "permit pim any any"),
    ("permit 253 any any", "permit 253 any any"),
    ("permit tcp any any established", "permit tcp any any established"),
    ("permit tcp any any eq 80", "permit tcp any any eq www"),
    ("permit tcp any any eq www", "permit tcp any any eq www"),
    ("permit udp any any eq 53", "permit udp any any eq domain"),
    ("permit udp any eq snmp any", "permit udp any eq snmp any"),
    ("permit tcp any gt 1023 any lt 1024", "permit tcp any gt 1023 any lt 1024"),
    ("permit tcp any any neq 23", "permit tcp any any neq telnet"),
    ("permit udp any any range 5000 5100", "permit udp any any range 5000 5100"),
    ("permit tcp any any range 20 21", "permit tcp any any range ftp-data ftp"),
    ("permit tcp any any eq 514", "permit tcp any any eq cmd"),
    ("permit ip any any log", "permit ip any any log"),
    ("permit ip any any log-input", "permit ip any any log-input"),
    ("permit ip any any dscp ef", "permit ip any any dscp ef"),
    ("permit ip any any dscp 46", "permit ip any any dscp ef"),
    ("permit ip any any dscp 41", "permit ip any any dscp 41"),
    ("permit ip any any precedence 5", "permit ip any any precedence critical"),
    ("permit ip any any precedence flash", "permit ip any any precedence flash"),
    ("permit tcp any any eq 22 dscp af21 log", "permit tcp any any eq 22 dscp af21 log"),
    ("deny ip 10.1.2.3 0.0.0.255 host 198.18.0.1", "deny ip 10.1.2.0 0.0.0.255 host 198.18.0.1"),
    ("permit ip 10.0.1.0 0.255.0.255 any", "permit ip 10.0.1.0 0.255.0.255 any"),
    ("permit ip 0.0.0.0 255.255.255.255 any", "permit ip any any"),
    ("perm tc an an eq ww", "permit tcp any any eq www"),
    ("permit tcp any any established psh", "permit tcp any any established psh"),
    ("permit tcp any any match-all +ack -fin log", "permit tcp any any match-all +ack -fin log"),
    ("permit tcp any any match-any +ack +fin +syn +psh", "permit tcp any any match-any +ack +fin +syn +psh"),
    # issue 49: what Genie's and operators' recordings carry
    ("deny ip any any fragments", "deny ip any any fragments"),
    ("permit ip any any tos max-reliability", "permit ip any any tos max-reliability"),
    ("permit ip any any tos 4", "permit ip any any tos max-throughput"),
    ("permit udp any any prec 5 tos 9", "permit udp any any precedence critical tos 9"),
    ("deny ip 10.0.0.0 0.255.255.255 any frag log", "deny ip 10.0.0.0 0.255.255.255 any fragments log"),
]


@pytest.mark.parametrize("typed,shown", EXTENDED)
@pytest.mark.parametrize("dialect", ["c3750", "c9300"])
def test_every_extended_form_loads_on_both_platforms_as_ios_prints_it(typed, shown, dialect):
    rc = fresh(dialect)
    run(rc, "ip access-list extended x", typed)
    assert entries(rc, "x") == [(10, shown)]
    again = fresh(dialect)
    assert load_config(rc.render(), again) == [] and entries(again, "x") == [(10, shown)]


STANDARD = [("permit 10.1.1.1", "permit 10.1.1.1", "permit 10.1.1.1"),
            ("permit host 10.1.1.1", "permit 10.1.1.1", "permit 10.1.1.1"),
            ("permit 10.4.4.2 0.0.255.255", "permit 10.4.0.0 0.0.255.255", "permit 10.4.0.0, wildcard bits 0.0.255.255"),
            ("deny any log", "deny   any log", "deny   any log")]


@pytest.mark.parametrize("typed,config,shown", STANDARD)
def test_standard_lists_numbered_and_named(typed, config, shown):
    rc = fresh()
    run(rc, f"access-list 10 {typed}", "ip access-list standard mgmt", typed, "exit", f"access-list 1300 {typed}")
    assert f"access-list 10 {config}" in rc.render().splitlines()
    assert f"access-list 1300 {config}" in rc.render().splitlines()
    assert section(rc, "ip access-list standard mgmt")[1] == f" {config}"
    assert entries(rc, "10") == entries(rc, "mgmt") == [(10, shown)]
    assert rc.acls["10"].show_header() == "Standard IP access list 10"


#: (mode, line, the token the caret is under, or None for "% Incomplete command.")
HOSTILE = [
    ("x", "permit tcp any any eq http", "http"),
    ("x", "permit tcp any any eq 65536", "65536"),
    ("x", "permit tcp any any range 7431 7400", "7400"),
    ("x", "permit tcp any any range 7400", None),
    ("x", "permit ip any any range 1 2", "range"),
    ("x", "permit udp any any established", "established"),
    ("x", "permit 256 any any", "256"),
    ("x", "permit ip 10.0.0.1 any", "any"),
    ("x", "permit ip host 10.0.0.300 any", "10.0.0.300"),
    ("x", "permit ip any any dscp 64", "64"),
    ("x", "permit ip any any dscp ef precedence 5", "precedence"),
    ("x", "permit ip any any log log", "log"),
    ("x", "permit ip any any precedence 8", "8"),
    ("x", "permit ip any any tos 16", "16"),
    ("x", "permit ip any any dscp ef tos 2", "tos"),
    ("x", "permit tcp any any eq 80 fragments", "fragments"),
    ("x", "permit icmp any any echo echo", "echo"),
    ("x", "permit udp any any syn", "syn"),
    ("x", "permit tcp any any match-all", None),
    ("x", "permit tcp any any match-any +ack -ack", "-ack"),
    ("x", "permit tcp any any match-all +ack match-any -fin", "match-any"),
    ("x", "permit", None),
    ("x", "permit tcp", None),
    ("x", "2147483648 permit ip any any", "2147483648"),
    ("s", "permit 10.0.0.0 0.0.0.255 any", "any"),
    ("s", "permit tcp any any", "tcp"),
    ("g", "access-list 200 permit ip any any", "200"),
    ("g", "access-list 10 permit ip any any", "ip"),
    ("g", "access-list 101 permit 10.0.0.1", "10.0.0.1"),
    ("g", "ip access-list extended 10", "10"),
    ("g", "ip access-list standard 101", "101"),
    ("g", "ip access-list resequence nope 10 10", "nope"),
    ("g", "ip access-list resequence x 0 10", "0"),
]


@pytest.mark.parametrize("where,line,caret", HOSTILE)
def test_hostile_entries_are_refused_with_the_caret_and_change_nothing(where, line, caret):
    rc = fresh()
    run(rc, "ip access-list extended x", "permit ip any any", "exit")
    before = rc.render()
    mode = {"x": Mode("config-ext-nacl", "x"), "g": Mode()}.get(where)
    if where == "s":
        mode = run(rc, "ip access-list standard s")
        before = rc.render()
    with pytest.raises(IosError) as e:
        interpret(rc, mode, line)
    if caret is None:
        assert e.value.kind == "incomplete"
    else:
        assert e.value.kind == "invalid" and line[e.value.column:].startswith(caret), (e.value.column, line)
    assert rc.render() == before


def test_no_access_list_removes_the_whole_numbered_list_and_a_type_clash_is_refused():
    rc = fresh()
    run(rc, "access-list 101 permit tcp any any", "access-list 101 permit udp any any",
        "no access-list 101 permit udp any any")
    assert "101" not in rc.acls  # IOS removes the whole list whatever follows the number
    run(rc, "ip access-list standard both")
    with pytest.raises(IosError):
        run(rc, "ip access-list extended both")


# ----------------------------------------------------------------------------------- references
def test_reference_checks_refuse_with_ios_messages():
    rc = fresh()
    run(rc, "class-map match-all c1", "policy-map p", "class c1", "set dscp 40", "interface Gi1/0/1",
        "service-policy input p")
    for line, text in (("no policy-map p", "Policy map p is being used"),
                       ("no class-map c1", "Class-map c1 is being used"),
                       ("no class-map match-all c1", "Class-map c1 is being used")):
        with pytest.raises(IosError) as e:
            run(rc, line)
        assert e.value.kind == "message" and e.value.render() == text + "\n"
    m = run(rc, "policy-map p")
    with pytest.raises(IosError) as e:
        interpret(rc, m, "class nope")
    assert e.value.render() == "% class-map nope not configured\n"
    assert [s.header for s in rc.policy_maps["p"].subsections] == ["class c1"]
    interpret(rc, m, "class class-default")  # always there
    # the right order works: detach, then remove the policy, then the class-map
    run(rc, "interface Gi1/0/1", "no service-policy input p", "no policy-map p", "no class-map c1")
    assert rc.policy_maps == {} and rc.class_maps == {}


def test_reference_checks_on_ios_xe_too():
    rc = fresh("c9300")
    run(rc, "class-map match-any q1", "match dscp ef", "policy-map out", "class q1", "priority level 1",
        "interface Gi1/0/2", "service-policy output out")
    with pytest.raises(IosError):
        run(rc, "no policy-map out")
    with pytest.raises(IosError):
        run(rc, "no class-map q1")
    with pytest.raises(IosError):
        run(rc, "policy-map out", "class q9")


# -------------------------------------------------------------------------- other global lines
def test_mls_qos_lines_in_the_order_ios_prints_them_whatever_the_entry_order():
    """Appendix B's order (and an AutoQoS 3560's): srr-queue input bandwidth, buffers,
    priority-queue, queue-set thresholds then buffers, ``mls qos`` last; the DSCP maps printed
    from their state (only what differs from the default, eight DSCPs per line)."""
    rc = fresh()
    run(rc, "mls qos", "mls qos queue-set output 2 buffers 50 40 5 5",
        "mls qos srr-queue output dscp-map queue 1 threshold 3 32", "mls qos srr-queue input priority-queue 2 bandwidth 40",
        "mls qos queue-set output 2 threshold 2 40 60 100 200", "mls qos srr-queue input buffers 70 30",
        "mls qos queue-set output 1 threshold 1 138 138 92 138", "mls qos srr-queue input bandwidth 1 99",
        "mls qos srr-queue output dscp-map queue 1 threshold 3 0 1 2 3 4 5 6 7", "mls qos map cos-dscp 0 8 16 24 32 46 48 56",
        "mls qos queue-set output 2 threshold 1 400 400 100 400",
        "mls qos srr-queue output dscp-map queue 1 threshold 1 40")  # the default: not printed
    shown = [line for line in rc.render().splitlines() if line.startswith("mls qos")]
    assert shown == ["mls qos map cos-dscp 0 8 16 24 32 46 48 56", "mls qos srr-queue input bandwidth 1 99",
                     "mls qos srr-queue input buffers 70 30", "mls qos srr-queue input priority-queue 2 bandwidth 40",
                     "mls qos srr-queue output dscp-map queue 1 threshold 3 0 1 2 3 4 5 6 7",
                     "mls qos srr-queue output dscp-map queue 1 threshold 3 32",
                     "mls qos queue-set output 1 threshold 1 138 138 92 138",
                     "mls qos queue-set output 2 threshold 1 400 400 100 400",
                     "mls qos queue-set output 2 threshold 2 40 60 100 200",
                     "mls qos queue-set output 2 buffers 50 40 5 5", "mls qos"]
    again = fresh()
    assert load_config(rc.render(), again) == [] and again.render() == rc.render()
    assert qos_model(again).dscp_output_queue == qos_model(rc).dscp_output_queue


def test_single_valued_lines_replace_and_free_text_is_taken():
    rc = fresh()
    run(rc, "snmp-server location rack 1", "snmp-server location rack 2 (row b)",
        "snmp-server contact ops@example.net (24/7)", "snmp-server contact noc@example.net",
        "snmp-server community qoslab-ro RO 10", "snmp-server community qoslab-ro RW",
        "mls qos map dscp-cos 46 to 5", "mls qos map dscp-cos 46 to 6")
    shown = rc.render().splitlines()
    assert [line for line in shown if line.startswith("snmp-server")] == [
        "snmp-server location rack 2 (row b)", "snmp-server contact noc@example.net", "snmp-server community qoslab-ro RW"]
    assert [line for line in shown if "dscp-cos" in line] == ["mls qos map dscp-cos 46 to 6"]
    run(rc, "no snmp-server location")
    assert not any(line.startswith("snmp-server location") for line in rc.render().splitlines())


# ------------------------------------------------------------------------------------- data path
TOPO = load_topology(ECENET)


def _compiled(*acl_lines: str) -> str:
    rc = fresh()
    run(rc, "mls qos", "ip access-list extended a", *acl_lines, "exit", "class-map c", "match access-group name a",
        "policy-map pm", "class c", "set dscp 46", "interface Gi1/0/1", "service-policy input pm")
    return compile_nft(qos_model(rc), TOPO).text


def _first_rule(text: str) -> str:
    block = text[text.index("chain in_Gi1_0_1 {"):]
    return block.splitlines()[1].strip()


@pytest.mark.parametrize("line,rule", [
    ("permit udp any any gt 1023", "ip protocol udp udp dport > 1023"),
    ("permit udp any lt 1024 any", "ip protocol udp udp sport < 1024"),
    ("permit tcp any any neq 80", "ip protocol tcp tcp dport != 80"),
    ("permit tcp any any range 7400 7431", "ip protocol tcp tcp dport 7400-7431"),
    ("permit tcp any any established", "ip protocol tcp tcp flags & (ack | rst) != 0"),
    ("permit icmp any any echo", "ip protocol icmp icmp type 8"),
    ("permit icmp any any port-unreachable", "ip protocol icmp icmp type 3 icmp code 3"),
    ("permit gre any any", "ip protocol 47"),
    ("permit 200 any any", "ip protocol 200"),
    ("permit ip any any dscp af41", "ip dscp 34"),
    ("permit ip any any precedence 5", "ip dscp 40-47"),
    ("permit ip host 198.18.0.1 198.18.0.0 0.0.0.255", "ip saddr 198.18.0.1/32 ip daddr 198.18.0.0/24"),
    ("permit ip 10.0.1.0 0.255.0.255 any", "ip saddr & 255.0.255.0 == 10.0.1.0"),
    ("permit tcp any any established psh", "ip protocol tcp tcp flags & (ack | rst) != 0 tcp flags & 0x08 == 0x08"),
    ("permit tcp any any match-all +ack -fin", "ip protocol tcp tcp flags & 0x11 { 0x10 }"),
    ("permit tcp any any match-any +ack -fin", "ip protocol tcp tcp flags & 0x11 { 0x00, 0x10, 0x11 }"),
    ("permit ip any any fragments", "ip frag-off & 0x1fff != 0"),
    ("permit ip any any tos max-reliability", "@nh,8,8 & 0x1e == 0x04"),
])
def test_each_form_compiles_to_the_nft_match_of_its_fields(line, rule):
    assert _first_rule(_compiled(line)) == f"{rule} goto a_Gi1_0_1_1"


@pytest.mark.skipif(shutil.which("nft") is None, reason="nft (Debian nftables) not installed: make setup")
def test_a_ruleset_with_every_form_is_accepted_by_nft():
    text = _compiled(*[typed for typed, _ in EXTENDED], "deny tcp any any eq 25")
    p = subprocess.run(["nft", "-c", "-f", "-"], input=text, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_log_is_named_as_not_emulated_and_standard_lists_match_the_source():
    rc = fresh()
    run(rc, "mls qos", "access-list 5 permit 198.18.0.0 0.0.0.255 log", "class-map c", "match access-group 5",
        "policy-map pm", "class c", "set dscp 46", "interface Gi1/0/1", "service-policy input pm")
    plan = compile_nft(qos_model(rc), TOPO)
    assert _first_rule(plan.text) == "ip saddr 198.18.0.0/24 goto a_Gi1_0_1_1"
    assert "access-list 5: log/log-input is not emulated (the entries match, nothing is logged)" in plan.notes


def test_addresses_are_kept_masked():
    assert Addr.of("10.4.4.2", "0.0.255.255") == Addr.of("10.4.0.0", "0.0.255.255")
    assert Addr.of("10.0.0.1").network is not None and Addr.of("10.0.1.0", "0.255.0.255").network is None
    assert Ports("range", 1, 2).text("tcp") == "range 1 2"


@pytest.mark.parametrize("name", ["thesis", "police-flood", "rmi-ports", "trust-dscp", "fifo"])
def test_9300_renders_its_access_lists_as_ios_xe_shows_them(name):
    """Every line the 9300 renderer emits appears verbatim in the IOS-XE running-config that
    results (numbered sections, numbered entries): a second Ansible ``ios_config`` push changes
    nothing, as the 3750's test_ios.py::test_rendered_profile_lines_are_what_ios_shows."""
    from qoslab.platforms import get_platform
    from qoslab.profiles import load_profile

    lines = get_platform("catalyst9300").render(load_profile(name), TOPO)
    rc = RunningConfig.factory("Switch", TOPO.switch.ports, "c9300")
    assert load_config("\n".join(lines), rc) == []
    shown = set(rc.render().splitlines())
    assert [line for line in lines if line not in shown and f" {line.strip()}" not in shown] == []
