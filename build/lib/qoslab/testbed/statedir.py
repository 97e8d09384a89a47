"""Run-time state on this machine: the private state folder ``/run/qoslab`` (mode 0700: it holds
virtual-switch credentials and host keys) and the per-testbed campaign lock in it.

Everything that creates the folder or a folder in it goes through :func:`private_dir`, so its
mode is 0700 whoever made it first (``testbed up``, ``switch serve`` or a campaign).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

from .. import testbedplan as netplan
from ..errors import QoslabError


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) with mode 0700, or set 0700 on an existing one, and
    on every folder between it and the state folder (inclusive) when it lies inside it; returns
    ``path``. Raises OSError when it cannot be made."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    root = netplan.STATE_DIR
    chain = [path] + (list(path.parents[: path.parents.index(root) + 1]) if root in path.parents else [])
    for d in chain:
        if os.stat(d).st_mode & 0o777 != 0o700:
            os.chmod(d, 0o700)
    return path


def state_dir() -> Path:
    """The state folder (``/run/qoslab``), mode 0700."""
    return private_dir(netplan.STATE_DIR)


def lock_path(testbed: str) -> Path:
    """The campaign lock file of testbed ``testbed``."""
    return netplan.STATE_DIR / f"campaign-{testbed}.lock"


def campaign_lock(testbed: str) -> IO[str]:
    """Take the exclusive campaign lock of ``testbed`` (held until :func:`release_campaign_lock`,
    until the returned file is closed or until the process ends; the kernel releases it even after
    SIGKILL). Raises QoslabError naming the holder when another campaign has it.

    The lock file is removed on release, so the lock is the file's inode: after taking the lock
    the path is checked to still name the locked inode (a releaser may have unlinked it between
    our open and flock), else it is opened again."""
    state_dir()
    path = lock_path(testbed)
    while True:
        lock = open(path, "a+")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            holder = lock.read().strip()
            lock.close()
            raise QoslabError(f"testbed {testbed} is in use by another campaign ({holder or 'a campaign'}); "
                              "run one campaign per testbed at a time") from None
        try:
            same = os.stat(path).st_ino == os.fstat(lock.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        lock.close()  # released and unlinked under us: lock the new file
    lock.truncate(0)
    lock.write(f"pid {os.getpid()}")
    lock.flush()
    return lock


def release_campaign_lock(lock: IO[str], testbed: str) -> None:
    """Release a lock from :func:`campaign_lock` and remove its file (unlinked while still held,
    so no other process can hold a lock on a file that is gone: see campaign_lock). Idempotent."""
    if lock.closed:
        return
    try:
        if os.fstat(lock.fileno()).st_ino == os.stat(lock_path(testbed)).st_ino:
            os.unlink(lock_path(testbed))
    except FileNotFoundError:
        pass
    finally:
        lock.close()


def campaign_running(testbed: str) -> str | None:
    """Who holds the campaign lock of ``testbed`` (``pid N``), or None when no campaign runs on it
    (probed with a non-blocking shared lock, released at once)."""
    try:
        f = open(lock_path(testbed))
    except OSError:
        return None
    with f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return f.read().strip() or "a campaign"
        fcntl.flock(f, fcntl.LOCK_UN)
    return None
