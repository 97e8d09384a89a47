"""The IOS configuration language of a Catalyst 3750, as far as QoS needs it: a pure interpreter
from config-mode lines to a running-config, and from a running-config to a QoS model.

- :func:`interpret` applies one config line in a mode and returns the new mode or an
  :class:`IosError` with the caret position IOS would print (``% Invalid input detected at '^'
  marker.``). Commands are templates (``mls qos queue-set output {qs:1-2} buffers {b:int}x4``),
  matched token by token so the caret lands under the first token that does not fit.
- :class:`RunningConfig` keeps the configuration as IOS shows it (global lines and sections
  with children) and renders ``show running-config``.
- :func:`qos_model` turns a running-config into a :class:`QosConfig` (Catalyst 3750 defaults for
  anything not configured).

Catalyst 3750 defaults (Catalyst 3750 QoS configuration guide, 12.2(25)SE): ``mls qos`` off;
ports untrusted when QoS is on; egress DSCP map 0-15 -> q2, 16-31 -> q3, 32-39 and 48-63 -> q4,
40-47 -> q1; queue-set 1 buffers 25 25 25 25; ``srr-queue bandwidth shape 25 0 0 0`` and
``share 25 25 25 25``; ingress: DSCP 40-47 -> queue 2 (priority, 10 %), others -> queue 1.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from .topology import canonical_port, long_port

# --------------------------------------------------------------------------------------------- errors


@dataclass
class IosError(Exception):
    """An invalid line: ``kind`` is ``invalid`` | ``incomplete`` | ``ambiguous``; ``column`` is the
    0-based position of the caret in the line as typed."""

    line: str
    column: int
    kind: str = "invalid"

    def render(self, prompt_len: int = 0) -> str:
        """The IOS error text (caret under the fault when the line is echoed after the prompt)."""
        if self.kind == "incomplete":
            return "% Incomplete command.\n"
        if self.kind == "ambiguous":
            return f'% Ambiguous command:  "{self.line.strip()}"\n'
        return " " * (prompt_len + self.column) + "^\n% Invalid input detected at '^' marker.\n"

    def __str__(self) -> str:
        if self.kind == "invalid":
            return f"invalid input at column {self.column + 1}: {self.line.strip()!r}"
        return f"{self.kind} command: {self.line.strip()!r}"


# --------------------------------------------------------------------------------------------- tokens
_TOK = re.compile(r"\S+")


def _tokens(line: str) -> list[tuple[str, int]]:
    return [(m.group(0), m.start()) for m in _TOK.finditer(line)]


def _is_ip(s: str) -> bool:
    try:
        ipaddress.IPv4Address(s)
        return True
    except ValueError:
        return False


def _port(s: str) -> str | None:
    m = re.match(r"^(?:Vlan|vlan|Vl)(\d+)$", s)
    if m:
        return f"Vlan{m.group(1)}"
    try:
        return canonical_port(s)
    except ValueError:
        return None


_TYPES = {
    "word": lambda s: s if re.match(r"^[A-Za-z0-9_.\-]+$", s) else None,
    "ip": lambda s: s if _is_ip(s) else None,
    "port": _port,
    "portnum": lambda s: int(s) if s.isdigit() and 0 <= int(s) <= 65535 else None,
}


def _match_token(spec: str, tok: str):
    """Value for ``tok`` under ``spec`` (literal, a|b choice, {name:type} or {name:a-b}), or None."""
    if spec.startswith("{"):
        typ = spec[1:-1].split(":", 1)[1]
        if "|" in typ:
            return _match_token(typ, tok)
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
    return Template(tuple(text.split()), action, repeat, repeat if min_repeat is None else min_repeat)


def _match(tpl: Template, toks: list[tuple[str, int]]) -> tuple[int, dict | None]:
    """Returns (tokens matched, bindings or None). bindings only when the whole line fits."""
    vals: dict = {}
    specs = list(tpl.specs)
    i = 0
    for k, spec in enumerate(specs):
        last = k == len(specs) - 1
        times = tpl.repeat if last else 1
        need = tpl.min_repeat if last else 1
        got = []
        while len(got) < times and i < len(toks):
            v = _match_token(spec, toks[i][0])
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
}

_GLOBAL_TPL = [
    T("hostname {name:word}", "hostname"),
    T("mls qos", "global"),
    T("mls qos srr-queue input bandwidth {w:1-100}", "global", 2),
    T("mls qos srr-queue input buffers {b:0-100}", "global", 2),
    T("mls qos srr-queue input priority-queue {q:1-2} bandwidth {bw:0-40}", "global"),
    T("mls qos srr-queue input dscp-map queue {q:1-2} threshold {t:1-3} {d:0-63}", "global", 8, 1),
    T("mls qos srr-queue input dscp-map queue {q:1-2} {d:0-63}", "global", 8, 1),
    T("mls qos srr-queue output dscp-map queue {q:1-4} threshold {t:1-3} {d:0-63}", "global", 8, 1),
    T("mls qos queue-set output {qs:1-2} buffers {b:0-99}", "global", 4),
    T("mls qos queue-set output {qs:1-2} threshold {q:1-4} {t:1-3200}", "global", 4),
    T("class-map {how:match-all|match-any} {name:word}", "class-map"),
    T("class-map {name:word}", "class-map"),
    T("policy-map {name:word}", "policy-map"),
    T("ip access-list extended {name:word}", "named-acl"),
    T("interface {port:port}", "interface"),
    T("monitor session {s:1-66} source interface {port:port} {dir:both|rx|tx}", "monitor"),
    T("monitor session {s:1-66} source interface {port:port}", "monitor"),
    T("monitor session {s:1-66} destination interface {port:port} encapsulation {enc:replicate|dot1q}", "monitor"),
    T("monitor session {s:1-66} destination interface {port:port}", "monitor"),
]
# Lines kept verbatim for show running-config (not QoS; accepted so real configs load).
_PASSTHROUGH = [
    T("version {v:word}", "keep"), T("service {rest:word}", "keep", 4, 1), T("no service {rest:word}", "keep", 4, 1),
    T("ip subnet-zero", "keep"), T("ip classless", "keep"), T("ip http server", "keep"),
    T("spanning-tree {rest:word}", "keep", 6, 1), T("no spanning-tree {rest:word}", "keep", 6, 1),
    T("line {rest:word}", "keep", 4, 1), T("enable secret {rest:word}", "keep", 3, 1),
]
_IF_TPL = [
    T("mls qos trust {t:dscp|cos|ip-precedence}", "if"),
    T("service-policy input {name:word}", "if"),
    T("srr-queue bandwidth share {w:1-255}", "if", 4),
    T("srr-queue bandwidth shape {w:0-65535}", "if", 4),
    T("srr-queue bandwidth limit {p:10-90}", "if"),
    T("priority-queue out", "if"),
    T("queue-set {qs:1-2}", "if"),
    T("no ip address", "if-keep"), T("no mdix auto", "if-keep"), T("shutdown", "if-keep"),
    T("description {rest:word}", "if-keep", 20, 1),
]
_CMAP_TPL = [T("match access-group {acl:word}", "cmap"), T("match access-group name {acl:word}", "cmap"),
             T("match ip dscp {d:0-63}", "cmap", 8, 1)]
_PMAP_TPL = [T("class {name:word}", "pmap-class")]
_PMAPC_TPL = [T("set ip dscp {d:0-63}", "pmapc"), T("set dscp {d:0-63}", "pmapc"),
              T("trust {t:dscp|cos}", "pmapc")]
_MODE_TPL = {"config": _GLOBAL_TPL + _PASSTHROUGH, "config-if": _IF_TPL, "config-cmap": _CMAP_TPL,
             "config-pmap": _PMAP_TPL, "config-pmap-c": _PMAPC_TPL, "config-ext-nacl": []}


# --------------------------------------------------------------------------------------------- ACLs
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
            ip = take(_is_ip)
            return (True, ipaddress.IPv4Network(f"{ip}/32")) if ip else (False, None)
        ip = take(_is_ip)
        if ip is None:
            return False, None
        wild = take(_is_ip)
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


# --------------------------------------------------------------------------------------------- running-config
@dataclass
class Section:
    """A config section: its header line and child lines (order kept)."""

    header: str
    children: list[str] = field(default_factory=list)
    subsections: list["Section"] = field(default_factory=list)


@dataclass
class RunningConfig:
    """A switch's configuration as IOS keeps it: hostname, global lines (order kept), numbered ACLs,
    named ACLs, class-maps, policy-maps (with classes), interfaces, monitor sessions."""

    hostname: str = "Switch"
    ports: list[str] = field(default_factory=list)
    globals_: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    acls: dict[str, list[Ace]] = field(default_factory=dict)
    named_acls: set[str] = field(default_factory=set)
    class_maps: dict[str, Section] = field(default_factory=dict)
    policy_maps: dict[str, Section] = field(default_factory=dict)
    interfaces: dict[str, Section] = field(default_factory=dict)
    monitor: list[str] = field(default_factory=list)

    @classmethod
    def factory(cls, hostname: str, ports: list[str]) -> "RunningConfig":
        """A switch at factory defaults with ``ports`` (short names)."""
        rc = cls(hostname=hostname, ports=list(ports))
        for p in ports:
            rc.interfaces[p] = Section(f"interface {long_port(p)}")
        return rc

    def copy(self) -> "RunningConfig":
        import copy as _copy
        return _copy.deepcopy(self)

    def render(self) -> str:
        """``show running-config`` text."""
        out = ["Building configuration...", "", f"Current configuration : {{size}} bytes", "!", "version 12.2",
               "no service pad", "!", f"hostname {self.hostname}", "!"]
        out += [l for l in self.kept if not l.startswith(("version", "no service pad"))]
        if self.kept:
            out.append("!")
        out += self.globals_
        out.append("!")
        for s in self.class_maps.values():
            out.append(s.header)
            out += [f" {c}" for c in s.children]
            out.append("!")
        for s in self.policy_maps.values():
            out.append(s.header)
            for sub in s.subsections:
                out.append(f" {sub.header}")
                out += [f"  {c}" for c in sub.children]
            out.append("!")
        for s in self.interfaces.values():
            out.append(s.header)
            out += [f" {c}" for c in s.children]
            out.append("!")
        for num, aces in self.acls.items():
            if num in self.named_acls:
                out.append(f"ip access-list extended {num}")
                out += [f" {ace_text(a)}" for a in aces]
            else:
                out += [f"access-list {num} {ace_text(a)}" for a in aces]
        out.append("!")
        out += self.monitor
        out.append("end")
        text = "\n".join(out) + "\n"
        return text.replace("{size}", str(len(text)))


@dataclass
class Mode:
    """Where the CLI is: mode name and the section it edits (e.g. interface name, class-map name)."""

    name: str = GLOBAL
    target: str | None = None
    sub: str | None = None  # policy-map class name in config-pmap-c

    @property
    def prompt_suffix(self) -> str:
        return MODES[self.name]


def _set_unique(lines: list[str], line: str, key: str) -> None:
    """Replace the line starting with ``key`` (or append)."""
    for i, l in enumerate(lines):
        if l == key or l.startswith(key + " "):
            lines[i] = line
            return
    lines.append(line)


def _remove_prefix(lines: list[str], key: str) -> bool:
    n = len(lines)
    lines[:] = [l for l in lines if not (l == key or l.startswith(key + " "))]
    return len(lines) != n


def _global_key(line: str, toks: list[str]) -> str:
    """The identity of a global line (what a new value replaces)."""
    if toks[:4] == ["mls", "qos", "queue-set", "output"] and len(toks) > 5:
        if toks[5] == "threshold":
            return " ".join(toks[:7])
        return " ".join(toks[:6])
    if toks[:4] == ["mls", "qos", "srr-queue", "input"] and len(toks) > 4 and toks[4] != "dscp-map":
        return " ".join(toks[:5])
    return line  # DSCP maps accumulate; anything else is its own identity


def interpret(rc: RunningConfig, mode: Mode, line: str) -> Mode:
    """Apply one config-mode ``line`` to ``rc`` (mutated) in ``mode``; returns the new mode.

    Like IOS, a command that is not valid in a sub-mode is tried at the global level (leaving the
    sub-mode). Raises IosError (with the caret column) for invalid or incomplete input; ``rc`` is
    unchanged then."""
    toks = _tokens(line)
    if not toks or toks[0][0].startswith("!"):
        return mode
    words = [t for t, _ in toks]
    if words[0] == "exit":
        if mode.name == "config-pmap-c":
            return Mode("config-pmap", mode.target)
        return Mode(GLOBAL)
    if words[0] == "end":
        return Mode("exec")
    negate = words[0] == "no"
    body = toks[1:] if negate else toks
    if negate and not body:
        raise IosError(line, len(line), "incomplete")
    best_err = 0
    chain = {"config": ["config"], "config-pmap-c": ["config-pmap-c", "config-pmap", "config"]}.get(
        mode.name, [mode.name, "config"])
    if negate:  # commands whose literal form starts with "no" (no ip address, no mdix auto ...)
        for mname in chain:
            for tpl in _MODE_TPL[mname]:
                if tpl.specs[0] == "no":
                    used, vals = _match(tpl, toks)
                    if vals is not None:
                        target = mode if mname == mode.name else Mode(mname, mode.target) if mname != "config" else Mode(GLOBAL)
                        return _apply(rc, target, tpl, vals, toks, False, line)
    for mname in chain:
        if mname == "config-ext-nacl":
            acl = rc.acls.setdefault(mode.target, [])
            if body and body[0][0].isdigit():  # sequence number (hier-config and IOS use them)
                seq = int(body[0][0])
                if negate and len(body) == 1:
                    if seq % 10 == 0 and 0 < seq // 10 <= len(acl):
                        del acl[seq // 10 - 1]
                    return mode
                body = body[1:]
            used, ace = parse_ace(body)
            if ace is not None or (negate and used > 0):
                if negate:
                    if ace is not None and ace in acl:
                        acl.remove(ace)
                else:
                    acl.append(ace)
                return mode
            best_err = max(best_err, used)
            continue
        if mname == GLOBAL and body and body[0][0] == "access-list":
            new = _access_list(rc, body, negate, line)
            if new is not None:
                return Mode(GLOBAL)
            best_err = max(best_err, _access_list_err(body))
            continue
        for tpl in _MODE_TPL[mname]:
            used, vals = _match(tpl, body)
            if vals is None and negate and used >= _negatable_prefix(tpl):
                vals = {}  # `no <command> [any trailing args]` removes the command
            if vals is None:
                best_err = max(best_err, used)
                continue
            target = mode if mname == mode.name else (Mode(mname, mode.target) if mname != GLOBAL else Mode(GLOBAL))
            return _apply(rc, target, tpl, vals, body, negate, line)
    col = (body[best_err][1] if best_err < len(body) else len(line))
    if best_err >= len(body):
        raise IosError(line, col, "incomplete")
    raise IosError(line, col)


def _negatable_prefix(tpl: Template) -> int:
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


def _apply(rc: RunningConfig, mode: Mode, tpl: Template, vals: dict, body, negate: bool, line: str) -> Mode:
    words = [t for t, _ in body]
    text = " ".join(words)
    act = tpl.action
    if act == "hostname":
        if not negate:
            rc.hostname = vals["name"]
        return Mode(GLOBAL)
    if act == "keep":
        if negate:
            _remove_prefix(rc.kept, text)
        elif text not in rc.kept:
            rc.kept.append(text)
        return Mode(GLOBAL)
    if act == "global":
        if text == "mls qos":  # only the global switch: the other mls qos settings stay configured
            if negate:
                rc.globals_[:] = [l for l in rc.globals_ if l != "mls qos"]
            elif "mls qos" not in rc.globals_:
                rc.globals_.insert(0, "mls qos")
            return Mode(GLOBAL)
        key = _global_key(text, words)
        if negate:
            if tpl.repeat > 1 and key == text:
                key = " ".join(words[:len(tpl.specs) - 1])
            _remove_prefix(rc.globals_, key)
        else:
            _set_unique(rc.globals_, text, key)
        return Mode(GLOBAL)
    if act == "class-map":
        name = words[-1] if not negate else (words[2] if len(words) > 2 and words[1] in ("match-all", "match-any") else words[1])
        if negate:
            rc.class_maps.pop(name, None)
            return Mode(GLOBAL)
        how = vals.get("how", "match-all")
        sec = rc.class_maps.get(name)
        if sec is None:
            rc.class_maps[name] = sec = Section(f"class-map {how} {name}")
        return Mode("config-cmap", name)
    if act == "policy-map":
        name = words[1]
        if negate:
            rc.policy_maps.pop(name, None)
            return Mode(GLOBAL)
        rc.policy_maps.setdefault(name, Section(f"policy-map {name}"))
        return Mode("config-pmap", name)
    if act == "named-acl":
        name = words[3]
        if negate:
            rc.acls.pop(name, None)
            rc.named_acls.discard(name)
            return Mode(GLOBAL)
        rc.acls.setdefault(name, [])
        rc.named_acls.add(name)
        return Mode("config-ext-nacl", name)
    if act == "interface":
        port = vals.get("port") or _port(words[1])
        if port and port.startswith("Vlan") and port not in rc.interfaces:
            rc.interfaces[port] = Section(f"interface {port}")
        if port not in rc.interfaces:
            raise IosError(line, body[1][1])
        if negate:
            raise IosError(line, body[0][1] - 3 if body[0][1] >= 3 else 0)
        return Mode("config-if", port)
    if act == "monitor":
        sess = words[2]
        if negate:
            if len(words) <= 3:
                rc.monitor[:] = [l for l in rc.monitor if l.split()[2] != sess]
            else:
                _remove_prefix(rc.monitor, text)
        elif text not in rc.monitor:
            rc.monitor.append(text)
            rc.monitor.sort(key=lambda l: (int(l.split()[2]), l.split()[3] != "source"))
        return Mode(GLOBAL)
    if act in ("if", "if-keep"):
        sec = rc.interfaces[mode.target]
        key = _if_key(words)
        if negate:
            _remove_prefix(sec.children, key)
        else:
            _set_unique(sec.children, text, key)
        return mode
    if act == "cmap":
        sec = rc.class_maps[mode.target]
        (_remove_prefix(sec.children, text) if negate else (sec.children.append(text) if text not in sec.children else None))
        return mode
    if act == "pmap-class":
        sec = rc.policy_maps[mode.target]
        name = words[1]
        if negate:
            sec.subsections[:] = [s for s in sec.subsections if s.header != f"class {name}"]
            return mode
        if not any(s.header == f"class {name}" for s in sec.subsections):
            sec.subsections.append(Section(f"class {name}"))
        return Mode("config-pmap-c", mode.target, name)
    if act == "pmapc":
        sec = next(s for s in rc.policy_maps[mode.target].subsections if s.header == f"class {mode.sub}")
        key = words[0] if words[0] == "trust" else "set"
        if negate:
            _remove_prefix(sec.children, key)
        else:
            _set_unique(sec.children, text.replace("set dscp", "set ip dscp"), key)
        return mode
    raise AssertionError(act)


#: Leading words that identify an interface line (a new value replaces the old one).
_IF_KEY_WORDS = {"srr-queue": 3, "mls": 3, "service-policy": 2, "priority-queue": 2, "no": 2}


def _if_key(words: list[str]) -> str:
    """Identity of an interface config line: ``srr-queue bandwidth share`` for the weights,
    ``mls qos trust``, ``service-policy input``, ``no ip``/``no mdix``, else its first word."""
    return " ".join(words[:_IF_KEY_WORDS.get(words[0], 1)])


def _access_list(rc: RunningConfig, body, negate: bool, line: str) -> bool | None:
    words = [t for t, _ in body]
    if len(words) < 2 or not words[1].isdigit() or not 100 <= int(words[1]) <= 199:
        return None
    num = words[1]
    if negate:
        rc.acls.pop(num, None)  # IOS removes the whole numbered list
        return True
    used, ace = parse_ace(body[2:])
    if ace is None:
        return None
    lst = rc.acls.setdefault(num, [])
    if ace not in lst:
        lst.append(ace)
    return True


def _access_list_err(body) -> int:
    words = [t for t, _ in body]
    if len(words) < 2 or not words[1].isdigit() or not 100 <= int(words[1]) <= 199:
        return 1
    used, _ = parse_ace(body[2:])
    return 2 + used


def load_config(text: str, rc: RunningConfig) -> list[IosError]:
    """Apply a whole config text (as ``show running-config`` prints it, or a file) to ``rc``,
    entering sub-modes by indentation-free IOS rules. Returns the errors of invalid lines (the
    valid ones are applied), each with its 1-based line number in ``line``."""
    errors = []
    mode = Mode(GLOBAL)
    for n, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("!") or s.startswith(("Building configuration", "Current configuration", "end")):
            if s.startswith("end"):
                break
            if s.startswith("!"):
                mode = Mode(GLOBAL)
            continue
        try:
            mode = interpret(rc, mode, s)
            if mode.name == "exec":
                mode = Mode(GLOBAL)
        except IosError as e:
            errors.append(IosError(f"line {n}: {s}", e.column, e.kind))
    return errors


# --------------------------------------------------------------------------------------------- QoS model
DEFAULT_DSCP_OUTPUT_QUEUE = {d: (2 if d <= 15 else 3 if d <= 31 else 4 if d <= 39 else 1 if d <= 47 else 4)
                             for d in range(64)}
DEFAULT_QUEUE_SET_BUFFERS = {1: [25, 25, 25, 25], 2: [25, 25, 25, 25]}


@dataclass
class ClassMap:
    name: str
    match_all: bool
    acls: list[str]
    dscps: list[int]


@dataclass
class PolicyClass:
    class_name: str
    set_dscp: int | None
    trust: str | None


@dataclass
class InterfaceQos:
    """Per-port QoS: trust (None = untrusted), input service-policy, SRR weights, expedite queue,
    queue-set."""

    trust: str | None = None
    service_policy_in: str | None = None
    share: list[int] = field(default_factory=lambda: [25, 25, 25, 25])
    shape: list[int] = field(default_factory=lambda: [25, 0, 0, 0])
    priority_queue_out: bool = False
    queue_set: int = 1


@dataclass
class QosConfig:
    """Everything the tc compiler needs, with Catalyst 3750 defaults filled in."""

    enabled: bool
    acls: dict[str, list[Ace]]
    class_maps: dict[str, ClassMap]
    policy_maps: dict[str, list[PolicyClass]]
    dscp_output_queue: dict[int, int]
    queue_set_buffers: dict[int, list[int]]
    interfaces: dict[str, InterfaceQos]
    monitor: dict[int, dict]   # session -> {"sources": [(port, dir)], "destinations": [port]}
    unsupported: list[str]     # configured but not emulated (WTD thresholds, ingress queues ...)


def qos_model(rc: RunningConfig) -> QosConfig:
    """The QoS meaning of a running-config (pure)."""
    outq = dict(DEFAULT_DSCP_OUTPUT_QUEUE)
    qsb = {k: list(v) for k, v in DEFAULT_QUEUE_SET_BUFFERS.items()}
    unsupported = []
    for l in rc.globals_:
        w = l.split()
        if w[:5] == ["mls", "qos", "srr-queue", "output", "dscp-map"]:
            q = int(w[6])
            for d in w[9:]:
                outq[int(d)] = q
        elif w[:4] == ["mls", "qos", "queue-set", "output"] and w[5] == "buffers":
            qsb[int(w[4])] = [int(x) for x in w[6:10]]
        elif l != "mls qos":
            unsupported.append(l)
    cms = {}
    for name, s in rc.class_maps.items():
        acls, dscps = [], []
        for c in s.children:
            w = c.split()
            if w[:2] == ["match", "access-group"]:
                acls.append(w[-1])
            elif w[:3] == ["match", "ip", "dscp"]:
                dscps += [int(x) for x in w[3:]]
        cms[name] = ClassMap(name, "match-any" not in s.header, acls, dscps)
    pms = {}
    for name, s in rc.policy_maps.items():
        pcs = []
        for sub in s.subsections:
            setd = trust = None
            for c in sub.children:
                w = c.split()
                if w[0] == "set":
                    setd = int(w[-1])
                elif w[0] == "trust":
                    trust = w[1]
            pcs.append(PolicyClass(sub.header.split()[1], setd, trust))
        pms[name] = pcs
    ifs = {}
    for port, s in rc.interfaces.items():
        if port.startswith("Vlan"):
            continue
        q = InterfaceQos()
        for c in s.children:
            w = c.split()
            if w[:3] == ["mls", "qos", "trust"]:
                q.trust = w[3]
            elif w[:2] == ["service-policy", "input"]:
                q.service_policy_in = w[2]
            elif w[:3] == ["srr-queue", "bandwidth", "share"]:
                q.share = [int(x) for x in w[3:7]]
            elif w[:3] == ["srr-queue", "bandwidth", "shape"]:
                q.shape = [int(x) for x in w[3:7]]
            elif w[:2] == ["priority-queue", "out"]:
                q.priority_queue_out = True
            elif w[0] == "queue-set":
                q.queue_set = int(w[1])
            elif w[:3] == ["srr-queue", "bandwidth", "limit"]:
                unsupported.append(f"interface {port}: {c}")
        ifs[port] = q
    mon: dict[int, dict] = {}
    for l in rc.monitor:
        w = l.split()
        sess = mon.setdefault(int(w[2]), {"sources": [], "destinations": []})
        port = canonical_port(w[5])
        if w[3] == "source":
            sess["sources"].append((port, w[6] if len(w) > 6 else "both"))
        else:
            sess["destinations"].append(port)
    return QosConfig("mls qos" in rc.globals_, dict(rc.acls), cms, pms, outq, qsb, ifs, mon, unsupported)
