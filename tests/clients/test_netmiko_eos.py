"""Netmiko ``arista_eos`` against the virtual Arista 7280R3 (issue 44): connect (``terminal width
511``, ``terminal length 0``, ``enable``), EOS facts, push the thesis profile rendered for EOS, read
it back in EOS's form, save; ``qoslab switch push`` (Netmiko ``arista_eos`` underneath) twice: the
second sends nothing, after ``--adopt`` took over the thesis typed by hand, which a push refuses to
change before (issue 49); an IOS line is refused with EOS's error."""

from __future__ import annotations

import subprocess
import sys

import pytest
from netmiko import ConnectHandler
from netmiko.exceptions import ConfigInvalidException

from conftest import REPO

ERR = r"% ?(Invalid input|Incomplete command|Ambiguous command)"
SWITCH_MODEL = "DCS-7280SR3-48YC8"
SSH_PROFILE = "modern"


@pytest.fixture(scope="module")
def conn(vswitch):
    c = ConnectHandler(device_type="arista_eos", host=vswitch.host, port=vswitch.port, username=vswitch.username,
                       password=vswitch.password, secret=vswitch.secret, allow_agent=False, use_keys=False,
                       ssh_strict=False, system_host_keys=False, conn_timeout=10, auth_timeout=10)
    c.enable()
    yield c
    c.disconnect()


def test_facts_are_a_7280r3_on_eos_4_32(conn):
    ver = conn.send_command("show version")
    assert ver.startswith("Arista DCS-7280SR3-48YC8\n") and "Software image version: 4.32.2F" in ver
    assert conn.find_prompt() == "Switch#"


def test_push_read_back_save_and_an_ios_line_refused(conn, vswitch):
    lines = vswitch.thesis_lines()
    conn.send_config_set(lines, error_pattern=ERR)
    run = conn.send_command("show running-config")
    assert "policy-map type quality-of-service police-jp\n   class class112\n      set dscp 40\n" in run
    assert "   !\n   tx-queue 1\n      no priority\n      bandwidth percent 33\n" in run
    assert "Copy completed successfully." in conn.save_config()
    with pytest.raises(ConfigInvalidException):
        conn.send_config_set(["mls qos"], error_pattern=ERR)
    assert "% Invalid input (at token 0: 'mls')" in conn.send_config_set(["mls qos"])


def test_second_identical_push_is_a_noop(vswitch, tmp_path):
    def push(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "qoslab", "switch", "push", *args, "-t", str(vswitch.topology),
                               "--out", str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=120)

    # the thesis typed by hand above is not qoslab's (issue 49): a push that would change it is refused
    refused = push("police-flood")
    assert refused.returncode != 0 and "policy-map type quality-of-service police-jp" in refused.stderr, \
        refused.stdout + refused.stderr
    adopt = push("thesis", "--adopt")  # ... until qoslab takes over what equals the profile
    assert adopt.returncode == 0 and "took over" in adopt.stdout, adopt.stdout + adopt.stderr
    first = push("police-flood")
    assert first.returncode == 0, first.stdout + first.stderr
    again = push("police-flood")
    assert again.returncode == 0 and "nothing sent" in again.stdout, again.stdout + again.stderr
