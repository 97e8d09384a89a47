"""qoslab.trials.fsguard (issue 50): a campaign folder holds only regular files and real folders;
the causes named for a write that failed; what a failed SQLite open leaves is removed."""

from __future__ import annotations

import errno
import os

import pytest

from qoslab.errors import QoslabError
from qoslab.trials.fsguard import check_entries, check_regular, os_error_cause, remove_new_empty


def test_check_entries_refuses_links_pipes_and_linked_folders_by_name(tmp_path):
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "a.yaml").write_text("x")
    check_entries(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    for make, what in ((lambda p: p.symlink_to(outside / "f"), "a symbolic link to"),
                       (lambda p: p.symlink_to(outside), "a symbolic link to"),
                       (os.mkfifo, "a named pipe")):
        p = tmp_path / "inputs" / "odd"
        make(p)
        with pytest.raises(QoslabError, match=rf"^{p}: not a regular file \({what}"):
            check_entries(tmp_path)
        p.unlink()
    check_regular(tmp_path / "missing")  # a missing file passes: the run makes it


def test_write_causes_are_named():
    assert os_error_cause(OSError(errno.ENOSPC, "No space left on device"), "/") == "its file system is full"
    assert os_error_cause(OSError(errno.EROFS, "Read-only file system"), "/") == "its file system is read-only"


def test_remove_new_empty_removes_only_what_the_failed_open_made(tmp_path):
    old, new_empty, new_shm, new_full = (tmp_path / n for n in ("s-wal", "t-wal", "t-shm", "u-wal"))
    old.write_bytes(b"")
    new_empty.write_bytes(b"")
    new_shm.write_bytes(b"\0" * 32768)
    new_full.write_bytes(b"committed")
    remove_new_empty([old, new_empty, new_shm, new_full], existed={old})
    assert old.exists() and new_full.exists() and not new_empty.exists() and not new_shm.exists()
