"""The EOS command grammar engine (pure): command templates matched word by word, keywords
abbreviated to any unambiguous prefix, and EOS's three error kinds.

A template is a spec such as ``qos map dscp {dscps:dscp+} to traffic-class {tc:0-7}``: literal
keywords, and ``{name:type}`` slots (``type+``: one or more). Types: ``LO-HI`` (an integer in
range), ``word`` (a name), ``iface`` (an interface, :func:`qoslab.eos.names.interface_name`; one
word or two: ``ethernet 1``), ``dscp`` (0-63 or a name: ``ef``, ``af41``, ``cs5``), ``ip``,
``prefix`` (``A.B.C.D/N``), ``rest`` (the rest of the line, one word or more), ``a|b|c`` (one of
these keywords, abbreviable).

What EOS prints for a line it does not take (EOS User Manual, "Command-Line Interface":
"% Invalid input", "% Incomplete command", "% Ambiguous command"; EOS 4.2x and later name the
token, counted from 0): ``% Invalid input (at token 2: 'foo')``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..ios.grammar import dscp_value
from .names import interface_name


@dataclass
class EosError(Exception):
    """A line EOS does not take: ``kind`` is ``invalid`` | ``incomplete`` | ``ambiguous`` |
    ``duplicate`` (an access list's sequence number) | ``message`` (EOS's sentence in ``word``);
    ``token`` the 0-based index of the word at fault, ``word`` that word."""

    line: str
    kind: str = "invalid"
    token: int = 0
    word: str = ""

    def render(self) -> str:
        """EOS's error text (one line, newline-terminated)."""
        if self.kind == "incomplete":
            return "% Incomplete command\n"
        if self.kind == "ambiguous":
            return "% Ambiguous command\n"
        if self.kind == "duplicate":
            return "% Duplicate sequence number\n"
        if self.kind == "message":  # EOS's own sentence, in ``word``
            return f"% {self.word}\n"
        return f"% Invalid input (at token {self.token}: '{self.word}')\n"

    def __str__(self) -> str:
        return f"{self.render().strip()}: {self.line.strip()!r}"


def _is_ip(s: str) -> bool:
    try:
        ipaddress.IPv4Address(s)
    except ValueError:
        return False
    return True


def _prefix(s: str) -> str | None:
    try:
        return str(ipaddress.IPv4Network(s, strict=False)) if "/" in s else None
    except ValueError:
        return None


_WORD = re.compile(r"^[A-Za-z0-9_.:/@-]{1,100}$")
_TYPES: dict[str, Callable[[str], Any]] = {
    "word": lambda s: s if _WORD.match(s) else None,
    "dscp": dscp_value,
    "ip": lambda s: s if _is_ip(s) else None,
    "prefix": _prefix,
}


@dataclass(frozen=True)
class Slot:
    """One position of a template: a keyword (``name`` empty) or a typed value."""

    keyword: str = ""
    name: str = ""
    kind: str = ""
    repeat: bool = False

    def value(self, word: str) -> Any:
        """The slot's value of ``word`` (None when it does not fit; keyword slots: see _keyword)."""
        if re.fullmatch(r"\d+-\d+", self.kind):
            lo, hi = (int(x) for x in self.kind.split("-"))
            return int(word) if word.isdigit() and lo <= int(word) <= hi else None
        if "|" in self.kind:
            hits = [k for k in self.kind.split("|") if k.startswith(word.lower())]
            return word.lower() if word.lower() in self.kind.split("|") else (hits[0] if len(hits) == 1 else None)
        return _TYPES[self.kind](word)


def _parse_spec(spec: str) -> tuple[Slot, ...]:
    out = []
    for part in spec.split():
        m = re.fullmatch(r"\{(\w+):([^}]+?)(\+?)\}", part)
        out.append(Slot(name=m.group(1), kind=m.group(2), repeat=bool(m.group(3))) if m else Slot(keyword=part))
    return tuple(out)


