"""The campaign's SQLite results store, ``trials.sqlite``: the schedule and one row per trial,
each committed as the trial ends (WAL journal, synchronous FULL), so a killed run loses at most
the trial it was in. This module and its schema (:mod:`.storeschema`) are the only code that
speaks SQL (tests/unit/test_architecture.py checks it); statistics, censoring, sweeps, the CLI,
the report notebook and the benchmarks read through it.

A row's ``status`` is ``pending``, ``running`` (an attempt is under way, or was killed: the next
run sets it back to pending), ``done``, ``failed`` (its last run used up its retries; the next
``--resume`` runs it again) or ``skipped`` (a sequential campaign stopped before it: never run,
absent from the statistics, not a sign of an incomplete campaign). ``attempts`` counts attempts
started, ``failures`` those that ended in an error (a killed attempt is neither a success nor a failure).

Schema: the base table (:data:`SCHEMA`), migrations numbered by SQLite's ``user_version``
(:data:`MIGRATIONS`), then the columns every registered meter declares
(:func:`qoslab.meters.base.meter_columns`), added when missing: a campaign folder made by an
older qoslab opens, resumes and reports.

Who may change the file (issue 45): a reader (``campaign status``, ``report``, a plan's ETA)
opens it ``readonly``: SQLite's ``mode=ro`` with ``query_only``, and ``immutable`` when no
``-wal`` file lies beside it (a finished campaign: SQLite then creates no ``-wal``/``-shm``
files, which a plain read-only open of a WAL database leaves behind), no migration, not a byte
changed. A writer (a campaign run, after its folder is checked) migrates an older store on a
copy (``trials.sqlite.migrating``, SQLite's backup API) renamed over the original once complete,
so a kill in between leaves the old store whole. A file that is not a qoslab store (0 bytes,
another program's database, a store of a newer qoslab) is refused, read-only, before anything
is written to it.

Use as a context manager (``with Store(path) as st: ...``) or call :meth:`Store.close`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import QoslabError
from .fsguard import SQLITE_SIDECARS, check_regular, os_error_cause, remove_new_empty, write_problem
from .playbook import ScheduledTrial
from .row import BASE_COLUMNS, METRICS, STATUSES, TrialRow, json_why, metrics_problem, row_of
from .storeschema import MIGRATIONS, SCHEMA, connect_ro, problem, upgrade, wanted

__all__ = ["BASE_COLUMNS", "METRICS", "MIGRATIONS", "SCHEMA", "STATUSES", "Store", "TrialRow"]

#: SQLite's texts for a write the file system refused (full, read-only, no permission): named
#: by the file system's state (qoslab.trials.fsguard), not as a foreign file.
_WRITE_FAILURES = frozenset({"disk I/O error", "unable to open database file", "database or disk is full",
                             "attempt to write a readonly database"})


class Store:
    """The campaign's SQLite results store (one row per scheduled trial). ``path``: the database
    file (created when missing, unless ``readonly``); ``columns``: the meter columns to make sure
    of (name -> SQLite type; default: every registered meter's); ``readonly``: open an existing
    store without migrating or writing it (see the module doc: a committed campaign's folder stays
    byte-identical; the columns are what the file has; any write raises QoslabError). An existing
    store that needs a migration is migrated on a copy renamed over it. Raises QoslabError, with
    the file untouched, for a path (or a ``-wal``/``-shm``/``-journal`` beside it) that is not a
    regular file (a symbolic link is refused, not followed), a file that is not a qoslab campaign
    store (another SQLite file, a 0-byte file, not SQLite) or one of a newer qoslab; and, for a
    writer, a folder on a read-only or full file system (saying so; the empty ``-wal``/``-shm``
    files a failed open makes are removed)."""

    def __init__(self, path: Path, columns: Mapping[str, str] | None = None, readonly: bool = False) -> None:
        self.path = path = Path(path)
        self.readonly = readonly
        sidecars = [Path(f"{path}{s}") for s in SQLITE_SIDECARS]
        if path.is_symlink():  # never through a symbolic link to a store elsewhere (issue 50)
            check_regular(path)
        for p in sidecars:
            check_regular(p)
        exists = path.exists()
        if (readonly or exists) and not path.is_file():
            raise QoslabError(f"{path}: no campaign store there" + (" (not a regular file)" if exists else ""))
        if not readonly and (why := write_problem(path.parent)) is not None:
            raise QoslabError(f"{path}: cannot write the campaign store: {why}")
        existed = {p for p in sidecars if p.exists()}
        try:
            if exists:
                self._db = connect_ro(path)  # checked read-only first: a foreign file is refused untouched
                why_not = problem(self._db)
                if why_not is not None:
                    raise QoslabError(f"{path}: not a qoslab campaign store: {why_not}")
                due = self._db.execute("PRAGMA user_version").fetchone()[0] < len(MIGRATIONS) or \
                    bool(set(wanted(columns)) - set(self.columns()))
                if readonly:
                    return
                self._db.close()
                if due:
                    self._migrate_copy(columns)
            self._db = sqlite3.connect(path, isolation_level=None)  # explicit transactions
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            if not exists:
                self._db.executescript(SCHEMA)
                upgrade(self._db, columns)
        except QoslabError:
            self._close_quietly()
            raise
        except (sqlite3.DatabaseError, OSError) as e:
            self._close_quietly()
            if not readonly:
                remove_new_empty(sidecars, existed)
            if isinstance(e, OSError) or str(e) in _WRITE_FAILURES:
                raise QoslabError(f"{path}: cannot {'open' if readonly else 'write'} the campaign store: "
                                  f"{os_error_cause(e, path.parent)}") from None
            raise QoslabError(f"{path}: not a qoslab campaign store ({e})") from None

    def _close_quietly(self) -> None:
        if hasattr(self, "_db"):
            self._db.close()

    def _migrate_copy(self, columns: Mapping[str, str] | None) -> None:
        """Migrate the store on a copy and rename the copy over it (see the module doc)."""
        tmp = self.path.with_name(self.path.name + ".migrating")
        for stale in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
            stale.unlink(missing_ok=True)
        src = sqlite3.connect(self.path, isolation_level=None)
        try:
            src.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the WAL's trials into the file the copy reads
            dst = sqlite3.connect(tmp, isolation_level=None)
            try:
                src.backup(dst)
                dst.execute("PRAGMA synchronous=FULL")
                upgrade(dst, columns)
            finally:
                dst.close()
        finally:
            src.close()
        os.replace(tmp, self.path)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @contextmanager
    def tx(self) -> Iterator[None]:
        """One IMMEDIATE transaction, rolled back on an exception. Raises QoslabError on a store
        opened read-only."""
        if self.readonly:
            raise QoslabError(f"{self.path}: opened read-only (a reading command never writes a campaign's store)")
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the database connection (the store is unusable afterwards; idempotent)."""
        self._db.close()

    def backup_to(self, dest: Path, fidelity: Callable[[str], str] | None = None) -> None:
        """Copy the store to a new file ``dest`` (SQLite's backup API: whole, the WAL's trials too,
        from a read-only store as well), each row's ``fidelity_json`` through ``fidelity`` when
        given, then compacted (VACUUM). The archive of a campaign (:mod:`qoslab.campaign.archive`).
        Raises QoslabError naming ``dest`` when it exists or cannot be written."""
        if dest.exists() or dest.is_symlink():
            raise QoslabError(f"{dest}: exists already (a copy never overwrites)")
        try:
            dst = sqlite3.connect(dest, isolation_level=None)
            try:
                self._db.backup(dst)
                if fidelity is not None and "fidelity_json" in self.columns():
                    rows = dst.execute("SELECT idx, fidelity_json FROM trials WHERE fidelity_json IS NOT NULL")
                    changed = [(fidelity(js), idx) for idx, js in rows.fetchall()]
                    dst.execute("BEGIN")
                    dst.executemany("UPDATE trials SET fidelity_json=? WHERE idx=?", changed)
                    dst.execute("COMMIT")
                dst.execute("VACUUM")
            finally:
                dst.close()
        except (sqlite3.DatabaseError, OSError) as e:
            raise QoslabError(f"{dest}: cannot write the copy of {self.path}: {e}") from None

    # -- schema and meta --------------------------------------------------------------------

    def columns(self) -> list[str]:
        """The ``trials`` table's column names, in table order."""
        return [r[1] for r in self._db.execute("PRAGMA table_info(trials)")]

    def init(self, trials: list[ScheduledTrial], meta: dict[str, Any]) -> None:
        """Insert the schedule and the campaign's meta values (one transaction)."""
        with self.tx():
            self._db.executemany("INSERT INTO trials (idx, condition, trial, warmup) VALUES (?,?,?,?)",
                                 [(t.idx, t.condition, t.trial, int(t.warmup)) for t in trials])
            self._db.executemany("INSERT INTO meta VALUES (?,?)", [(k, json.dumps(v)) for k, v in meta.items()])

    def meta(self, key: str) -> Any:
        """A meta value (JSON-decoded) or None."""
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        if not row:
            return None
        try:
            return json.loads(row[0])
        except (TypeError, ValueError) as e:
            raise QoslabError(f"{self.path}: meta {key[:40]!r} is not JSON ({json_why(e)}): the store was changed "
                              "outside qoslab") from None

    def set_meta(self, key: str, value: Any, replace: bool = True) -> None:
        """Set a meta value (JSON-encoded); with ``replace`` false an existing value is kept."""
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
        with self.tx():
            self._db.execute(f"{verb} INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    # -- the run ----------------------------------------------------------------------------

    def pending(self) -> list[tuple[int, str, int, bool, int]]:
        """(idx, condition, trial, warmup, attempts) of every trial not done (pending, interrupted
        or failed; not skipped), in schedule order: what a run of the campaign runs."""
        return [(r[0], r[1], r[2], bool(r[3]), r[4]) for r in self._db.execute(
            "SELECT idx, condition, trial, warmup, attempts FROM trials WHERE status NOT IN ('done', 'skipped') "
            "ORDER BY idx")]

    def skip(self, idxs: list[int]) -> list[int]:
        """Mark the trials ``idxs`` that are not done as ``skipped`` (a sequential campaign stopped
        before them; one transaction); returns the indices marked."""
        with self.tx():
            marked = [i for i in idxs if (row := self._db.execute("SELECT status FROM trials WHERE idx=?",
                                                                  (i,)).fetchone()) and row[0] != "done"]
            self._db.executemany("UPDATE trials SET status='skipped' WHERE idx=?", [(i,) for i in marked])
        return marked

    def reset_interrupted(self) -> list[int]:
        """Set trials left ``running`` by a killed run back to ``pending`` (their attempt is not a
        failure); returns their indices."""
        with self.tx():
            idx = [r[0] for r in self._db.execute("SELECT idx FROM trials WHERE status='running' ORDER BY idx")]
            self._db.execute("UPDATE trials SET status='pending' WHERE status='running'")
        return idx

    def reset_invalid(self) -> list[tuple[int, str | None]]:
        """Set the counted trials judged fidelity-``invalid`` (done, not warm-ups) back to
        ``pending`` so a resumed run measures them again (``campaign run --resume --rerun-invalid``);
        their fidelity columns are cleared, the verdict's reasons kept in ``error`` ("rerun: ...").
        Returns (index, old reasons JSON) of each."""
        with self.tx():
            rows = [(r[0], r[1]) for r in self._db.execute(
                "SELECT idx, fidelity_reasons FROM trials WHERE status='done' AND warmup=0 AND fidelity='invalid' "
                "ORDER BY idx")] if "fidelity" in self.columns() else []
            for idx, why in rows:
                self._db.execute("UPDATE trials SET status='pending', fidelity=NULL, error=? WHERE idx=?",
                                 (f"rerun: fidelity invalid {why or ''}"[:2000], idx))
        return rows

    def record(self, idx: int, **cols: Any) -> None:
        """Set columns of trial ``idx`` (one transaction). Raises QoslabError for a column the
        table lacks (names come from code and meters, never from input)."""
        if not hasattr(self, "_columns"):  # once per store: the table's columns do not change while it is open
            self._columns = set(self.columns())
        unknown = set(cols) - self._columns
        if unknown:
            raise QoslabError(f"{self.path}: no column {', '.join(sorted(unknown))} in trials (a meter registered "
                              "after the store was opened?)")
        keys = ", ".join(f"{k}=?" for k in cols)
        with self.tx():
            self._db.execute(f"UPDATE trials SET {keys} WHERE idx=?", (*cols.values(), idx))

    def record_failure(self, idx: int, error: str, finished: float, final: bool) -> None:
        """A failed attempt of trial ``idx``: ``failures`` + 1, its error (first 2000 characters)
        and end time; status ``failed`` when no retry is left (``final``), else ``pending``."""
        with self.tx():
            self._db.execute("UPDATE trials SET status=?, error=?, finished=?, failures=failures+1 WHERE idx=?",
                             ("failed" if final else "pending", error[:2000], finished, idx))

    # -- reading ----------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        """Trials per status (pending, running, done, failed)."""
        return dict(self._db.execute("SELECT status, COUNT(*) FROM trials GROUP BY status").fetchall())

    def conditions(self) -> list[str]:
        """The names of the scheduled conditions, in schedule order of their first trial."""
        return [r[0] for r in self._db.execute("SELECT condition FROM trials GROUP BY condition ORDER BY MIN(idx)")]

    def trials(self, *, status: str | None = None, condition: str | None = None, warmup: bool | None = None,
               counted: bool = False) -> list[TrialRow]:
        """Trial rows in schedule order, filtered: by ``status``, ``condition``, ``warmup``; with
        ``counted`` only done, valid, non-warm-up trials (what the statistics count)."""
        where: list[str] = []
        args: list[Any] = []
        if counted:
            where.append("status='done' AND warmup=0 AND valid=1")
        if status is not None:
            where.append("status=?")
            args.append(status)
        if condition is not None:
            where.append("condition=?")
            args.append(condition)
        if warmup is not None:
            where.append("warmup=?")
            args.append(int(warmup))
        cur = self._db.execute("SELECT * FROM trials" + (" WHERE " + " AND ".join(where) if where else "")
                               + " ORDER BY idx", args)
        names = [d[0] for d in cur.description]
        rows = [row_of(names, r) for r in cur.fetchall()]
        for r in rows:
            if r.metrics_json is not None and (why := metrics_problem(r.metrics_json)) is not None:
                raise QoslabError(f"{self.path}: trial {r.idx}: metrics_json {why}: the store was changed outside "
                                  "qoslab")
        return rows

    def rows(self) -> list[dict[str, Any]]:
        """Every trial as a plain dict of every column, in schedule order (the report's table)."""
        return [r.as_dict() for r in self.trials()]

    def captured_conditions(self) -> set[str]:
        """Names of the conditions that already have a finished trial with a capture summary."""
        return {r.condition for r in self.trials(status="done") if r.capture_summary is not None}

    def done_times(self) -> dict[str, list[float]]:
        """Render times (seconds) of the done, valid, non-warm-up trials per condition, in run order."""
        out: dict[str, list[float]] = {}
        for r in self.trials(counted=True):
            if r.elapsed_s is not None:
                out.setdefault(r.condition, []).append(r.elapsed_s)
        return out
