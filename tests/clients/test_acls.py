"""Access lists through the real clients against the virtual Catalyst 3750 (issue 43): every form
of the extended and standard grammar loads with Netmiko and reads back as IOS prints it (ntc-
templates ``show access-list``); a taken sequence number is refused with IOS's own message (which
Netmiko's error pattern catches); ``qoslab switch push`` still works, and a second one sends
nothing, after a client left remarks twice, an inserted entry and renumbered lists; Ansible
``cisco.ios.ios_acls`` with ``state: merged`` run twice changes nothing the second time.
tests/clients/test_acls_xe.py runs the same against the virtual 9300."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from netmiko.exceptions import ConfigInvalidException

from conftest import REPO

from .test_ansible import ANSIBLE, run_play

ERR = r"% ?(Invalid input|Incomplete command|Ambiguous command|Duplicate sequence number)"
DEVICE_TYPE = "cisco_ios"

#: (typed, as ``show access-lists`` prints it): one entry of each form (tests/unit/test_acl.py has all).
FORMS = [
    ("permit icmp any any echo", "permit icmp any any echo"),
    ("permit igmp any any", "permit igmp any any"),
    ("permit gre host 198.18.0.1 any", "permit gre host 198.18.0.1 any"),
    ("permit ospf any any", "permit ospf any any"),
    ("permit 103 any any", "permit pim any any"),
    ("permit tcp any any established", "permit tcp any any established"),
    ("permit tcp any any eq 80", "permit tcp any any eq www"),
    ("permit udp any eq domain any", "permit udp any eq domain any"),
    ("permit tcp any gt 1023 any lt 1024", "permit tcp any gt 1023 any lt 1024"),
    ("permit tcp any any neq telnet", "permit tcp any any neq telnet"),
    ("permit udp any any range 5000 5100", "permit udp any any range 5000 5100"),
    ("permit ip any any dscp ef", "permit ip any any dscp ef"),
    ("permit ip any any precedence 5", "permit ip any any precedence critical"),
    ("deny ip 198.18.0.0 0.0.255.255 any log", "deny ip 198.18.0.0 0.0.255.255 any log"),
]
STANDARD = [("permit host 198.18.0.1", "permit 198.18.0.1"),
            ("permit 198.18.0.0 0.0.0.255", "permit 198.18.0.0, wildcard bits 0.0.0.255"),
            ("deny any log", "deny   any log")]


@pytest.fixture(scope="module")
def conn(vswitch, request):
    """A Netmiko session of the module's ``DEVICE_TYPE`` (test_acls_xe.py runs these tests again)."""
    c = vswitch.netmiko(getattr(request.module, "DEVICE_TYPE", DEVICE_TYPE), "c3750")
    yield c
    c.disconnect()


def test_every_form_loads_and_reads_back_as_ios_prints_it(conn):
    conn.send_config_set(["ip access-list extended forms", *[t for t, _ in FORMS], "ip access-list standard mgmt",
                          *[t for t, _ in STANDARD], "exit", "access-list 10 permit 198.18.0.0 0.0.255.255",
                          "access-list 2000 permit udp any any eq 9"], error_pattern=ERR)
    rows = conn.send_command("show access-lists", use_textfsm=True)
    by_name: dict[str, list[str]] = {}
    for r in rows:
        by_name.setdefault(r["name"], []).append(r["sn"])
    assert by_name["forms"] == [str(10 * i) for i in range(1, len(FORMS) + 1)]
    shown = conn.send_command("show access-lists forms")
    assert shown.splitlines()[0] == "Extended IP access list forms"
    assert [line.split(None, 1)[1] for line in shown.splitlines()[1:]] == [s for _, s in FORMS]
    std = conn.send_command("show ip access-lists mgmt").splitlines()
    assert std[0] == "Standard IP access list mgmt" and [line.split(None, 1)[1] for line in std[1:]] == \
        [s for _, s in STANDARD]
    assert "2000" in by_name and by_name["10"] == ["10"]


def test_a_taken_sequence_number_is_refused_with_ios_message(conn):
    conn.send_config_set(["ip access-list extended seqs", "10 permit udp any any eq 9", "30 permit udp any any eq 7",
                          "20 permit tcp any any", "permit udp any any eq 9"], error_pattern=ERR)
    for line in ("10 permit ip any any", "10 permit udp any any eq 9"):  # the same entry too: a list pasted twice
        with pytest.raises(ConfigInvalidException, match="Duplicate sequence number"):
            conn.send_config_set(["ip access-list extended seqs", line], error_pattern=ERR)
        conn.exit_config_mode()  # Netmiko stops at the refused line, in configuration mode
    shown = conn.send_command("show access-lists seqs").splitlines()[1:]
    assert [line.split()[0] for line in shown] == ["10", "20", "30"]
    assert shown[0].split(None, 1)[1] == "permit udp any any eq discard"


def test_qoslab_push_works_after_other_clients_acl_edits(conn, vswitch, tmp_path):
    cmd = [sys.executable, "-m", "qoslab", "switch", "push", "rmi-ports", "-t", str(vswitch.topology), "--out",
           str(tmp_path)]
    first = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    conn.send_config_set(["ip access-list extended rmi", "remark registry", "remark registry",
                          "15 permit udp any any eq 9", "ip access-list resequence rmi 3 7"], error_pattern=ERR)
    again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "permit udp any any eq discard" not in conn.send_command("show access-lists rmi")
    third = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert third.returncode == 0 and "nothing sent" in third.stdout, third.stdout + third.stderr


