"""Catalyst 3750 system and interface show output, as pure functions: ``show version``,
``show inventory``, ``show privilege``, ``show interfaces [PORT]``, ``show interfaces status``,
``show ip interface [brief]``, ``show hosts``, ``show memory statistics``, ``show processes cpu``,
``dir``.

Inputs: :class:`DeviceFacts` (identity of the switch) and :class:`PortView` (state and counters
of one port). The formats are those the automation clients parse (NAPALM ``ios`` getters,
Ansible ``cisco.ios`` facts, ntc-templates) and match IOS 12.2(55)SE on a WS-C3750G-24T (samples
and sources in tests/data/ios-samples/README.md). Values that no emulation measures are the
clearly virtual ones in :class:`DeviceFacts` (serial ``QSL...``), never a real device's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class DeviceFacts:
    """Who the switch is: hostname, model, IOS version and image, serial (virtual), base MAC,
    uptime in seconds, configuration register, number of front ports, the testbed's link rate."""

    hostname: str
    model: str = "WS-C3750G-24T"
    version: str = "12.2(55)SE12"
    image: str = "c3750-ipservicesk9-mz.122-55.SE12.bin"
    serial: str = "QSL00000000"
    base_mac: str = "0200.5100.0000"
    uptime_s: float = 0.0
    config_register: str = "0xF"
    n_ports: int = 24
    link_bps: float | None = None  # the testbed's scale-model link rate (tc), stated in show version


@dataclass
class PortView:
    """One front port: long name, description, admin state, link state, speed (Mbit/s), duplex,
    access VLAN, MAC, and counters (packets/bytes in and out, output drops)."""

    name: str
    description: str = ""
    admin_up: bool = True
    link_up: bool = False
    speed_mbps: int = 1000
    duplex: str = "full"
    vlan: int = 1
    mac: str = "0200.5100.0001"
    in_packets: int = 0
    in_bytes: int = 0
    out_packets: int = 0
    out_bytes: int = 0
    out_drops: int = 0
    rates_bps: tuple[int, int] = field(default=(0, 0))


def uptime_text(seconds: float) -> str:
    """IOS uptime wording: ``1 week, 2 days, 3 hours, 4 minutes`` (zero parts left out)."""
    s = int(seconds)
    parts = []
    for name, size in (("year", 31536000), ("week", 604800), ("day", 86400), ("hour", 3600), ("minute", 60)):
        n, s = divmod(s, size)
        if n:
            parts.append(f"{n} {name}{'s' if n != 1 else ''}")
    return ", ".join(parts) or "0 minutes"


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


def render_privilege(level: int) -> str:
    """``show privilege``."""
    return f"Current privilege level is {level}\n"


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


def short_name(name: str) -> str:
    return name.replace("GigabitEthernet", "Gi").replace("FastEthernet", "Fa").replace("TenGigabitEthernet", "Te")


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


def render_hosts() -> str:
    """``show hosts`` of a switch without ``ip domain-name`` and name servers."""
    return ("Default domain is not set\nName/address lookup uses domain service\n"
            "Name servers are 255.255.255.255\n\nCodes: UN - unknown, EX - expired, OK - OK, ?? - revalidate\n"
            "       temp - temporary, perm - permanent\n       NA - Not Applicable None - Not defined\n\n"
            "Host                      Port  Flags      Age Type   Address(es)\n")


def render_memory_statistics(total: int, used: int) -> str:
    """``show memory statistics`` (processor pool, bytes)."""
    free = total - used
    return ("                Head    Total(b)     Used(b)     Free(b)   Lowest(b)  Largest(b)\n"
            f"Processor    2A5BC2C {total:11d} {used:11d} {free:11d} {free:11d} {free:11d}\n"
            "      I/O    6800000    12582920     4855540     7727380     7637260     7701436\n\n")


@dataclass(frozen=True)
class FileEntry:
    """A file on flash: name, size in bytes, modification time (epoch seconds)."""

    name: str
    size: int
    mtime: float


def render_dir(fs: str, files: list[FileEntry], total: int, path: str = "", used: int | None = None) -> str:
    """``dir FS[/PATH]``: IOS 12.2 listing (index, permissions, size, date, name) and the
    ``bytes total (... bytes free)`` line NAPALM and netmiko read; ``used``: bytes used on the
    whole file system (default: the listed files)."""
    out = [f"Directory of {fs}/{path}", ""]
    for i, e in enumerate(files, 2):
        stamp = time.strftime("%b %d %Y %H:%M:%S +00:00", time.gmtime(e.mtime))
        out.append(f"{i:5d}  -rwx  {e.size:10d}  {stamp}  {e.name}")
    used = sum(e.size for e in files) if used is None else used
    out += ["", f"{total} bytes total ({total - used} bytes free)"]
    return "\n".join(out) + "\n"


@dataclass
class MonitorSession:
    """One local SPAN session: source ports per direction (short names), destination ports and
    their encapsulation (``replicate``, ``dot1q`` or None: native)."""

    number: int
    both: list[str] = field(default_factory=list)
    rx: list[str] = field(default_factory=list)
    tx: list[str] = field(default_factory=list)
    destinations: list[str] = field(default_factory=list)
    encapsulation: str | None = None


def port_list(ports: list[str]) -> str:
    """IOS port list: ``Gi1/0/1-3,Gi1/0/5`` (consecutive ports of a module as a range)."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(run[0] if len(run) == 1 else f"{run[0]}-{run[-1].rsplit('/', 1)[1]}")
            run.clear()

    for p in ports:
        if run and p.rsplit("/", 1)[0] == run[-1].rsplit("/", 1)[0] \
                and p.rsplit("/", 1)[1].isdigit() and int(p.rsplit("/", 1)[1]) == int(run[-1].rsplit("/", 1)[1]) + 1:
            run.append(p)
        else:
            flush()
            run.append(p)
    flush()
    return ",".join(out)


def render_monitor(sessions: list[MonitorSession]) -> str:
    """``show monitor [session N]`` of local SPAN sessions (the 3750's format: type, source ports
    by direction, destination ports with their encapsulation and ingress setting)."""
    blocks = []
    for s in sessions:
        out = [f"Session {s.number}", "---------", "Type                   : Local Session"]
        srcs = [(label, ps) for label, ps in (("Both", s.both), ("RX Only", s.rx), ("TX Only", s.tx)) if ps]
        if srcs:
            out.append("Source Ports           :")
            out += [f"    {label:<19}: {port_list(ps)}" for label, ps in srcs]
        if s.destinations:
            enc = {"replicate": "Replicate", "dot1q": "DOT1Q"}.get(s.encapsulation or "", "Native")
            out += [f"Destination Ports      : {port_list(s.destinations)}", f"    Encapsulation      : {enc}",
                    "          Ingress      : Disabled"]
        blocks.append("\n".join(out) + "\n")
    return "\n".join(blocks) + ("\n" if blocks else "")
