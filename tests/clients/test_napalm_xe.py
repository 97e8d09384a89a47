"""NAPALM ``ios`` (which drives IOS-XE too) against the virtual Catalyst 9300 (issue 36): facts
from the IOS-XE ``show version``, a merge of the thesis profile rendered as MQC through SCP, a
second identical merge is an empty diff."""

from __future__ import annotations

import subprocess
import sys

import pytest
from napalm import get_network_driver

from conftest import REPO
from qoslab.switch.legacyssh import paramiko_default_transport

SWITCH_MODEL = "C9300-24T"


@pytest.fixture(scope="module")
def dev(vswitch):
    with paramiko_default_transport():
        d = get_network_driver("ios")(vswitch.host, vswitch.username, vswitch.password, timeout=20,
                                      optional_args={"port": vswitch.port, "secret": vswitch.secret})
        d.open()
        d.device.send_config_set(["ip scp server enable"])
        yield d
        d.close()


def test_facts_and_an_mqc_merge_then_an_empty_remerge(dev, vswitch):
    f = dev.get_facts()
    assert f["model"] == "C9300-24T" and f["serial_number"].startswith("QSL") and "Version 17.9" in f["os_version"]
    lines = subprocess.run([sys.executable, "-m", "qoslab", "switch", "render", "thesis", "-t", str(vswitch.topology)],
                           cwd=REPO, capture_output=True, text=True, check=True).stdout
    dev.load_merge_candidate(config=lines)
    diff = dev.compare_config()
    assert "+policy-map QOSLAB-QUEUING" in diff and "priority level 1" in diff
    dev.commit_config()
    assert " service-policy output QOSLAB-QUEUING" in dev.get_config()["running"]
    dev.load_merge_candidate(config=lines)
    assert dev.compare_config() == ""
    dev.discard_config()


def test_every_getter_returns_data_or_not_implemented_with_the_9300s_memory(dev):
    """Issue 49: no getter meets "Invalid input"; get_environment reports the 9300's memory (its
    processor pool and lsmpi_io, not the 3750's 128 MB) and its temperature sensors."""
    from clients.test_napalm import NOT_IMPLEMENTED, every_getter

    out, missing = every_getter(dev)
    assert missing == NOT_IMPLEMENTED
    env = out["get_environment"]
    assert env["memory"]["available_ram"] == 1338934 * 1024 + 6295128
    assert env["temperature"]["inlet"]["temperature"] > 0 and env["cpu"][0]["%usage"] >= 0
    assert out["get_bgp_neighbors"] == {} and out["get_route_to"] == {"198.18.0.1/32": []}
