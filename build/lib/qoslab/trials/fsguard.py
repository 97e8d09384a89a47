"""What a campaign run may write in its folder, checked before it writes (issue 50): every file a
run writes is a regular file inside the folder, never through a symbolic link (a ``trials.sqlite``
linked to a store elsewhere would take the run's trials there), a named pipe or a device; a folder
on a read-only or full file system is refused saying so, before SQLite leaves empty ``-wal`` and
``-shm`` files behind.

Reads only (``lstat``, ``statvfs``); :func:`remove_new_empty` deletes the empty files a failed
open created, nothing else.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from ..errors import QoslabError

__all__ = ["MIN_FREE_BYTES", "SQLITE_SIDECARS", "check_entries", "check_regular", "remove_new_empty",
           "write_problem"]

#: Least free space (bytes) a run starts with: SQLite's WAL index (``-shm``, 32 KiB) and a few
#: trials' rows; below it a run would fail at its first write ("disk I/O error").
MIN_FREE_BYTES = 1 << 20
#: The files SQLite writes beside a database (WAL journal, its shared-memory index, a rollback journal).
SQLITE_SIDECARS = ("-wal", "-shm", "-journal")
#: Most entries of a folder walked by :func:`check_entries` (a campaign folder holds a few hundred).
MAX_ENTRIES = 200_000

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def _what(path: Path, mode: int) -> str:
    what = next((w for test, w in _KINDS if test(mode)), "not a regular file")
    if stat.S_ISLNK(mode):
        try:
            what += f" to {os.readlink(path)[:200]}"
        except OSError:
            pass
    return what


def _refuse(path: Path, mode: int) -> QoslabError:
    return QoslabError(f"{path}: not a regular file ({_what(path, mode)}): a campaign run writes only regular "
                       "files inside its folder; put the file itself there (or remove it)")


def check_regular(path: Path) -> None:
    """Raise QoslabError naming ``path`` when it exists and is not a regular file (a symbolic
    link is not followed: it is refused, as are a named pipe, a socket and a device); a missing
    ``path`` passes."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as e:
        raise QoslabError(f"{path}: cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(mode):
        raise _refuse(path, mode)


def check_entries(folder: Path) -> None:
    """Every entry under ``folder`` (at any depth) is a regular file or a real folder: a symbolic
    link (to a file or to a folder), a named pipe, a socket or a device is refused by name, so no
    write of a run can land outside the folder or block. Raises QoslabError naming the first such
    entry, or a folder of more than MAX_ENTRIES entries."""
    seen = 0
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in (*dirs, *files):
            seen += 1
            if seen > MAX_ENTRIES:
                raise QoslabError(f"{folder}: more than {MAX_ENTRIES} entries: not a campaign folder")
            p = Path(root) / name
            try:
                mode = os.lstat(p).st_mode
            except FileNotFoundError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise _refuse(p, mode)


def write_problem(folder: Path) -> str | None:
    """Why nothing can be written in ``folder`` (its file system read-only, full, or the folder
    not writable by this user), or None."""
    try:
        vfs = os.statvfs(folder)
    except OSError as e:
        return f"cannot be examined ({e.strerror})"
    if vfs.f_flag & os.ST_RDONLY:
        return "its file system is read-only"
    free = vfs.f_bavail * vfs.f_frsize
    if free < MIN_FREE_BYTES:
        return f"its file system is full ({free} bytes free, a run needs at least {MIN_FREE_BYTES})"
    if not os.access(folder, os.W_OK | os.X_OK):
        return "the folder is not writable by this user"
    return None


def os_error_cause(e: BaseException, folder: Path) -> str:
    """A cause for a failed write in ``folder`` (an OSError or an SQLite error whose text is
    SQLite's generic "disk I/O error"/"unable to open database file"): the file system's state
    when it explains it (:func:`write_problem`), else the error's own text."""
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        return "its file system is full"
    if isinstance(e, OSError) and e.errno == errno.EROFS:
        return "its file system is read-only"
    return write_problem(folder) or (e.strerror if isinstance(e, OSError) and e.strerror else str(e))


def remove_new_empty(paths: Iterable[Path], existed: set[Path]) -> None:
    """Delete each of ``paths`` that did not exist before (not in ``existed``) and is now an
    empty regular file, or a ``-shm`` file (SQLite's shared-memory WAL index, rebuilt from the
    WAL whenever it is missing): what a failed SQLite open leaves. Never raises."""
    for p in paths:
        if p in existed:
            continue
        try:
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode) and (st.st_size == 0 or p.name.endswith("-shm")):
                p.unlink()
        except OSError:
            pass
