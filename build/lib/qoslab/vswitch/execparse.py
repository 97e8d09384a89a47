"""The EXEC command language of the virtual switch, as pure functions: parsing with IOS
keyword abbreviations (``sh mls qos int gi1/0/1 stat``), case-insensitive keywords and interface
names (``gi1/0/1``, ``g1/0/1``, ``GigabitEthernet 1/0/1``), the caret under the first token that
does not fit, ambiguity (``% Ambiguous command``), and the output modifiers ``| include``,
``| exclude``, ``| begin``, ``| section``, ``| count``.

:func:`parse_exec` turns a line into an :class:`ExecCommand` (a command name from the dialect's
:class:`ExecTable` and its arguments: each dialect has its own table, the IOS family's in
:mod:`qoslab.vswitch.dialects.ioscommon.commands`); the caller (the virtual switch's session)
runs it and passes the output through :func:`apply_modifier`. Nothing here touches the switch
state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..ios.grammar import IosError
from ..ios.names import merge_port_tokens, parse_port


@dataclass(frozen=True)
class ExecTable:
    """A dialect's EXEC command language: ``commands`` = name -> token specs (literals may be
    abbreviated; ``{port}`` an interface (one token or two, ``gi 1/0/1``), ``{word}`` a name,
    ``{n:A-B}`` a number, ``{url}`` a file (``flash:x``, ``running-config`` ...), ``{rest}`` the
    rest of the line), and ``user_exec``, the names user EXEC (``>``, privilege level 1) may run
    (everything else needs ``enable``)."""

    commands: dict[str, str]
    user_exec: frozenset[str]

    @cached_property
    def specs(self) -> dict[str, tuple[str, ...]]:
        """Name -> the specs as tokens."""
        return {name: tuple(text.split()) for name, text in self.commands.items()}

    def without(self, *prefixes: str) -> ExecTable:
        """This table less the commands whose names start with one of ``prefixes``."""
        keep = {n: t for n, t in self.commands.items() if not n.startswith(prefixes)}
        return ExecTable(keep, frozenset(n for n in self.user_exec if n in keep))

    def plus(self, commands: dict[str, str], user_exec: frozenset[str] = frozenset()) -> ExecTable:
        """This table and ``commands`` (``user_exec`` of them user EXEC)."""
        return ExecTable({**self.commands, **commands}, self.user_exec | user_exec)


_URL = re.compile(r"^([a-z]+:[^\s]*|running-config|startup-config|[A-Za-z0-9_.\-/]+)$")
_MODIFIERS = ("include", "exclude", "begin", "section", "count")


@dataclass
class ExecCommand:
    """A parsed EXEC line: command name (a key of the :class:`ExecTable`), its arguments
    (``port``, ``word``, ``n``, ``url``, ``url2``, ``rest``) and the output modifier, if any
    (``("include", REGEX)``)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    modifier: tuple[str, str] | None = None
    columns: dict[str, int] = field(default_factory=dict)  # argument -> column of its token in the line


def _param(spec: str, tok: str) -> Any:
    kind = spec[1:-1].split(":")[0]
    if kind == "port":
        return parse_port(tok)
    if kind == "word":
        return tok if re.match(r"^[A-Za-z0-9_.\-]+$", tok) else None
    if kind == "n":
        lo, hi = (int(x) for x in spec[1:-1].split(":")[1].split("-"))
        return int(tok) if tok.isdigit() and lo <= int(tok) <= hi else None
    if kind in ("url", "url2"):
        return tok if _URL.match(tok) else None
    return tok


Specs = dict[str, tuple[str, ...]]


def _step(alive: Specs, i: int, tok: str, line: str, col: int) -> tuple[Specs, dict[str, tuple[str, Any]]]:
    """Advance the candidate commands by one token; returns (alive, values per command)."""
    words = {s[i] for s in alive.values() if i < len(s) and not s[i].startswith("{")}
    low = tok.lower()
    exact = {w for w in words if w == low}
    pref = exact or {w for w in words if w.startswith(low)}
    if len(pref) > 1:
        raise IosError(line, col, "ambiguous")
    keep: Specs = {}
    vals: dict[str, tuple[str, Any]] = {}
    for name, s in alive.items():
        if i >= len(s):
            continue
        if not s[i].startswith("{"):
            if s[i] in pref:
                keep[name] = s
        elif not pref:
            v = _param(s[i], tok)
            if v is not None:
                keep[name], vals[name] = s, (s[i][1:-1].split(":")[0], v)
    return keep, vals


