"""The console and vty lines (pure apart from mutating the config they are given), registered
into :mod:`.interpret` when :mod:`qoslab.ios` is imported: ``line con 0``, ``line vty 0 4``
(``line vty 0 15`` configures every section the range covers, as IOS does) enter
``(config-line)``, where ``access-class NAME in|out``, ``login [local]``, ``transport
input|output``, ``exec-timeout``, ``logging synchronous``, ``privilege level``, ``length``,
``width``, ``stopbits`` and ``password`` are kept per section (:attr:`RunningConfig.lines`),
printed in IOS's order (:data:`qoslab.ios.config.LINE_ORDER`). Sources: Catalyst 3750 command
reference 12.2(55)SE and the IOS Configuration Fundamentals command reference, ``line``,
``access-class``; the Catalyst 3750 Software Configuration Guide, "Controlling Switch Access".
"""

from __future__ import annotations

from .config import Mode, RunningConfig
from .grammar import GLOBAL, IosError
from .interpret import HANDLERS, Ctx


def _line_sections(rc: RunningConfig, kind: str, first: int, last: int) -> list[str]:
    """The ``line`` sections of ``kind`` whose line numbers overlap ``first``-``last``."""
    out = []
    for header in rc.lines:
        w = header.split()
        lo, hi = int(w[2]), int(w[3]) if len(w) > 3 else int(w[2])
        if w[1] == kind and lo <= last and first <= hi:
            out.append(header)
    return out


def _line(c: Ctx) -> Mode:
    """``line con 0`` / ``line vty 0 4``: enter (config-line) for the sections the range covers
    (``line vty 0 15`` on a switch with ``0 4`` and ``5 15`` configures both, as IOS does; a range
    that covers none is a new section). ``no line vty 5 15`` removes that section."""
    if "first" not in c.vals:
        raise IosError(c.line, len(c.line), "incomplete")
    kind = {"console": "con"}.get(c.vals["kind"], c.vals["kind"])
    first = c.vals.get("first", 0)
    last = c.vals.get("last", first)
    if last < first:
        raise IosError(c.line, c.body[-1][1])
    header = f"line {kind} {first}" + (f" {last}" if last != first else "")
    if c.negate:
        if header in c.rc.lines and header not in ("line con 0", "line vty 0 4"):
            del c.rc.lines[header]
        return Mode(GLOBAL)
    if not _line_sections(c.rc, kind, first, last):
        c.rc.lines[header] = []
    return Mode("config-line", f"{kind} {first} {last}")


def _line_key(words: list[str]) -> str:
    """Identity of a line setting: ``access-class in|out`` by direction, ``login [local]``, the
    two transport directions, else the setting's keywords."""
    if words[0] == "access-class":
        return f"access-class {words[-1]}"
    if words[0] in ("transport", "privilege"):
        return " ".join(words[:2])
    return words[0] if words[0] != "logging" else "logging synchronous"


def _line_cfg(c: Ctx) -> Mode:
    assert c.mode.target is not None
    kind, first, last = c.mode.target.split()
    key = _line_key(c.words)
    for header in _line_sections(c.rc, kind, int(first), int(last)):
        children = c.rc.lines[header]
        children[:] = [x for x in children if _line_key(x.split()) != key]
        if not c.negate:
            children.append(c.text)
    return c.mode


HANDLERS.update({"line": _line, "line-cfg": _line_cfg})
