"""The EOS config-mode interpreter (pure apart from mutating the config it is given): one line
applied to an :class:`~qoslab.eos.config.EosConfig` (:func:`interpret`), or a whole text
(:func:`load_config`).

A line is matched in the current mode (:mod:`qoslab.eos.commands`), then, as EOS does, in the
parent modes (which leaves the sub-mode). ``no`` removes a setting, ``default`` restores the
default; where EOS prints a ``no`` form (``no qos trust``, ``no priority``) the two differ.
Invalid lines raise :class:`~qoslab.eos.grammar.EosError` and leave the config as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ios.grammar import strip_controls
from .acl import canonical_entry
from .commands import LEAVE, MODES, PARENT
from .config import EosConfig, Interface, Monitor
from .grammar import EosError, Match, match


@dataclass
class Mode:
    """Where the CLI is: ``exec`` or a config mode of :data:`~qoslab.eos.commands.MODES`, the
    object it edits (interface, access list, class-map, policy-map) and the sub-object (tx-queue
    number, policy-map class)."""

    name: str = "config"
    target: str = ""
    sub: str = ""


@dataclass
class Ctx:
    """What a handler gets: the config, the mode the command belongs to, slot values, whether the
    line began with ``no`` (``negated``) or ``default`` (``default``), and the line's words."""

    cfg: EosConfig
    mode: Mode
    values: dict[str, Any]
    negated: bool
    default: bool
    words: list[str]

    def fail(self, token: int) -> EosError:
        """An invalid-input error at the line's word ``token`` (0-based, as EOS counts)."""
        return EosError(" ".join(self.words), "invalid", token, self.words[min(token, len(self.words) - 1)])


def _set_unique(lines: list[str], key: str, line: str | None) -> None:
    """Replace the line that is ``key`` or starts with ``key `` by ``line`` (None: remove it)."""
    kept = [x for x in lines if not (x == key or x.startswith(key + " "))]
    lines[:] = kept + ([line] if line else [])


def _key(line: str) -> str:
    """A line's identity (what a new value replaces): its words up to the first value
    (``bandwidth percent 33`` -> ``bandwidth percent``; ``description x`` -> ``description``)."""
    out: list[str] = []
    for w in line.split():
        if w[:1].isdigit() or (out and out[-1] == "description"):
            break
        out.append(w)
    return " ".join(out)


def _canonical(m: Match, values: dict[str, Any]) -> str:
    """The line as EOS prints it: keywords spelled out, values as read (DSCP names as numbers)."""
    out: list[str] = []
    for slot in m.template.slots:
        if slot.keyword:
            out.append(slot.keyword)
        elif slot.name in values:
            v = values[slot.name]
            out += [str(x) for x in (v if isinstance(v, list) else [v])]
        else:
            break
    return " ".join(out)


# --------------------------------------------------------------------------------------------- handlers
def _global(ctx: Ctx, m: Match) -> Mode:
    cfg, v, off = ctx.cfg, ctx.values, ctx.negated or ctx.default
    a = m.template.action
    if a == "hostname":
        cfg.hostname = "localhost" if off else str(v["name"])
    elif a in ("map-dscp", "map-cos", "map-tc"):
        table = {"map-dscp": cfg.dscp_tc, "map-cos": cfg.cos_tc, "map-tc": cfg.tc_txq}[a]
        target = int(v.get("tc", v.get("q", 0)))
        for k in v.get("keys", []):
            if off:
                table.pop(k, None)
                cfg.dscp_dp.pop(k, None) if a == "map-dscp" else None
                continue
            table[k] = target
            if a == "map-dscp" and v.get("dp"):
                cfg.dscp_dp[k] = int(v["dp"])
            elif a == "map-dscp":
                cfg.dscp_dp.pop(k, None)
    elif a == "rewrite":
        cfg.rewrite_dscp = not off
    elif a in ("kept", "kept-after"):
        _kept(cfg.preamble if a == "kept" else cfg.globals_, _canonical(m, v), off)
    else:
        _monitor(ctx, a)
    return Mode("config")


