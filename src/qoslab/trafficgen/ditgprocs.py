"""D-ITG's processes as this machine and a node see them: a started process's own PIDs, the tail
of its log, every ITGSend/ITGRecv/ITGDec running here (leak checks)."""

from __future__ import annotations

from pathlib import Path

from ..executors import BackgroundProcess, Executor
from ..testbed.procs import pids_by_comm


def own_pids(ex: Executor, proc: BackgroundProcess) -> set[int]:
    """``proc``'s PID and its children's on its node (a process started with a lifetime runs
    under ``timeout``, whose child is the real command)."""
    r = ex.run(["ps", "-o", "pid=", "--ppid", str(proc.pid)], check=False, timeout=5)
    return {proc.pid} | {int(x) for x in r.stdout.split() if x.isdigit()}


def tail(path: Path, n: int = 2) -> str:
    """The last ``n`` non-empty lines of a log file joined with `` / `` (at most 300 characters),
    or ``no output``."""
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no output"
    return " / ".join(lines[-n:])[:300] or "no output"


def ditg_pids() -> list[int]:
    """PIDs of running ITGSend/ITGRecv/ITGDec processes on this machine (for leak checks)."""
    return pids_by_comm(lambda comm: comm in ("ITGSend", "ITGRecv", "ITGDec"))
