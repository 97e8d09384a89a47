"""Show output that IOS 12.2 and IOS-XE print alike, as pure functions: ``show privilege``,
``show hosts``, ``show memory statistics``, ``show monitor [session N]`` (local SPAN sessions),
``show [ip] access-lists [NAME]``, ``show startup-config``, and IOS's short interface names.

Formats: Catalyst 3750 Command Reference 12.2(55)SE and Cisco IOS Configuration Fundamentals
Command Reference 12.2 (the same on IOS-XE 17.x for these commands); samples and sources in
tests/data/ios-samples/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from ...facts import PortView

CM = TypeVar("CM")


def render_privilege(level: int) -> str:
    """``show privilege``."""
    return f"Current privilege level is {level}\n"


@dataclass
class SviView:
    """A VLAN interface (SVI): name (``Vlan1``), admin state (no ``shutdown``), whether the VLAN
    has a port up (autostate), its MAC; it carries no traffic of its own (no IP address)."""

    name: str
    admin_up: bool = True
    up: bool = False
    mac: str = "0200.5100.0000"


def port_state(p: PortView) -> tuple[str, str, str]:
    """(line status, protocol, status-column word) of a port."""
    if not p.admin_up:
        return "administratively down", "down", "disabled"
    return ("up", "up", "connected") if p.link_up else ("down", "down", "notconnect")


def svi_state(v: SviView) -> tuple[str, str]:
    """(line status, protocol) of an SVI."""
    if not v.admin_up:
        return "administratively down", "down"
    return ("up", "up") if v.up else ("down", "down")


@dataclass(frozen=True)
class PortForm:
    """What differs between IOS releases in a front port's ``show interfaces`` block: the media
    line's link type, input flow control, input queue depth, the ``throttles`` line's trailing
    blank, the ``unknown protocol drops`` line, the case of ``PAUSE output``."""

    link_type: str = ""
    flow_in: str = "off"
    input_queue: int = 75
    throttles_end: str = ""
    unknown_drops: bool = False
    pause: str = "PAUSE"


def render_port_block(p: PortView, form: PortForm) -> str:
    """One front port of ``show interfaces`` in ``form``; counters from the port view."""
    line, proto, word = port_state(p)
    dup = f"{p.duplex.capitalize()}-duplex" if p.link_up else "Auto-duplex"
    spd = f"{p.speed_mbps}Mb/s" if p.link_up else "Auto-speed"
    desc = [f"  Description: {p.description}"] if p.description else []
    unknown = ["     0 unknown protocol drops"] if form.unknown_drops else []
    return "\n".join([
        f"{p.name} is {line}, line protocol is {proto} ({word}) ",
        f"  Hardware is Gigabit Ethernet, address is {p.mac} (bia {p.mac})", *desc,
        f"  MTU 1500 bytes, BW {p.speed_mbps * 1000} Kbit/sec, DLY 10 usec, ",
        "     reliability 255/255, txload 1/255, rxload 1/255",
        "  Encapsulation ARPA, loopback not set", "  Keepalive set (10 sec)",
        f"  {dup}, {spd}, {form.link_type}media type is 10/100/1000BaseTX",
        f"  input flow-control is {form.flow_in}, output flow-control is unsupported ",
        "  ARP type: ARPA, ARP Timeout 04:00:00",
        "  Last input never, output never, output hang never",
        '  Last clearing of "show interface" counters never',
        f"  Input queue: 0/{form.input_queue}/0/0 (size/max/drops/flushes); Total output drops: {p.out_drops}",
        "  Queueing strategy: fifo", "  Output queue: 0/40 (size/max)",
        f"  5 minute input rate {p.rates_bps[0]} bits/sec, 0 packets/sec",
        f"  5 minute output rate {p.rates_bps[1]} bits/sec, 0 packets/sec",
        f"     {p.in_packets} packets input, {p.in_bytes} bytes, 0 no buffer",
        "     Received 0 broadcasts (0 multicasts)", f"     0 runts, 0 giants, 0 throttles{form.throttles_end}",
        "     0 input errors, 0 CRC, 0 frame, 0 overrun, 0 ignored",
        "     0 watchdog, 0 multicast, 0 pause input", "     0 input packets with dribble condition detected",
        f"     {p.out_packets} packets output, {p.out_bytes} bytes, 0 underruns",
        "     0 output errors, 0 collisions, 1 interface resets", *unknown,
        "     0 babbles, 0 late collision, 0 deferred", f"     0 lost carrier, 0 no carrier, 0 {form.pause} output",
        "     0 output buffer failures, 0 output buffers swapped out"]) + "\n"


def select_class_maps(cms: list[CM], default: CM, name: str | None) -> list[tuple[CM, int]] | None:
    """``show class-map [NAME]``'s class-maps with their ids (configured ones 1..n, the implicit
    ``class-default`` 0, last); only NAME's when given, None when NAME is not one."""
    allc = [(cm, i) for i, cm in enumerate(cms, 1)] + [(default, 0)]
    if name is None:
        return allc
    return [(cm, i) for cm, i in allc if getattr(cm, "name", None) == name] or None


