"""NAPALM ``ios`` against the virtual Catalyst, as its driver works on hardware: getters, merge
and replace candidates through SCP into flash: (``ip scp server enable``), ``show archive config
incremental-diffs|differences``, ``copy``/``configure replace``, discard, rollback; a merge with
an invalid line is rolled back with IOS's caret; a wrong password is refused."""

from __future__ import annotations

import pytest
from napalm import get_network_driver
from napalm.base.exceptions import MergeConfigException
from netmiko.exceptions import NetmikoAuthenticationException

from qoslab.topology import load_topology


def _driver(sw, password=None):
    return get_network_driver("ios")(sw.host, sw.username, password or sw.password, timeout=20,
                                     optional_args={"port": sw.port, "secret": sw.secret})


@pytest.fixture(scope="module")
def dev(vswitch):
    d = _driver(vswitch)
    d.open()
    d.device.send_config_set(["ip scp server enable"])  # NAPALM's documented requirement
    yield d
    d.close()


def test_facts_interfaces_config(dev):
    f = dev.get_facts()
    assert f["model"] == "WS-C3750G-24T" and f["hostname"] == "Switch" and f["serial_number"].startswith("QSL")
    assert "Version 12.2(55)SE12" in f["os_version"]
    assert f["interface_list"] == [f"GigabitEthernet1/0/{i}" for i in range(1, 25)]
    ifs = dev.get_interfaces()
    assert ifs["GigabitEthernet1/0/1"]["is_up"] and not ifs["GigabitEthernet1/0/9"]["is_up"]
    assert ifs["GigabitEthernet1/0/1"]["speed"] == load_topology().link.rate / 1e6  # Mbit/s, the testbed's link
    cfg = dev.get_config()
    assert "hostname Switch" in cfg["running"] and cfg["candidate"] == ""


def test_merge_thesis_commit_and_remerge_is_empty(dev, vswitch):
    thesis = "\n".join(vswitch.thesis_lines()) + "\n"
    dev.load_merge_candidate(config=thesis)
    diff = dev.compare_config()
    assert "+policy-map police-jp" in diff and "+mls qos" in diff
    dev.commit_config()
    assert "policy-map police-jp" in dev.get_config()["running"]
    assert "policy-map police-jp" in dev.get_config(retrieve="startup")["startup"]  # commit saves
    dev.load_merge_candidate(config=thesis)
    assert dev.compare_config() == ""
    dev.discard_config()


def test_replace_compare_commit_rollback(dev):
    running = dev.get_config()["running"]
    dev.load_replace_candidate(config=running)
    assert dev.compare_config() == ""
    dev.discard_config()
    dev.load_replace_candidate(config=running.replace("hostname Switch", "hostname qsl-sw"))
    assert dev.compare_config().splitlines() == ["+hostname qsl-sw", "-hostname Switch"]
    dev.commit_config()
    assert dev.get_facts()["hostname"] == "qsl-sw"
    dev.rollback()
    assert dev.get_facts()["hostname"] == "Switch"
    assert dev.get_config()["running"] == running


def test_invalid_merge_line_is_rolled_back_with_the_caret(dev):
    before = dev.get_config()["running"]
    dev.load_merge_candidate(config="hostname broken\nmls qos srr-queue input priority-queue input 2 bandwidth 40\n")
    with pytest.raises(MergeConfigException, match=r"(?s)\^.*% Invalid input detected at '\^' marker"):
        dev.commit_config()
    assert dev.get_config()["running"] == before


def test_wrong_password_is_refused(vswitch):
    with pytest.raises(NetmikoAuthenticationException):  # NAPALM lets netmiko's error through
        _driver(vswitch, password="not-the-password").open()
