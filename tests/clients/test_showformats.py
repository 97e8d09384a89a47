"""Show commands that parsers and people read, through netmiko (``cisco_ios``), against the formats
of the samples in tests/data/ios-samples/ (which Cisco document each follows: its README):
``show mls qos maps`` (all nine maps) and one map, ``show running-config interface`` (short and
long names), ``show running-config partition access-list`` (ntc-templates' ACL template),
``show monitor [session N]``, ``show startup-config`` (``Using N out of M bytes``)."""

from __future__ import annotations

import re

import pytest

from conftest import REPO

SAMPLES = REPO / "tests" / "data" / "ios-samples"
#: this module's switch announces today's algorithms (its SSH profile ``modern``): a stock Netmiko
#: over paramiko 5 connects to it as it is
SSH_PROFILE = "modern"
ERR = r"% ?(Invalid input|Incomplete command|Ambiguous command)"


def _sample(name: str) -> str:
    return (SAMPLES / name).read_text()


def _body(text: str) -> list[str]:
    """A config display without its byte count (which depends on the whole text)."""
    return [re.sub(r"^Current configuration : \d+ bytes$", "Current configuration : N bytes", l)
            for l in text.strip("\n").splitlines()]


@pytest.fixture(scope="module")
def conn(vswitch):
    c = vswitch.stock_netmiko("cisco_ios")
    yield c
    c.disconnect()


def test_mls_qos_maps_all_nine_and_one(conn):
    """At factory defaults ``show mls qos maps`` prints the 3750's nine maps as the sample does;
    ``show mls qos maps dscp-cos`` prints that one, and follows ``mls qos map dscp-cos``."""
    sample = _sample("c3750-maps-default.txt")
    out = conn.send_command("show mls qos maps", strip_prompt=True)
    assert out.strip("\n").splitlines() == sample.strip("\n").splitlines()
    titles = re.findall(r"^   (\S.*map):$", out, re.M)
    assert titles == ["Policed-dscp map", "Dscp-cos map", "Cos-dscp map", "IpPrecedence-dscp map",
                      "Dscp-outputq-threshold map", "Dscp-inputq-threshold map", "Cos-outputq-threshold map",
                      "Cos-inputq-threshold map", "Dscp-dscp mutation map"]
    real = _sample("c3750-dscp-output-q-default.txt")  # a real 3750's default map (README: its source)
    block = next(b for b in out.split("\n\n") if "Dscp-outputq-threshold" in b)
    assert [l.rstrip() for l in block.strip("\n").splitlines()] == [l.rstrip() for l in real.strip("\n").splitlines()]
    one = conn.send_command("show mls qos maps dscp-cos")
    block = sample.split("\n\n")[1]
    assert one.strip("\n") == block.strip("\n")
    conn.send_config_set(["mls qos map dscp-cos 46 to 7"], error_pattern=ERR)
    row4 = next(l for l in conn.send_command("sh mls qos maps dscp-c").splitlines() if l.startswith("      4 :"))
    assert row4.split()[2:] == ["05", "05", "05", "05", "05", "05", "07", "05", "06", "06"]
    conn.send_config_set(["no mls qos map dscp-cos 46 to 7"], error_pattern=ERR)
    assert "Dscp-outputq-threshold map:" in conn.send_command("show mls qos maps dscp-output-q")


def test_running_config_interface_short_and_long_names(conn):
    sample = _sample("c3750-running-config-interface.txt")
    lines = [l.strip() for l in sample.splitlines()[5:] if l.startswith(" ")]
    conn.send_config_set(["interface GigabitEthernet1/0/1", *lines], error_pattern=ERR)
    outs = [conn.send_command(c) for c in ("show running-config interface Gi1/0/1",
                                          "show running-config interface GigabitEthernet1/0/1",
                                          "sh run int g1/0/1")]
    assert outs[0] == outs[1] == outs[2]
    assert _body(outs[0]) == _body(sample)
    assert "^" in conn.send_command("show running-config interface Gi1/0/99")


def test_running_config_partition_access_list_parses_with_ntc_templates(conn):
    """The ACLs only, as the sample; entered in another order (112, the named list, 100), listed
    in IOS's (named, then numbered by number); ntc-templates' template reads every entry."""
    conn.send_config_set(["access-list 112 permit ip host 10.1.1.1 host 10.1.1.2",
                          "ip access-list extended mgmt", "permit tcp 10.0.0.0 0.0.0.255 any eq 22", "exit",
                          "access-list 100 permit udp any any eq 9"], error_pattern=ERR)
    out = conn.send_command("show running-config partition access-list")
    assert _body(out) == _body(_sample("ios-running-config-partition-access-list.txt"))
    parsed = conn.send_command("show running-config partition access-list", use_textfsm=True)
    entries = [(r["acl_name"], r["action"], r["protocol"]) for r in parsed if r["action"]]
    assert entries == [("mgmt", "permit", "tcp"), ("100", "permit", "udp"), ("112", "permit", "ip")]


def test_show_monitor_from_the_running_config(conn):
    conn.send_config_set(["monitor session 1 source interface gi1/0/2", "monitor session 1 source interface Gi1/0/1",
                          "monitor session 1 source interface Gi1/0/4 rx",
                          "monitor session 1 destination interface Gi1/0/24 encapsulation replicate"],
                         error_pattern=ERR)
    sample = _sample("c3750-monitor-session.txt").strip("\n").splitlines()
    assert conn.send_command("show monitor session 1").strip("\n").splitlines() == sample
    assert conn.send_command("show monitor").strip("\n").splitlines() == sample
    assert conn.send_command("show monitor session 2").strip() == ""
    assert "monitor session 1 source interface Gi1/0/2" in conn.send_command("show running-config | include monitor")


def test_startup_config_starts_with_nvram_use(conn):
    head = re.compile(r"^Using (\d+) out of 524288 bytes$")
    assert head.match(_sample("c3750-startup-config-head.txt").splitlines()[0])
    conn.save_config()
    out = conn.send_command("show startup-config")
    first, rest = out.split("\n", 1)
    m = head.match(first)
    assert m and rest.startswith("!\nversion 12.2\n") and "Current configuration" not in out
    assert int(m.group(1)) == len(rest.rstrip("\n").encode()) + 1  # the saved text, its final newline
