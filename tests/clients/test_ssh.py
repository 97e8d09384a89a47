"""The SSH transport as a person or a script uses it (paramiko with qoslab's LegacyTransport: the
switch announces a 3750's SHA-1 algorithms): the exec channel answers one command and closes,
``terminal length`` paging with ``--More--``, ``enable`` with three tries, user-EXEC limits, SCP
refused until ``ip scp server enable``."""

from __future__ import annotations

import time

import paramiko
import pytest

from qoslab.switch.legacyssh import LegacyTransport


def _client(sw) -> paramiko.SSHClient:
    c = paramiko.SSHClient()
    c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    c.connect(sw.host, sw.port, sw.username, sw.password, allow_agent=False, look_for_keys=False, timeout=10,
              transport_factory=LegacyTransport)
    return c


def test_exec_channel_answers_and_closes(vswitch):
    c = _client(vswitch)
    try:
        t = time.monotonic()
        _, out, _ = c.exec_command("show version", timeout=10)
        text = out.read().decode()
        assert out.channel.recv_exit_status() == 0 and time.monotonic() - t < 5
        assert text.startswith("Cisco IOS Software, C3750 Software") and "Processor board ID QSL" in text
        _, out, _ = c.exec_command("show running-config", timeout=10)  # user EXEC: not available
        assert "% Invalid input detected at '^' marker." in out.read().decode()
        _, out, _ = c.exec_command("sh ip int br | include 1/0/1 ", timeout=10)
        assert out.read().decode().splitlines()[0].startswith("GigabitEthernet1/0/1 ")
    finally:
        c.close()


def _read_until(chan, marker: str, timeout: float = 5) -> str:
    buf, end = "", time.monotonic() + timeout
    while marker not in buf and time.monotonic() < end:
        if chan.recv_ready():
            buf += chan.recv(65536).decode()
        else:
            time.sleep(0.02)
    assert marker in buf, buf[-300:]
    return buf


def test_shell_enable_paging_and_bad_secrets(vswitch):
    c = _client(vswitch)
    try:
        ch = c.invoke_shell(width=80, height=24)
        _read_until(ch, "Switch>")
        ch.send("enable\n")
        for _ in range(3):
            _read_until(ch, "Password: ")
            ch.send("wrong\n")
        assert "% Bad secrets" in _read_until(ch, "Switch>")
        ch.send("enable\n")
        _read_until(ch, "Password: ")
        ch.send(vswitch.secret + "\n")
        _read_until(ch, "Switch#")
        ch.send("show interfaces status\n")  # 24 ports + header: longer than the 24-line screen
        first = _read_until(ch, "--More--")
        assert "Gi1/0/21" in first and "Gi1/0/22" not in first  # 23 lines, then --More--
        ch.send(" ")
        assert "Gi1/0/24" in _read_until(ch, "Switch#")
        ch.send("terminal length 0\nshow interfaces status\n")
        assert "--More--" not in _read_until(ch, "Gi1/0/24")
    finally:
        c.close()


def test_scp_needs_ip_scp_server_enable(vswitch, tmp_path):
    from scp import SCPClient, SCPException

    src = tmp_path / "x.txt"
    src.write_text("hostname x\n")
    c = _client(vswitch)
    try:
        with pytest.raises(SCPException):
            SCPClient(c.get_transport()).put(str(src), "flash:/x.txt")
    finally:
        c.close()


