"""Crafted captures for every encapsulation a SPAN port (or a user's own capture) can deliver,
built with scapy (packets) and a byte-exact pcap writer (records, so snaplen cuts and any link
type can be written). Used by the tshark agreement tests and the mixed-capture benchmark.

Each builder returns ``(linktype, [(frame bytes, captured length), ...])``; ``captures()`` gives all
of them by name. Addresses are in 198.18.0.0/15 and 2001:db8::/32 (documentation prefix); nothing
is sent anywhere.
"""

from __future__ import annotations

import struct
from pathlib import Path

from scapy.contrib.erspan import ERSPAN_II
from scapy.layers.inet import GRE, ICMP, IP, TCP, UDP, fragment
from scapy.layers.inet6 import (
    ICMPv6EchoRequest,
    IPv6,
    IPv6ExtHdrDestOpt,
    IPv6ExtHdrFragment,
    IPv6ExtHdrHopByHop,
    IPv6ExtHdrRouting,
    fragment6,
)
from scapy.layers.ipsec import AH, ESP
from scapy.layers.l2 import ARP, CookedLinux, CookedLinuxV2, Dot1AD, Dot1Q, Ether
from scapy.layers.ppp import PPP, PPPoE

A, B, C, D = "198.18.0.1", "198.18.0.2", "198.18.1.1", "198.18.1.2"
A6, B6 = "2001:db8::1", "2001:db8::2"
Frames = list[tuple[bytes, int]]