def render_ip_interface_brief(ports: list[PortView], svis: list[SviView] | None = None) -> str:
    """``show ip interface brief``: the SVIs first (no address: ``unassigned``, method ``NVRAM``,
    the configuration it was loaded from), then the layer-2 ports (``unassigned``, ``unset``)."""
    out = ["Interface              IP-Address      OK? Method Status                Protocol"]
    for v in svis or []:
        line, proto = svi_state(v)
        out.append(f"{v.name:<22} {'unassigned':<15} YES NVRAM  {line:<21} {proto:<8}")
    for p in ports:
        line, proto, _ = port_state(p)
        out.append(f"{p.name:<22} {'unassigned':<15} YES unset  {line:<21} {proto:<8}")
    return "\n".join(out) + "\n"


def render_interfaces_summary(ports: list[PortView], svis: list[SviView] | None = None) -> str:
    """``show interfaces summary``: the legend and per interface (``*`` = up) the input/output
    hold queues and drops (``OQD``: the port's output drops, NAPALM's ``tx_discards``), rates and
    throttles (Cisco IOS Interface and Hardware Component Command Reference, ``show interfaces
    summary``; the column layout of genieparser's IOS-XE recording)."""
    out = ["", " *: interface is up", " IHQ: pkts in input hold queue     IQD: pkts dropped from input queue",
           " OHQ: pkts in output hold queue    OQD: pkts dropped from output queue",
           " RXBS: rx rate (bits/sec)          RXPS: rx rate (pkts/sec)",
           " TXBS: tx rate (bits/sec)          TXPS: tx rate (pkts/sec)", " TRTL: throttle count", "",
           "  Interface                   IHQ       IQD       OHQ       OQD      RXBS      RXPS      TXBS      TXPS"
           "      TRTL", "-" * 113]
    rows = [(v.name, svi_state(v)[1] == "up", 0, 0, 0) for v in svis or []]
    rows += [(p.name, port_state(p)[1] == "up", p.out_drops, *p.rates_bps) for p in ports]
    for name, up, oqd, rx, tx in rows:
        out.append(f"{'*' if up else ' '} {name:<26}{0:>5}{0:>10}{0:>10}{oqd:>10}{rx:>10}{0:>10}{tx:>10}{0:>10}{0:>10}")
    return "\n".join(out) + "\n"


def render_interfaces_status(ports: list[PortView]) -> str:
    """``show interfaces status``."""
    out = ["", "Port      Name               Status       Vlan       Duplex  Speed Type"]
    for p in ports:
        _, _, word = port_state(p)
        dup, spd = (f"a-{p.duplex}", f"a-{p.speed_mbps}") if p.link_up else ("auto", "auto")
        out.append(f"{short_name(p.name):<9} {p.description[:18]:<18} {word:<12} {p.vlan:<10} {dup:>6} {spd:>6} "
                   "10/100/1000BaseTX")
    return "\n".join(out) + "\n\n"


