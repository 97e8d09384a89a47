"""Catalyst 3750 system and interface show output, as pure functions: ``show version``,
``show inventory``, ``show interfaces [PORT]``, ``show interfaces status``, ``show ip interface
[brief]``, ``show vlan brief``, ``show env``.

Inputs: :class:`qoslab.vcatalyst.facts.DeviceFacts` (identity of the switch) and
:class:`qoslab.vcatalyst.facts.PortView` (state and counters of one port). The formats are those
the automation clients parse (NAPALM ``ios`` getters, Ansible ``cisco.ios`` facts, ntc-templates)
and match IOS 12.2(55)SE on a WS-C3750G-24T (samples and sources in
tests/data/ios-samples/README.md). Values that no emulation measures are the clearly virtual ones
(serial ``QSL...``), never a real device's.
"""

from __future__ import annotations

from ...facts import DeviceFacts, PortView, uptime_text
from ..ioscommon.render import short_name


def render_version(f: DeviceFacts) -> str:
    """``show version`` (first line, uptime, image, processor, serial, stack table, register)."""
    img = f.image.split("-mz")[0].upper() + "-M"
    return f"""Cisco IOS Software, C3750 Software (C3750-IPSERVICESK9-M), Version {f.version}, RELEASE SOFTWARE (fc2)
Technical Support: http://www.cisco.com/techsupport
Copyright (c) 1986-2017 by Cisco Systems, Inc.
Compiled Mon 09-Jan-17 10:57 by prod_rel_team
Image text-base: 0x01000000, data-base: 0x02F00000

ROM: Bootstrap program is C3750 boot loader
BOOTLDR: C3750 Boot Loader (C3750-HBOOT-M) Version 12.2(44)SE5, RELEASE SOFTWARE (fc1)

{f.hostname} uptime is {uptime_text(f.uptime_s)}
System returned to ROM by power-on
System image file is "flash:{f.image}"

qoslab virtual Catalyst: the QoS configuration is emulated with tc/nftables on the embedded
testbed; serial numbers and MAC addresses are virtual.{_rate_note(f)}

cisco {f.model} (PowerPC405) processor (revision F0) with 131072K bytes of memory.
Processor board ID {f.serial}
Last reset from power-on
1 Virtual Ethernet interface
{f.n_ports} Gigabit Ethernet interfaces
The password-recovery mechanism is enabled.

512K bytes of flash-simulated non-volatile configuration memory.
Base ethernet MAC Address       : {_colon_mac(f.base_mac)}
Motherboard assembly number     : 73-9677-10
Model revision number           : F0
Motherboard revision number     : A0
Model number                    : {f.model}-S
System serial number            : {f.serial}
Version ID                      : V05
Hardware Board Revision Number  : 0x09


Switch Ports Model              SW Version            SW Image
------ ----- -----              ----------            ----------
*    1 {f.n_ports:<5d} {f.model:<18} {f.version:<21} {img}


Configuration register is {f.config_register}

"""


def _rate_note(f: DeviceFacts) -> str:
    """The scale-model line of ``show version``: ports report 1000Mb/s as a 3750's do, the
    testbed's links run at ``link_bps`` (empty when not known)."""
    if not f.link_bps:
        return ""
    rate = f"{f.link_bps / 1e6:g} Mbit/s"
    return (f"\nScale model: ports report 1000Mb/s as a 3750's do; the testbed's links and the egress\n"
            f"queues' port rate run at {rate} (qoslab topology link.rate).")


def _colon_mac(dotted: str) -> str:
    h = dotted.replace(".", "").upper()
    return ":".join(h[i:i + 2] for i in range(0, 12, 2))


def render_inventory(f: DeviceFacts) -> str:
    """``show inventory``: the one stack member."""
    return (f'NAME: "1", DESCR: "{f.model}"\n'
            f"PID: {f.model}-S   , VID: V05  , SN: {f.serial}\n\n")


def _state(p: PortView) -> tuple[str, str, str]:
    """(line status, protocol, status-column word) of a port."""
    if not p.admin_up:
        return "administratively down", "down", "disabled"
    return ("up", "up", "connected") if p.link_up else ("down", "down", "notconnect")


def render_interfaces_status(ports: list[PortView]) -> str:
    """``show interfaces status``."""
    out = ["", "Port      Name               Status       Vlan       Duplex  Speed Type"]
    for p in ports:
        _, _, word = _state(p)
        dup, spd = (f"a-{p.duplex}", f"a-{p.speed_mbps}") if p.link_up else ("auto", "auto")
        out.append(f"{short_name(p.name):<9} {p.description[:18]:<18} {word:<12} {p.vlan:<10} {dup:>6} {spd:>6} "
                   "10/100/1000BaseTX")
    return "\n".join(out) + "\n\n"


