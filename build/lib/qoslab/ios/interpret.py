"""The config-mode interpreter: one IOS line applied to a :class:`RunningConfig` (pure apart from
mutating the config it is given).

:func:`interpret` finds the template a line matches in the current mode (or, as IOS does, in a
parent mode, which leaves the sub-mode) and hands it to the handler of the template's action.
Each handler is a small function ``(ctx) -> Mode``; the table :data:`HANDLERS` maps actions to
them. Invalid lines raise :class:`IosError` with the caret column and leave the config as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import refs
from .config import Mode, RunningConfig, Section
from .grammar import (
    GLOBAL,
    IosError,
    Template,
    match,
    negatable_prefix,
    port_token,
    strip_controls,
    tokens,
)
from .xe import templates_of

Tokens = list[tuple[str, int]]


def _set_unique(lines: list[str], line: str, key: str) -> None:
    """Replace the line starting with ``key`` (or append)."""
    for i, existing in enumerate(lines):
        if existing == key or existing.startswith(key + " "):
            lines[i] = line
            return
    lines.append(line)


def _remove_prefix(lines: list[str], key: str) -> bool:
    """Remove every line that is ``key`` or starts with ``key + " "``; True when one was removed."""
    n = len(lines)
    lines[:] = [existing for existing in lines if not (existing == key or existing.startswith(key + " "))]
    return len(lines) != n


def _global_key(toks: list[str]) -> str:
    """The identity of a global line (what a new value replaces)."""
    line = " ".join(toks)
    if toks[:4] == ["mls", "qos", "queue-set", "output"] and len(toks) > 5:
        if toks[5] == "threshold":
            return " ".join(toks[:7])
        return " ".join(toks[:6])
    if toks[:4] == ["mls", "qos", "srr-queue", "input"] and len(toks) > 4 and toks[4] != "dscp-map":
        return " ".join(toks[:5])
    if toks[:4] == ["mls", "qos", "map", "cos-dscp"]:
        return " ".join(toks[:4])
    if toks[:4] == ["mls", "qos", "map", "dscp-cos"]:
        return " ".join(toks[:5])  # one entry per DSCP: a new CoS for it replaces the old
    return line  # the DSCP-to-queue maps accumulate; anything else is its own identity


#: ``mls qos rewrite ip dscp``: the DS field is rewritten to the QoS label on the way out (default).
REWRITE = "mls qos rewrite ip dscp"

#: Leading words that identify an interface line (a new value replaces the old one).
_IF_KEY_WORDS = {"srr-queue": 3, "mls": 3, "service-policy": 2, "priority-queue": 2, "no": 2}


def _if_key(words: list[str]) -> str:
    """Identity of an interface config line: ``srr-queue bandwidth share`` for the weights,
    ``mls qos trust``, ``service-policy input``, ``no ip``/``no mdix``, else its first word."""
    return " ".join(words[: _IF_KEY_WORDS.get(words[0], 1)])


# --------------------------------------------------------------------------------------------- handlers
@dataclass
class Ctx:
    """What a handler needs: the config, the mode the command belongs to, the matched template,
    its bindings, the line's words (without a leading ``no``), negation and the raw line."""

    rc: RunningConfig
    mode: Mode
    tpl: Template
    vals: dict[str, Any]
    body: Tokens
    negate: bool
    line: str

    @property
    def words(self) -> list[str]:
        return [t for t, _ in self.body]

    @property
    def text(self) -> str:
        return " ".join(self.words)


def _hostname(c: Ctx) -> Mode:
    if not c.negate:
        c.rc.hostname = c.vals["name"]
    return Mode(GLOBAL)


#: Kept lines of which a switch has one value (a new one replaces the old, ``no`` removes it
#: whatever follows): SNMP location, contact, chassis ID (Catalyst 3750 command reference,
#: ``snmp-server location|contact|chassis-id``) by their first two words, a community by its name.
_SINGLE_VALUED = {("snmp-server", "location"): 2, ("snmp-server", "contact"): 2, ("snmp-server", "chassis-id"): 2,
                  ("snmp-server", "community"): 3, ("file", "prompt"): 2}


def _keep(c: Ctx) -> Mode:
    w = c.words
    n = _SINGLE_VALUED.get((w[0], w[1]) if len(w) > 1 else (w[0], ""))
    key = " ".join(w[:n]) if n else c.text
    if c.negate:
        _remove_prefix(c.rc.kept, key)
    elif c.text == "file prompt alert":  # the default, not shown
        _remove_prefix(c.rc.kept, key)
    elif n:
        _set_unique(c.rc.kept, c.text, key)
    elif c.text not in c.rc.kept:
        c.rc.kept.append(c.text)
    return Mode(GLOBAL)