def _kept(lines: list[str], line: str, off: bool) -> None:
    """A global line the switch keeps as typed (one per leading two words; an SNMP community per
    name), SNMP lines before the others (as EOS prints them)."""
    key = " ".join(line.split()[:3 if line.startswith("snmp-server community ") else 2])
    lines[:] = [x for x in lines if not x.startswith(key + " ") and x != key] + ([] if off else [line])
    lines.sort(key=lambda x: not x.startswith("snmp-server "))


@dataclass(frozen=True)
class _Management:
    """A management sub-mode: ``attr``, the :class:`EosConfig` field of its lines (None: not
    configured), the lines of a new block, what a line sets (a line replaces those that set the
    same) and what its ``no`` form leaves in the block (None: nothing)."""

    attr: str
    fresh: tuple[str, ...]
    sets: Callable[[str], str]
    no_form: Callable[[str], str | None]


#: ``management api http-commands``: ``[no] shutdown`` (shut down when new), ``protocol`` lines;
#: ``management ssh``: one service ACL, one idle timeout, ``shutdown``.
_API = _Management("mgmt_api", ("shutdown",), lambda x: x.removeprefix("no "),
                   lambda x: "no shutdown" if x == "shutdown" else None)
_SSH = _Management("mgmt_ssh", (), lambda x: "ip access-group" if x.startswith("ip access-group") else x.split()[0],
                   lambda x: None)
_MANAGEMENT = {"mgmt": _API, "mgmt-line": _API, "mgmt-ssh": _SSH, "ssh-line": _SSH}


def _management(ctx: Ctx, m: Match) -> Mode:
    """A management sub-mode's command (:data:`_MANAGEMENT`): the one that enters it (negated:
    removes the block) or one of its lines."""
    cfg, off, block = ctx.cfg, ctx.negated or ctx.default, _MANAGEMENT[m.template.action]
    lines: list[str] | None = getattr(cfg, block.attr)
    if m.template.enters:
        setattr(cfg, block.attr, None if off else list(block.fresh) if lines is None else lines)
        return Mode("config" if off else m.template.enters)
    line = _canonical(m, ctx.values)
    left = block.no_form(line) if off else line
    lines = [x for x in lines or [] if block.sets(x) != block.sets(line)] + ([left] if left else [])
    setattr(cfg, block.attr, lines)
    return ctx.mode


def _monitor(ctx: Ctx, action: str) -> None:
    cfg, v = ctx.cfg, ctx.values
    name, port = str(v["name"]), v.get("port")
    if port is not None and port not in cfg.interfaces:
        raise ctx.fail(4 if not ctx.negated else 5)
    if ctx.negated or ctx.default:
        s = cfg.monitor.get(name)
        if s is not None and port is None:
            del cfg.monitor[name]
        elif s is not None and action == "mon-source":
            s.sources.pop(str(port), None)
        elif s is not None:
            s.destinations[:] = [d for d in s.destinations if d != port]
        return
    s = cfg.monitor.setdefault(name, Monitor())
    if action == "mon-source":
        s.sources[str(port)] = str(v.get("dir", ""))  # printed as typed: ``both`` or nothing
    elif port not in s.destinations:
        s.destinations.append(str(port))


def _enter(ctx: Ctx, m: Match) -> Mode:
    """Commands that enter a sub-mode (or, negated, remove what it edits)."""
    cfg, name, a = ctx.cfg, ctx.values.get("name", ""), m.template.action
    off = ctx.negated or ctx.default
    if a == "interface":
        if name not in cfg.interfaces:
            if name.startswith(("Ethernet", "Management")):
                raise ctx.fail(1 + (1 if off else 0))
            cfg.interfaces[name] = Interface(name)
        if off:
            cfg.interfaces[name] = Interface(name)
            return Mode("config")
        return Mode("if", name)
    if a == "qos-profile":
        _create_or_drop(cfg.qos_profiles, name, off, lambda: Interface(name))
    elif a == "class-map":
        _create_or_drop(cfg.class_maps, name, off, list)
    elif a == "acl":
        std = m.template.enters == "acl-std"
        if not off and name in cfg.acls and (name in cfg.standard_acls) != std:
            raise EosError(" ".join(ctx.words), "message", 0,
                           f"Access list {name} is already defined as {'an IP' if std else 'a standard IP'} ACL")
        _create_or_drop(cfg.acls, name, off, dict)
        if off:
            cfg.standard_acls.discard(name)
        elif std:
            cfg.standard_acls.add(name)
    else:
        _create_or_drop(cfg.policy_maps, name, off, dict)
    return Mode("config") if off else Mode(m.template.enters, name)