def write_pcap(path: Path, linktype: int, frames: Frames, t0: float = 1_700_000_000.0) -> Path:
    """Little-endian microsecond pcap; each frame (bytes, caplen) cut to caplen, 1 ms apart."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype)]
    for i, (f, cap) in enumerate(frames):
        us = int(t0 * 1e6) + i * 1000
        cap = min(cap, len(f))
        out.append(struct.pack("<IIII", us // 1_000_000, us % 1_000_000, cap, len(f)) + f[:cap])
    path.write_bytes(b"".join(out))
    return path


def _full(*pkts) -> Frames:
    return [(bytes(p), len(bytes(p))) for p in pkts]


def _tcp(sport: int, dport: int, payload: bytes = b"", flags: str = "PA", seq: int = 1) -> TCP:
    return TCP(sport=sport, dport=dport, flags=flags, seq=seq) / payload if payload else \
        TCP(sport=sport, dport=dport, flags=flags, seq=seq)


def ethernet() -> tuple[int, Frames]:
    """Ethernet: plain, 802.1Q, QinQ, three tags, PPPoE, IPv6 with extension headers, IPv4 and
    IPv6 fragments, AH/ESP, ICMP errors, ARP, and snaplen cuts."""
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    ip, ip6 = IP(src=A, dst=B), IPv6(src=A6, dst=B6)
    big = UDP(sport=9, dport=10001) / (b"u" * 2400)
    ssh_big = TCP(sport=40000, dport=22, flags="PA", seq=77) / (b"s" * 2400)
    fr4 = fragment(IP(src=A, dst=B, id=4242) / big, fragsize=1000)
    fr4ssh = fragment(IP(src=A, dst=B, id=4343) / ssh_big, fragsize=1000)
    fr6 = fragment6(IPv6(src=A6, dst=B6) / IPv6ExtHdrFragment(id=77) / big, 1000)
    frames = _full(
        e / ip / _tcp(40000, 80, flags="S"),                                      # control/ack
        e / ip / _tcp(40000, 22, b"x" * 48),                                      # ssh
        e / ip / _tcp(40001, 1099, b"JRMI\x00\x02K"),                            # rmi (registry port)
        e / IP(src=A, dst=B, tos=0xb8) / _tcp(40002, 5001, b"d" * 500),          # data, DSCP 46
        e / ip / UDP(sport=9, dport=10001) / (b"u" * 1400),                       # udp
        e / Dot1Q(vlan=10) / IP(src=A, dst=B, tos=0xa0) / _tcp(40003, 5001, b"v" * 300),
        Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02", type=0x88a8) / Dot1AD(vlan=100) / Dot1Q(vlan=10)
        / ip / UDP(sport=5, dport=6) / (b"q" * 100),                              # QinQ
        e / Dot1Q(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / ip6 / _tcp(40004, 5001, b"w" * 100),
        e / IPv6(src=A6, dst=B6, tc=0xb8) / IPv6ExtHdrHopByHop() / IPv6ExtHdrRouting() / IPv6ExtHdrDestOpt()
        / _tcp(40005, 5001, b"e" * 200),                                          # IPv6 + 3 extension headers
        e / ip6 / IPv6ExtHdrHopByHop() / UDP(sport=7, dport=8) / (b"h" * 50),
        e / ip6 / _tcp(40006, 22, b"s" * 30),                                     # ssh over IPv6
        e / ip6 / _tcp(40007, 5001, flags="A"),                                   # IPv6 pure ACK
        e / ip6 / ICMPv6EchoRequest(),                                            # other
        *(e / f for f in fr4), *(e / f for f in fr4ssh), *(e / f for f in fr6),  # fragments, first ones seen
        e / IP(src=C, dst=D, id=999, frag=100, proto=6) / (b"z" * 200),           # later fragment, first unseen
        e / PPPoE(sessionid=1) / PPP(proto=0x21) / ip / _tcp(40008, 5001, b"p" * 100),
        e / ip / AH(nh=6, payloadlen=4, spi=1, seq=1, icv=b"\0" * 12) / _tcp(40009, 5001, b"a" * 100),
        e / ip / ESP(spi=1, seq=1, data=b"\0" * 64),                              # other (encrypted)
        e / ip / ICMP(type=3, code=3) / IP(src=B, dst=A) / _tcp(5001, 40010, b"i" * 8),  # ICMP error quoting TCP
        e / ARP(psrc=A, pdst=B),                                                  # other (non-IP)
    )
    cut = [e / ip / _tcp(40011, 5001, b"c" * 500), e / Dot1Q(vlan=5) / ip / UDP(sport=1, dport=2) / (b"c" * 500),
           e / ip6 / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt() / _tcp(40012, 5001, b"c" * 500),
           e / ip / _tcp(40013, 22, b"c" * 500), e / ip / _tcp(40014, 5001, flags="A")]
    frames += [(bytes(p), c) for p, c in zip(cut, (80, 60, 70, 60, 40), strict=True)]  # snaplen cuts (last: TCP header cut)
    return 1, frames


def tunnels() -> tuple[int, Frames]:
    """IP-in-IP (4in4, 6in4, 4in6, 6in6), GRE (IPv4, IPv6 with a key, transparent Ethernet), ERSPAN II."""
    e = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    outer, outer6 = IP(src=C, dst=D), IPv6(src="2001:db8:1::1", dst="2001:db8:1::2")
    inner, inner6 = IP(src=A, dst=B, tos=0xb8), IPv6(src=A6, dst=B6, tc=0xa0)
    return 1, _full(
        e / outer / inner / _tcp(41000, 5001, b"d" * 100),
        e / outer / inner6 / _tcp(41001, 22, b"s" * 40),
        e / outer6 / inner / UDP(sport=3, dport=4) / (b"u" * 60),
        e / outer6 / inner6 / _tcp(41002, 5001, flags="A"),
        e / outer / GRE() / inner / _tcp(41003, 5001, b"g" * 300),
        e / outer / GRE(key_present=1, key=5) / inner6 / _tcp(41004, 1099, b"JRMI\x00\x02K"),
        e / outer / GRE(proto=0x6558) / Ether() / Dot1Q(vlan=7) / inner / UDP(sport=5, dport=6) / (b"t" * 80),
        e / outer / GRE(proto=0x88be, seqnum_present=1) / ERSPAN_II(vlan=1, session_id=1) / Ether() / inner
        / _tcp(41005, 5001, b"r" * 120),
        e / outer / GRE() / IP(src=A, dst=B) / ICMP(),
    )


def sll() -> tuple[int, Frames]:
    return 113, _full(CookedLinux(proto=0x0800) / IP(src=A, dst=B) / _tcp(42000, 5001, b"d" * 100),
                      CookedLinux(proto=0x86dd) / IPv6(src=A6, dst=B6) / UDP(sport=1, dport=2) / b"u",
                      CookedLinux(proto=0x0806) / ARP())


def sll2() -> tuple[int, Frames]:
    return 276, _full(CookedLinuxV2(proto=0x0800) / IP(src=A, dst=B, tos=0x28) / _tcp(42001, 22, b"s" * 10),
                      CookedLinuxV2(proto=0x86dd) / IPv6(src=A6, dst=B6) / _tcp(42002, 5001, b"d" * 100),
                      CookedLinuxV2(proto=0x0800) / IP(src=A, dst=B) / UDP(sport=1, dport=2) / b"u",
                      CookedLinuxV2(proto=0x0806) / ARP())


def raw_ip() -> tuple[int, Frames]:
    return 101, _full(IP(src=A, dst=B) / _tcp(42003, 5001, b"d" * 100), IPv6(src=A6, dst=B6) / UDP(sport=1, dport=2) / b"u",
                      IP(src=A, dst=B) / GRE() / IPv6(src=A6, dst=B6) / _tcp(42004, 5001, flags="F"))


def raw_ipv4() -> tuple[int, Frames]:
    return 228, _full(IP(src=A, dst=B) / _tcp(42005, 5001, b"d" * 10), IP(src=A, dst=B) / ICMP())


def raw_ipv6() -> tuple[int, Frames]:
    return 229, _full(IPv6(src=A6, dst=B6) / _tcp(42006, 1099, b"JRMI"), IPv6(src=A6, dst=B6) / ICMPv6EchoRequest())


def ppp() -> tuple[int, Frames]:
    return 9, [(b"\xff\x03\x00\x21" + bytes(IP(src=A, dst=B) / _tcp(42007, 5001, b"d" * 100)), 10_000),
               (b"\xff\x03\x00\x57" + bytes(IPv6(src=A6, dst=B6) / UDP(sport=1, dport=2) / b"u"), 10_000),
               (b"\xff\x03\xc0\x21" + b"\x01\x01\x00\x04", 10_000)]                      # LCP: other


def cisco_hdlc() -> tuple[int, Frames]:
    return 104, [(b"\x0f\x00\x08\x00" + bytes(IP(src=A, dst=B) / _tcp(42008, 22, b"s" * 20)), 10_000),
                 (b"\x0f\x00\x86\xdd" + bytes(IPv6(src=A6, dst=B6) / _tcp(42009, 5001, b"d" * 100)), 10_000),
                 (b"\x8f\x00\x80\x35" + b"\x00" * 20, 10_000)]                          # SLARP: other


def loopback() -> tuple[int, Frames]:
    """BSD loopback (DLT_NULL, host byte order): AF_INET 2, AF_INET6 as NetBSD 24, FreeBSD 28, Darwin 30."""
    ip4 = bytes(IP(src=A, dst=B) / _tcp(42010, 5001, b"d" * 100))
    ip6 = bytes(IPv6(src=A6, dst=B6) / _tcp(42011, 5001, b"d" * 50))
    return 0, [(struct.pack("<I", 2) + ip4, 10_000), (struct.pack("<I", 24) + ip6, 10_000),
               (struct.pack("<I", 28) + ip6, 10_000), (struct.pack(">I", 30) + ip6, 10_000)]


BUILDERS = {"ethernet": ethernet, "tunnels": tunnels, "sll": sll, "sll2": sll2, "raw-ip": raw_ip,
            "raw-ipv4": raw_ipv4, "raw-ipv6": raw_ipv6, "ppp": ppp, "cisco-hdlc": cisco_hdlc, "loopback": loopback}


def captures(folder: Path) -> dict[str, Path]:
    """Write every crafted capture into ``folder``; name -> pcap path."""
    folder.mkdir(parents=True, exist_ok=True)
    return {name: write_pcap(folder / f"{name}.pcap", *build()) for name, build in BUILDERS.items()}


def write_pcapng(path: Path, parts: list[tuple[int, Frames]], n: int | None = None) -> int:
    """A little-endian pcapng with one interface per link type in ``parts`` (nanosecond
    timestamps, 1 µs apart) and their frames interleaved round-robin; ``n`` repeats them up to n
    packets (default: each once). Returns the packets written."""
    def block(btype: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        return struct.pack("<II", btype, len(body) + 12) + body + struct.pack("<I", len(body) + 12)

    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
    for link, _ in parts:  # IDB with if_tsresol = 9 (ns)
        out.append(block(1, struct.pack("<HHI", link, 0, 262144) + struct.pack("<HHB3x", 9, 1, 9) + b"\0\0\0\0"))
    order = [(i, f) for i, (_, frames) in enumerate(parts) for f in frames]
    total = n or len(order)
    t = 1_700_000_000 * 10**9
    with open(path, "wb") as fh:
        fh.write(b"".join(out))
        buf = []
        for k in range(total):
            i, (f, cap) = order[k % len(order)]
            cap = min(cap, len(f))
            ts = t + k * 1000
            buf.append(block(6, struct.pack("<IIIII", i, ts >> 32, ts & 0xFFFFFFFF, cap, len(f)) + f[:cap]))
            if len(buf) >= 10000:
                fh.write(b"".join(buf))
                buf = []
        fh.write(b"".join(buf))
    return total


def mixed(path: Path, n: int | None = None) -> int:
    """Every crafted capture's frames in one pcapng (one interface per link type), repeated to n packets."""
    return write_pcapng(path, [build() for build in BUILDERS.values()], n)
