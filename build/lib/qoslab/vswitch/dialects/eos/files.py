"""The virtual EOS switch's ``copy`` and ``configure replace`` between ``running-config``,
``startup-config`` and ``flash:`` files (the switch's state folder), as NAPALM's ``eos`` driver
uses them: ``copy startup-config flash:rollback-0`` before a commit, ``configure replace
flash:rollback-0`` to roll back (EOS User Manual, "File Management" and "configure replace").
EOS answers a completed copy with ``Copy completed successfully.``."""

from __future__ import annotations

from typing import Any

from ...flash import Flash

DONE = "Copy completed successfully.\n"
_RUNNING = ("running-config", "system:/running-config", "system:running-config")
_STARTUP = ("startup-config", "flash:/startup-config", "flash:startup-config")


def _flash(sw: Any) -> Flash:
    return Flash(sw.dir / "flash", sw.dir / "startup-config", sw.booted)


def read(sw: Any, url: str) -> str | None:
    """The text at ``url`` (``running-config``, ``startup-config``, ``flash:NAME``); None if none.
    A switch that was never saved has the factory configuration as its startup-config."""
    if url in _RUNNING:
        return str(sw.running.render())
    if url in _STARTUP:  # never written: the factory configuration the switch booted with
        p = sw.dir / "startup-config"
        return p.read_text() if p.exists() else str(sw.factory().render())
    return _flash(sw).read(url) if url.startswith("flash:") else None


def copy(sw: Any, src: str, dst: str) -> str:
    """``copy SRC DST``: the switch's answer (a merge into the running-config is not applied to
    the data path here: the session does that)."""
    text = read(sw, src)
    if text is None:
        return f"% Error copying {src} to {dst} (No such file or directory)\n"
    if dst in _RUNNING:
        errors = sw.dialect.load(text, sw.running)
        return "".join(f"% {e}\n" for e in errors[:5]) + DONE
    if dst in _STARTUP:
        if src in _RUNNING:
            sw.save()
        else:
            (sw.dir / "startup-config").write_text(text)
        return DONE
    if not dst.startswith("flash:") or not _flash(sw).write(dst, text):
        return f"% Error copying {src} to {dst} (Invalid destination)\n"
    return DONE


def replace_config(sw: Any, url: str) -> str:
    """``configure replace URL``: the running-config becomes the file's (from factory defaults);
    nothing changes when the file is missing or has a line EOS refuses."""
    text = read(sw, url)
    if text is None:
        return f"% Error opening {url} (No such file or directory)\n"
    new = sw.factory()
    errors = sw.dialect.load(text, new)
    if errors:
        return f"% Configuration replace failed: {errors[0]}\n"
    sw.running = new
    return ""
