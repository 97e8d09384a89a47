"""Acceptance of issue 49 on the virtual Catalyst 3750, through the path users take: an operator's
configuration (a management access list, a VTY ``access-class``, SNMP, a foreign policy-map on a
port), typed with Netmiko, survives ``qoslab switch push thesis`` and then ``push fifo`` byte for
byte except the profiles' lines and qoslab's record (``QOSLAB-OWNED``); a push that would change
the operator's configuration is refused naming the line, and nothing is sent.
tests/clients/test_push_ownership_xe.py and _eos.py run the same on the 9300 and the 7280R3."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from pushdiff import changed_lines

ERR = r"% ?(Invalid input|Incomplete command|Ambiguous command|Duplicate sequence number)"
DEVICE_TYPE = "cisco_ios"
#: The operator's configuration (what the issue names), as typed.
FOREIGN = [
    "ip access-list extended MGMT-EXT", "permit tcp 192.0.2.0 0.0.0.255 any eq 22", "deny ip any any log", "exit",
    "line vty 0 4", "access-class MGMT-EXT in", "exit", "snmp-server community public RO", "snmp-server location lab",
    "class-map match-any FOREIGN-CM", "match access-group name MGMT-EXT", "exit", "policy-map FOREIGN-PM",
    "class FOREIGN-CM", "set dscp 46", "exit", "exit", "interface GigabitEthernet1/0/10",
    "service-policy input FOREIGN-PM", "exit"]
#: A line the operator adds to a port the profile configures (the thesis sets another value).
CONFLICT = ["interface GigabitEthernet1/0/1", "srr-queue bandwidth share 10 20 30 40", "exit"]
CONFLICT_SHOWN = "interface GigabitEthernet1/0/1 / srr-queue bandwidth share 10 20 30 40"
#: The lines that must survive verbatim (contiguous, as the switch printed them before the push).
KEPT_BLOCKS = ["ip access-list extended MGMT-EXT\n permit tcp 192.0.2.0 0.0.0.255 any eq 22\n deny   ip any any log\n",
               "line vty 0 4\n access-class MGMT-EXT in\n login\n", "snmp-server community public RO\n",
               "policy-map FOREIGN-PM\n class FOREIGN-CM\n  set dscp 46\n",
               "interface GigabitEthernet1/0/10\n service-policy input FOREIGN-PM\n"]


def connect(sw, device_type: str):
    """The operator's Netmiko session (module's ``DEVICE_TYPE``; the 3750's legacy algorithms)."""
    return sw.netmiko(device_type, "c3750")


@pytest.fixture(scope="module")
def conn(vswitch, request):
    mod = request.module
    c = getattr(mod, "connect", connect)(vswitch, getattr(mod, "DEVICE_TYPE", DEVICE_TYPE))
    yield c
    c.disconnect()


def qoslab_push(sw, profile: str, out) -> subprocess.CompletedProcess:
    """``qoslab switch push PROFILE`` to the switch (device ``virtual``), as a user types it."""
    return subprocess.run([sys.executable, "-m", "qoslab", "switch", "push", profile, "-t", str(sw.topology),
                           "--out", str(out)], cwd=REPO, capture_output=True, text=True, timeout=180)


def profile_lines(sw, profile: str) -> set[str]:
    out = subprocess.run([sys.executable, "-m", "qoslab", "switch", "render", profile, "-t", str(sw.topology)],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    return {line.strip() for line in out.splitlines()}


def test_foreign_config_survives_pushes_byte_for_byte(conn, vswitch, tmp_path, request):
    mod = request.module
    conn.send_config_set(getattr(mod, "FOREIGN", FOREIGN), error_pattern=ERR)
    before = conn.send_command("show running-config")
    for block in getattr(mod, "KEPT_BLOCKS", KEPT_BLOCKS):
        assert block in before, block
    allowed = {"!"}
    for profile in ("thesis", "fifo"):
        res = qoslab_push(vswitch, profile, tmp_path)
        assert res.returncode == 0 and f"{profile} pushed" in res.stdout, res.stdout + res.stderr
        after = conn.send_command("show running-config")
        allowed |= profile_lines(vswitch, profile)
        gone, added = changed_lines(before, after)
        assert gone == [], (profile, gone)
        assert [a for a in added if a.strip() not in allowed and not a.startswith("interface ")] == [], profile
        for block in getattr(mod, "KEPT_BLOCKS", KEPT_BLOCKS):
            assert block in after, (profile, block)
    assert "police-jp" not in after and "QOSLAB-OWNED" in after  # the thesis is gone, fifo's SPAN recorded
    again = qoslab_push(vswitch, "fifo", tmp_path)
    assert again.returncode == 0 and "nothing sent" in again.stdout, again.stdout + again.stderr


def test_a_push_that_would_change_the_operators_config_is_refused_naming_the_line(conn, vswitch, tmp_path, request):
    mod = request.module
    conflict = getattr(mod, "CONFLICT", CONFLICT)
    conn.send_config_set(conflict, error_pattern=ERR)
    try:
        before = conn.send_command("show running-config")
        res = qoslab_push(vswitch, "thesis", tmp_path)
        assert res.returncode != 0
        message = " ".join((res.stdout + res.stderr).split())
        assert "refusing to push thesis" in message and getattr(mod, "CONFLICT_SHOWN", CONFLICT_SHOWN) in message, \
            message
        assert conn.send_command("show running-config") == before  # nothing was sent
    finally:  # the operator takes the line back (the module's other test starts without it)
        conn.send_config_set([conflict[0], "no " + conflict[1], "exit"], error_pattern=ERR)
