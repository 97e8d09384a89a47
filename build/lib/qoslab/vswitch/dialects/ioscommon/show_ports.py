"""More IOS show commands as pure renderers (12.2(55)SE formats, Catalyst 3750 Command Reference
examples; checked against ntc-templates in tests/unit/test_vswitch_show_l2.py): ``show interfaces
[PORT] switchport``, ``show interfaces counters``, ``show vlan id N``, ``show snmp [community|
chassis]``, ``show ip route`` of a layer-2 switch, ``show processes cpu`` with its table."""

from __future__ import annotations

from ...facts import PortView
from .render import port_rows, short_name


def render_switchport(ports: list[PortView]) -> str:
    """``show interfaces [PORT] switchport`` of access ports in VLAN 1 at the 3750's defaults
    (``switchport mode dynamic auto``: access once a host is attached, ``down`` without link)."""
    out = []
    for p in ports:
        oper = "static access" if p.link_up and p.admin_up else "down"
        out += [f"Name: {short_name(p.name)}", "Switchport: Enabled", "Administrative Mode: dynamic auto",
                f"Operational Mode: {oper}", "Administrative Trunking Encapsulation: negotiate",
                f"Operational Trunking Encapsulation: {'native' if oper != 'down' else 'negotiate'}",
                "Negotiation of Trunking: On", f"Access Mode VLAN: {p.vlan} (default)",
                "Trunking Native Mode VLAN: 1 (default)", "Administrative Native VLAN tagging: enabled",
                "Voice VLAN: none", "Administrative private-vlan host-association: none ",
                "Administrative private-vlan mapping: none ", "Administrative private-vlan trunk native VLAN: none",
                "Administrative private-vlan trunk Native VLAN tagging: enabled",
                "Administrative private-vlan trunk encapsulation: dot1q",
                "Administrative private-vlan trunk normal VLANs: none",
                "Administrative private-vlan trunk associations: none",
                "Administrative private-vlan trunk mappings: none", "Operational private-vlan: none",
                "Trunking VLANs Enabled: ALL", "Pruning VLANs Enabled: 2-1001", "Capture Mode Disabled",
                "Capture VLANs Allowed: ALL", "", "Protected: false", "Unknown unicast blocked: disabled",
                "Unknown multicast blocked: disabled", "Appliance trust: none", ""]
    return "\n".join(out) + "\n"


def render_counters(ports: list[PortView]) -> str:
    """``show interfaces counters``: octets and packets in and out per port (the testbed counts
    no multicast or broadcast of its own: all packets are unicast here)."""
    out = ["", f"{'Port':<15}{'InOctets':>10}{'InUcastPkts':>15}{'InMcastPkts':>15}{'InBcastPkts':>15} "]
    out += [f"{short_name(p.name):<15}{p.in_bytes:>10}{p.in_packets:>15}{0:>15}{0:>15} " for p in ports]
    out += ["", f"{'Port':<15}{'OutOctets':>10}{'OutUcastPkts':>15}{'OutMcastPkts':>15}{'OutBcastPkts':>15} "]
    out += [f"{short_name(p.name):<15}{p.out_bytes:>10}{p.out_packets:>15}{0:>15}{0:>15} " for p in ports]
    return "\n".join(out) + "\n"


def render_vlan_id(vlan: int, ports: list[PortView], width: int = 80) -> str:
    """``show vlan id N``: VLAN 1 (every port, wrapped at the terminal ``width``) or ``VLAN id N
    not found``."""
    if vlan != 1:
        return f"VLAN id {vlan} not found in current VLAN database\n"
    rows = port_rows([short_name(p.name) for p in ports if p.vlan == 1], width)
    out = ["", "VLAN Name                             Status    Ports",
           "---- -------------------------------- --------- -------------------------------",
           f"1    {'default':<32} {'active':<9} {rows[0]}", *(" " * 48 + r for r in rows[1:]), "",
           "VLAN Type  SAID       MTU   Parent RingNo BridgeNo Stp  BrdgMode Trans1 Trans2",
           "---- ----- ---------- ----- ------ ------ -------- ---- -------- ------ ------",
           "1    enet  100001     1500  -      -      -        -    -        0      0   ", "",
           "Remote SPAN VLAN", "----------------", "Disabled", "",
           "Primary Secondary Type              Ports",
           "------- --------- ----------------- ------------------------------------------", ""]
    return "\n".join(out) + "\n"


