"""The virtual EOS switch's show commands as text, in the layout of real EOS output (pure
renderers over :mod:`.state`): ``show version``, ``show hostname``, ``show interfaces [PORT]``,
``show interfaces status`` in the form of the public recordings in ntc-templates
(tests/arista_eos/show_version, show_hostname, show_interfaces, show_interfaces_status; their
TextFSM templates read this output, tests/unit/test_eos_switch.py); ``show interfaces counters
queue [detail]`` (the egress table as recorded from a 7500R, the VOQ table in the same columns);
``show qos maps`` and ``show qos interfaces`` after the EOS User Manual's QoS chapter (layout not
checked against a recording: none is public).
"""

from __future__ import annotations

from ....eos import EosConfig, short_name
from ....eos.config import DEFAULT_COS_TC
from .datapath import queue_of, round_robin
from .state import INTERNAL, VERSION, EosFacts, Port, dotted


def _uptime(seconds: float) -> str:
    m = int(seconds // 60)
    w, m = divmod(m, 7 * 24 * 60)
    d, m = divmod(m, 24 * 60)
    h, m = divmod(m, 60)
    return f"{w} weeks, {d} days, {h} hours and {m} minutes"


def version(f: EosFacts) -> str:
    """``show version`` of a 7280R3 (model from the topology) on EOS :data:`.state.VERSION`."""
    return "\n".join([
        f"Arista {f.model}", "Hardware version: 11.00", f"Serial number: {f.serial}",
        f"Hardware MAC address: {dotted(f.mac)}", f"System MAC address: {dotted(f.mac)}", "",
        f"Software image version: {VERSION}", "Architecture: x86_64", f"Internal build version: {INTERNAL}",
        f"Internal build ID: {f.build_id}", "Image format version: 3.0", "Image optimization: Sand-4GB", "",
        f"Uptime: {_uptime(f.uptime_s)}", "Total memory: 32617448 kB", "Free memory: 27011180 kB", ""]) + "\n"


def hostname(name: str) -> str:
    """``show hostname`` (no domain configured: the FQDN is the hostname)."""
    return f"Hostname: {name}\nFQDN:     {name}\n"


def _speed(bps: int) -> str:
    return f"{bps // 1_000_000_000}Gb/s" if bps >= 1_000_000_000 else f"{bps // 1_000_000}Mb/s"


def interface(p: Port, uptime_s: float) -> str:
    """One ``show interfaces`` block (a switched port, counters since boot)."""
    state = "administratively down, line protocol is down (disabled)" if p.shutdown else \
        "up, line protocol is up (connected)" if p.up else "down, line protocol is down (notconnect)"
    out = [f"{p.name} is {state}", f"  Hardware is Ethernet, address is {dotted(p.mac)} (bia {dotted(p.mac)})"]
    if p.description:
        out.append(f'  Description: "{p.description}"')
    mins, secs = divmod(int(uptime_s), 60)
    out += [f"  Ethernet MTU 9214 bytes, BW {p.bps // 1000} kbit",
            f"  Full-duplex, {_speed(p.bps)}, auto negotiation: off, uni-link: n/a",
            f"  {'Up' if p.up else 'Down'} {mins} minutes, {secs} seconds", "  Loopback Mode : None",
            f"  {1 if p.up else 0} link status changes since last clear",
            '  Last clearing of "show interface" counters never',
            "  5 minutes input rate 0 bps (0.0% with framing overhead), 0 packets/sec",
            "  5 minutes output rate 0 bps (0.0% with framing overhead), 0 packets/sec",
            f"     {p.in_packets} packets input, {p.in_bytes} bytes", "     Received 0 broadcasts, 0 multicast",
            "     0 runts, 0 giants",
            "     0 input errors, 0 CRC, 0 alignment, 0 symbol, 0 input discards", "     0 PAUSE input",
            f"     {p.out_packets} packets output, {p.out_bytes} bytes", "     Sent 0 broadcasts, 0 multicast",
            "     0 output errors, 0 collisions",
            f"     0 late collision, 0 deferred, {p.out_drops} output discards", "     0 PAUSE output"]
    return "\n".join(out) + "\n"


def interfaces_status(ports: list[Port]) -> str:
    """``show interfaces status`` (the 4.2x header with Flags and Encapsulation)."""
    out = ["Port       Name        Status       Vlan     Duplex Speed  Type            Flags Encapsulation"]
    for p in ports:
        status = "disabled" if p.shutdown else "connected" if p.up else "notconnect"
        speed = f"{p.bps // 1_000_000_000}G" if p.bps >= 1_000_000_000 else f"{p.bps // 1_000_000}M"
        out.append(f"{short_name(p.name):<10} {p.description[:11]:<11} {status:<12} {'1':<8} "
                   f"{'full':<6} {speed:<6} {'25GBASE-SR':<15}")
    return "\n".join(out) + "\n"


def counters_queue(ports: list[Port], detail: bool) -> str:
    """``show interfaces counters queue [detail]``: the ingress VOQ table (per egress port and
    traffic class: the tc queue's enqueued and dropped counts), and with ``detail`` the egress
    queue table (DropPrec and DestType, as recorded from a 7500R; sent counts, no drops)."""
    out = ["Ingress VOQ Counters",
           f"{'Port':<18}{'Traffic':>8}{'EnqPkts':>18}{'EnqOctets':>18}{'DropPkts':>18}{'DropOctets':>18}",
           f"{'':<19}Class"]
    for p in ports:
        for tc, q in enumerate(p.queues):
            out.append(f"{short_name(p.name):<18}{'TC' + str(tc):>8}{q.sent_packets + q.dropped_packets:>18}"
                       f"{q.sent_bytes + q.dropped_bytes:>18}{q.dropped_packets:>18}{q.dropped_bytes:>18}")
    if detail:
        out += ["", "Egress Queue Counters",
                "Port               Traffic   DropPrec   DestType        OutEnqPkts      OutEnqOctets       "
                "OutDropPkts     OutDropOctets", "                    Class"]
        for p in ports:
            for tc, q in enumerate(p.queues):
                out.append(f"{short_name(p.name):<18}{'TC' + str(tc):>8}{'DP0-3':>11}{'UC':>11}"
                           f"{q.sent_packets:>18}{q.sent_bytes:>18}{0:>18}{0:>18}")
    return "\n".join(out) + "\n"


def qos_maps(cfg: EosConfig) -> str:
    """``show qos maps``: the CoS and DSCP to traffic class maps, traffic class to tx-queue."""
    out = ["Number of Traffic Classes supported: 8", "Number of Transmit Queues supported: 8", "",
           "Cos Tc Map:", "  cos:  " + " ".join(str(c) for c in range(8)), "  " + "-" * 24,
           "   tc:  " + " ".join(str(cfg.cos_tc.get(c, DEFAULT_COS_TC[c])) for c in range(8)), "",
           "Dscp Tc-Dp Map:", "   d1 :  d2 0    1    2    3    4    5    6    7    8    9", "  " + "-" * 55]
    for d1 in range(7):
        cells = [f"{cfg.dscp_tc_of(d)}-{cfg.dscp_dp.get(d, 0)}" for d in range(d1 * 10, min(64, d1 * 10 + 10))]
        out.append(f"    {d1} :     " + "  ".join(cells))
    out += ["", "Tc - Tx-Queue Map:", "  tc:        " + " ".join(str(t) for t in range(8)), "  " + "-" * 28,
            "  tx-queue:  " + " ".join(str(queue_of(cfg, t)) for t in range(8))]
    return "\n".join(out) + "\n"


def _txq_row(cfg: EosConfig, port: str, q: int, rr: set[int]) -> str:
    lines = cfg.interfaces[port].txq.get(q, []) if port in cfg.interfaces else []
    pct = next((x.split()[2] for x in lines if x.startswith("bandwidth percent ")), "-")
    shape = next((" ".join(x.split()[2:]) for x in lines if x.startswith("shape rate ")), "disabled")
    return f"   {q:<6}{pct + ' / ' + pct:<14}{shape:<20}{'RR' if q in rr else 'SP'} / {'RR' if q in rr else 'SP'}"


def qos_interfaces(cfg: EosConfig, names: list[str]) -> str:
    """``show qos interfaces [PORT]``: trust, default CoS and DSCP, port shaping, and per tx-queue
    the bandwidth percent, shape rate and scheduling (SP strict priority, RR round robin)."""
    out = []
    for port in names:
        lines = cfg.interfaces[port].lines if port in cfg.interfaces else []
        trust = "DSCP" if "qos trust dscp" in lines else "UNTRUSTED" if "no qos trust" in lines else "COS"
        cos = next((x.split()[2] for x in lines if x.startswith("qos cos ")), "0")
        dscp = next((x.split()[2] for x in lines if x.startswith("qos dscp ")), "0")
        shape = next((" ".join(x.split()[2:]) for x in lines if x.startswith("shape rate ")), "disabled")
        rr = round_robin(cfg, port)
        out += [f"{port}:", f"   Trust Mode: {trust}", f"   Default COS: {cos}", f"   Default DSCP: {dscp}", "",
                f"   Port shaping rate: {shape}", "", "   Tx    Bandwidth     Shape Rate          Priority",
                "   Queue (percent)     (units)", "   " + "-" * 48]
        out += [_txq_row(cfg, port, q, rr) for q in range(7, -1, -1)]
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def interfaces_text(ps: list[Port], f: EosFacts) -> str:
    """``show interfaces [PORT]``: one block per port."""
    return "".join(interface(p, f.uptime_s) for p in ps)


def running_interface(cfg: EosConfig, name: str) -> str:
    """``show running-config interfaces PORT``."""
    return "\n".join(cfg.interfaces[name].render()) + "\n" if name in cfg.interfaces else ""