def parse_exec(line: str, table: ExecTable) -> ExecCommand:
    """Parse one EXEC line against a dialect's ``table``. Raises IosError (``invalid`` with the
    caret column in ``line``, ``incomplete``, or ``ambiguous``) as IOS would answer."""
    body, modifier = _split_modifier(line)
    toks = merge_port_tokens([(m.group(0), m.start()) for m in re.finditer(r"\S+", body)])
    if not toks:
        raise IosError(line, 0, "incomplete")
    alive = dict(table.specs)
    args: dict[str, dict[str, Any]] = {n: {} for n in alive}
    cols: dict[str, dict[str, int]] = {n: {} for n in alive}
    for i, (tok, col) in enumerate(toks):
        if "rest" in {s[i][1:-1] for s in alive.values() if i < len(s)}:
            rest = [n for n, s in alive.items() if i < len(s) and s[i] == "{rest}"]
            for n in rest:
                args[n]["rest"] = body[col:].strip()
            return ExecCommand(rest[0], args[rest[0]], modifier, cols[rest[0]])
        alive, vals = _step(alive, i, tok, line, col)
        if not alive:
            raise IosError(line, col)
        for n, (k, v) in vals.items():
            args[n][k], cols[n][k] = v, col
    done = [n for n, s in alive.items() if len(s) == len(toks)]
    if not done:
        raise IosError(line, len(line), "incomplete")
    return ExecCommand(done[0], args[done[0]], modifier, cols[done[0]])


def _split_modifier(line: str) -> tuple[str, tuple[str, str] | None]:
    """``show run | inc foo|bar`` -> (``show run``, (``include``, ``foo|bar``)). Raises IosError
    for an unknown modifier or a missing regular expression."""
    m = re.search(r"\s\|\s*", line)
    if not m:
        return line, None
    body, rest = line[:m.start()], line[m.end():]
    w = rest.split(None, 1)
    if not w:
        raise IosError(line, len(line), "incomplete")
    hits = [k for k in _MODIFIERS if k.startswith(w[0].lower())]
    if len(hits) != 1:
        raise IosError(line, m.end())
    if len(w) < 2 and hits[0] != "count":
        raise IosError(line, len(line), "incomplete")
    return body, (hits[0], w[1].strip() if len(w) > 1 else ".")


def apply_modifier(text: str, modifier: tuple[str, str] | None) -> str:
    """Filter command output as IOS does: ``include``/``exclude`` lines matching the regular
    expression, ``begin`` at the first match, ``section`` the top-level sections (a line and its
    indented children) with a matching line, ``count`` the number of matching lines."""
    if modifier is None:
        return text
    kind, regex = modifier
    try:
        rx = re.compile(regex)
    except re.error:
        return "% Invalid regular expression\n"
    lines = text.splitlines()
    if kind == "include":
        out = [l for l in lines if rx.search(l)]
    elif kind == "exclude":
        out = [l for l in lines if not rx.search(l)]
    elif kind == "begin":
        first = next((i for i, l in enumerate(lines) if rx.search(l)), len(lines))
        out = lines[first:]
    elif kind == "count":
        return f"Number of lines which match regexp = {sum(1 for l in lines if rx.search(l))}\n"
    else:
        out = []
        for sec in _sections(lines):
            if any(rx.search(l) for l in sec):
                out += sec
    return "\n".join(out) + ("\n" if out else "")


def _sections(lines: list[str]) -> list[list[str]]:
    secs: list[list[str]] = []
    for l in lines:
        if l.startswith(" ") and secs:
            secs[-1].append(l)
        elif l.strip() and not l.startswith("!"):
            secs.append([l])
    return secs
