"""scrapli (2.x, ``cisco_iosxe`` definition, ssh2 transport) against the virtual Catalyst in its
3750 SSH profile: open (enable through the definition's prompted input), facts, push the thesis
profile, read back, save, re-push (no change), a rejected line, a wrong password; the ``bin``
transport (the system's OpenSSH) with the options a 3750 on 12.2(55)SE needs."""

from __future__ import annotations

import time

import pytest
from scrapli import AuthOptions, Cli, LookupKeyValue, TransportBinOptions, TransportSsh2Options
from scrapli.exceptions import OperationException

#: OpenSSH (9.x) options for a 3750 on 12.2(55)SE: SHA-1 key exchanges, ssh-rsa host keys, CBC, SHA-1 MACs
OPENSSH_3750 = ["-o", "KexAlgorithms=+diffie-hellman-group14-sha1,diffie-hellman-group1-sha1",
                "-o", "HostKeyAlgorithms=+ssh-rsa", "-o", "Ciphers=+aes128-cbc,3des-cbc", "-o", "MACs=+hmac-sha1"]


def _cli(sw, password=None, transport=None) -> Cli:
    return Cli(sw.host, port=sw.port, definition_file_or_name="cisco_iosxe",
               auth_options=AuthOptions(username=sw.username, password=password or sw.password,
                                        lookups=[LookupKeyValue(key="enable", value=sw.secret)]),
               transport_options=transport or TransportSsh2Options())


@pytest.fixture(scope="module")
def cli(vswitch):
    c = _cli(vswitch)
    c.open()
    yield c
    c.close()


def test_open_and_facts(cli):
    ver = cli.send_input("show version")
    assert not ver.failed and "Version 12.2(55)SE12" in ver.result
    assert "Current privilege level is 15" in cli.send_input("show privilege").result


def test_push_read_back_save_and_repush_is_a_noop(cli, vswitch):
    lines = vswitch.thesis_lines()
    r = cli.send_inputs(lines, requested_mode="configuration")
    assert not r.failed
    run = cli.send_input("show running-config").result
    assert "policy-map police-jp" in run and " priority-queue out" in run
    assert "[OK]" in cli.send_input("write memory").result
    assert not cli.send_inputs(lines, requested_mode="configuration").failed
    assert cli.send_input("show running-config").result == run
    assert "class-default" in cli.send_input("show class-map").result


def test_invalid_line_gives_the_caret(cli):
    r = cli.send_input("mls qos srr-queue input priority-queue input 2 bandwidth 40", requested_mode="configuration")
    assert r.failed and "% Invalid input detected at '^' marker." in r.result and "^" in r.result


def test_long_line_answered_at_once_and_next_lines_in_the_right_mode(cli):
    """scrapli waits for the echo of what it typed before it sends the return: a 65,536-character
    line (echoed in full, rejected whole) is answered at once (within 5 s on this shared machine;
    a switch that does not echo it leaves scrapli waiting until its operation timeout), and
    configuration mode follows."""
    t = time.monotonic()
    r = cli.send_input("x" * 65536)
    assert time.monotonic() - t < 5 and r.failed and "% Invalid input detected at '^' marker." in r.result
    r = cli.send_inputs(["interface Gi1/0/2", "description after-a-long-line"], requested_mode="configuration")
    assert not r.failed
    assert "description after-a-long-line" in cli.send_input("show running-config interface Gi1/0/2").result


def test_wrong_password_is_refused(vswitch):
    c = _cli(vswitch, password="not-the-password")
    with pytest.raises(OperationException, match="Transport"):  # libscrapli: the failed auth as "Transport: "
        c.open()


def test_system_openssh_needs_the_3750_options(vswitch, tmp_path):
    """scrapli's ``bin`` transport (OpenSSH 9): refused by default ("no matching key exchange"),
    connects with :data:`OPENSSH_3750` (the host key pinned in a known_hosts file)."""
    kh = tmp_path / "known_hosts"
    kh.write_text(f"[{vswitch.host}]:{vswitch.port} " + (vswitch.state / "ssh_host_key.pub").read_text())
    pin = dict(known_hosts_path=str(kh), enable_strict_key=True)
    with pytest.raises(OperationException, match="no matching key exchange"):
        _cli(vswitch, transport=TransportBinOptions(**pin)).open()
    c = _cli(vswitch, transport=TransportBinOptions(extra_open_args=OPENSSH_3750, **pin))
    c.open()
    try:
        assert "Current privilege level is 15" in c.send_input("show privilege").result
    finally:
        c.close()
