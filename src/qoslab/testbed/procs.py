"""Processes on this machine, found and ended by PID (never by name).

Used by the testbed (end what lives in its namespaces before deleting them) and by campaigns
(end what an interrupted run left in the hosts). Everything reads /proc directly.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from ..testbedplan import NETNS_DIR


def list_namespaces() -> list[str]:
    """Names of all named network namespaces on this machine (``ip netns list``), sorted."""
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir())
    except FileNotFoundError:
        return []


def _netns_inode(ns: str) -> int | None:
    try:
        return (NETNS_DIR / ns).stat().st_ino
    except OSError:
        return None


def namespace_pids(namespaces: list[str]) -> dict[str, list[int]]:
    """PIDs of the processes living in each namespace (what ``ip netns pids`` reports, for all
    namespaces in one pass over /proc). Namespaces that do not exist map to ``[]``."""
    inodes = {ino: ns for ns in namespaces if (ino := _netns_inode(ns)) is not None}
    out: dict[str, list[int]] = {ns: [] for ns in namespaces}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            ino = os.stat(f"/proc/{entry.name}/ns/net").st_ino
        except OSError:
            continue
        if ino in inodes:
            out[inodes[ino]].append(int(entry.name))
    return out


def pid_alive(pid: int) -> bool:
    """True when ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def kill_pids(pids: list[int], grace_s: float = 2.0) -> list[int]:
    """SIGTERM each PID, SIGKILL what is left after ``grace_s`` seconds; returns the PIDs
    signalled (those that still existed)."""
    sent = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            sent.append(pid)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    alive = list(sent)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if pid_alive(p)]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return sent


def pids_by_comm(match: Callable[[str], bool], proc: Path = Path("/proc")) -> list[int]:
    """PIDs of this machine's processes (every namespace) whose name (``/proc/PID/comm``) ``match``
    accepts, in PID order; one that ends while it is read is left out."""
    out = []
    for e in os.scandir(proc):
        if not e.name.isdigit():
            continue
        try:
            comm = (proc / e.name / "comm").read_text().strip()
        except OSError:
            continue
        if match(comm):
            out.append(int(e.name))
    return sorted(out)


def cmdline(pid: int) -> list[str]:
    """The argv of ``pid`` ([] when it is gone or unreadable)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def environ_marked(pid: int, markers: dict[str, frozenset[str] | None]) -> bool:
    """True when the environment ``pid`` was started with (``/proc/PID/environ``) holds one of
    ``markers``: variable name -> the values that count (None: any value). False when the process
    is gone or its environment unreadable (another user's, without root)."""
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    for entry in raw.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and name.decode(errors="replace") in markers:
            want = markers[name.decode(errors="replace")]
            if want is None or value.decode(errors="replace") in want:
                return True
    return False


def cpu_ticks(pid: int) -> int | None:
    """utime + stime of ``pid`` in clock ticks (``os.sysconf("SC_CLK_TCK")`` per second), or None
    when it is gone."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])
    except (OSError, IndexError, ValueError):
        return None


def children(pid: int) -> list[int]:
    """PIDs whose parent is ``pid`` (one pass over /proc)."""
    out = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == pid:
                out.append(int(entry.name))
    return out


def tree_cpu_ticks(pid: int) -> int:
    """utime + stime (clock ticks) of ``pid`` and of its living descendants: a process started
    with a lifetime runs under GNU ``timeout``, whose child does the work. 0 when all are gone."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += cpu_ticks(p) or 0
        todo += children(p)
    return total


def descendants(pid: int) -> list[int]:
    """``pid`` and all its descendants alive now (from /proc/PID/task/TID/children), parents first.
    A process started with a lifetime runs under GNU ``timeout``: the real command is its child."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        out.append(p)
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                todo += [int(c) for c in Path(f"/proc/{p}/task/{tid}/children").read_text().split()]
            except (OSError, ValueError):
                pass
    return out
