"""Operational shows both Catalysts answer (issue 49), pure renderers over the switch's ports and
SSH profile: ``show interfaces description``, ``show etherchannel summary``, ``show ip ssh``,
``show users``, ``show logging``, ``show processes cpu sorted`` (:func:`sort_cpu`), and what
NAPALM's ``ios`` getters send on a switch that routes nothing: ``show ip bgp all summary`` /
``show bgp all summary`` (``% BGP not active``), ``show ip protocols``, ``show ip route PREFIX
MASK`` (``% Network not in table``), ``show vrf [detail]`` / ``show ip vrf``, ``show ipv6
neighbors``, ``show ntp associations`` (``%NTP is not enabled.``), ``show interfaces
transceiver`` (no optics), ``show memory`` (the pools' head, as ``show memory statistics``),
``show vlan all-ports``.

Layouts: genieparser's IOS-XE recordings (src/genie/libs/parser/iosxe/tests/: ShowInterfacesDescription
golden_output, ShowEtherchannelSummary golden_output_3, ShowIpSsh golden_output1), the errors as
IOS prints them.
"""

from __future__ import annotations

import re

from ....portnames import canonical_port
from ...facts import PortView
from ...sshprofile import SshProfile

#: What a switch that routes nothing, has no VRF, no IPv6 neighbour, no NTP and no optics prints.
CONSTANT: dict[str, str] = {
    "show ip bgp all summary": "% BGP not active\n\n", "show bgp all summary": "% BGP not active\n\n",
    "show ip protocols": "", "show ip route prefix": "% Network not in table\n", "show ip vrf": "",
    "show vrf": "", "show vrf detail": "", "show ipv6 neighbors": "", "show ntp associations": "%NTP is not enabled.\n",
    "show interfaces transceiver": "",
}


def render_interfaces_description(ports: list[PortView]) -> str:
    """``show interfaces description``: short name, status, protocol, description."""
    out = ["Interface                      Status         Protocol Description"]
    for p in ports:
        status = "admin down" if not p.admin_up else "up" if p.link_up else "down"
        proto = "up" if p.admin_up and p.link_up else "down"
        out.append(f"{canonical_port(p.name):<30} {status:<14} {proto:<8} {p.description}")
    return "\n".join(out) + "\n"


def render_etherchannel_summary() -> str:
    """``show etherchannel summary`` without a channel group."""
    return "\n".join([
        "Flags:  D - down        P - bundled in port-channel", "        I - stand-alone s - suspended",
        "        H - Hot-standby (LACP only)", "        R - Layer3      S - Layer2",
        "        U - in use      f - failed to allocate aggregator", "",
        "        M - not in use, minimum links not met", "        u - unsuitable for bundling",
        "        w - waiting to be aggregated", "        d - default port", "",
        "        A - formed by Auto LAG", "", "", "Number of channel-groups in use: 0",
        "Number of aggregators:           0", "", "Group  Port-channel  Protocol    Ports",
        "------+-------------+-----------+-----------------------------------------------", ""])


def render_ip_ssh(profile: SshProfile) -> str:
    """``show ip ssh``: version 2, the algorithms of the switch's SSH profile."""
    return "\n".join([
        "SSH Enabled - version 2.0", "Authentication methods:publickey,keyboard-interactive,password",
        f"Hostkey Algorithms:{','.join(profile.host_key_algs)}",
        f"Encryption Algorithms:{','.join(profile.encryption_algs)}",
        f"MAC Algorithms:{','.join(profile.mac_algs)}", f"KEX Algorithms:{','.join(profile.kex_algs)}",
        "Authentication timeout: 120 secs; Authentication retries: 3",
        "Minimum expected Diffie Hellman key size : 2048 bits"]) + "\n"


def render_users(user: str, peer: str) -> str:
    """``show users``: this session's line (``*``: yours), idle 0."""
    return ("    Line       User       Host(s)              Idle       Location\n"
            f"*  1 vty 0     {user:<10} idle                 00:00:00 {peer}\n\n"
            "  Interface    User               Mode         Idle     Peer Address\n\n")


def render_logging(hostname: str) -> str:
    """``show logging``: buffered logging on, the buffer empty (the virtual switch logs nothing)."""
    return "\n".join([
        "Syslog logging: enabled (0 messages dropped, 0 messages rate-limited, 0 flushes, 0 overruns, "
        "xml disabled, filtering disabled)", "", "No Active Message Discriminator.", "", "",
        "No Inactive Message Discriminator.", "", "",
        "    Console logging: level debugging, 0 messages logged, xml disabled,",
        "                     filtering disabled",
        "    Monitor logging: level debugging, 0 messages logged, xml disabled,",
        "                     filtering disabled",
        "    Buffer logging:  level debugging, 0 messages logged, xml disabled,",
        "                    filtering disabled",
        "    Exception Logging: size (4096 bytes)", "    Count and timestamp logging messages: disabled",
        "    Persistent logging: disabled", "", "No active filter modules.", "",
        "    Trap logging: level informational, 0 message lines logged",
        "        Logging Source-Interface:       VRF Name:", "",
        "Log Buffer (4096 bytes):", ""])


def sort_cpu(text: str) -> str:
    """``show processes cpu sorted``: ``show processes cpu`` with the process rows by 5-second
    use, highest first (stable)."""
    lines = text.rstrip("\n").splitlines()
    head, rows = lines[:2], lines[2:]

    def five_sec(row: str) -> float:
        m = re.search(r"\s(\d+\.\d+)%", row)
        return float(m.group(1)) if m else 0.0
    return "\n".join(head + sorted(rows, key=five_sec, reverse=True)) + "\n"


#: Spanning-tree port cost of a link speed (Mbit/s), IEEE 802.1D short method (IOS's default).
STP_COST = {10: 100, 100: 19, 1000: 4, 10000: 2}


def render_spanning_tree(ports: list[PortView], bridge_mac: str, mode: str) -> str:
    """``show spanning-tree``: VLAN 1's instance (``ieee`` for PVST+, IOS's default; ``rstp`` for
    rapid-pvst), the switch its own root (no other bridge on the testbed), each forwarding port
    designated (the layout of genieparser's iosxe ShowSpanningTree golden_output_rstp)."""
    up = [(i, p) for i, p in enumerate(ports, 1) if p.admin_up and p.link_up]
    if not up:
        return "No spanning tree instance exists.\n"
    timers = "Hello Time   2 sec  Max Age 20 sec  Forward Delay 15 sec"
    out = ["VLAN0001", f"  Spanning tree enabled protocol {mode}", "  Root ID    Priority    32769",
           f"             Address     {bridge_mac}", "             This bridge is the root",
           f"             {timers}", "",
           "  Bridge ID  Priority    32769  (priority 32768 sys-id-ext 1)", f"             Address     {bridge_mac}",
           f"             {timers}", "             Aging Time  300 sec", "",
           "Interface           Role Sts Cost      Prio.Nbr Type",
           "------------------- ---- --- --------- -------- --------------------------------"]
    for i, p in up:
        cost = STP_COST.get(p.speed_mbps, 4)
        out.append(f"{canonical_port(p.name):<19} Desg FWD {cost:<9} {'128.' + str(i):<8} P2p ")
    return "\n".join(out) + "\n\n\n"
