"""NAPALM ``eos`` against the virtual Arista 7280R3 (issue 44), over eAPI (its default transport:
pyeapi, JSON-RPC ``runCmds`` over HTTPS) and over SSH (Netmiko ``arista_eos``, ``| json``):
get_facts, get_interfaces, get_interfaces_counters, load_merge_candidate (a configuration
session), compare_config (the session's diff), commit_config, an identical merge that is an empty
diff, rollback (``configure replace flash:rollback-0``)."""

from __future__ import annotations

import pytest
from napalm import get_network_driver

SWITCH_MODEL = "DCS-7280SR3-48YC8"
SSH_PROFILE = "modern"
EAPI = True


def _driver(vswitch, transport: str):
    port = vswitch.eapi_port if transport == "https" else vswitch.port
    extra = {"enable_password": vswitch.secret} if transport == "https" else {"secret": vswitch.secret}
    d = get_network_driver("eos")(vswitch.host, vswitch.username, vswitch.password, timeout=30,
                                  optional_args={"transport": transport, "port": port, **extra})
    d.open()
    return d


@pytest.mark.parametrize("transport", ["https", "ssh"])
def test_getters_merge_commit_remerge_and_rollback(vswitch, transport):
    d = _driver(vswitch, transport)
    try:
        f = d.get_facts()
        assert f["vendor"] == "Arista" and f["model"] == "DCS-7280SR3-48YC8"
        assert f["os_version"].startswith("4.32.2F") and f["serial_number"].startswith("QSL")
        assert f["interface_list"][:2] == ["Ethernet1", "Ethernet2"] and f["uptime"] > 0
        ifs = d.get_interfaces()
        assert ifs["Ethernet1"]["is_up"] and not ifs["Ethernet9"]["is_up"] and ifs["Ethernet1"]["speed"] == 10.0
        assert set(d.get_interfaces_counters()["Ethernet1"]) >= {"tx_octets", "tx_discards", "rx_errors"}
        lines = vswitch.thesis_lines()
        d.load_merge_candidate(config=lines)
        diff = d.compare_config()
        assert "+policy-map type quality-of-service police-jp" in diff and "+   tx-queue 1" in diff
        d.commit_config()
        running = d.get_config(retrieve="running")["running"]
        assert "   service-policy type qos input police-jp" in running
        d.load_merge_candidate(config=lines)
        assert d.compare_config() == ""
        d.discard_config()
        d.rollback()
        assert "police-jp" not in d.get_config(retrieve="running")["running"]
    finally:
        d.close()
