"""scrapli (2.x, ``cisco_iosxe`` definition, ssh2 transport) against the virtual Catalyst: open
(enable through the definition's prompted input), facts, push the thesis profile, read back,
save, re-push (no change), a rejected line, a wrong password."""

from __future__ import annotations

import time

import pytest
from scrapli import AuthOptions, Cli, LookupKeyValue, TransportSsh2Options
from scrapli.exceptions import OperationException


def _cli(sw, password=None) -> Cli:
    return Cli(sw.host, port=sw.port, definition_file_or_name="cisco_iosxe",
               auth_options=AuthOptions(username=sw.username, password=password or sw.password,
                                        lookups=[LookupKeyValue(key="enable", value=sw.secret)]),
               transport_options=TransportSsh2Options())


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
    line (echoed in full, rejected whole) is answered within 1 s, and configuration mode follows."""
    t = time.monotonic()
    r = cli.send_input("x" * 65536)
    assert time.monotonic() - t < 1 and r.failed and "% Invalid input detected at '^' marker." in r.result
    r = cli.send_inputs(["interface Gi1/0/2", "description after-a-long-line"], requested_mode="configuration")
    assert not r.failed
    assert "description after-a-long-line" in cli.send_input("show running-config interface Gi1/0/2").result


def test_wrong_password_is_refused(vswitch):
    c = _cli(vswitch, password="not-the-password")
    with pytest.raises(OperationException, match="Transport"):  # libscrapli: the failed auth as "Transport: "
        c.open()
