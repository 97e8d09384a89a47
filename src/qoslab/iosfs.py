"""The virtual Catalyst's ``flash:`` file system and the IOS configuration-file operations that
NAPALM's ``ios`` driver (and people) use: ``dir``, ``more``, ``verify /md5``, ``delete``,
``copy`` between ``running-config``/``startup-config``/``flash:``/``null:``,
``show archive config differences`` / ``incremental-diffs``, ``configure replace``; and the SCP
server side (an asyncssh SFTP server confined to the flash directory, used for ``scp -t``).

:class:`Flash` keeps files in a directory (``/run/qoslab/vswitch-NAME/flash``). The config
operations are pure functions of texts and :class:`~qoslab.ios.RunningConfig` objects.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from .ios import IosError, Mode, RunningConfig, interpret, load_config
from .iosshow_sys import FileEntry, render_dir

#: ``dir flash:`` of a WS-C3750G-24T (32 MB flash): "32514048 bytes total"
FLASH_BYTES = 32514048
_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,63}$")


class Flash:
    """``flash:`` in directory ``root``: flat file names (letters, digits, ``_.-``)."""

    def __init__(self, root: Path):
        self.root = root

    def path(self, url: str) -> Path | None:
        """The file of ``flash:NAME`` / ``flash:/NAME``; None for another file system or a bad name."""
        m = re.match(r"^flash:/?(.*)$", url)
        if not m or not _NAME.match(m.group(1)) or m.group(1) in (".", ".."):
            return None
        return self.root / m.group(1)

    def entries(self) -> list[FileEntry]:
        self.root.mkdir(parents=True, exist_ok=True)
        return [FileEntry(p.name, p.stat().st_size, p.stat().st_mtime) for p in sorted(self.root.iterdir())
                if p.is_file() and not p.name.startswith(".")]

    def dir(self, url: str | None) -> str:
        """``dir [flash:[/NAME]]`` output, or the IOS error for a missing file / other file system."""
        entries = self.entries()
        used = sum(e.size for e in entries)
        if url in (None, "flash:", "flash:/"):
            return render_dir("flash:", entries, FLASH_BYTES)
        p = self.path(url)
        if p is None:
            return f"%Error opening {url} (Invalid argument)\n" if url.startswith("flash:") else \
                f"%Error opening {url} (No such device)\n"
        hit = [e for e in entries if e.name == p.name]
        if not hit:
            return f"%Error opening flash:/{p.name} (No such file or directory)\n"
        return render_dir("flash:", hit, FLASH_BYTES, p.name, used)

    def read(self, url: str) -> str | None:
        p = self.path(url)
        return p.read_text() if p is not None and p.is_file() else None

    def write(self, url: str, text: str) -> bool:
        """Write a file atomically; False if ``url`` is not a flash: file name."""
        p = self.path(url)
        if p is None:
            return False
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp")
        tmp.write_text(text)
        os.replace(tmp, p)
        return True

    def delete(self, url: str) -> str:
        p = self.path(url)
        if p is None or not p.is_file():
            return f"%Error deleting {url} (No such file or directory)\n"
        p.unlink()
        return ""

    def md5(self, url: str) -> str:
        """``verify /md5 URL`` output (``verify /md5 (URL) = HEX`` as netmiko's process_md5 reads it)."""
        p = self.path(url)
        if p is None or not p.is_file():
            return f"%Error opening {url} (No such file or directory)\n"
        digest = hashlib.md5(p.read_bytes()).hexdigest()
        return f"{'.' * 20}Done!\nverify /md5 ({url}) = {digest}\n\n"


def copied(nbytes: int, seconds: float = 0.05) -> str:
    """The IOS ``copy`` summary line."""
    return f"{nbytes} bytes copied in {seconds:.3f} secs ({int(nbytes / max(seconds, 1e-3))} bytes/sec)\n"


# --------------------------------------------------------------------------------------- config ops
def _tree(text: str) -> dict[str, dict]:
    """Config text -> {top-level line: {child line: {grandchild: {}}}}; repeated headers merge."""
    root: dict[str, dict] = {}
    stack: list[tuple[int, dict]] = [(-1, root)]
    for raw in text.splitlines():
        line = raw.rstrip()
        s = line.strip()
        if not s or s.startswith("!") or s == "end" or s.startswith(("Building configuration", "Current configuration")):
            continue
        ind = len(line) - len(line.lstrip())
        while stack[-1][0] >= ind:
            stack.pop()
        node = stack[-1][1].setdefault(s, {})
        stack.append((ind, node))
    return root


def _diff(a: dict, b: dict, depth: int) -> list[str]:
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


def _all(t: dict, depth: int, sign: str) -> list[str]:
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
        except IosError:
            changed += ([header] if header and header not in changed else []) + [(" " if raw.startswith(" ") else "") + s]
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