@dataclass(frozen=True)
class Template:
    """A command: its spec, the action its handler is found by, the mode it enters (or ''), and
    how many words its ``no`` form needs at least (default: its leading keywords)."""

    spec: str
    action: str
    enters: str = ""
    neg: int = -1
    slots: tuple[Slot, ...] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "slots", _parse_spec(self.spec))

    @property
    def n_keywords(self) -> int:
        """The words a ``no`` form must give at least: ``neg``, else the leading keywords."""
        if self.neg >= 0:
            return self.neg
        return next((i for i, s in enumerate(self.slots) if not s.keyword), len(self.slots))


@dataclass
class Match:
    """A template that took the line: the template, its slot values, exact keyword use, fault."""

    template: Template
    values: dict[str, Any]
    exact: bool


def _keyword(slot: Slot, word: str) -> tuple[bool, bool]:
    """(fits, exactly): a keyword fits a non-empty prefix of itself, any case."""
    w = word.lower()
    return slot.keyword.startswith(w) and bool(w), slot.keyword == w


def _iface(words: list[str], i: int) -> tuple[str | None, int]:
    """An interface at words[i] (one word, or a type and a number): (name, words used)."""
    if (name := interface_name(words[i])) is not None:
        return name, 1
    if i + 1 < len(words) and words[i + 1][:1].isdigit() and (name := interface_name(words[i] + words[i + 1])):
        return name, 2
    return None, 1


def _try(t: Template, words: list[str], negated: bool) -> tuple[Match | None, int, bool]:
    """Match ``words`` against ``t``: (match or None, index of the word at fault, incomplete)."""
    values: dict[str, Any] = {}
    exact, i = True, 0
    for si, slot in enumerate(t.slots):
        if i >= len(words):
            if negated and si >= t.n_keywords:
                return Match(t, values, exact), i, False
            return None, i, True
        if slot.keyword:
            fits, ex = _keyword(slot, words[i])
            if not fits:
                return None, i, False
            exact, i = exact and ex, i + 1
        elif slot.kind == "rest":
            values[slot.name] = " ".join(words[i:])
            i = len(words)
        elif slot.kind == "iface":
            name, used = _iface(words, i)
            if name is None:
                return None, i, False
            values[slot.name], i = name, i + used
        else:
            got = []
            while i < len(words) and (v := slot.value(words[i])) is not None:
                got.append(v)
                i += 1
                if not slot.repeat:
                    break
            if not got:
                return None, i, False
            values[slot.name] = got if slot.repeat else got[0]
    if i < len(words):
        return None, i, False
    return Match(t, values, exact), i, False


def _ambiguous(templates: list[Template], words: list[str]) -> bool:
    """Whether an abbreviated keyword fits two different keywords at its place (``sh`` in
    interface mode: ``shutdown``, ``shape``), counting the templates whose words so far are all
    keywords that fit."""
    for i, w in enumerate(words):
        kws = {t.slots[i].keyword for t in templates
               if len(t.slots) > i and all(t.slots[j].keyword and _keyword(t.slots[j], words[j])[0]
                                           for j in range(i + 1))}
        if len(kws) > 1 and w.lower() not in kws:
            return True
        if not kws:
            return False
    return False


def match(templates: list[Template], line: str) -> tuple[Match, bool]:
    """The template ``line`` matches among ``templates`` and whether the line was negated (``no``
    or ``default`` first). Raises EosError (invalid at the furthest word any template reached,
    incomplete, or ambiguous when abbreviations fit two different commands)."""
    words = line.split()
    negated = bool(words) and words[0].lower() in ("no", "default")
    body = words[1:] if negated else words
    found: list[Match] = []
    fault, incomplete = -1, False
    for t in templates:
        m, at, inc = _try(t, body, negated)
        if m is not None:
            found.append(m)
        elif at > fault or (at == fault and inc):
            fault, incomplete = at, inc
    if found and not all(m.exact for m in found) and _ambiguous(templates, body):
        raise EosError(line, "ambiguous")
    if len(found) == 1:
        return found[0], negated
    if found:
        exact = [m for m in found if m.exact]
        if exact:
            return exact[0], negated
        raise EosError(line, "ambiguous")
    if not body or incomplete:
        raise EosError(line, "incomplete")
    token = fault + (1 if negated else 0)
    raise EosError(line, "invalid", token, words[min(token, len(words) - 1)])