def test_long_line_is_rejected_at_once_and_the_session_stays_in_step(vswitch):
    """A 65,536-character line: echoed in full, rejected whole within 1 s (the line buffer holds
    LINE_MAX characters, the caret marks where it ends), the next commands run in the right mode.
    (paramiko's ``Channel.send`` writes at most one SSH packet, 32,704 bytes here: ``sendall``.)"""
    from qoslab.vswitch.session import LINE_MAX

    c = _client(vswitch)
    try:
        ch = c.invoke_shell(width=80, height=24)
        _read_until(ch, "Switch>")
        ch.send("enable\n")
        _read_until(ch, "Password: ")
        ch.send(vswitch.secret + "\n")
        _read_until(ch, "Switch#")
        t = time.monotonic()
        ch.sendall("show " + "x" * 65531 + "\n")
        out = _read_until(ch, "Switch#", timeout=5)
        took = time.monotonic() - t
        assert took < 1, took
        assert out.count("x") == 65531  # the echo is complete
        caret = next(l for l in out.split("\r\n") if l.strip() == "^")
        assert len(caret) == len("Switch#") + LINE_MAX + 1
        assert "% Invalid input detected at '^' marker." in out
        ch.send("configure terminal\n")
        _read_until(ch, "Switch(config)#")
        ch.send("interface Gi1/0/1\n")
        assert "Invalid" not in _read_until(ch, "Switch(config-if)#")
        ch.send("end\n")
        _read_until(ch, "Switch#")
    finally:
        c.close()


def test_typed_ahead_lines_are_read_after_the_prompt_like_an_ios_tty(vswitch):
    """Returns and commands sent without waiting are echoed one at a time, each after the prompt
    before it (asyncssh's editor used to echo them all at once: ``Switch>Switch>`` on one line,
    which libscrapli could not read as a prompt)."""
    c = _client(vswitch)
    try:
        ch = c.invoke_shell(width=200, height=0)
        for _ in range(3):
            ch.send("\n")
        ch.send("show clock\n")
        buf, end = "", time.monotonic() + 5
        while buf.count("Switch>") < 5 and time.monotonic() < end:
            buf += ch.recv(65536).decode() if ch.recv_ready() else (time.sleep(0.02) or "")
        lines = buf.replace("\r", "").split("\n")
        assert "Switch>Switch>" not in buf and lines.count("Switch>") == 4 and lines[-1] == "Switch>", repr(buf)
        assert "Switch>show clock" in lines
    finally:
        c.close()


def test_interactive_keys_exit_ctrl_z_ctrl_c_and_help(vswitch):
    """``exit`` leaves global configuration for EXEC; Ctrl-Z runs the typed line and ends
    configuration mode (``^Z``); Ctrl-C drops the typed line (``^C``: nothing of it reaches the
    next command); ``?`` lists what may follow and leaves the typed line to complete."""
    c = _client(vswitch)
    try:
        ch = c.invoke_shell(width=200, height=0)
        _read_until(ch, "Switch>")
        ch.send("enable\n")
        _read_until(ch, "Password: ")
        ch.send(vswitch.secret + "\n")
        _read_until(ch, "Switch#")
        ch.send("configure terminal\n")
        _read_until(ch, "Switch(config)#")
        ch.send("exit\n")
        assert _read_until(ch, "Switch#").rstrip().endswith("Switch#")
        ch.send("configure terminal\ninterface Gi1/0/9\n")
        _read_until(ch, "Switch(config-if)#")
        ch.send("description set-by-ctrl-z\x1a")
        assert "^Z" in _read_until(ch, "Switch#")
        ch.send("show running-config interface Gi1/0/9\n")
        assert " description set-by-ctrl-z" in _read_until(ch, "end\r\nSwitch#")
        ch.send("frobnicate the switch\x03")
        assert "^C" in _read_until(ch, "Switch#")
        ch.send("show clock\n")
        out = _read_until(ch, "Switch#")
        assert "Invalid" not in out and "frobnicate" not in out.split("^C")[-1]
        ch.send("show mls qos ?")
        helped = _read_until(ch, "Switch#show mls qos ")
        assert "  maps" in helped and "  interface" in helped and "  <cr>" in helped
        ch.send("maps dscp-cos\n")
        assert "Dscp-cos map:" in _read_until(ch, "Switch#")
        ch.send("sh?")
        assert "show  " in _read_until(ch, "Switch#sh")
        ch.send("\x15show privilege\n")
        assert "Current privilege level is 15" in _read_until(ch, "Switch#")
    finally:
        c.close()
