"""EOS IP access list entries (pure): the parser of ``permit|deny PROTOCOL SOURCE [PORTS]
DESTINATION [PORTS]`` and the text EOS prints back.

Addresses (EOS User Manual, "Access Control Lists: IPv4 ACL rule parameters"): ``any``, ``host
A.B.C.D``, ``A.B.C.D/LEN`` or ``A.B.C.D WILDCARD``; EOS prints a /32 as ``host A.B.C.D`` and any
other network in prefix form. Ports (TCP and UDP): ``eq PORT`` or ``range LO HI``. Entries are
held as :class:`qoslab.ios.acl.Ace`, the data path's access-control entry, shared with IOS.
"""

from __future__ import annotations

import ipaddress

from ..ios.acl import Ace

PROTOCOLS = ("ip", "tcp", "udp")
#: Well-known port names EOS accepts in place of numbers (EOS ACL rule parameters).
PORT_NAMES = {"ssh": 22, "telnet": 23, "smtp": 25, "domain": 53, "www": 80, "http": 80, "https": 443, "bgp": 179}


class _Words:
    def __init__(self, words: list[str]) -> None:
        self.words, self.i = words, 0

    def peek(self) -> str:
        return self.words[self.i].lower() if self.i < len(self.words) else ""

    def next(self) -> str:
        self.i += 1
        return self.words[self.i - 1]


def _ip(s: str) -> ipaddress.IPv4Address | None:
    try:
        return ipaddress.IPv4Address(s)
    except ValueError:
        return None


def _address(w: _Words) -> tuple[bool, ipaddress.IPv4Network | None]:
    word = w.peek()
    if word == "any":
        w.next()
        return True, None
    if word == "host":
        w.next()
        ip = _ip(w.peek())
        return (True, ipaddress.IPv4Network(f"{w.next()}/32")) if ip else (False, None)
    if "/" in word:
        try:
            net = ipaddress.IPv4Network(word, strict=False)
        except ValueError:
            return False, None
        w.next()
        return True, net
    if _ip(word) is None:
        return False, None
    addr = w.next()
    wild = _ip(w.peek())
    if wild is None:
        return False, None
    try:
        net = ipaddress.IPv4Network(f"{addr}/{ipaddress.IPv4Address(int(wild) ^ 0xFFFFFFFF)}", strict=False)
    except ValueError:
        return False, None
    w.next()
    return True, net


def _port_value(s: str) -> int | None:
    if s.isdigit():
        return int(s) if int(s) <= 65535 else None
    return PORT_NAMES.get(s)


def _ports(w: _Words, proto: str) -> tuple[bool, tuple[int | None, int | None]]:
    op = w.peek()
    if proto not in ("tcp", "udp") or op not in ("eq", "range"):
        return True, (None, None)
    w.next()
    lo = _port_value(w.peek())
    if lo is None:
        return False, (None, None)
    w.next()
    if op == "eq":
        return True, (lo, None)
    hi = _port_value(w.peek())
    if hi is None or hi < lo:
        return False, (None, None)
    w.next()
    return True, (lo, hi)


def parse_entry(text: str) -> tuple[Ace | None, int]:
    """``permit|deny ...`` -> (Ace, -1), or (None, index of the first word EOS would refuse)."""
    w = _Words(text.split())
    action = w.peek()
    if action not in ("permit", "deny"):
        return None, 0
    w.next()
    proto = w.peek()
    if proto not in PROTOCOLS:
        return None, w.i
    w.next()
    ok, src = _address(w)
    ok2, sp = _ports(w, proto) if ok else (False, (None, None))
    ok3, dst = _address(w) if ok2 else (False, None)
    ok4, dp = _ports(w, proto) if ok3 else (False, (None, None))
    if not ok4 or w.i < len(w.words):
        return None, w.i
    return Ace(action, proto, src, sp[0], dst, dp[0], src_port_hi=sp[1], dst_port_hi=dp[1]), -1


def _addr_text(n: ipaddress.IPv4Network | None) -> str:
    if n is None:
        return "any"
    return f"host {n.network_address}" if n.prefixlen == 32 else str(n)


def _port_text(lo: int | None, hi: int | None) -> list[str]:
    if lo is None:
        return []
    return [f"eq {lo}"] if hi is None else [f"range {lo} {hi}"]


def entry_text(a: Ace) -> str:
    """The entry as EOS prints it (without its sequence number)."""
    return " ".join([a.action, a.proto, _addr_text(a.src), *_port_text(a.src_port, a.src_port_hi),
                     _addr_text(a.dst), *_port_text(a.dst_port, a.dst_port_hi)])
