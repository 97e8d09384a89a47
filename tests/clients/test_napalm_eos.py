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


#: the getters NAPALM's eos driver raises NotImplementedError for (hardware too)
NOT_IMPLEMENTED = {"get_firewall_policies", "get_ipv6_neighbors_table", "get_ntp_peers", "get_probes_config",
                   "get_probes_results"}

#: NAPALM 5.2's own limits over SSH, hardware too: get_bgp_neighbors_detail calls Netmiko's
#: connection's run_commands (AttributeError); get_interfaces_ip reads an EOS error (``show ipv6
#: interface``: "No IPv6 configured interfaces") as {} over ``| json`` and raises KeyError
NAPALM_SSH_BUGS = {"get_bgp_neighbors_detail", "get_interfaces_ip"}


@pytest.mark.parametrize("transport", ["https", "ssh"])
def test_every_getter_returns_data_or_not_implemented(vswitch, transport):
    """Issue 49: every NAPALM ``eos`` getter, ping and traceroute; none "Invalid input"."""
    d = _driver(vswitch, transport)
    out, missing = {}, set()
    try:
        for name in sorted(n for n in dir(d) if n.startswith("get_")):
            if transport == "ssh" and name in NAPALM_SSH_BUGS:
                continue
            args = ("198.18.0.1/32",) if name == "get_route_to" else ()
            try:
                out[name] = getattr(d, name)(*args)
            except NotImplementedError:
                missing.add(name)
        ping, trace = d.ping("198.18.0.1"), d.traceroute("198.18.0.1")
    finally:
        d.close()
    assert missing == NOT_IMPLEMENTED
    assert out["get_vlans"]["1"]["name"] == "default" and len(out["get_vlans"]["1"]["interfaces"]) == 24
    assert out["get_users"][vswitch.username]["level"] == 15
    assert out["get_snmp_information"]["chassis_id"].startswith("QSL")
    env = out["get_environment"]
    assert abs(env["memory"]["available_ram"] - 32617448) <= 1024 and env["cpu"][0]["%usage"] == 3.0 and len(env["power"]) == 2
    assert set(out["get_network_instances"]) == {"default"} and out.get("get_interfaces_ip", {}) == {}
    assert out["get_lldp_neighbors"] == {} and out["get_mac_address_table"] == [] and out["get_route_to"] == {}
    assert out["get_ntp_stats"] == [] and out["get_optics"] == {} and out["get_arp_table"] == []
    assert out["get_bgp_neighbors"] == {} or all(not v["peers"] for v in out["get_bgp_neighbors"].values())
    assert "Network is unreachable" in ping["error"] and trace == {"success": {}}
