"""The grammar of an IP access-list entry as a Catalyst takes it (pure): :func:`parse_ace` reads
``permit|deny`` and what follows into an :class:`~qoslab.ios.acl.Ace`, or says at which token it
stops making sense (the caret of ``% Invalid input``).

Extended entries (Catalyst 3750 Software Configuration Guide 12.2(55)SE, "Configuring Network
Security with ACLs", and the Cisco IOS Security Command Reference, ``permit (IP)``)::

    permit|deny PROTOCOL SOURCE [PORTS] DESTINATION [PORTS] [ICMP-MESSAGE] [established]
                            [FLAG ...] [match-all|match-any +FLAG|-FLAG ...]
                [dscp DSCP | [precedence PRECEDENCE] [tos TOS]] [fragments] [log | log-input]

PROTOCOL: ``ip`` (any), a keyword (``tcp udp icmp igmp gre ospf esp ahp eigrp pim ipinip nos
pcp``) or a number 0-255; SOURCE/DESTINATION: ``any``, ``host A`` or ``A WILDCARD``; PORTS (tcp
and udp only): ``eq|neq|gt|lt P`` or ``range P1 P2`` (P1 <= P2), a number or a port keyword;
ICMP-MESSAGE (icmp only): ``TYPE [CODE]`` (0-255) or a message keyword (``echo``,
``port-unreachable`` ...); tcp only: ``established`` (ACK or RST set), the flags ``ack fin psh rst
syn urg`` (each one set), ``match-all|match-any +FLAG|-FLAG ...`` (all / any of: set, clear);
DSCP 0-63 or a name (``ef``, ``af41``, ``cs5``, ``default``); PRECEDENCE 0-7 or a name (``critical``);
TOS 0-15 or a name (``max-reliability``, ``min-delay`` ...). ``dscp`` excludes ``precedence`` and
``tos``. ``fragments`` (non-initial fragments) takes no layer-4 field (ports, ICMP, TCP flags).
Standard entries: ``permit|deny any | host A | A [WILDCARD] [log]``. Keywords may be abbreviated
where unambiguous (the IOS rule).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from .acl import ANY, Ace, Addr, Ports, ace_text
from .aclnames import ICMP_MESSAGES, PRECEDENCE, PROTOCOLS, TOS, keyword, port_value
from .grammar import dscp_value, is_ip, tokens

_ACTIONS = {"permit": 0, "deny": 0}
_OPS = {"eq": 0, "neq": 0, "gt": 0, "lt": 0, "range": 0}
#: The TCP flags an entry can test (Cisco IOS Security Command Reference, ``permit (IP)``).
TCP_FLAGS = ("ack", "fin", "psh", "rst", "syn", "urg")
_OPTIONS = {"established": 0, "dscp": 0, "precedence": 0, "tos": 0, "fragments": 0, "log": 0, "log-input": 0,
            "match-all": 0, "match-any": 0, **dict.fromkeys(TCP_FLAGS, 0)}


class _Cursor:
    """Reads tokens left to right; ``i`` is the index of the next one (the caret on an error)."""

    def __init__(self, words: list[str]) -> None:
        self.words, self.i = words, 0

    def peek(self) -> str | None:
        return self.words[self.i] if self.i < len(self.words) else None

    def take(self, pred: Callable[[str], object]) -> str | None:
        tok = self.peek()
        if tok is not None and pred(tok) not in (None, False):
            self.i += 1
            return tok
        return None

    def word(self, choices: Mapping[str, object]) -> str | None:
        """The next token as one of ``choices`` (abbreviations allowed), consumed; else None."""
        tok = self.peek()
        hit = keyword(tok, choices) if tok is not None else None
        if hit is not None:
            self.i += 1
        return hit

    def address(self, standard: bool = False) -> Addr | None:
        """``any`` | ``host A`` | ``A WILDCARD`` (standard: ``A`` alone is a host)."""
        kw = self.word({"any": 0, "host": 0})
        if kw == "any":
            return ANY
        if kw == "host":
            ip = self.take(is_ip)
            return Addr.of(ip) if ip else None
        ip = self.take(is_ip)
        if ip is None:
            return None
        wild = self.take(is_ip)
        if wild is None:
            return Addr.of(ip) if standard else None
        return Addr.of(ip, wild)


def _proto(c: _Cursor) -> str | None:
    tok = c.peek()
    if tok is None:
        return None
    if tok.isdigit():
        if int(tok) > 255:
            return None
        c.i += 1
        n = int(tok)
        return next((k for k, v in PROTOCOLS.items() if v == n), tok)
    return c.word({"ip": 0, **PROTOCOLS})


def _ports(c: _Cursor, proto: str) -> tuple[bool, Ports | None]:
    """``[eq|neq|gt|lt P | range P1 P2]`` after a TCP/UDP address: (ok, ports or None)."""
    if proto not in ("tcp", "udp"):
        return True, None
    op = c.word(_OPS)
    if op is None:
        return True, None
    lo = _port(c, proto)
    if lo is None:
        return False, None
    if op != "range":
        return True, Ports(op, lo)
    start = c.i
    hi = _port(c, proto)
    if hi is None or hi < lo:
        c.i = start
        return False, None
    return True, Ports("range", lo, hi)


def _port(c: _Cursor, proto: str) -> int | None:
    tok = c.peek()
    val = port_value(tok, proto) if tok is not None else None
    if val is not None:
        c.i += 1
    return val


def _icmp(c: _Cursor) -> tuple[int, int | None] | None:
    tok = c.peek()
    if tok is not None and tok.isdigit() and int(tok) <= 255:
        c.i += 1
        code = c.take(lambda s: s.isdigit() and int(s) <= 255)
        return int(tok), int(code) if code is not None else None
    name = c.word(ICMP_MESSAGES)
    return ICMP_MESSAGES[name] if name else None


def _signed_flags(c: _Cursor) -> tuple[str, ...] | None:
    """``+FLAG|-FLAG ...`` after ``match-all|match-any`` (at least one, each flag once)."""
    got: list[str] = []
    while (tok := c.peek()) is not None and tok[:1] in "+-" and tok[1:].lower() in TCP_FLAGS:
        if any(g[1:] == tok[1:].lower() for g in got):
            return None
        got.append(tok[0] + tok[1:].lower())
        c.i += 1
    return tuple(got) or None


def _options(c: _Cursor, proto: str) -> dict[str, Any] | None:
    """The trailing options as :class:`~qoslab.ios.acl.Ace` fields (each at most once, in any
    order; ``dscp`` and ``precedence`` exclude each other); None at the first bad token (``c.i``
    on it)."""
    got: dict[str, Any] = {"icmp": _icmp(c)} if proto == "icmp" else {}
    seen: set[str] = set()
    while c.peek() is not None:
        start = c.i
        opt = c.word(_OPTIONS)
        kind = "log" if opt in ("log", "log-input") else "mark" if opt in ("dscp", "precedence") else \
            "match" if opt in ("match-all", "match-any") else opt
        tcp_only = opt == "established" or opt in TCP_FLAGS or kind == "match"
        if opt is None or kind in seen or (tcp_only and proto != "tcp"):
            c.i = start
            return None
        seen.add(kind or "")
        if opt in TCP_FLAGS:
            got["flags"] = got.get("flags", ()) + (opt,)
        elif kind == "match":
            got["flag_match"] = (opt, _signed_flags(c))
        elif opt == "dscp":
            v = c.take(lambda s: dscp_value(s) is not None)
            got["dscp"] = dscp_value(v) if v is not None else None
        elif opt == "precedence":
            got["precedence"] = _precedence(c.peek())
            c.i += got["precedence"] is not None
        elif opt == "tos":
            got["tos"] = _tos(c.peek())
            c.i += got["tos"] is not None
        elif opt == "fragments":
            got["fragments"] = True
        else:
            got["established" if opt == "established" else "log"] = True if opt == "established" else opt
        if None in (got.get("dscp", 0), got.get("precedence", 0), got.get("tos", 0)) or \
                (kind == "match" and got["flag_match"][1] is None):
            return None
        if "dscp" in got and "tos" in got:  # the DS field is DSCP or precedence and TOS, not both
            c.i = start
            return None
    return got


def _tos(tok: str | None) -> int | None:
    if tok is None:
        return None
    if tok.isdigit():
        return int(tok) if int(tok) <= 15 else None
    name = keyword(tok, TOS)
    return TOS[name] if name else None


def _precedence(tok: str | None) -> int | None:
    if tok is None:
        return None
    if tok.isdigit():
        return int(tok) if int(tok) <= 7 else None
    name = keyword(tok, PRECEDENCE)
    return PRECEDENCE[name] if name else None


def parse_ace(toks: list[tuple[str, int]], standard: bool = False) -> tuple[int, Ace | None]:
    """Parse an entry (see the module doc): (tokens used, Ace) or (index of the first token that
    does not fit, None); an index equal to the token count means the entry is incomplete."""
    c = _Cursor([t for t, _ in toks])
    act = c.word(_ACTIONS)
    if act is None:
        return c.i, None
    if standard:
        src = c.address(standard=True)
        log = c.word({"log": 0}) if src is not None else None
        if src is None or c.i < len(c.words):
            return c.i, None
        return c.i, Ace(act, "ip", src, log=log)
    proto = _proto(c)
    if proto is None:
        return c.i, None
    src = c.address()
    ok, sport = _ports(c, proto) if src is not None else (False, None)
    dst = c.address() if ok else None
    ok, dport = _ports(c, proto) if dst is not None else (False, None)
    at = c.i
    opts = _options(c, proto) if ok else None
    if src is None or dst is None or opts is None or c.i < len(c.words):
        return c.i, None
    if opts.get("fragments") and (sport or dport or opts.get("established") or opts.get("flags")
                                  or opts.get("flag_match") or opts.get("icmp")):
        return at + c.words[at:].index("fragments") if "fragments" in c.words[at:] else at, None  # no layer-4 info
    return c.i, replace(Ace(act, proto, src, dst, sport, dport), **opts)


def canonical_entry(text: str, standard: bool = False, pad: bool = False) -> str:
    """An entry line (without sequence number) as IOS prints it in ``show access-lists``
    (``permit tcp any any eq 80`` -> ``permit tcp any any eq www``), or with ``pad`` as
    ``show running-config`` prints it (``deny   ip ...``); a line that does not parse comes back
    with its spaces collapsed. For comparing configurations whatever form was typed."""
    _, ace = parse_ace(tokens(text), standard)
    return ace_text(ace, pad) if ace is not None else " ".join(text.split())
