"""A trial's processes tracked by cgroup v2: a directory per trial under a qoslab cgroup, so a
process that detaches from its parent (a daemon: Open MPI's ``orted``, a double fork) is still
found and ended when the trial ends, and ``campaign status`` can list what a finished trial left.

Layout (under the machine's cgroup v2 mount, found in /proc/self/mounts: ``/sys/fs/cgroup`` on a
unified host, ``/sys/fs/cgroup/unified`` on a hybrid one such as this machine's, whose systemd is
not running, so ``systemd-run --scope`` is not available)::

    qoslab/CAMPAIGN-HASH/trial-IDX    every process the executors start during trial IDX
    qoslab/CAMPAIGN-HASH/pool         the campaign's kept workers (moved there at the trial's end)

(``CAMPAIGN`` the folder's name, ``HASH`` the first 10 hex digits of the SHA-1 of its absolute
path.) Processes join in the child between fork and exec (:func:`join_in_child`, called by the
local executors' ``preexec_fn``): no window in which a fork escapes. A cgroup is only a tracking
device here: no controller is enabled and no limit set. Without a writable cgroup v2 mount
(:func:`mount_point` None, e.g. not root) tracking is off and everything else works as before.
Processes started over SSH run under the node's sshd, not in these cgroups.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The top cgroup of every qoslab campaign (below the cgroup v2 mount).
ROOT_NAME = "qoslab"
#: Seconds :meth:`TrialCgroup.end` waits for the killed processes to leave the cgroup.
END_WAIT_S = 2.0

_current: Path | None = None  # the trial cgroup new processes join (process-wide: lanes are threads)


@dataclass(frozen=True)
class Proc:
    """A process found in a cgroup: PID, command name (``/proc/PID/comm``), command line."""

    pid: int
    comm: str
    cmdline: str


def mount_point(mounts: str | None = None) -> Path | None:
    """The cgroup v2 mount of this machine (from ``mounts``, the text of /proc/self/mounts) when
    it is writable by this process, else None."""
    if mounts is None:
        try:
            mounts = Path("/proc/self/mounts").read_text()
        except OSError:
            return None
    for line in mounts.splitlines():
        f = line.split()
        if len(f) >= 3 and f[2] == "cgroup2" and os.access(f[1], os.W_OK):
            return Path(f[1])
    return None


def campaign_cgroup(folder: Path, mount: Path | None = None) -> Path | None:
    """The cgroup directory of the campaign in ``folder`` (not created), or None without cgroup v2."""
    mount = mount or mount_point()
    if mount is None:
        return None
    key = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:10]
    return mount / ROOT_NAME / f"{folder.resolve().name}-{key}"


def join_in_child() -> None:
    """Move the calling process into the current trial cgroup (for a ``preexec_fn``, between fork
    and exec); nothing when no trial is tracked or the cgroup is gone."""
    if _current is None:
        return
    try:
        fd = os.open(_current / "cgroup.procs", os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)
    except OSError:
        pass


def join_files(files: Iterable[str]) -> bool:
    """Move the calling process into the cgroups whose ``cgroup.procs`` files are ``files`` (for a
    ``preexec_fn``: a host's CPU budget, :mod:`qoslab.testbed.cpuplace`); False when one could not
    be written (the caller ends the child: a process never runs outside its budget)."""
    for f in files:
        try:
            fd = os.open(f, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
        except OSError:
            return False
    return True


def current_procs() -> str | None:
    """The ``cgroup.procs`` file of the tracked trial's cgroup (what a new process joins), None
    when no trial is tracked."""
    return None if _current is None else str(_current / "cgroup.procs")


def tracking() -> bool:
    """Whether a trial cgroup is current (the executors then start processes through a
    ``preexec_fn`` that joins it)."""
    return _current is not None


def procs(cg: Path) -> list[Proc]:
    """The processes in cgroup ``cg`` and its children (empty when it does not exist)."""
    out: list[Proc] = []
    for f in sorted(cg.rglob("cgroup.procs")) if cg.is_dir() else []:
        try:
            pids = [int(x) for x in f.read_text().split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            out.append(_proc(pid))
    return out


def _proc(pid: int) -> Proc:
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        comm, cmd = "?", ""
    return Proc(pid, comm, cmd)


def _descendants(roots: Iterable[int]) -> set[int]:
    """``roots`` and every live process below them (by /proc/PID/stat's parent PID)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
                ppid = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    found, todo = set(), list(roots)
    while todo:
        p = todo.pop()
        if p not in found:
            found.add(p)
            todo += children.get(p, [])
    return found


def _move(pids: Iterable[int], to: Path) -> None:
    pids = list(pids)
    if pids:
        to.mkdir(exist_ok=True)
    for pid in pids:
        try:
            (to / "cgroup.procs").write_text(str(pid))
        except OSError:
            pass  # gone meanwhile


def _kill(cg: Path, left: list[Proc]) -> None:
    """SIGKILL everything in ``cg`` (``cgroup.kill``, kernel >= 5.14, else by PID)."""
    if (cg / "cgroup.kill").exists():
        try:
            (cg / "cgroup.kill").write_text("1")
            return
        except OSError:
            pass
    for p in left:
        try:
            os.kill(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@contextmanager
def trial(campaign: Path | None, idx: int, keep: Callable[[], Iterable[int]] = lambda: (),
          log: Callable[[str], None] = lambda s: None) -> Iterator[list[Proc]]:
    """Track the processes the executors start inside the block in ``campaign``/trial-``idx``
    (nothing when ``campaign`` is None). At the end the processes ``keep()`` returns (kept
    workers' PIDs) and their descendants move to ``campaign``/pool; everything else still in the
    trial's cgroup (a daemon the trial's commands left) is killed (SIGKILL), logged and listed in
    the yielded list (filled at the end), and the cgroup removed once empty (left in place, for
    :func:`leftovers`, when a process survives :data:`END_WAIT_S`)."""
    global _current
    ended: list[Proc] = []
    if campaign is None:
        yield ended
        return
    cg = campaign / f"trial-{idx}"
    try:
        cg.mkdir(parents=True, exist_ok=True)
    except OSError:
        yield ended
        return
    _current = cg
    try:
        yield ended
    finally:
        _current = None
        stay = _descendants(keep())
        _move([p.pid for p in procs(cg) if p.pid in stay], campaign / "pool")
        left = [p for p in procs(cg) if p.pid not in stay]
        if left:
            _kill(cg, left)
            ended += left
            log(f"trial {idx}: ended {len(left)} process(es) its commands left behind (cgroup {cg.name}): "
                + ", ".join(f"{p.comm} ({p.pid})" for p in left[:8]) + (" ..." if len(left) > 8 else ""))
        deadline = time.monotonic() + END_WAIT_S
        while procs(cg) and time.monotonic() < deadline:
            time.sleep(0.05)
        if remove(cg) and not any(p.is_dir() for p in campaign.iterdir()):
            remove(campaign)  # no pool, no other trial: nothing to keep (the runner's end removes it otherwise)


def remove(cg: Path) -> bool:
    """Remove an empty cgroup directory (children first); False when a process keeps it."""
    try:
        for child in sorted((p for p in cg.iterdir() if p.is_dir()), reverse=True):
            remove(child)
        cg.rmdir()
        return True
    except OSError:
        return False


def leftovers(campaign: Path | None, finished: Iterable[int], pool: bool = False) -> dict[str, list[Proc]]:
    """Processes still in the cgroups of the ``finished`` trials (their indices) of ``campaign``:
    ``trial-IDX`` -> processes (what a trial's end could not kill, or a killed run left); with
    ``pool`` (no run of the campaign is alive, so its kept workers are leftovers too) also
    ``pool`` -> processes. A trial a killed run left ``running`` is finished for this purpose:
    the caller decides (``campaign status`` asks whether the run is alive)."""
    if campaign is None or not campaign.is_dir():
        return {}
    done = {f"trial-{i}" for i in finished} | ({"pool"} if pool else set())
    out: dict[str, list[Proc]] = {}
    for d in sorted(p for p in campaign.iterdir() if p.is_dir() and p.name in done):
        found = procs(d)
        if found:
            out[d.name] = found
    return out


def end_all(campaign: Path | None) -> list[Proc]:
    """Kill every process in ``campaign``'s cgroups (its trials' and its pool's) and remove them:
    what a killed run left, found on resume. Returns the processes killed."""
    if campaign is None or not campaign.is_dir():
        return []
    killed: list[Proc] = []
    for d in [p for p in campaign.iterdir() if p.is_dir()]:
        left = procs(d)
        if left:
            _kill(d, left)
            killed += left
    deadline = time.monotonic() + END_WAIT_S
    while any(procs(d) for d in campaign.iterdir() if d.is_dir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return killed
