"""The IOS command grammar of the virtual Catalyst: tokens, command templates per config mode,
and IOS's error kinds.

Commands are templates (``mls qos queue-set output {qs:1-2} buffers {b:0-99}`` with repeat 4),
matched token by token, so the caret of ``% Invalid input detected at '^' marker.`` lands under the
first token that does not fit, as on IOS. Keywords may be abbreviated where unambiguous (IOS rule).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..portnames import canonical_port
from .names import merge_port_tokens, parse_port


@dataclass
class IosError(Exception):
    """An invalid line: ``kind`` is ``invalid`` | ``incomplete`` | ``ambiguous`` | ``message`` (a
    line IOS parses but refuses with a message of its own, ``text``, e.g. ``% Duplicate sequence
    number``); ``column`` is the 0-based position of the caret in the line as typed."""

    line: str
    column: int
    kind: str = "invalid"
    text: str = ""

    def render(self, prompt_len: int = 0) -> str:
        """The IOS error text (caret under the fault when the line is echoed after the prompt)."""
        if self.kind == "message":
            return self.text + "\n"
        if self.kind == "incomplete":
            return "% Incomplete command.\n"
        if self.kind == "ambiguous":
            return f'% Ambiguous command:  "{self.line.strip()}"\n'
        return " " * (prompt_len + self.column) + "^\n% Invalid input detected at '^' marker.\n"

    def __str__(self) -> str:
        if self.kind == "message":
            return f"{self.text.lstrip('% ')}: {self.line.strip()!r}"
        if self.kind == "invalid":
            return f"invalid input at column {self.column + 1}: {self.line.strip()!r}"
        return f"{self.kind} command: {self.line.strip()!r}"


# --------------------------------------------------------------------------------------------- tokens
_TOK = re.compile(r"\S+")
#: Terminal escape sequences (CSI ``ESC [ ... final``, OSC ``ESC ] ... BEL|ESC \``, other ``ESC X``),
#: then single control characters (C0 but tab, DEL, C1): none can be part of a configuration line.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x9b[0-?]*[ -/]*[@-~]|\x1b.?")
_CONTROLS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def strip_controls(line: str) -> str:
    """``line`` without terminal escape sequences and control characters (a tab becomes a space):
    a description or remark typed with ESC, OSC, BEL or NUL in it (over SSH or eAPI) is kept as its
    printable text, so ``show running-config`` never carries them to another terminal. Pure."""
    return _CONTROLS.sub("", _ESCAPES.sub("", line)).replace("\t", " ")


def tokens(line: str) -> list[tuple[str, int]]:
    """(token, column) pairs of a line; ``Gi 1/0/1`` (type and number apart) is one token."""
    return merge_port_tokens([(m.group(0), m.start()) for m in _TOK.finditer(line)])


def is_ip(s: str) -> bool:
    try:
        ipaddress.IPv4Address(s)
        return True
    except ValueError:
        return False


def port_token(s: str) -> str | None:
    """Short name (``Gi1/0/3``, ``Vlan10``) of an interface as IOS accepts it: any case, any
    unambiguous abbreviation (``gi1/0/3``, ``g1/0/3``, ``GigabitEthernet1/0/3``)."""
    long = parse_port(s)
    if long is None:
        return None
    if long.startswith("Vlan"):
        return long
    try:
        return canonical_port(long)
    except ValueError:
        return None


#: DSCP value -> the name IOS-XE prints (RFC 2474 class selectors, RFC 2597 AF, RFC 3246 EF).
DSCP_NAMES: dict[int, str] = {0: "default", 8: "cs1", 10: "af11", 12: "af12", 14: "af13", 16: "cs2", 18: "af21",
                              20: "af22", 22: "af23", 24: "cs3", 26: "af31", 28: "af32", 30: "af33", 32: "cs4",
                              34: "af41", 36: "af42", 38: "af43", 40: "cs5", 46: "ef", 48: "cs6", 56: "cs7"}
_BY_NAME = {v: k for k, v in DSCP_NAMES.items()}


def dscp_value(tok: str) -> int | None:
    """A DSCP as IOS-XE accepts it: 0-63 or a name (``cs5``, ``ef``, ``af41``; any case)."""
    if tok.isdigit():
        return int(tok) if int(tok) <= 63 else None
    return _BY_NAME.get(tok.lower())


_TYPES: dict[str, Callable[[str], Any]] = {
    "word": lambda s: s if re.match(r"^[A-Za-z0-9_.\-]+$", s) else None,
    "text": lambda s: s,  # free text (a description, an SNMP contact): any printable token
    "ip": lambda s: s if is_ip(s) else None,
    "port": port_token,
    "portnum": lambda s: int(s) if s.isdigit() and 0 <= int(s) <= 65535 else None,
    "dscp": dscp_value,
}


def match_token(spec: str, tok: str) -> Any:
    """Value for ``tok`` under ``spec`` (literal, a|b choice, {name:type} or {name:a-b}), or None."""
    if spec.startswith("{"):
        typ = spec[1:-1].split(":", 1)[1]
        if "|" in typ:
            return match_token(typ, tok)
        m = re.match(r"^(\d+)-(\d+)$", typ)
        if m:
            return int(tok) if tok.isdigit() and int(m.group(1)) <= int(tok) <= int(m.group(2)) else None
        return _TYPES[typ](tok)
    choices = spec.split("|")
    low = tok.lower()
    exact = [c for c in choices if c == low]
    if exact:
        return exact[0]
    # IOS accepts unambiguous abbreviations of keywords
    pref = [c for c in choices if c.startswith(low)]
    return pref[0] if len(pref) == 1 and len(low) >= 2 else None


@dataclass(frozen=True)
class Template:
    """A command: token specs; ``repeat`` = the last spec may repeat up to that many times."""

    specs: tuple[str, ...]
    action: str
    repeat: int = 1
    min_repeat: int = 1


def T(text: str, action: str, repeat: int = 1, min_repeat: int | None = None) -> Template:
    """A :class:`Template` from its text (tokens split on spaces)."""
    return Template(tuple(text.split()), action, repeat, repeat if min_repeat is None else min_repeat)


def match(tpl: Template, toks: list[tuple[str, int]]) -> tuple[int, dict[str, Any] | None]:
    """Returns (tokens matched, bindings or None). bindings only when the whole line fits."""
    vals: dict[str, Any] = {}
    specs = list(tpl.specs)
    i = 0
    for k, spec in enumerate(specs):
        last = k == len(specs) - 1
        times = tpl.repeat if last else 1
        need = tpl.min_repeat if last else 1
        got: list[Any] = []
        while len(got) < times and i < len(toks):
            v = match_token(spec, toks[i][0])
            if v is None:
                break
            got.append(v)
            i += 1
        if len(got) < need:
            return i, None
        name = spec[1:-1].split(":")[0] if spec.startswith("{") else None
        if name:
            vals[name] = got if times > 1 else got[0]
    if i < len(toks):
        return i, None
    return i, vals


# --------------------------------------------------------------------------------------------- grammar
GLOBAL = "config"
MODES = {
    "config": "(config)", "config-if": "(config-if)", "config-cmap": "(config-cmap)",
    "config-pmap": "(config-pmap)", "config-pmap-c": "(config-pmap-c)", "config-ext-nacl": "(config-ext-nacl)",
    "config-std-nacl": "(config-std-nacl)", "config-line": "(config-line)",
}

#: Global-mode lines IOS (3750) and IOS-XE (9300, :mod:`.xe`) share: the sub-mode entries
#: (class-map, policy-map, named ACL, interface) and SPAN sessions.
SHARED_GLOBAL_TEMPLATES = [
    T("class-map {how:match-all|match-any} {name:word}", "class-map"),
    T("class-map {name:word}", "class-map"),
    T("policy-map {name:word}", "policy-map"),
    T("ip access-list extended {name:word}", "named-acl"),
    T("ip access-list standard {name:word}", "named-acl"),
    T("ip access-list resequence {name:word} {start:1-2147483647} {step:1-2147483647}", "acl-resequence"),
    # numbered lists (IP standard 1-99/1300-1999, extended 100-199/2000-2699): entries by .aclinterp
    T("access-list {num:1-2699} {rest:text}", "numbered-acl", 40, 1),
    T("interface {port:port}", "interface"),
    T("monitor session {s:1-66} source interface {port:port} {dir:both|rx|tx}", "monitor"),
    T("monitor session {s:1-66} source interface {port:port}", "monitor"),
    T("monitor session {s:1-66} destination interface {port:port} encapsulation {enc:replicate|dot1q}", "monitor"),
    T("monitor session {s:1-66} destination interface {port:port}", "monitor"),
    # the console and vty lines (Catalyst 3750 command reference 12.2(55)SE / IOS-XE 17.x
    # Configuration Fundamentals, ``line``): enters (config-line)
    T("line {kind:console|vty|aux} {first:0-31} {last:0-31}", "line"),
    T("line {kind:console|vty|aux} {first:0-31}", "line"),
]

GLOBAL_TEMPLATES = [
    T("hostname {name:word}", "hostname"),
    T("mls qos", "global"),
    T("mls qos srr-queue input bandwidth {w:1-100}", "global", 2),
    T("mls qos srr-queue input buffers {b:0-100}", "global", 2),
    T("mls qos srr-queue input priority-queue {q:1-2} bandwidth {bw:0-40}", "global"),
    T("mls qos srr-queue input dscp-map queue {q:1-2} threshold {t:1-3} {d:0-63}", "global", 8, 1),
    T("mls qos srr-queue input dscp-map queue {q:1-2} {d:0-63}", "global", 8, 1),
    T("mls qos srr-queue output dscp-map queue {q:1-4} threshold {t:1-3} {d:0-63}", "global", 8, 1),
    T("mls qos rewrite ip dscp", "global"),
    T("mls qos map cos-dscp {d:0-63}", "global", 8),
    T("mls qos map dscp-cos {d:0-63} to {c:0-7}", "global"),
    T("mls qos queue-set output {qs:1-2} buffers {b:0-99}", "global", 4),
    T("mls qos queue-set output {qs:1-2} threshold {q:1-4} {t:1-3200}", "global", 4),
    *SHARED_GLOBAL_TEMPLATES,
]
# Lines kept verbatim for show running-config (not QoS; accepted so real configs load).
PASSTHROUGH = [
    T("version {v:word}", "keep"), T("service {rest:word}", "keep", 4, 1), T("no service {rest:word}", "keep", 4, 1),
    T("ip subnet-zero", "keep"), T("ip classless", "keep"),
    T("spanning-tree {rest:word}", "keep", 6, 1), T("no spanning-tree {rest:word}", "keep", 6, 1),
    T("enable secret {rest:word}", "keep", 3, 1),
    T("file prompt {m:alert|noisy|quiet}", "keep"), T("ip scp server enable", "keep"),  # file operations
    T("snmp-server {rest:text}", "keep", 40, 1), T("lldp run", "keep"), T("no cdp run", "keep"),
    # the stock lines of a 3750's running-config (qoslab.ios.stock), so a printed config loads back
    T("boot-start-marker", "keep"), T("boot-end-marker", "keep"),
    T("vlan internal allocation policy {o:ascending|descending}", "keep"), T("ip http {rest:word}", "keep", 3, 1),
]
IF_TEMPLATES = [
    T("mls qos trust {t:dscp|cos|ip-precedence}", "if"),
    T("service-policy input {name:word}", "if"),
    T("srr-queue bandwidth share {w:1-255}", "if", 4),
    T("srr-queue bandwidth shape {w:0-65535}", "if", 4),
    T("srr-queue bandwidth limit {p:10-90}", "if"),
    T("priority-queue out", "if"),
    T("queue-set {qs:1-2}", "if"),
    T("ip address {ip:ip} {mask:ip}", "if-keep"),  # SVIs only (qoslab.ios.interpret._ip_address)
    T("no ip address", "if-keep"), T("no mdix auto", "if-keep"), T("shutdown", "if-keep"),
    T("description {rest:text}", "if-keep", 40, 1),
]
CMAP_TEMPLATES = [T("match access-group {acl:word}", "cmap"), T("match access-group name {acl:word}", "cmap"),
             T("match ip dscp {d:0-63}", "cmap", 8, 1)]
PMAP_TEMPLATES = [T("class {name:word}", "pmap-class")]
PMAPC_TEMPLATES = [T("set ip dscp {d:0-63}", "pmapc"), T("set dscp {d:0-63}", "pmapc"),
              T("trust {t:dscp|cos}", "pmapc"),
              # police RATE-bps BURST-bytes [exceed-action drop] (3750 command reference: rate 8000 -
              # 1000000000 bits/s, burst 8000 - 1000000 bytes; drop is the default exceed action)
              T("police {rate:8000-1000000000} {burst:8000-1000000} exceed-action drop", "pmapc"),
              T("police {rate:8000-1000000000} {burst:8000-1000000}", "pmapc")]
#: A console or vty line's settings (Catalyst 3750 command reference 12.2(55)SE and the IOS
#: Configuration Fundamentals reference: ``access-class``, ``login``, ``transport``, ``exec-timeout``,
#: ``logging synchronous``, ``privilege level``, ``length``, ``width``, ``password``).
LINE_TEMPLATES = [
    T("access-class {acl:word} {dir:in|out}", "line-cfg"), T("login", "line-cfg"), T("login local", "line-cfg"),
    T("transport input {t:ssh|telnet|all|none}", "line-cfg", 2, 1),
    T("transport output {t:ssh|telnet|all|none}", "line-cfg", 2, 1),
    T("exec-timeout {m:0-35791} {s:0-2147483}", "line-cfg"), T("exec-timeout {m:0-35791}", "line-cfg"),
    T("logging synchronous", "line-cfg"), T("privilege level {l:0-15}", "line-cfg"),
    T("length {n:0-512}", "line-cfg"), T("width {n:0-512}", "line-cfg"), T("stopbits {n:1-2}", "line-cfg"),
    T("password {rest:text}", "line-cfg", 2, 1),
]
MODE_TEMPLATES = {"config": GLOBAL_TEMPLATES + PASSTHROUGH, "config-if": IF_TEMPLATES, "config-cmap": CMAP_TEMPLATES,
             "config-pmap": PMAP_TEMPLATES, "config-pmap-c": PMAPC_TEMPLATES, "config-ext-nacl": [],
             "config-std-nacl": [], "config-line": LINE_TEMPLATES}


def negatable_prefix(tpl: Template) -> int:
    """Number of leading literal tokens that identify a command for its ``no`` form."""
    n = 0
    for s in tpl.specs:
        if s.startswith("{"):
            break
        n += 1
    if tpl.specs[:2] == ("monitor", "session") or tpl.specs[0] in ("class-map", "policy-map", "interface",
                                                                     "class", "hostname"):
        return n + 1
    return n


