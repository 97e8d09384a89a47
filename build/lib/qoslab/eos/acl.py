"""EOS IP access list entries (pure): the parser of ``permit|deny PROTOCOL SOURCE [PORTS]
DESTINATION [PORTS]`` and the text EOS prints back.

Addresses (EOS User Manual, "Access Control Lists: IPv4 ACL rule parameters"): ``any``, ``host
A.B.C.D``, ``A.B.C.D/LEN`` or ``A.B.C.D WILDCARD``; EOS prints a /32 as ``host A.B.C.D`` and any
other network in prefix form. Ports (TCP and UDP): ``eq PORT`` or ``range LO HI``; then ``dscp D``
(0-63 or a name, printed as typed) and ``log``. A standard list's entry is ``permit|deny SOURCE
[log]`` (``ip access-list standard NAME``; EOS User Manual, "Standard ACLs"). Entries are
held as :class:`qoslab.ios.acl.Ace` (addresses as :class:`~qoslab.ios.acl.Addr`, ports as
:class:`~qoslab.ios.acl.Ports`), the one access-control entry of qoslab's data paths: the EOS
dialect compiles them with the Catalysts' :func:`qoslab.vswitch.nftcompile.ace_match`.
A wildcard that is not a prefix (``10.0.0.0 0.255.0.255``) is refused, as before (not emulated).
"""

from __future__ import annotations

import ipaddress

from ..ios.acl import ANY, Ace, Addr, Ports
from ..ios.grammar import dscp_value

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


def _prefix(net: ipaddress.IPv4Network) -> Addr:
    return Addr(int(net.network_address), int(net.hostmask))


def _address(w: _Words) -> tuple[bool, Addr]:
    """``any`` | ``host A`` | ``A/LEN`` | ``A WILDCARD`` (a prefix's): (ok, the address)."""
    word = w.peek()
    if word == "any":
        w.next()
        return True, ANY
    if word == "host":
        w.next()
        return (True, Addr.of(w.next())) if _ip(w.peek()) else (False, ANY)
    if "/" in word:
        try:
            net = ipaddress.IPv4Network(word, strict=False)
        except ValueError:
            return False, ANY
        w.next()
        return True, _prefix(net)
    if _ip(word) is None:
        return False, ANY
    addr = w.next()
    if _ip(w.peek()) is None:
        return False, ANY
    a = Addr.of(addr, w.peek())
    if a.network is None:
        return False, ANY
    w.next()
    return True, a


def _port_value(s: str) -> int | None:
    if s.isdigit():
        return int(s) if int(s) <= 65535 else None
    return PORT_NAMES.get(s)


def _ports(w: _Words, proto: str) -> tuple[bool, Ports | None]:
    """``[eq PORT | range LO HI]`` after a TCP/UDP address: (ok, the match or None)."""
    op = w.peek()
    if proto not in ("tcp", "udp") or op not in ("eq", "range"):
        return True, None
    w.next()
    lo = _port_value(w.peek())
    if lo is None:
        return False, None
    w.next()
    if op == "eq":
        return True, Ports("eq", lo)
    hi = _port_value(w.peek())
    if hi is None or hi < lo:
        return False, None
    w.next()
    return True, Ports("range", lo, hi)


def _tail(w: _Words) -> tuple[bool, int | None, str, str | None]:
    """``[dscp D] [log]`` after an entry's addresses: (ok, DSCP, the DSCP as typed, log)."""
    dscp, token, log = None, "", None
    if w.peek() == "dscp":
        w.next()
        dscp = dscp_value(w.peek()) if w.peek() else None
        if dscp is None:
            return False, None, "", None
        token = w.next().lower()
    if w.peek() == "log":
        w.next()
        log = "log"
    return w.i == len(w.words), dscp, token, log


def _parse(text: str, standard: bool) -> tuple[Ace | None, int, str]:
    w = _Words(text.split())
    action = w.peek()
    if action not in ("permit", "deny"):
        return None, 0, ""
    w.next()
    if standard:
        ok, src = _address(w)
        if ok and w.peek() == "log":
            w.next()
        if not ok or w.i < len(w.words):
            return None, w.i, ""
        return Ace(action, "ip", src, None, log="log" if w.words[-1].lower() == "log" else None), -1, ""
    proto = w.peek()
    if proto not in PROTOCOLS:
        return None, w.i, ""
    w.next()
    ok, src = _address(w)
    ok2, sp = _ports(w, proto) if ok else (False, None)
    ok3, dst = _address(w) if ok2 else (False, ANY)
    ok4, dp = _ports(w, proto) if ok3 else (False, None)
    ok5, dscp, token, log = _tail(w) if ok4 else (False, None, "", None)
    if not ok5:
        return None, w.i, ""
    return Ace(action, proto, src, dst, sport=sp, dport=dp, dscp=dscp, log=log), -1, token


def parse_entry(text: str, standard: bool = False) -> tuple[Ace | None, int]:
    """``permit|deny ...`` -> (Ace, -1), or (None, index of the first word EOS would refuse).
    Extended: ``PROTOCOL SOURCE [PORTS] DESTINATION [PORTS] [dscp D] [log]``; ``standard``: a
    standard list's ``SOURCE [log]``."""
    ace, bad, _ = _parse(text, standard)
    return ace, bad


def canonical_entry(text: str, standard: bool = False) -> tuple[str | None, int]:
    """``permit|deny ...`` -> (the entry as EOS prints it, -1), or (None, the index of the first
    word EOS would refuse). A DSCP keeps the form it was typed in (``dscp ef``, ``dscp 46``)."""
    ace, bad, token = _parse(text, standard)
    return (entry_text(ace, token), -1) if ace is not None else (None, bad)


def _addr_text(a: Addr) -> str:
    if a.is_any:
        return "any"
    return f"host {ipaddress.IPv4Address(a.ip)}" if a.is_host else str(a.network)


def _port_text(p: Ports | None) -> list[str]:
    if p is None:
        return []
    return [f"eq {p.lo}"] if p.op == "eq" else [f"range {p.lo} {p.hi}"]


def entry_text(a: Ace, dscp: str = "") -> str:
    """The entry as EOS prints it (without its sequence number): addresses as ``any``, ``host A``
    or ``A/LEN``, ports as numbers, ``dscp`` as typed (``dscp``; else the number), ``log`` last;
    a standard list's entry (no destination) its source only."""
    tail = ([f"dscp {dscp or a.dscp}"] if a.dscp is not None else []) + ([a.log] if a.log else [])
    if a.dst is None:
        return " ".join([a.action, _addr_text(a.src), *tail])
    return " ".join([a.action, a.proto, _addr_text(a.src), *_port_text(a.sport),
                     _addr_text(a.dst), *_port_text(a.dport), *tail])