def render_ip_interface(ports: list[PortView]) -> str:
    """``show ip interface`` (layer-2 ports: IP processing disabled)."""
    out = []
    for p in ports:
        line, proto, _ = port_state(p)
        out += [f"{p.name} is {line}, line protocol is {proto}", "  Internet protocol processing disabled"]
    return "\n".join(out) + "\n"


def port_rows(names: list[str], width: int = 80) -> list[str]:
    """The Ports column of a VLAN table: ``Gi1/0/1, Gi1/0/2, ...`` filled up to the terminal
    ``width`` (the column starts at 48; at least its 31 dashes wide), the rest on continuation
    lines, as IOS wraps it (``terminal width 511``, as Netmiko sets it, gives long lines)."""
    room = max(31, width - 49)
    rows: list[str] = []
    for n in names:
        if rows and len(rows[-1]) + 2 + len(n) <= room:
            rows[-1] += f", {n}"
        else:
            rows.append(n)
    return rows or [""]


def render_vlan_brief(ports: list[PortView], width: int = 80) -> str:
    """``show vlan brief`` of a switch with every port in VLAN 1 (the factory state), its port
    list wrapped at the terminal ``width`` (:func:`port_rows`)."""
    rows = port_rows([short_name(p.name) for p in ports if p.vlan == 1], width)
    out = ["", "VLAN Name                             Status    Ports",
           "---- -------------------------------- --------- -------------------------------",
           f"1    {'default':<32} {'active':<9} {rows[0]}"]
    out += [" " * 48 + r for r in rows[1:]]
    out += [f"{v:<4} {n:<32} act/unsup " for v, n in ((1002, "fddi-default"), (1003, "token-ring-default"),
                                                      (1004, "fddinet-default"), (1005, "trnet-default"))]
    return "\n".join(out) + "\n"


def short_name(name: str) -> str:
    """``GigabitEthernet1/0/1`` -> ``Gi1/0/1`` (``Fa``, ``Te`` likewise), as IOS lists ports in tables."""
    return name.replace("GigabitEthernet", "Gi").replace("FastEthernet", "Fa").replace("TenGigabitEthernet", "Te")


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


def render_access_lists(acls: dict[str, tuple[str, list[tuple[int, str]]]], name: str | None = None,
                        ip_only: bool = False, matches: dict[tuple[str, int], int] | None = None) -> str | None:
    """``show [ip] access-lists [NAME]``: ``acls`` = {name: (header, [(sequence number, entry
    text)])} (:meth:`qoslab.ios.AccessList.show_header` / ``show_entries``); ``matches[(name,
    seq)]`` adds ``(N matches)``. None when NAME is not an ACL."""
    if name is not None and name not in acls:
        return None
    matches = matches or {}
    out = []
    for n, (header, entries) in acls.items():
        if name is not None and n != name:
            continue
        out.append(header)
        for seq, a in entries:
            m = matches.get((n, seq))
            out.append(f"    {seq} {a}" + (f" ({m} matches)" if m else ""))
    return "\n".join(out) + ("\n" if out else "")


#: NVRAM of a WS-C3750G-24T (``show version``: 512K bytes of flash-simulated NVRAM).
NVRAM_BYTES = 524288


def render_startup(saved: str, nvram_bytes: int = NVRAM_BYTES) -> str:
    """``show startup-config``: ``Using N out of NVRAM bytes`` and the saved configuration (as
    NVRAM holds it: without ``show running-config``'s ``Building configuration...`` and ``Current
    configuration`` lines)."""
    lines = saved.split("\n")
    while lines and (not lines[0].strip() or lines[0].startswith(("Building configuration", "Current configuration"))):
        lines.pop(0)
    body = "\n".join(lines)
    return f"Using {len(body.encode())} out of {nvram_bytes} bytes\n" + body
