"""Files that appear whole or not at all (issue 45: a failing ``report`` or statistics run writes
nothing; no half-written stats.json is ever read back as a finished one).

:func:`staged` gives a fresh folder inside the target; everything is written there, and only when
the block ends without an exception is each file renamed into the target (``os.replace``: atomic
per file, on the same file system), the one named ``last`` after all others (stats.json: its
presence means the set is complete), and the target's files matching ``managed`` that this run did
not write are removed (a stale stats-all.json of an earlier run, a figure no longer drawn). On an
exception (a failed analysis, Ctrl-C) the target is left exactly as it was and the staging folder
is removed.
"""

from __future__ import annotations

import fnmatch
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

#: The staging folders' name prefix (hidden; one left by a kill -9 is removed by a later run).
PREFIX = ".staging-"
#: Seconds since its last change after which a staging folder counts as left by a killed run.
STALE_S = 600.0


def commit(work: Path, target: Path, managed: Iterable[str] = (), last: str | None = None) -> list[str]:
    """Rename every file of ``work`` into ``target`` (``last`` after the others), then remove the
    files of ``target`` matching a ``managed`` glob that ``work`` did not hold; returns the names
    renamed. Folders in ``work`` are not moved."""
    names = sorted(p.name for p in work.iterdir() if p.is_file() and not p.is_symlink())
    order = [n for n in names if n != last] + ([last] if last in names else [])
    for name in order:
        os.replace(work / name, target / name)
    patterns = list(managed)
    for stale in target.iterdir():
        if stale.name not in names and stale.is_file() and any(fnmatch.fnmatch(stale.name, p) for p in patterns):
            stale.unlink(missing_ok=True)
    return order


@contextmanager
def staged(target: Path, managed: Iterable[str] = (), last: str | None = None) -> Iterator[Path]:
    """A fresh staging folder inside ``target`` (made, with its parents, when missing) whose files
    :func:`commit` moves into ``target`` when the block succeeds; see the module doc. Staging
    folders a killed run left in ``target`` (unchanged for STALE_S) are removed first."""
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob(PREFIX + "*"):
        if old.is_dir() and not old.is_symlink() and time.time() - old.stat().st_mtime > STALE_S:
            shutil.rmtree(old, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=PREFIX, dir=target))
    try:
        yield work
        commit(work, target, managed, last)
    finally:
        shutil.rmtree(work, ignore_errors=True)