# ------------------------------------------------------------------------------------- Ansible
def ansible_acl(sequences: bool) -> dict:
    """An ``ios_acls`` config: one extended and one standard list, entries with or without
    sequence numbers. A remark only with numbers: from IOS 12.2's running-config (remarks as lines
    of their own, no numbers) cisco.ios cannot tell which entry a remark belongs to and sends
    ``no remark`` and the remark again on every run, on a real 3750 as here."""
    def seq(n: int) -> dict:
        return {"sequence": n} if sequences else {}

    return {"afi": "ipv4", "acls": [
        {"name": "ans-ext", "acl_type": "extended", "aces": [
            {**seq(10), "grant": "permit", "protocol": "tcp", "source": {"any": True},
             "destination": {"any": True, "port_protocol": {"eq": "www"}}},
            {**seq(20), "grant": "deny", "protocol": "udp", "source": {"host": "198.18.0.5"},
             "destination": {"any": True, "port_protocol": {"range": {"start": 5000, "end": 5100}}}},
            {**seq(30), "grant": "permit", "protocol": "icmp", "source": {"any": True}, "destination": {"any": True},
             "protocol_options": {"icmp": {"echo": True}}},
            {**seq(40), "grant": "permit", "protocol": "ip", "source": {"any": True}, "destination": {"any": True},
             "dscp": "ef"},
            {**seq(50), "grant": "deny", "protocol": "gre", "source": {"host": "198.18.0.1"},
             "destination": {"any": True}, **({"remarks": ["no tunnels"]} if sequences else {})},
            {**seq(60), "grant": "permit", "protocol": "tcp", "source": {"any": True, "port_protocol": {"gt": "1023"}},
             "destination": {"any": True, "port_protocol": {"lt": "1024"}}},
            {**seq(70), "grant": "permit", "protocol": "tcp", "source": {"any": True}, "destination": {"any": True},
             "protocol_options": {"tcp": {"established": True}}},
            {**seq(80), "grant": "permit", "protocol": "ospf", "source": {"any": True}, "destination": {"any": True},
             "log": {"set": True}},
            {**seq(90), "grant": "permit", "protocol": "ip", "source": {"address": "198.18.0.0",
                                                                        "wildcard_bits": "0.0.255.255"},
             "destination": {"any": True}, "precedence": "critical"}]},
        {"name": "ans-std", "acl_type": "standard", "aces": [
            {**seq(10), "grant": "permit", "source": {"host": "198.18.0.1"}},
            {**seq(20), "grant": "deny", "source": {"any": True}}]}]}


def run_ansible(sw, tmp: Path, sequences: bool) -> dict:
    """``ios_acls`` merged twice, then gathered (one playbook, as users run it)."""
    cfg = [ansible_acl(sequences)]
    play = [{"hosts": "sw", "gather_facts": False, "tasks": [
        {"name": "merge", "cisco.ios.ios_acls": {"state": "merged", "config": cfg}},
        {"name": "merge again", "cisco.ios.ios_acls": {"state": "merged", "config": cfg}},
        {"name": "gathered", "cisco.ios.ios_acls": {"state": "gathered"}}]}]
    return run_play(sw, tmp, play)


#: On IOS 12.2 the running-config has no sequence numbers (cisco.ios then keys the entries by
#: position), so a merge that names numbers would send them again each time: the 3750 case uses
#: none, as a playbook for such a switch does; the 9300 case names them.
ANSIBLE_SEQUENCES = False


def test_ansible_ios_acls_merged_twice_is_a_noop(vswitch, tmp_path, request):
    if not ANSIBLE.exists():
        pytest.fail(f"{ANSIBLE} missing: `make setup` installs the test extras (ansible)")
    r = run_ansible(vswitch, tmp_path, getattr(request.module, "ANSIBLE_SEQUENCES", ANSIBLE_SEQUENCES))
    assert r["merge"]["changed"] is True and not r["merge"].get("failed"), r["merge"]
    assert r["merge again"]["changed"] is False, (r["merge again"].get("commands"), r["merge again"].get("before"))
    assert not r["merge again"].get("failed"), r["merge again"].get("msg")
    gathered = {a["name"]: a for a in r["gathered"]["gathered"][0]["acls"]}
    ext = gathered["ans-ext"]["aces"]
    assert [a["grant"] for a in ext] == ["permit", "deny", "permit", "permit", "deny", "permit", "permit", "permit",
                                         "permit"]
    assert ext[4].get("remarks") == (["no tunnels"] if request.module.__name__.endswith("_xe") else None)
    assert ext[6]["protocol_options"] == {"tcp": {"established": True}}
    assert ext[8]["precedence"] == "critical" and ext[8]["source"] == {"address": "198.18.0.0",
                                                                       "wildcard_bits": "0.0.255.255"}
    assert ext[0]["destination"]["port_protocol"] == {"eq": "www"} and ext[3]["dscp"] == "ef"
    assert ext[1]["destination"]["port_protocol"] == {"range": {"start": 5000, "end": 5100}}
    assert [a["source"] for a in gathered["ans-std"]["aces"]] == [{"host": "198.18.0.1"}, {"any": True}]