def _global(c: Ctx) -> Mode:
    g = c.rc.globals_
    if c.text == "mls qos":  # only the global switch: the other mls qos settings stay configured
        if c.negate:
            g[:] = [line for line in g if line != "mls qos"]
        elif "mls qos" not in g:
            g.insert(0, "mls qos")
        return Mode(GLOBAL)
    if c.text == REWRITE:  # on by default: only its `no` form is a config line (as IOS shows it)
        g[:] = [line for line in g if line != "no " + REWRITE]
        if c.negate:
            g.append("no " + REWRITE)
        return Mode(GLOBAL)
    key = _global_key(c.words)
    if c.negate:
        if c.tpl.repeat > 1 and key == c.text:
            key = " ".join(c.words[: len(c.tpl.specs) - 1])
        _remove_prefix(g, key)
    else:
        _set_unique(g, c.text, key)
    return Mode(GLOBAL)


def _refuse(c: Ctx, message: str | None) -> None:
    """Raise IOS's refusal ``message`` (:mod:`.refs`) for this line, if there is one."""
    if message is not None:
        raise IosError(c.line, 0, "message", message)


def _class_map(c: Ctx) -> Mode:
    w = c.words
    if c.negate:
        name = w[2] if len(w) > 2 and w[1] in ("match-all", "match-any") else w[1]
        _refuse(c, refs.class_in_use(c.rc, name) if name in c.rc.class_maps else None)
        c.rc.class_maps.pop(name, None)
        return Mode(GLOBAL)
    name = w[-1]
    if name not in c.rc.class_maps:
        c.rc.class_maps[name] = Section(f"class-map {c.vals.get('how', 'match-all')} {name}")
    return Mode("config-cmap", name)


def _policy_map(c: Ctx) -> Mode:
    name = c.words[1]
    if c.negate:
        _refuse(c, refs.policy_in_use(c.rc, name) if name in c.rc.policy_maps else None)
        c.rc.policy_maps.pop(name, None)
        return Mode(GLOBAL)
    c.rc.policy_maps.setdefault(name, Section(f"policy-map {name}"))
    return Mode("config-pmap", name)


def _interface(c: Ctx) -> Mode:
    port = c.vals.get("port") or port_token(c.words[1])
    if port and port.startswith("Vlan") and port not in c.rc.interfaces:
        c.rc.interfaces[port] = Section(f"interface {port}")
    if port not in c.rc.interfaces:
        raise IosError(c.line, c.body[1][1])
    if c.negate:
        raise IosError(c.line, c.body[0][1] - 3 if c.body[0][1] >= 3 else 0)
    return Mode("config-if", port)


def _monitor(c: Ctx) -> Mode:
    mon, w = c.rc.monitor, list(c.words)
    if len(w) > 5 and c.vals.get("port"):
        w[5] = c.vals["port"]  # IOS keeps the short name: ``interface gi1/0/1`` -> ``Gi1/0/1``
    sess = w[2]
    text = " ".join(w)
    if c.negate:
        if len(w) <= 3:
            mon[:] = [line for line in mon if line.split()[2] != sess]
        else:
            _remove_prefix(mon, text)
    elif text not in mon:
        mon.append(text)
        mon.sort(key=lambda line: (int(line.split()[2]), line.split()[3] != "source"))
    return Mode(GLOBAL)


def _if_line(c: Ctx) -> Mode:
    assert c.mode.target is not None
    sec = c.rc.interfaces[c.mode.target]
    if c.words[:2] == ["ip", "address"] or c.words == ["no", "ip", "address"]:
        return _ip_address(c, sec)
    key = _if_key(c.words)
    if c.negate:
        _remove_prefix(sec.children, key)
    else:
        _set_unique(sec.children, c.text, key)
    return c.mode


def _ip_address(c: Ctx, sec: Section) -> Mode:
    """``ip address A M`` / ``no ip address`` on an SVI (``interface VlanN``): one address, the two
    forms replace each other (Catalyst 3750 Software Configuration Guide, "Assigning the Switch IP
    Address"); a switch port takes none (it is a layer-2 port: ``% Invalid input`` at ``ip``)."""
    assert c.mode.target is not None
    if not c.mode.target.startswith("Vlan") and c.words[0] == "ip" and not c.negate:
        raise IosError(c.line, c.body[0][1])
    sec.children[:] = [x for x in sec.children if not x.startswith(("ip address", "no ip address"))]
    if c.words[0] == "ip" and not c.negate:
        sec.children.append(c.text)
    else:
        sec.children.append("no ip address")
    return c.mode


def _cmap_line(c: Ctx) -> Mode:
    assert c.mode.target is not None
    children = c.rc.class_maps[c.mode.target].children
    if c.negate:
        _remove_prefix(children, c.text)
    elif c.text not in children:
        children.append(c.text)
    return c.mode


def _pmap_class(c: Ctx) -> Mode:
    assert c.mode.target is not None
    sec = c.rc.policy_maps[c.mode.target]
    header = f"class {c.words[1]}"
    if c.negate:
        sec.subsections[:] = [s for s in sec.subsections if s.header != header]
        return c.mode
    if not any(s.header == header for s in sec.subsections):
        _refuse(c, refs.class_not_configured(c.rc, c.words[1]))
        sec.subsections.append(Section(header))
    return Mode("config-pmap-c", c.mode.target, c.words[1])