def render_interface(p: PortView) -> str:
    """One port of ``show interfaces``."""
    line, proto, word = _state(p)
    dup = f"{p.duplex.capitalize()}-duplex" if p.link_up else "Auto-duplex"
    spd = f"{p.speed_mbps}Mb/s" if p.link_up else "Auto-speed"
    desc = [f"  Description: {p.description}"] if p.description else []
    return "\n".join([
        f"{p.name} is {line}, line protocol is {proto} ({word}) ",
        f"  Hardware is Gigabit Ethernet, address is {p.mac} (bia {p.mac})", *desc,
        f"  MTU 1500 bytes, BW {p.speed_mbps * 1000} Kbit/sec, DLY 10 usec, ",
        "     reliability 255/255, txload 1/255, rxload 1/255",
        "  Encapsulation ARPA, loopback not set", "  Keepalive set (10 sec)",
        f"  {dup}, {spd}, media type is 10/100/1000BaseTX",
        "  input flow-control is off, output flow-control is unsupported ",
        "  ARP type: ARPA, ARP Timeout 04:00:00",
        "  Last input never, output never, output hang never",
        '  Last clearing of "show interface" counters never',
        f"  Input queue: 0/75/0/0 (size/max/drops/flushes); Total output drops: {p.out_drops}",
        "  Queueing strategy: fifo", "  Output queue: 0/40 (size/max)",
        f"  5 minute input rate {p.rates_bps[0]} bits/sec, 0 packets/sec",
        f"  5 minute output rate {p.rates_bps[1]} bits/sec, 0 packets/sec",
        f"     {p.in_packets} packets input, {p.in_bytes} bytes, 0 no buffer",
        "     Received 0 broadcasts (0 multicasts)", "     0 runts, 0 giants, 0 throttles",
        "     0 input errors, 0 CRC, 0 frame, 0 overrun, 0 ignored",
        "     0 watchdog, 0 multicast, 0 pause input", "     0 input packets with dribble condition detected",
        f"     {p.out_packets} packets output, {p.out_bytes} bytes, 0 underruns",
        "     0 output errors, 0 collisions, 1 interface resets", "     0 babbles, 0 late collision, 0 deferred",
        "     0 lost carrier, 0 no carrier, 0 PAUSE output",
        "     0 output buffer failures, 0 output buffers swapped out"]) + "\n"


def render_interfaces(ports: list[PortView]) -> str:
    """``show interfaces`` (all ports, or the one given)."""
    return "".join(render_interface(p) for p in ports)


def render_ip_interface_brief(ports: list[PortView]) -> str:
    """``show ip interface brief`` (layer-2 ports: unassigned)."""
    out = ["Interface              IP-Address      OK? Method Status                Protocol"]
    for p in ports:
        line, proto, _ = _state(p)
        out.append(f"{p.name:<22} {'unassigned':<15} YES unset  {line:<21} {proto:<8}")
    return "\n".join(out) + "\n"


def render_ip_interface(ports: list[PortView]) -> str:
    """``show ip interface`` (layer-2 ports: IP processing disabled)."""
    out = []
    for p in ports:
        line, proto, _ = _state(p)
        out += [f"{p.name} is {line}, line protocol is {proto}", "  Internet protocol processing disabled"]
    return "\n".join(out) + "\n"


def render_vlan_brief(ports: list[PortView]) -> str:
    """``show vlan brief`` of a switch with every port in VLAN 1 (the 3750's factory state)."""
    names = [short_name(p.name) for p in ports if p.vlan == 1]
    rows = [", ".join(names[i:i + 4]) for i in range(0, len(names), 4)] or [""]
    out = ["", "VLAN Name                             Status    Ports",
           "---- -------------------------------- --------- -------------------------------",
           f"1    {'default':<32} {'active':<9} {rows[0]}"]
    out += [" " * 48 + r for r in rows[1:]]
    out += [f"{v:<4} {n:<32} act/unsup " for v, n in ((1002, "fddi-default"), (1003, "token-ring-default"),
                                                      (1004, "fddinet-default"), (1005, "trnet-default"))]
    return "\n".join(out) + "\n"


def render_env(what: str) -> str:
    """``show env all|fan|temperature`` of a WS-C3750G (status words only: the 3750G reports no
    sensor values; Catalyst 3750 command reference 12.2(55)SE, ``show env``)."""
    parts = {"fan": "FAN is OK\n", "temperature": "TEMPERATURE is OK\n"}
    if what in parts:
        return parts[what]
    return parts["fan"] + parts["temperature"] + "POWER is OK\nRPS is NOT PRESENT\n"
