"""The layer-2 and system show renderers (qoslab.vswitch.show_l2, show_ports) read by the
parsers real clients use: ntc-templates (Netmiko ``use_textfsm``, Ansible, NAPALM's fallbacks)."""

from __future__ import annotations

from ntc_templates.parse import parse_output

from qoslab.vswitch.counters import parse_fdb
from qoslab.vswitch.dialects.ioscommon.show_l2 import (
    CPU_MACS,
    ArpEntry,
    render_arp,
    render_cdp,
    render_lldp,
    render_mac_table,
)
from qoslab.vswitch.dialects.ioscommon.show_ports import (
    render_counters,
    render_processes_cpu,
    render_snmp,
    render_switchport,
    render_vlan_id,
)
from qoslab.vswitch.facts import MacEntry, PortView


def _parse(command: str, text: str) -> list[dict]:
    return parse_output(platform="cisco_ios", command=command, data=text)


def test_mac_table_from_the_bridge_fdb():
    fdb = [{"mac": "02:aa:00:00:00:01", "ifname": "Gi1-0-1", "master": "br0", "state": ""},
           {"mac": "02:aa:00:00:00:02", "ifname": "Gi1-0-2", "master": "br0"},
           {"mac": "33:33:00:00:00:01", "ifname": "br0", "flags": ["self"], "state": "permanent"},
           {"mac": "02:bb:00:00:00:09", "ifname": "Gi1-0-3", "state": "permanent"}]
    entries = parse_fdb(fdb, {"Gi1-0-1": "Gi1/0/1", "Gi1-0-2": "Gi1/0/2", "Gi1-0-3": "Gi1/0/3"})
    assert entries == [MacEntry(1, "02aa.0000.0001", "Gi1/0/1"), MacEntry(1, "02aa.0000.0002", "Gi1/0/2")]
    rows = _parse("show mac address-table", render_mac_table(entries))
    assert len(rows) == len(CPU_MACS) + 2
    assert rows[-1] == {"destination_address": "02aa.0000.0002", "type": "DYNAMIC", "vlan_id": "1",
                        "destination_port": ["Gi1/0/2"]}
    assert rows[0]["vlan_id"] == "All" and rows[0]["destination_port"] == ["CPU"]
    assert render_mac_table(entries, with_cpu=False).endswith("criterion: 2\n")


def test_arp_format_and_empty_table():
    assert render_arp([]) == ""
    text = render_arp([ArpEntry("198.18.0.254", None, "0200.5100.0000", "Vlan1"),
                       ArpEntry("198.18.0.1", 3, "02aa.0000.0001", "Vlan1")])
    rows = _parse("show ip arp", text)
    assert [(r["ip_address"], r["age"], r["interface"]) for r in rows] == [("198.18.0.254", "-", "Vlan1"),
                                                                           ("198.18.0.1", "3", "Vlan1")]


def test_neighbors_cdp_on_by_default_lldp_off():
    assert _parse("show cdp neighbors", render_cdp(True, "brief")) == []
    assert render_cdp(False, "brief") == "% CDP is not enabled\n"
    assert render_lldp(False, "brief") == "% LLDP is not enabled\n"
    assert _parse("show lldp neighbors", render_lldp(True, "brief")) == []


def test_switchport_counters_vlan_and_cpu_parse():
    ports = [PortView("GigabitEthernet1/0/1", link_up=True, in_bytes=1500, in_packets=1),
             PortView("GigabitEthernet1/0/2")]
    sw = _parse("show interfaces switchport", render_switchport(ports))
    assert [(r["interface"], r["mode"], r["access_vlan"]) for r in sw] == [("Gi1/0/1", "static access", "1"),
                                                                          ("Gi1/0/2", "down", "1")]
    lines = render_counters(ports).splitlines()
    assert lines[2].split() == ["Gi1/0/1", "1500", "1", "0", "0"]
    vlan = _parse("show vlan", render_vlan_id(1, ports))
    assert vlan[0]["vlan_id"] == "1" and vlan[0]["interfaces"] == ["Gi1/0/1", "Gi1/0/2"]
    cpu = _parse("show processes cpu", render_processes_cpu(3, 1234))
    assert cpu[0]["cpu_usage_1_min"] == "3" and len(cpu) >= 10
    assert next(r for r in cpu if r["process_name"] == "SSH Process")["process_runtime"] == "1234"


def test_snmp_from_the_running_config():
    kept = ["snmp-server community public RO 10", "snmp-server community private RW", "snmp-server location Lab 3"]
    rows = _parse("show snmp community", render_snmp(kept, "QSL1", "community"))
    assert [(r["name"], r["access_list_number"]) for r in rows] == [("public", "10"), ("private", "")]
    assert render_snmp([], "QSL1", "all") == "%SNMP agent not enabled\n"
    assert render_snmp([], "QSL1", "chassis") == "QSL1\n"
    assert "Location: Lab 3\n" in render_snmp(kept, "QSL1", "all")