def _pmapc_line(c: Ctx) -> Mode:
    assert c.mode.target is not None
    sec = next(s for s in c.rc.policy_maps[c.mode.target].subsections if s.header == f"class {c.mode.sub}")
    key = c.words[0] if c.words[0] in ("trust", "police") else "set"
    if c.negate:
        _remove_prefix(sec.children, key)
    else:
        # IOS keeps `set ip dscp N` as `set dscp N` (3750-X/3560-X QoS configuration, OL-21521-01)
        text = c.text.replace("set ip dscp", "set dscp")
        if key == "police" and "exceed-action" not in text:
            text += " exceed-action drop"  # the default exceed action, shown as IOS shows it
        _set_unique(sec.children, text, key)
    return c.mode


#: Mode -> the reader of its entry lines (``(rc, mode, body, negate, line) -> (new mode or None,
#: tokens matched)``; registered by :mod:`.aclinterp` for the access-list modes).
ENTRY_HOOKS: dict[str, Callable[[RunningConfig, Mode, Tokens, bool, str], tuple[Mode | None, int]]] = {}

#: Template action -> handler.
HANDLERS: dict[str, Callable[[Ctx], Mode]] = {
    "hostname": _hostname, "keep": _keep, "global": _global, "class-map": _class_map,
    "policy-map": _policy_map, "interface": _interface, "monitor": _monitor,
    "if": _if_line, "if-keep": _if_line, "cmap": _cmap_line, "pmap-class": _pmap_class, "pmapc": _pmapc_line,
}


# --------------------------------------------------------------------------------------------- interpret
def _mode_chain(mode: Mode) -> list[str]:
    """The modes a line is tried in: the current one, then its parents (IOS leaves the sub-mode)."""
    if mode.name == GLOBAL:
        return [GLOBAL]
    if mode.name == "config-pmap-c":
        return ["config-pmap-c", "config-pmap", GLOBAL]
    return [mode.name, GLOBAL]


def _target_mode(mode: Mode, mname: str) -> Mode:
    if mname == mode.name:
        return mode
    return Mode(GLOBAL) if mname == GLOBAL else Mode(mname, mode.target)


def _literal_no(rc: RunningConfig, mode: Mode, toks: Tokens, line: str) -> Mode | None:
    """Commands whose literal form starts with ``no`` (``no ip address``, ``no mdix auto`` ...)."""
    for mname in _mode_chain(mode):
        for tpl in templates_of(rc.dialect)[mname]:
            if tpl.specs[0] == "no":
                _, vals = match(tpl, toks)
                if vals is not None:
                    return HANDLERS[tpl.action](Ctx(rc, _target_mode(mode, mname), tpl, vals, toks, False, line))
    return None


def interpret(rc: RunningConfig, mode: Mode, line: str) -> Mode:
    """Apply one config-mode ``line`` to ``rc`` (mutated) in ``mode``; returns the new mode
    (``Mode("exec")`` after ``end``).

    Like IOS, a command that is not valid in a sub-mode is tried at the global level (leaving the
    sub-mode). Raises IosError (with the caret column) for invalid or incomplete input; ``rc`` is
    unchanged then. Escape sequences and control characters are dropped first
    (:func:`.grammar.strip_controls`)."""
    line = strip_controls(line)
    toks = tokens(line)
    if not toks or toks[0][0].startswith("!"):
        return mode
    first = toks[0][0]
    if first == "exit":  # to the parent mode; global configuration's is EXEC
        return {"config-pmap-c": Mode("config-pmap", mode.target), GLOBAL: Mode("exec")}.get(mode.name, Mode(GLOBAL))
    if first == "end":
        return Mode("exec")
    negate = first == "no"
    body = toks[1:] if negate else toks
    if negate and not body:
        raise IosError(line, len(line), "incomplete")
    if negate and (new := _literal_no(rc, mode, toks, line)) is not None:
        return new
    best_err = 0
    for mname in _mode_chain(mode):
        if mname in ENTRY_HOOKS:  # a mode whose lines are entries (an access list's)
            new, used = ENTRY_HOOKS[mname](rc, mode, body, negate, line)
            if new is not None:
                return new
            best_err = max(best_err, used)
            continue
        for tpl in templates_of(rc.dialect)[mname]:
            used, vals = match(tpl, body)
            if vals is None and negate and used >= negatable_prefix(tpl):
                vals = {}  # `no <command> [any trailing args]` removes the command
            if vals is None:
                best_err = max(best_err, used)
                continue
            return HANDLERS[tpl.action](Ctx(rc, _target_mode(mode, mname), tpl, vals, body, negate, line))
    if best_err >= len(body):
        raise IosError(line, len(line), "incomplete")
    raise IosError(line, body[best_err][1])


def load_config(text: str, rc: RunningConfig) -> list[IosError]:
    """Apply a whole config text (as ``show running-config`` prints it, or a file) to ``rc``,
    entering sub-modes by indentation-free IOS rules. Returns the errors of invalid lines (the
    valid ones are applied), each with its 1-based line number in ``line``."""
    errors = []
    mode = Mode(GLOBAL)
    for n, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if s.startswith("end") and not s.startswith("end-"):
            break
        if not s or s.startswith(("Building configuration", "Current configuration", "Configuration of Partition")):
            continue
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
