"""Show commands of a Catalyst's layer-2 state that NAPALM's ``ios`` getters and ntc-templates read,
as pure renderers in the 12.2(55)SE output format (IOS-XE prints them alike): ``show mac
address-table``, ``show arp``/``show ip arp``, ``show cdp|lldp neighbors [detail]``.

Formats follow the Catalyst 3750 Command Reference 12.2(55)SE examples and are checked against
ntc-templates' TextFSM templates and NAPALM's parsers (tests/unit/test_vswitch_show_l2.py,
tests/clients/test_napalm.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...facts import MacEntry

#: The static entries a 3750 lists for VLAN ``All`` going to its CPU (CDP/VTP/PAgP, the IEEE
#: 802.1D reserved range 0180.c200.0000-0010, broadcast): Catalyst 3750 command reference
#: 12.2(55)SE, ``show mac address-table`` example.
CPU_MACS = ("0100.0ccc.cccc", "0100.0ccc.cccd", *(f"0180.c200.{i:04x}" for i in range(0x11)), "ffff.ffff.ffff")


def render_mac_table(entries: list[MacEntry], with_cpu: bool = True) -> str:
    """``show mac address-table [dynamic|interface PORT]``: the CPU's static entries (VLAN All)
    unless ``with_cpu`` is false, then the entries by VLAN and MAC, and the total."""
    rows = [f" All    {m}    STATIC      CPU" for m in CPU_MACS] if with_cpu else []
    rows += [f"{e.vlan:4d}    {e.mac}    {e.kind:<11} {e.port}" for e in sorted(entries, key=lambda e: (e.vlan, e.mac))]
    head = ["          Mac Address Table", "-------------------------------------------", "",
            "Vlan    Mac Address       Type        Ports", "----    -----------       --------    -----"]
    return "\n".join(head + rows + [f"Total Mac Addresses for this criterion: {len(rows)}"]) + "\n"


@dataclass(frozen=True)
class ArpEntry:
    """An ARP entry: address, age in minutes (None: the switch's own, ``-``), MAC, interface."""

    address: str
    age_min: int | None
    mac: str
    interface: str


def render_arp(entries: list[ArpEntry]) -> str:
    """``show arp`` / ``show ip arp``; nothing at all when the table is empty (a switch without
    an IP address on any SVI)."""
    if not entries:
        return ""
    out = ["Protocol  Address          Age (min)  Hardware Addr   Type   Interface"]
    for e in entries:
        age = "-" if e.age_min is None else str(e.age_min)
        out.append(f"Internet  {e.address:<16} {age:>8}   {e.mac:<15} ARPA   {e.interface}")
    return "\n".join(out) + "\n"


CDP_HEADER = ("Capability Codes: R - Router, T - Trans Bridge, B - Source Route Bridge\n"
              "                  S - Switch, H - Host, I - IGMP, r - Repeater, P - Phone, \n"
              "                  D - Remote, C - CVTA, M - Two-port Mac Relay \n\n"
              "Device ID        Local Intrfce     Holdtme    Capability  Platform  Port ID\n")
LLDP_HEADER = ("Capability codes:\n    (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n"
               "    (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\n\n"
               "Device ID           Local Intf     Hold-time  Capability      Port ID\n")


def render_cdp(enabled: bool, what: str) -> str:
    """``show cdp`` (``what`` = ``global``), ``show cdp neighbors`` (``brief``), ``show cdp
    neighbors detail`` (``detail``) of a switch that hears no CDP neighbour (testbed hosts run no
    CDP). CDP runs by default on a 3750 (``no cdp run`` stops it)."""
    if not enabled:
        return "% CDP is not enabled\n"
    if what == "global":
        return ("Global CDP information:\n\tSending CDP packets every 60 seconds\n"
                "\tSending a holdtime value of 180 seconds\n\tSending CDPv2 advertisements is  enabled\n")
    return CDP_HEADER if what == "brief" else ""


def render_lldp(enabled: bool, what: str) -> str:
    """``show lldp`` / ``show lldp neighbors [detail]`` with no neighbour heard; LLDP is off on a
    3750 until ``lldp run``."""
    if not enabled:
        return "% LLDP is not enabled\n"
    if what == "global":
        return ("\nGlobal LLDP Information:\n    Status: ACTIVE\n    LLDP advertisements are sent every 30 seconds\n"
                "    LLDP hold time advertised is 120 seconds\n"
                "    LLDP interface reinitialisation delay is 2 seconds\n")
    return (LLDP_HEADER if what == "brief" else "") + "\nTotal entries displayed: 0\n"


