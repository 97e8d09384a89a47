"""Starting the embedded Slurm cluster's daemons (:mod:`.slurm`, :mod:`.slurmdb`): spawn one in
the background with its output in a log, wait until it is ready, read its PID back from its pid
file, and run a command in a host's network namespace under a host name of its own."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import QoslabError
from ..testbedplan import NETNS_DIR, host_namespace
from ..topology import Topology
from .procs import cmdline, pid_alive


def spawn(argv: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a session of its own, stdin closed, stdout and stderr appended to ``log``,
    ``env`` over this process's environment."""
    with open(log, "ab") as f:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=f, stderr=f, start_new_session=True,
                                env={**os.environ, **env})


def in_namespace(topo: Topology, host: str, argv: list[str]) -> list[str]:
    """``argv`` in ``host``'s network namespace, in this machine's mount namespace (``nsenter
    --net``: ``ip netns exec`` would remount /sys, which slurmd's cgroup plugin needs)."""
    return ["nsenter", f"--net={NETNS_DIR / host_namespace(topo.name, host)}", *argv]


def in_node(topo: Topology, host: str, name: str, argv: list[str]) -> list[str]:
    """``argv`` in ``host``'s network namespace under the host name ``name`` (a UTS namespace of its
    own: Slurm finds its node by the host name)."""
    return in_namespace(topo, host, ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', name, *argv])


def tail(path: Path) -> str:
    """The last two non-empty lines of ``path``, joined by `` / `` (at most 300 characters)."""
    try:
        lines = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no output"
    return " / ".join(lines[-2:])[:300] or "no output"


def pid_of(path: Path, marker: str) -> int | None:
    """PID from a pid file when that process runs and its command line holds ``marker``."""
    try:
        pid = int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if pid_alive(pid) and any(marker in c for c in cmdline(pid)) else None


def running(path: Path, marker: str) -> Callable[[], bool]:
    """A readiness check for :func:`await_ready`: the pid file ``path`` names a running process
    whose command line holds ``marker``."""
    return lambda: pid_of(path, marker) is not None


def await_ready(ready: Callable[[], bool], proc: subprocess.Popen[bytes], what: str, log: Path,
                deadline: float) -> None:
    """Poll ``ready`` every 50 ms until it is true. Raises QoslabError naming ``what`` with the last
    lines of ``log`` when ``proc`` exits first or ``deadline`` (``time.monotonic()``) passes; a
    ``proc`` still running then is killed first (it has written no pid file the clean-up could
    find it by; ``nsenter``, ``unshare`` and ``sh -c 'exec ...'`` keep its PID the daemon's)."""
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
            raise QoslabError(f"{what} did not start: {tail(log)}")
        time.sleep(0.05)
