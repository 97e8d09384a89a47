"""scrapli 2.x (``cisco_iosxe``, ssh2) against the virtual Catalyst 9300 (issue 36): the IOS-XE
facts, the thesis profile rendered as MQC pushed and read back, a second push leaves the
running-config as it was."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO

from .conftest import scrapli_cli

SWITCH_MODEL = "C9300-24T"


@pytest.fixture(scope="module")
def cli(vswitch):
    c = scrapli_cli(vswitch, "cisco_iosxe")
    yield c
    c.close()


def test_push_mqc_and_repush_is_a_noop(cli, vswitch):
    assert "Cisco IOS XE Software" in cli.send_input("show version").result
    lines = subprocess.run([sys.executable, "-m", "qoslab", "switch", "render", "thesis", "-t", str(vswitch.topology)],
                           cwd=REPO, capture_output=True, text=True, check=True).stdout.splitlines()
    assert not cli.send_inputs(lines, requested_mode="configuration").failed
    run = cli.send_input("show running-config").result
    assert "policy-map QOSLAB-QUEUING" in run and "  priority level 1" in run
    assert not cli.send_inputs(lines, requested_mode="configuration").failed
    assert cli.send_input("show running-config").result == run
    assert "Service-policy output: QOSLAB-QUEUING" in cli.send_input("show policy-map interface Gi1/0/1").result
