"""The virtual 9300 of ``playbooks/topologies/ecenet9300.yaml`` as shipped (its own name and a free
port only) over SSH (issue 43): it offers IOS-XE 17.x's algorithms, stock Netmiko ``cisco_xe``
(paramiko 5, no qoslab transport) logs in and pushes the thesis profile, ``qoslab switch push``
pushes it and a second push sends nothing, and Genie (``iosxe``, platform ``cat9k``) parses what
the live switch prints for every command both switches answer, with the switch's state in it.
Counters after traffic: tests/integration/test_fed_counters.py (a congested trial on the testbed)."""

from __future__ import annotations

import pytest

from conftest import REPO
from genie_parse import genie_device, parse
from sshwire import kexinit

TOPOLOGY = REPO / "playbooks" / "topologies" / "ecenet9300.yaml"
SSH_PROFILE = None  # the topology's own: the 9300's, IOS-XE 17.x
ERR = r"% ?(Invalid input|Incomplete command|Ambiguous command)"


def test_offers_ios_xe_17_algorithms(vswitch):
    kex, hostkey, enc, _, mac, *_ = kexinit(vswitch.host, vswitch.port)
    assert kex.startswith("ecdh-sha2-nistp256,") and "sha1" not in kex and "group1-" not in kex
    assert hostkey == "rsa-sha2-512,rsa-sha2-256" and "cbc" not in enc and enc.startswith("aes128-gcm@openssh.com")
    assert "sha1" not in mac and "md5" not in mac


@pytest.fixture(scope="module")
def conn(vswitch):
    c = vswitch.stock_netmiko("cisco_xe")
    yield c
    c.disconnect()


def test_stock_netmiko_cisco_xe_pushes_the_thesis_profile(vswitch, conn):
    lines = vswitch.thesis_lines()
    out = conn.send_config_set(lines, error_pattern=ERR)
    assert "%" not in out
    conn.save_config()
    run = conn.send_command("show running-config")
    assert "policy-map QOSLAB-QUEUING" in run and " service-policy output QOSLAB-QUEUING" in run


def test_qoslab_switch_push_and_a_second_push_sends_nothing(vswitch, tmp_path):
    """The push's client settings follow the server's profile: stock paramiko for ``iosxe17``."""
    first = vswitch.push_thesis(tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    again = vswitch.push_thesis(tmp_path)
    assert again.returncode == 0 and "nothing sent" in again.stdout, again.stdout + again.stderr


@pytest.fixture(scope="module")
def xe():
    return genie_device("catalyst9300")


def _parse(conn, xe, cmd: str) -> dict:
    return parse(xe, cmd, conn.send_command(cmd))


def test_genie_reads_the_live_9300(conn, xe, vswitch):
    """Every command the 9300 answers that genieparser reads, parsed from the live switch (after
    the thesis push: the class-maps, policies and per-port policies are the switch's)."""
    conn.send_config_set(vswitch.thesis_lines(), error_pattern=ERR)
    v = _parse(conn, xe, "show version")["version"]
    assert v["xe_version"] == "17.09.05" and v["switch_num"]["1"]["ports"] == "24"
    assert v["switch_num"]["1"]["model"] == "C9300-24T" and v["switch_num"]["1"]["sw_image"] == "CAT9K_IOSXE"
    assert "C9300-24T" in _parse(conn, xe, "show inventory")["slot"]["1"]["rp"]
    assert _parse(conn, xe, "show environment all")["switch"]["1"]["fan"]["1"]["state"] == "ok"
    intf = _parse(conn, xe, "show interfaces")
    assert list(intf)[0] == "Vlan1" and len(intf) == 25
    assert len(_parse(conn, xe, "show ip interface brief")["interface"]) == 25
    assert _parse(conn, xe, "show interfaces status")["interfaces"]["GigabitEthernet1/0/1"]["vlan"] == "1"
    assert len(_parse(conn, xe, "show vlan brief")["vlan"]["vlan1"]["vlan_port"]) == 24  # Netmiko: width 511
    pm = _parse(conn, xe, "show policy-map")["policy_map"]
    assert pm["QOSLAB-QUEUING"]["class"]["QOSLAB-Q1"]["priority_levels"] == 1
    assert pm["police-jp"]["class"]["class112"]["set"] == "dscp cs5"
    pmi = _parse(conn, xe, "show policy-map interface GigabitEthernet1/0/1")["GigabitEthernet1/0/1"]
    inp = pmi["service_policy"]["input"]["policy_name"]["police-jp"]["class_map"]
    assert inp["class112"]["match"] == ["access-group 112"] and "class-default" in inp
    outp = pmi["service_policy"]["output"]["policy_name"]["QOSLAB-QUEUING"]["class_map"]
    assert set(outp) == {"QOSLAB-Q1", "QOSLAB-Q3", "QOSLAB-Q4", "class-default"}
    cm = _parse(conn, xe, "show class-map QOSLAB-Q1")["class_maps"]["QOSLAB-Q1"]
    assert cm["match_criteria"] == "match-any"
    assert _parse(conn, xe, "show processes cpu")["five_sec_cpu_total"] >= 0
    assert "GigabitEthernet1/0/1" in _parse(conn, xe, "show interfaces summary")["interfaces"]
    fed = _parse(conn, xe, "show platform hardware fed switch active qos queue stats interface Gi1/0/1")
    assert set(fed["enqueue_counters"]) == set(range(8)) and set(fed["drop_counters"]) == set(range(8))
