"""Netmiko ``cisco_xe`` against the virtual Catalyst 9300 (issue 36): connect, IOS-XE facts, push
the thesis profile rendered for the 9300 (MQC), read it back as IOS-XE prints it, save; a second
identical push through qoslab's push sends nothing; a 3750 line is refused."""

from __future__ import annotations

import subprocess
import sys

import pytest
from netmiko.exceptions import ConfigInvalidException

from conftest import REPO
from qoslab.switch.legacyssh import netmiko_class

ERR = r"% ?(Invalid input|Incomplete command|Ambiguous command)"
SWITCH_MODEL = "C9300-24T"


@pytest.fixture(scope="module")
def conn(vswitch):
    c = netmiko_class("c3750")(device_type="cisco_xe", host=vswitch.host, port=vswitch.port,
                               username=vswitch.username, password=vswitch.password, secret=vswitch.secret,
                               allow_agent=False, use_keys=False, ssh_strict=False, system_host_keys=False,
                               conn_timeout=10, auth_timeout=10)
    c.enable()
    yield c
    c.disconnect()


def _lines(vswitch) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "qoslab", "switch", "render", "thesis", "-t", str(vswitch.topology)],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def test_facts_are_a_9300_on_ios_xe(conn):
    ver = conn.send_command("show version")
    assert ver.startswith("Cisco IOS XE Software, Version 17.") and "C9300-24T" in ver
    assert "version 17.9" in conn.send_command("show running-config")


def test_push_mqc_read_back_and_save(conn, vswitch):
    lines = _lines(vswitch)
    assert "  priority level 1" in lines and not any(line.startswith("mls qos") for line in lines)
    conn.send_config_set(lines, error_pattern=ERR)
    run = conn.send_command("show running-config")
    assert "policy-map QOSLAB-QUEUING" in run and " service-policy output QOSLAB-QUEUING" in run
    assert " match dscp cs5 41 42 43 44 45 ef 47" in run and "  set dscp cs5" in run
    assert "[OK]" in conn.save_config()
    pmi = conn.send_command("show policy-map interface Gi1/0/1")
    assert "Service-policy output: QOSLAB-QUEUING" in pmi and "(bytes output)" in pmi


def test_second_identical_push_is_a_noop(vswitch, tmp_path):
    first = vswitch.push_thesis(tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    again = vswitch.push_thesis(tmp_path)
    assert again.returncode == 0 and "nothing sent" in again.stdout, again.stdout + again.stderr


def test_a_3750_line_is_invalid_on_ios_xe(conn):
    with pytest.raises(ConfigInvalidException, match="Invalid input"):
        conn.send_config_set(["mls qos"], error_pattern=ERR)
    assert "Invalid input" in conn.send_command("show mls qos")
