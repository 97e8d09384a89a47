"""Several commands in one write on a Netmiko session, and their replies split at the prompts:
the session I/O both the switch backends (:mod:`.backends`: show commands) and the push
(:mod:`.push`: ``show running-config``, ``write memory``, its one-write config batch) use, below both."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def send_batch(conn: Any, commands: list[str], prompt: str, timeout_s: float) -> dict[str, str]:
    """Send ``commands`` in one write on a Netmiko session (``write_channel``/``read_channel``)
    whose privileged prompt is ``prompt`` and read until one prompt per command has come back;
    returns {command: output} (:func:`split_batch`). Stale output left on the session is read and
    dropped first. Raises TimeoutError after ``timeout_s`` (the caller drops the session)."""
    buf = write_and_read(conn, "".join(c + "\n" for c in commands),
                         lambda b: b.count(prompt) >= len(commands) and b.rstrip().endswith(prompt),
                         lambda b: f"{len(commands)} show commands: {b.count(prompt)} prompts", timeout_s)
    return split_batch(buf, commands, prompt)


def write_and_read(conn: Any, text: str, done: Callable[[str], bool], progress: Callable[[str], str],
                   timeout_s: float) -> str:
    """Write ``text`` in one write on a Netmiko session (stale output a late earlier reply left
    is read and dropped first) and read until ``done(what came back)``; returns what came back.
    Raises TimeoutError after ``timeout_s`` seconds, saying ``progress(what came back)`` (e.g.
    ``3 show commands: 1 prompts``) and the timeout."""
    conn.read_channel()
    conn.write_channel(text)
    buf, deadline = "", time.monotonic() + timeout_s
    while not done(buf):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{progress(buf)} after {timeout_s:g} s")
        chunk = conn.read_channel()
        buf += chunk
        if not chunk:
            time.sleep(0.002)
    return buf


def split_batch(text: str, commands: list[str], prompt: str) -> dict[str, str]:
    """The replies to ``commands`` sent in one write (pure): ``text`` cut at each ``prompt``, the
    i-th piece is the i-th command's output without the echoed command lines (the echo may come
    all at once before the first reply, as on the virtual switch, or one before each reply).
    Raises ValueError when fewer pieces than commands came back."""
    pieces = text.split(prompt)
    if len(pieces) <= len(commands):
        raise ValueError(f"{len(commands)} commands sent, {len(pieces) - 1} prompts came back")
    echo = {c.strip() for c in commands}
    out = {}
    for c, piece in zip(commands, pieces, strict=False):
        lines = [line for line in piece.replace("\r\n", "\n").split("\n") if line.strip() not in echo]
        out[c] = "\n".join(lines).strip("\n") + "\n"
    return out