def snmp_lines(kept: list[str]) -> list[str]:
    """The running-config's ``snmp-server`` lines."""
    return [k for k in kept if k.startswith("snmp-server ")]


def render_snmp(kept: list[str], serial: str, what: str) -> str:
    """``show snmp`` (``what`` = ``all``), ``show snmp chassis``, ``show snmp community``: from
    the running-config's ``snmp-server`` lines (the agent runs once one is configured; the
    chassis ID defaults to the serial number)."""
    lines = snmp_lines(kept)
    chassis = next((l.split(None, 2)[2] for l in lines if l.startswith("snmp-server chassis-id ")), serial)
    if what == "chassis":
        return chassis + "\n"
    if not lines:
        return "%SNMP agent not enabled\n"
    if what == "community":
        out = []
        for i, l in enumerate(l for l in lines if l.startswith("snmp-server community ")):
            w = l.split()
            acl = f"\taccess-list: {w[4]}" if len(w) > 4 else ""
            out += ["", f"Community name: {w[2]}", f"Community Index: cisco{i}", f"Community SecurityName: {w[2]}",
                    f"storage-type: nonvolatile\t active{acl}"]
        return "\n".join(out) + "\n\n"
    field = {k: next((l.split(None, 2)[2] for l in lines if l.startswith(f"snmp-server {k} ")), "")
             for k in ("contact", "location")}
    counters = ["SNMP packets input", "Bad SNMP version errors", "Unknown community name",
                "Illegal operation for community name supplied", "Encoding errors",
                "Number of requested variables", "Number of altered variables", "Get-request PDUs",
                "Get-next PDUs", "Set-request PDUs", "Input queue packet drops (Maximum queue size 1000)",
                "SNMP packets output"]
    return (f"Chassis: {chassis}\nContact: {field['contact']}\nLocation: {field['location']}\n"
            + "".join(f"0 {c}\n" for c in counters) + "SNMP logging: disabled\n")


def render_ip_route() -> str:
    """``show ip route`` of a 3750 without ``ip routing`` (the factory state: a layer-2 switch
    shows its default gateway and ICMP redirect cache instead of a routing table)."""
    return ("Default gateway is not set\n\n"
            "Host               Gateway           Last Use    Total Uses  Interface\n"
            "ICMP redirect cache is empty\n")


#: Processes of a 3750 on 12.2(55)SE shown by ``show processes cpu`` (PID, name; the first of
#: the ~200 of the command reference's example).
PROCESSES = ((1, "Chunk Manager"), (2, "Load Meter"), (4, "Check heaps"), (5, "Pool Manager"),
             (6, "Timers"), (7, "HRPC asic-stats"), (8, "ARP Input"), (9, "SSH Process"),
             (10, "CDP Protocol"), (11, "Spanning Tree"), (12, "IP Input"), (13, "HQM Stack Process"))


def render_processes_cpu(percent: int, ssh_ms: int) -> str:
    """``show processes cpu``: the utilisation line (``percent`` for all three averages) and the
    process table; ``ssh_ms``: the CPU milliseconds the SSH process (the virtual switch) used."""
    out = [f"CPU utilization for five seconds: {percent}%/0%; one minute: {percent}%; five minutes: {percent}%",
           " PID Runtime(ms)   Invoked      uSecs   5Sec   1Min   5Min TTY Process "]
    for pid, name in PROCESSES:
        ms = ssh_ms if name == "SSH Process" else 0
        inv = max(1, ms)
        usecs = ms * 1000 // inv
        pct = f"{percent:.2f}%" if name == "SSH Process" else "0.00%"
        out.append(f"{pid:4d}{ms:12d}{inv:10d}{usecs:11d} {pct:>6} {pct:>6} {pct:>6}{0:4d} {name:<16} ")
    return "\n".join(out) + "\n"
