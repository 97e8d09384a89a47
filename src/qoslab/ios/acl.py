"""Extended IP access lists as a Catalyst 3750 keeps them: entries (ACEs), their parser and text."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

from .grammar import is_ip


@dataclass(frozen=True)
class Ace:
    """One access-control entry: permit/deny, protocol (ip|tcp|udp), source and destination as
    networks (None = any) with optional ports: ``eq P`` (``*_port`` = P, ``*_port_hi`` None) or
    ``range LO HI`` (``*_port`` = LO, ``*_port_hi`` = HI, both inclusive, LO <= HI; Catalyst 3750
    command reference, ``access-list`` (extended): ``eq`` / ``range`` operators)."""

    action: str
    proto: str
    src: ipaddress.IPv4Network | None
    src_port: int | None
    dst: ipaddress.IPv4Network | None
    dst_port: int | None
    src_port_hi: int | None = None
    dst_port_hi: int | None = None


class _Cursor:
    """Reads tokens left to right; ``i`` is the index of the next one (the caret on an error)."""

    def __init__(self, words: list[str]) -> None:
        self.words, self.i = words, 0

    def take(self, pred: Callable[[str], bool]) -> str | None:
        if self.i < len(self.words) and pred(self.words[self.i]):
            self.i += 1
            return self.words[self.i - 1]
        return None

    def address(self) -> tuple[bool, ipaddress.IPv4Network | None]:
        """``any`` | ``host A`` | ``A WILDCARD``: (ok, network or None for any)."""
        if self.take(lambda s: s == "any"):
            return True, None
        if self.take(lambda s: s == "host"):
            ip = self.take(is_ip)
            return (True, ipaddress.IPv4Network(f"{ip}/32")) if ip else (False, None)
        ip = self.take(is_ip)
        wild = self.take(is_ip) if ip is not None else None
        if ip is None or wild is None:
            return False, None
        try:
            mask = ipaddress.IPv4Address(int(ipaddress.IPv4Address(wild)) ^ 0xFFFFFFFF)
            return True, ipaddress.IPv4Network(f"{ip}/{mask}", strict=False)
        except ValueError:
            self.i -= 1
            return False, None

    def port(self, proto: str) -> tuple[bool, tuple[int, int | None] | None]:
        """``[eq PORT | range LO HI]`` after a TCP/UDP address: (ok, (port or LO, None or HI) or
        None); a range whose HI is below LO is not ok (the caret on HI)."""
        if proto not in ("tcp", "udp"):
            return True, None
        op = self.take(lambda s: s in ("eq", "range"))
        if op is None:
            return True, None
        p = self.take(lambda s: s.isdigit() and int(s) <= 65535)
        if p is None:
            return False, None
        if op == "eq":
            return True, (int(p), None)
        hi = self.take(lambda s: s.isdigit() and int(p) <= int(s) <= 65535)
        return (True, (int(p), int(hi))) if hi else (False, None)


def parse_ace(toks: list[tuple[str, int]]) -> tuple[int, Ace | None]:
    """Parse ``permit|deny PROTO SRC [eq P|range LO HI] DST [eq P|range LO HI]``; returns (tokens used, Ace) or
    (index of the first bad token, None)."""
    c = _Cursor([t for t, _ in toks])
    act = c.take(lambda s: s in ("permit", "deny"))
    proto = c.take(lambda s: s in ("ip", "tcp", "udp")) if act else None
    if act is None or proto is None:
        return c.i, None
    ok, src = c.address()
    ok2, sp = c.port(proto) if ok else (False, None)
    ok3, dst = c.address() if ok2 else (False, None)
    ok4, dp = c.port(proto) if ok3 else (False, None)
    if not ok4 or c.i < len(c.words):
        return c.i, None
    return c.i, Ace(act, proto, src, sp[0] if sp else None, dst, dp[0] if dp else None,
                    sp[1] if sp else None, dp[1] if dp else None)


def _addr_text(n: ipaddress.IPv4Network | None) -> str:
    if n is None:
        return "any"
    if n.prefixlen == 32:
        return f"host {n.network_address}"
    return f"{n.network_address} {n.hostmask}"


def ace_text(a: Ace) -> str:
    """IOS text of an ACE (without the ``access-list N`` prefix)."""
    parts = [a.action, a.proto, _addr_text(a.src)] + _port_text(a.src_port, a.src_port_hi)
    parts += [_addr_text(a.dst)] + _port_text(a.dst_port, a.dst_port_hi)
    return " ".join(parts)


def _port_text(lo: int | None, hi: int | None) -> list[str]:
    if lo is None:
        return []
    return [f"eq {lo}"] if hi is None else [f"range {lo} {hi}"]
