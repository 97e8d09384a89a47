"""Extended IP access lists as a Catalyst 3750 keeps them: entries (ACEs), their parser and text."""

from __future__ import annotations

import ipaddress
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


def parse_ace(toks: list[tuple[str, int]]) -> tuple[int, Ace | None]:
    """Parse ``permit|deny PROTO SRC [eq P] DST [eq P]``; returns (tokens used, Ace) or
    (index of the first bad token, None)."""
    vals = [t for t, _ in toks]
    i = 0

    def take(pred):
        nonlocal i
        if i < len(vals) and pred(vals[i]):
            i += 1
            return vals[i - 1]
        return None

    act = take(lambda s: s in ("permit", "deny"))
    if act is None:
        return i, None
    proto = take(lambda s: s in ("ip", "tcp", "udp"))
    if proto is None:
        return i, None

    def addr():
        nonlocal i
        if take(lambda s: s == "any"):
            return True, None
        if take(lambda s: s == "host"):
            ip = take(is_ip)
            return (True, ipaddress.IPv4Network(f"{ip}/32")) if ip else (False, None)
        ip = take(is_ip)
        if ip is None:
            return False, None
        wild = take(is_ip)
        if wild is None:
            return False, None
        try:
            mask = ipaddress.IPv4Address(int(ipaddress.IPv4Address(wild)) ^ 0xFFFFFFFF)
            return True, ipaddress.IPv4Network(f"{ip}/{mask}", strict=False)
        except ValueError:
            i -= 1
            return False, None

    def port():
        nonlocal i
        if proto in ("tcp", "udp") and take(lambda s: s == "eq"):
            p = take(lambda s: s.isdigit() and int(s) <= 65535)
            return (True, int(p)) if p else (False, None)
        return True, None

    ok, src = addr()
    if not ok:
        return i, None
    ok, sp = port()
    if not ok:
        return i, None
    ok, dst = addr()
    if not ok:
        return i, None
    ok, dp = port()
    if not ok:
        return i, None
    if i < len(vals):
        return i, None
    return i, Ace(act, proto, src, sp, dst, dp)


def ace_text(a: Ace) -> str:
    """IOS text of an ACE (without the ``access-list N`` prefix)."""
    def addr(n):
        if n is None:
            return "any"
        if n.prefixlen == 32:
            return f"host {n.network_address}"
        return f"{n.network_address} {n.hostmask}"
    parts = [a.action, a.proto, addr(a.src)] + ([f"eq {a.src_port}"] if a.src_port is not None else [])
    parts += [addr(a.dst)] + ([f"eq {a.dst_port}"] if a.dst_port is not None else [])
    return " ".join(parts)


