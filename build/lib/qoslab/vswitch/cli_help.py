"""IOS context help (``?``) over the virtual Catalyst's command specs, as pure functions.

Cisco IOS Configuration Fundamentals Configuration Guide 12.2, "Using the Cisco IOS Command-Line
Interface", Getting Help: ``abbreviated-command-entry?`` lists the commands that begin with those
characters on one line; ``command ?`` lists the keywords or arguments that may follow, one a line
(``<1-66>`` a number range, ``WORD`` a name, ``LINE`` the rest of the line, ``<cr>`` when the
command may end there); nothing fits: ``% Unrecognized command``. qoslab knows no descriptions,
so the second column IOS prints is left empty.
"""

from __future__ import annotations

import re

from ..ios.names import parse_port

Specs = list[tuple[str, ...]]


def _kind(spec: str) -> str:
    inner = spec[1:-1]
    return inner.split(":", 1)[1] if ":" in inner else inner


def _fits(spec: str, tok: str, partial: bool = False) -> bool:
    """Whether ``tok`` (complete, or the start of a word when ``partial``) fits ``spec``."""
    low = tok.lower()
    if not spec.startswith("{"):
        return any(c.startswith(low) for c in spec.split("|"))
    kind = _kind(spec)
    if "|" in kind:
        return any(c.startswith(low) for c in kind.split("|"))
    m = re.fullmatch(r"(\d+)-(\d+)", kind)
    if m:
        return tok.isdigit() and (partial or int(m.group(1)) <= int(tok) <= int(m.group(2)))
    if kind == "port" and not partial:
        return parse_port(tok) is not None
    return True


def _shown(spec: str) -> list[str]:
    """How IOS names what may come at ``spec``: keywords as they are, ``<A-B>``, ``WORD``, ``LINE``."""
    if not spec.startswith("{"):
        return spec.split("|")
    kind = _kind(spec)
    if "|" in kind:
        return kind.split("|")
    if re.fullmatch(r"\d+-\d+", kind):
        return [f"<{kind}>"]
    return {"rest": ["LINE"], "port": ["GigabitEthernet"], "ip": ["A.B.C.D"]}.get(kind, ["WORD"])


def _at(spec: tuple[str, ...], i: int, repeat: int) -> str | None:
    """The spec of token ``i`` (the last spec repeats ``repeat`` times)."""
    if i < len(spec):
        return spec[i]
    return spec[-1] if i < len(spec) + repeat - 1 else None


def context_help(line: str, specs: list[tuple[tuple[str, ...], int]], modifiers: bool = False) -> str:
    """The answer to ``line?`` over ``specs`` ((token specs, repeat) of each command);
    ``modifiers``: a complete command may take ``| ...`` (show commands)."""
    words = line.split()
    partial = bool(line) and not line[-1].isspace()
    done = words[:-1] if partial else words
    alive = [(s, r) for s, r in specs
             if all((sp := _at(s, i, r)) is not None and _fits(sp, w) for i, w in enumerate(done))]
    if partial:
        return _completions(words[-1], [sp for s, r in alive if (sp := _at(s, len(done), r)) is not None])
    nxt = sorted({w for s, r in alive if (sp := _at(s, len(done), r)) is not None for w in _shown(sp)})
    ends = any(len(done) >= len(s) for s, _ in alive) and bool(done)
    if not nxt and not ends:
        return "% Unrecognized command\n"
    out = [f"  {w}" for w in nxt]
    if ends and modifiers and done and done[0].lower().startswith("sh"):
        out.append("  |                    Output modifiers")
    if ends:
        out.append("  <cr>")
    return "\n".join(out) + "\n\n"


def _completions(start: str, specs: list[str]) -> str:
    """``abbreviation?``: what at these specs begins with ``start``, on one line."""
    got: set[str] = set()
    for sp in specs:
        if sp.startswith("{") and "|" not in _kind(sp):
            if _fits(sp, start, True):
                got.update(_shown(sp))
        else:
            got.update(w for w in _shown(sp) if w.startswith(start.lower()))
    return "  ".join(sorted(got)) + "  \n\n" if got else "% Unrecognized command\n"
