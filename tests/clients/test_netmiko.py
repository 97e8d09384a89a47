"""Netmiko ``cisco_ios`` against the virtual Catalyst, used as its users use it: connect, enable,
facts through ntc-templates (``use_textfsm``), push the thesis profile, read it back, save,
re-push (no change), a rejected line, a wrong password."""

from __future__ import annotations

import pytest
from netmiko.exceptions import ConfigInvalidException, NetmikoAuthenticationException

from qoslab.switch.legacyssh import netmiko_class

ERR = r"% ?(Invalid input|Incomplete command|Ambiguous command)"


def _connect(sw, password=None):
    return netmiko_class("c3750")(device_type="cisco_ios", host=sw.host, port=sw.port, username=sw.username,
                          password=password or sw.password, secret=sw.secret, allow_agent=False, use_keys=False,
                          ssh_strict=False, system_host_keys=False, conn_timeout=10, auth_timeout=10)


@pytest.fixture(scope="module")
def conn(vswitch):
    c = _connect(vswitch)
    c.enable()
    yield c
    c.disconnect()


def test_connect_and_facts(conn):
    assert conn.find_prompt() == "Switch#"
    ver = conn.send_command("show version", use_textfsm=True)[0]
    assert ver["version"] == "12.2(55)SE12" and ver["hardware"] == ["WS-C3750G-24T"]
    assert ver["serial"][0].startswith("QSL")
    status = conn.send_command("sh int status", use_textfsm=True)
    assert len(status) == 24 and status[0]["port"] == "Gi1/0/1" and status[0]["status"] == "connected"
    inv = conn.send_command("show inventory", use_textfsm=True)
    assert inv[0]["pid"] == "WS-C3750G-24T-S"


def test_push_read_back_save_and_repush_is_a_noop(conn, vswitch):
    lines = vswitch.thesis_lines()
    conn.send_config_set(lines, error_pattern=ERR)
    run = conn.send_command("show running-config")
    assert "policy-map police-jp" in run and "mls qos srr-queue input priority-queue 2 bandwidth 40" in run
    assert "[OK]" in conn.save_config()
    assert conn.send_command("sh start | include police-jp").strip().startswith("policy-map police-jp")
    conn.send_config_set(lines, error_pattern=ERR)
    assert conn.send_command("show running-config") == run
    stats = conn.send_command("sh mls qos int gi1/0/1 stat")
    assert "output queues dropped" in stats and "Policer: Inprofile:" in stats
    assert "The port is mapped to qset : 2" in conn.send_command("show mls qos interface g1/0/1 queueing")


def test_invalid_line_gives_the_caret(conn):
    bad = "mls qos srr-queue input priority-queue input 2 bandwidth 40"
    with pytest.raises(ConfigInvalidException, match="Invalid input"):
        conn.send_config_set([bad], error_pattern=ERR)
    conn.config_mode()
    out = conn.send_command_timing(bad, strip_prompt=False, strip_command=False)
    conn.exit_config_mode()
    caret = next(l for l in out.splitlines() if l.strip() == "^")
    assert caret.index("^") == len("Switch(config)#") + bad.index("input 2")


def test_wrong_password_is_refused(vswitch):
    with pytest.raises(NetmikoAuthenticationException):
        _connect(vswitch, password="not-the-password")