def _create_or_drop(store: dict[str, Any], name: str, drop: bool, new: Callable[[], Any]) -> None:
    if drop:
        store.pop(name, None)
    else:
        store.setdefault(name, new())


def _edited(ctx: Ctx) -> Interface:
    """The interface or QoS profile the mode edits."""
    profile = ctx.mode.name in ("qprof", "qptxq")
    return (ctx.cfg.qos_profiles if profile else ctx.cfg.interfaces)[ctx.mode.target]


def _interface(ctx: Ctx, m: Match) -> Mode:
    intf = _edited(ctx)
    a, off = m.template.action, ctx.negated or ctx.default
    if a == "tx-queue":
        q = ctx.values["q"]
        if off:
            intf.txq.pop(q, None)
            return ctx.mode
        intf.txq.setdefault(q, [])
        return Mode("qptxq" if ctx.mode.name == "qprof" else "txq", intf.name, str(q))
    if a == "trust":
        line = "no qos trust" if ctx.negated else None if ctx.default else f"qos trust {ctx.values['how']}"
        _set_unique(intf.lines, "qos trust", None)
        _set_unique(intf.lines, "no qos trust", line)
        return ctx.mode
    if a == "service-policy":
        line = None if off else f"service-policy type qos input {ctx.values['name']}"
        _set_unique(intf.lines, "service-policy type qos input", line)
        return ctx.mode
    text = _canonical(m, ctx.values)
    _set_unique(intf.lines, _key(text), None if off else text)
    return ctx.mode


def _txq(ctx: Ctx, m: Match) -> Mode:
    lines = _edited(ctx).txq.setdefault(int(ctx.mode.sub), [])
    off = ctx.negated or ctx.default
    if m.template.action == "priority":
        _set_unique(lines, "no priority", "no priority" if ctx.negated else None)
        return ctx.mode
    text = _canonical(m, ctx.values)
    if m.template.action == "wred":  # one line per drop precedence (none = all of them)
        dp = ctx.values.get("dp")
        key = "random-detect drop " + (f"drop-precedence {dp} " if dp is not None else "") + "minimum-threshold"
        lines[:] = [x for x in lines if not x.startswith(key)] + ([] if off else [text])
        return ctx.mode
    _set_unique(lines, _key(text), None if off else text)
    return ctx.mode


def _ace(ctx: Ctx, m: Match) -> Mode:
    """An entry or a remark of an access list (remarks have sequence numbers of their own on EOS,
    and are printed where they were put)."""
    entries = ctx.cfg.acls[ctx.mode.target]
    seq, entry = ctx.values.get("seq"), ctx.values.get("entry", "")
    standard = ctx.mode.target in ctx.cfg.standard_acls
    if "action" in ctx.values:
        entry = f"{ctx.values['action']} {entry}".strip()
    if m.template.action == "remark":
        entry = f"remark {ctx.values.get('text', '')}".strip()
    if ctx.negated or ctx.default:
        given = canonical_entry(entry, standard)[0]  # ``no ENTRY`` as typed (``eq www``) or printed (``eq 80``)
        entry = given or " ".join(entry.split())
        for s in [s for s, e in entries.items() if s == seq or (seq is None and e == entry)]:
            del entries[s]
        return ctx.mode
    text, bad = (" ".join(entry.split()), -1) if m.template.action == "remark" else canonical_entry(entry, standard)
    if text is None:
        raise ctx.fail(bad + (1 if seq is not None else 0))
    if seq is None:
        seq = max(entries, default=0) + 10
    elif seq in entries and entries[seq] != text:
        raise EosError(" ".join(ctx.words), "duplicate", 0, str(seq))
    entries[seq] = text
    return ctx.mode


