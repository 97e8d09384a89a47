"""scrapli 2.x (``arista_eos``, ssh2) against the virtual Arista 7280R3 (issue 44): EOS facts, the
rmi-ports profile rendered for EOS pushed in configuration mode and read back, a second push
leaves the running-config as it was."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO

from .conftest import scrapli_cli

SWITCH_MODEL = "DCS-7280SR3-48YC8"
SSH_PROFILE = "modern"


@pytest.fixture(scope="module")
def cli(vswitch):
    c = scrapli_cli(vswitch, "arista_eos")
    yield c
    c.close()


def test_push_and_repush_is_a_noop(cli, vswitch):
    assert cli.send_input("show version").result.startswith("Arista DCS-7280SR3-48YC8")
    lines = subprocess.run([sys.executable, "-m", "qoslab", "switch", "render", "rmi-ports", "-t",
                            str(vswitch.topology)], cwd=REPO, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert not cli.send_inputs(lines, requested_mode="configuration").failed
    run = cli.send_input("show running-config").result
    assert "ip access-list QOSLAB-rmi\n   10 permit tcp any any eq 1099" in run and run.count("tx-queue 1") == 4
    assert not cli.send_inputs(lines, requested_mode="configuration").failed
    assert cli.send_input("show running-config").result == run
