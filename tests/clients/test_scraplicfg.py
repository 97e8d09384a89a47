"""scrapli-cfg's ``cisco_iosxe`` conversation against the virtual Catalyst: load a candidate through
``tclsh`` (``puts [open "flash:NAME" w+] {...}``), ``show archive config incremental-diffs``,
merge commit (``copy flash:NAME running-config`` answering "Destination filename"), save
(``copy running-config startup-config``), cleanup and abort (``delete``), in both file prompt
modes it handles (alert, and quiet as NAPALM leaves it). scrapli-cfg itself runs on scrapli 1.x,
which cannot be installed beside scrapli 2 (tests/clients/test_scrapli.py): its event lists
(scrapli_cfg/platform/core/cisco_iosxe/sync_platform.py) are replayed here the way scrapli 1's
``send_interactive`` plays them: send an input, read until the expected text (an empty one: the
prompt), next; a missing question is a hang, caught by the read timeout."""

from __future__ import annotations

import time

import paramiko
import pytest

from qoslab.switch.legacyssh import LegacyTransport

NAME = "scrapli_cfg_1764000000"
CANDIDATE = ["interface GigabitEthernet1/0/7", " description from-scrapli-cfg-{mode}"]


def _read_until(ch, marks: tuple[str, ...], timeout: float = 5) -> str:
    buf, end = "", time.monotonic() + timeout
    while not any(m in buf for m in marks):
        if time.monotonic() > end:
            raise TimeoutError(f"waited {timeout} s for {marks}: {buf[-200:]!r}")
        buf += ch.recv(65536).decode() if ch.recv_ready() else (time.sleep(0.01) or "")
    return buf


def interact(ch, events: list[tuple[str, str]]) -> str:
    """scrapli 1's send_interactive: each (input, expected) sends the input and a return, then
    reads until ``expected`` (or the privileged prompt when it is empty)."""
    out = ""
    for text, expect in events:
        ch.send(text + "\n")
        out += _read_until(ch, (expect,) if expect else ("Switch#",))
    return out


@pytest.fixture
def shell(vswitch):
    c = paramiko.SSHClient()
    c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    c.connect(vswitch.host, vswitch.port, vswitch.username, vswitch.password, allow_agent=False,
              look_for_keys=False, timeout=10, transport_factory=LegacyTransport)
    ch = c.invoke_shell(width=511, height=0)
    _read_until(ch, ("Switch>",))
    interact(ch, [("enable", "Password:"), (vswitch.secret, ""), ("terminal length 0", "")])
    yield ch
    c.close()


def _load(ch, mode: str) -> None:
    """scrapli-cfg load_config: the candidate written to flash: from tclsh, line by line."""
    interact(ch, [("tclsh", "Switch(tcl)#")])
    lines = [f'puts [open "flash:{NAME}" w+] {{', *(c.format(mode=mode) for c in CANDIDATE), "}"]
    for i, line in enumerate(lines):
        ch.send(line + "\r")
        _read_until(ch, ("Switch(tcl)#",) if i == len(lines) - 1 else ("+>",))
    interact(ch, [("tclquit", "")])


def _mode(ch, mode: str) -> None:
    interact(ch, [("configure terminal", "Switch(config)#"), (f"file prompt {mode}", "Switch(config)#"),
                  ("end", "")])


@pytest.mark.parametrize("mode", ["alert", "quiet"])
def test_merge_commit_save_and_cleanup(shell, vswitch, mode):
    _mode(shell, mode)
    _load(shell, mode)
    diff = interact(shell, [(f"show archive config incremental-diffs flash:{NAME} ignorecase", "")])
    assert f"description from-scrapli-cfg-{mode}" in diff
    alert = mode == "alert"
    interact(shell, [(f"copy flash:{NAME} running-config", "Destination filename"), ("", "")] if alert else
             [(f"copy flash:{NAME} running-config", "")])
    assert f"description from-scrapli-cfg-{mode}" in interact(shell, [("show running-config interface Gi1/0/7", "")])
    interact(shell, [("copy running-config startup-config", "Destination filename"), ("", "")] if alert else
             [("copy running-config startup-config", "")])
    assert f"from-scrapli-cfg-{mode}" in (vswitch.state / "startup-config").read_text()
    interact(shell, [(f"delete flash:{NAME}", "Delete filename"), ("", "[confirm]"), ("", "")] if alert else
             [(f"delete flash:{NAME}", "[confirm]"), ("", "")])
    assert NAME not in interact(shell, [("dir flash:", "")])


@pytest.mark.parametrize("mode", ["alert", "quiet"])
def test_abort_deletes_the_candidate(shell, mode):
    _mode(shell, mode)
    _load(shell, mode)
    assert NAME in interact(shell, [("dir flash:", "")])
    interact(shell, [(f"delete flash:{NAME}", "Delete filename"), ("", "[confirm]"), ("", "")] if mode == "alert"
             else [(f"delete flash:{NAME}", "[confirm]"), ("", "")])
    assert NAME not in interact(shell, [("dir flash:", "")])