def _class_map(ctx: Ctx, m: Match) -> Mode:
    lines = ctx.cfg.class_maps[ctx.mode.target]
    _set_unique(lines, "match", None if ctx.negated or ctx.default else _canonical(m, ctx.values))
    return ctx.mode


def _policy(ctx: Ctx, m: Match) -> Mode:
    pm = ctx.cfg.policy_maps[ctx.mode.target]
    if m.template.action == "class":
        name = ctx.values["name"]
        if ctx.negated or ctx.default:
            pm.pop(name, None)
            return Mode("pmap", ctx.mode.target)
        pm.setdefault(name, [])
        return Mode("pmapc", ctx.mode.target, name)
    lines = pm.setdefault(ctx.mode.sub, [])
    text = _canonical(m, ctx.values)
    _set_unique(lines, "police" if m.template.action == "police" else _key(text),
                None if ctx.negated or ctx.default else text)
    return ctx.mode


_Handler = Callable[[Ctx, Match], Mode]
HANDLERS: dict[str, _Handler] = {
    **dict.fromkeys(("hostname", "map-dscp", "map-cos", "map-tc", "rewrite", "mon-source", "mon-dest"), _global),
    **dict.fromkeys(("interface", "acl", "class-map", "policy-map", "qos-profile"), _enter),
    **dict.fromkeys(("if-line", "trust", "service-policy", "tx-queue"), _interface),
    **dict.fromkeys(("priority", "txq-line", "wred"), _txq),
    "ace": _ace, "match": _class_map, "class": _policy, "set": _policy, "police": _policy,
    **dict.fromkeys(_MANAGEMENT, _management),
    "kept": _global, "kept-after": _global, "remark": _ace,
}


def _chain(mode: str) -> list[str]:
    out = [mode]
    while out[-1] in PARENT:
        out.append(PARENT[out[-1]])
    return out


def interpret(cfg: EosConfig, mode: Mode, line: str) -> Mode:
    """Apply one config line in ``mode``; the mode after it (``exec`` after ``end``). Raises
    EosError (the config unchanged) for a line EOS would refuse. Escape sequences and control
    characters are dropped first (:func:`qoslab.ios.grammar.strip_controls`: a description set over
    eAPI with ESC, OSC, BEL or NUL in it keeps its printable text)."""
    line = strip_controls(line)
    words = line.split()
    if not words or words[0].startswith("!"):
        return mode
    errors: list[EosError] = []
    for i, name in enumerate(_chain(mode.name)):
        try:
            m, negated = match(MODES[name] + LEAVE, line)
        except EosError as e:
            errors.append(e)
            continue
        here = mode if i == 0 else _parent_mode(mode, name)
        if m.template.action in ("exit", "end"):
            return Mode("exec") if m.template.action == "end" or name == "config" else _parent_mode(here, PARENT[name])
        default = words[0].lower() == "default"
        ctx = Ctx(cfg, here, m.values, negated and not default, default, words)
        return HANDLERS[m.template.action](ctx, m)
    raise max(errors, key=lambda e: (e.kind == "incomplete", e.token))


def _parent_mode(mode: Mode, name: str) -> Mode:
    """``mode`` left up to its ancestor mode ``name`` (keeping the objects that ancestor edits)."""
    if name == "config":
        return Mode("config")
    return Mode(name, mode.target, "" if name in ("if", "pmap", "qprof") else mode.sub)


def load_config(text: str, cfg: EosConfig) -> list[str]:
    """Apply a whole configuration text from global config mode (``!`` lines and indentation
    ignored). Returns one message per line EOS would refuse: ``line N: % ...: 'LINE'``."""
    mode, errors = Mode("config"), []
    for n, line in enumerate(text.splitlines(), 1):
        try:
            mode = interpret(cfg, mode, line)
        except EosError as e:
            errors.append(f"line {n}: {e}")
        if mode.name == "exec":
            mode = Mode("config")
    return errors
