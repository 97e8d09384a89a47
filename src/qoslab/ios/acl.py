"""Extended IP access lists as a Catalyst 3750 keeps them: entries (ACEs), their parser and text."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass

from .grammar import is_ip


@dataclass(frozen=True)
class Ace:
    """One access-control entry: permit/deny, protocol (ip|tcp|udp), source and destination as
    networks (None = any) with optional ``eq`` ports."""

    action: str
    proto: str
    src: ipaddress.IPv4Network | None
    src_port: int | None
    dst: ipaddress.IPv4Network | None
    dst_port: int | None


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

    def port(self, proto: str) -> tuple[bool, int | None]:
        """``[eq PORT]`` after a TCP/UDP address: (ok, port or None)."""
        if proto in ("tcp", "udp") and self.take(lambda s: s == "eq"):
            p = self.take(lambda s: s.isdigit() and int(s) <= 65535)
            return (True, int(p)) if p else (False, None)
        return True, None


def parse_ace(toks: list[tuple[str, int]]) -> tuple[int, Ace | None]:
    """Parse ``permit|deny PROTO SRC [eq P] DST [eq P]``; returns (tokens used, Ace) or
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
    return c.i, Ace(act, proto, src, sp, dst, dp)


def _addr_text(n: ipaddress.IPv4Network | None) -> str:
    if n is None:
        return "any"
    if n.prefixlen == 32:
        return f"host {n.network_address}"
    return f"{n.network_address} {n.hostmask}"


def ace_text(a: Ace) -> str:
    """IOS text of an ACE (without the ``access-list N`` prefix)."""
    parts = [a.action, a.proto, _addr_text(a.src)] + ([f"eq {a.src_port}"] if a.src_port is not None else [])
    parts += [_addr_text(a.dst)] + ([f"eq {a.dst_port}"] if a.dst_port is not None else [])
    return " ".join(parts)
