"""IOS configuration-file operations as pure functions of texts and running-configs:
``show archive config differences`` (contextual diff), ``show archive config incremental-diffs``
(what a merge would change), ``copy FILE running-config`` (merge with IOS errors), ``configure
replace`` (with ``revert trigger error``), and the ``copy`` summary line. NAPALM's ``ios`` driver
uses exactly these (see switch-configs/README.md, "Clients").
"""

from __future__ import annotations

from typing import Any

from ..ios.config import Mode, RunningConfig
from ..ios.grammar import IosError
from ..ios.interpret import interpret, load_config


def copied(nbytes: int, seconds: float = 0.05) -> str:
    """The IOS ``copy`` summary line."""
    return f"{nbytes} bytes copied in {seconds:.3f} secs ({int(nbytes / max(seconds, 1e-3))} bytes/sec)\n"


# --------------------------------------------------------------------------------------- config ops
def _tree(text: str) -> dict[str, Any]:
    """Config text -> {top-level line: {child line: {grandchild: {}}}}; repeated headers merge."""
    root: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for raw in text.splitlines():
        line = raw.rstrip()
        s = line.strip()
        if not s or s.startswith(("!", "Building configuration", "Current configuration")) or s == "end":
            continue
        ind = len(line) - len(line.lstrip())
        while stack[-1][0] >= ind:
            stack.pop()
        node = stack[-1][1].setdefault(s, {})
        stack.append((ind, node))
    return root


def _diff(a: dict[str, Any], b: dict[str, Any], depth: int) -> list[str]:
    pad = " " * depth
    out = []
    for k, sub in b.items():
        if k not in a:
            out.append(f"{pad}+{k}")
            out += _all(sub, depth + 1, "+")
        else:
            inner = _diff(a[k], sub, depth + 1)
            if inner:
                out += [f"{pad}{k}"] + inner
    for k, sub in a.items():
        if k not in b:
            out.append(f"{pad}-{k}")
            out += _all(sub, depth + 1, "-")
    return out


def _all(t: dict[str, Any], depth: int, sign: str) -> list[str]:
    out = []
    for k, sub in t.items():
        out.append(f"{' ' * depth}{sign}{k}")
        out += _all(sub, depth + 1, sign)
    return out


def canonical(text: str, factory: RunningConfig) -> tuple[str, list[IosError]]:
    """``text`` loaded onto a copy of ``factory`` and rendered as ``show running-config`` would,
    with the errors of its invalid lines. Pure."""
    rc = factory.copy()
    errors = load_config(text, rc)
    return rc.render(), errors


def config_differences(base: str, new: str, factory: RunningConfig) -> str:
    """``show archive config differences BASE NEW``: contextual diff of two configurations (both
    read as IOS would load them; invalid lines of NEW show as additions). Pure."""
    a, _ = canonical(base, factory)
    b, errors = canonical(new, factory)
    lines = _diff(_tree(a), _tree(b), 0) + [f"+{e.line.split(': ', 1)[-1]}" for e in errors]
    if not lines:
        return "!Contextual Config Diffs:\n!No changes were found\n"
    return "!Contextual Config Diffs:\n" + "\n".join(lines) + "\n\n"


def incremental_diffs(running: RunningConfig, text: str) -> str:
    """``show archive config incremental-diffs FILE``: the lines of FILE (with their section
    header) that would change the running-config if merged. Pure (``running`` is not changed)."""
    rc = running.copy()
    mode = Mode()
    header = None
    changed: list[str] = []
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s.startswith("!") or s.startswith(("Building configuration", "Current configuration")):
            continue
        if s == "end":
            break
        before = rc.render()
        try:
            mode = interpret(rc, mode, s)
        except IosError as e:
            if e.kind == "message" and _present(before, header if raw.startswith(" ") else None, s):
                continue  # refused because it is there already (an access-list entry's number): no change
            lead = " " if raw.startswith(" ") else ""
            changed += ([header] if header and header not in changed else []) + [lead + s]
            continue
        if not raw.startswith(" "):
            header = s
        if rc.render() != before:
            if raw.startswith(" ") and header and header not in changed:
                changed.append(header)
            changed.append((" " if raw.startswith(" ") else "") + s)
        if mode.name == "exec":
            mode = Mode()
    out = "!List of Commands:\n" + "".join(f"{l}\n" for l in changed) + "end\n"
    return out if changed else out + "!No changes were found\n"


def _present(config: str, header: str | None, line: str) -> bool:
    """Whether ``line`` is in ``config`` (a running-config text): in the section ``header`` when
    given, else as a global line."""
    section = None
    for raw in config.splitlines():
        if not raw.startswith(" "):
            section = raw.strip()
        if raw.strip() == line and (section == header if header else not raw.startswith(" ")):
            return True
    return False


def merge(running: RunningConfig, text: str, prompt: str = "") -> str:
    """``copy FILE running-config``: apply ``text`` to ``running`` (mutated) line by line; the
    output has the IOS error of each rejected line, then the copy summary."""
    errors = load_config(text, running)
    out = ""
    for e in errors:
        line = e.line.split(": ", 1)[-1]
        out += f"{prompt}{line}\n" + e.render(len(prompt))
    return out + copied(len(text.encode()))


def replace(running: RunningConfig, text: str, factory: RunningConfig, options: str = "") -> tuple[RunningConfig, str]:
    """``configure replace FILE [force] [revert trigger error]``: the new running-config and the
    output. With ``revert trigger error`` an invalid line keeps ``running`` and says so as IOS
    does ("The original configuration has been successfully restored")."""
    new = factory.copy()
    errors = load_config(text, new)
    report = "".join(f"{e.line}\n{e.render(0)}" for e in errors)
    if errors and "revert" in options:
        return running, (report + "Rollback aborted: the configuration had errors.\n"
                         "The original configuration has been successfully restored.\n")
    return new, report + "Total number of passes: 1\nRollback Done\n\n"
