"""The campaign's SQLite results store, ``trials.sqlite``: the schedule and one row per trial,
each committed as the trial ends (WAL journal, synchronous FULL), so a killed run loses at most
the trial it was in. This module is the only code that speaks SQL (tests/unit/test_architecture.py
checks it); statistics, censoring, sweeps, the CLI, the report notebook and the benchmarks read
through it.

A row's ``status`` is ``pending``, ``running`` (an attempt is under way, or was killed: the next
run sets it back to pending), ``done``, ``failed`` (its last run used up its retries; the next
``--resume`` runs it again) or ``skipped`` (a sequential campaign stopped before it: never run,
absent from the statistics, not a sign of an incomplete campaign). ``attempts`` counts attempts
started, ``failures`` those that ended in an error (a killed attempt is neither a success nor a failure).

Schema: the base table (:data:`SCHEMA`), migrations numbered by SQLite's ``user_version``
(:data:`MIGRATIONS`), then the columns every registered meter declares
(:func:`qoslab.meters.base.meter_columns`), added when missing: a campaign folder made by an
older qoslab opens, resumes and reports.

Use as a context manager (``with Store(path) as st: ...``) or call :meth:`Store.close`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import QoslabError
from .playbook import ScheduledTrial

SCHEMA = """
CREATE TABLE IF NOT EXISTS trials (
  idx INTEGER PRIMARY KEY, condition TEXT NOT NULL, trial INTEGER NOT NULL, warmup INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
  elapsed_s REAL, total_s REAL, checksum INTEGER, valid INTEGER,
  flood_json TEXT, capture_summary TEXT, config_hash TEXT, phases_json TEXT, error TEXT,
  started REAL, finished REAL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
#: Schema migrations: user_version N -> N+1 is MIGRATIONS[N] (columns name -> SQLite type added).
#: 0 -> 1: the worker busy times and the failure count (the first campaigns had neither).
#: 1 -> 2: the workload's declared metrics (issue 34: ``{"set": MetricSet, "values": name -> number}``).
MIGRATIONS: list[dict[str, str]] = [
    {"busy_max_s": "REAL", "failures": "INTEGER NOT NULL DEFAULT 0"},
    {"metrics_json": "TEXT"},
]
#: The trial columns of the schema after the migrations, in table order (name -> Python type).
BASE_COLUMNS: dict[str, type] = {
    "idx": int, "condition": str, "trial": int, "warmup": int, "status": str, "attempts": int,
    "elapsed_s": float, "total_s": float, "checksum": int, "valid": int, "flood_json": str,
    "capture_summary": str, "config_hash": str, "phases_json": str, "error": str, "started": float,
    "finished": float, "busy_max_s": float, "failures": int, "metrics_json": str}
#: Per-trial values a campaign's statistics can be made of (seconds): the render phase's wall
#: time, or its network wait = render time minus the busiest worker's render time (what the
#: slowest worker spent not computing: waiting for requests, results and retransmissions; the
#: part a switch can change).
METRICS = ("elapsed_s", "network_s")
STATUSES = ("pending", "running", "done", "failed", "skipped")


@dataclass(frozen=True)
class TrialRow:
    """One row of ``trials``. Times in seconds (``started``/``finished``: Unix time);
    ``measurements``: the meters' columns (name -> value, see :mod:`.meters`)."""

    idx: int
    condition: str
    trial: int
    warmup: bool
    status: str
    attempts: int = 0
    failures: int = 0
    elapsed_s: float | None = None
    total_s: float | None = None
    checksum: int | None = None
    valid: bool | None = None
    flood_json: str | None = None
    capture_summary: str | None = None
    config_hash: str | None = None
    phases_json: str | None = None
    error: str | None = None
    started: float | None = None
    finished: float | None = None
    busy_max_s: float | None = None
    metrics_json: str | None = None
    measurements: dict[str, Any] = field(default_factory=dict)

    @property
    def network_s(self) -> float | None:
        """Network wait (seconds): render time minus the busiest worker's; None without both."""
        if self.elapsed_s is None or self.busy_max_s is None:
            return None
        return self.elapsed_s - self.busy_max_s

    @property
    def counted(self) -> bool:
        """A done, valid, non-warm-up trial: what the statistics count."""
        return self.status == "done" and not self.warmup and self.valid is True

    @property
    def declared(self) -> dict[str, Any] | None:
        """The workload's declared metrics of this trial (``metrics_json`` decoded: ``set``, the
        MetricSet as a dict, and ``values``, name -> number in its unit), or None."""
        return json.loads(self.metrics_json) if self.metrics_json else None

    def metric(self, name: str) -> float | None:
        """The value of metric ``name``: one of METRICS, or a metric the workload declared
        (None when this trial has no value for it)."""
        if name in METRICS:
            return self.elapsed_s if name == "elapsed_s" else self.network_s
        v = (self.declared or {}).get("values", {}).get(name)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    def get(self, column: str) -> Any:
        """Any column by name (base or meter column); None for a column the store lacks."""
        if column in BASE_COLUMNS and column != "warmup" and column != "valid":
            return getattr(self, column)
        if column in ("warmup", "valid"):
            v = getattr(self, column)
            return None if v is None else int(v)
        return self.measurements.get(column)

    def as_dict(self) -> dict[str, Any]:
        """Every column (base and meter columns) as in the table (0/1 for warmup and valid)."""
        return {**{c: self.get(c) for c in BASE_COLUMNS}, **self.measurements}


def _row(names: list[str], values: tuple[Any, ...]) -> TrialRow:
    d = dict(zip(names, values, strict=True))
    base = {k: d.pop(k) for k in list(d) if k in BASE_COLUMNS}
    base["warmup"] = bool(base["warmup"])
    base["valid"] = None if base.get("valid") is None else bool(base["valid"])
    base["failures"] = base.get("failures") or 0
    return TrialRow(**base, measurements=d)


class Store:
    """The campaign's SQLite results store (one row per scheduled trial). ``path``: the database
    file (created when missing); ``columns``: the meter columns to make sure of (name -> SQLite
    type; default: every registered meter's); ``readonly``: open an existing store without
    migrating or writing it (the report, a plan's ETA: a committed campaign's file stays
    byte-identical; the columns are what the file has). Raises QoslabError for a file that is not
    a campaign store (another SQLite file, or not SQLite), or a missing one with ``readonly``."""

    def __init__(self, path: Path, columns: Mapping[str, str] | None = None, readonly: bool = False) -> None:
        self.path = path
        self.readonly = readonly
        if readonly and not Path(path).is_file():
            raise QoslabError(f"{path}: no campaign store there")
        try:
            if readonly:  # a reader (report, plan) never migrates or writes a committed campaign's file
                self._db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True,
                                           isolation_level=None)
                self._db.execute("SELECT 1 FROM trials LIMIT 1")
            else:
                self._db = sqlite3.connect(path, isolation_level=None)  # explicit transactions
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=FULL")
                self._db.executescript(SCHEMA)
                self._migrate(columns)
        except sqlite3.DatabaseError as e:
            if hasattr(self, "_db"):
                self._db.close()
            raise QoslabError(f"{path}: not a qoslab campaign store ({e})") from None

    def _migrate(self, columns: Mapping[str, str] | None) -> None:
        if columns is None:
            from qoslab.meters.base import meter_columns
            columns = meter_columns()
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        have = self.columns()
        for n in range(version, len(MIGRATIONS)):
            with self.tx():
                for col, typ in MIGRATIONS[n].items():
                    if col not in have:  # a store made between migrations may have some
                        self._db.execute(f"ALTER TABLE trials ADD COLUMN {col} {typ}")
                self._db.execute(f"PRAGMA user_version = {n + 1}")
        have = self.columns()
        missing = {c: t for c, t in columns.items() if c not in have}
        if missing:
            with self.tx():
                for col, typ in missing.items():  # column names come from code (meters), never input
                    self._db.execute(f"ALTER TABLE trials ADD COLUMN {col} {typ}")

    def __enter__(self) -> Store:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @contextmanager
    def tx(self) -> Iterator[None]:
        """One IMMEDIATE transaction, rolled back on an exception."""
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
        return json.loads(row[0]) if row else None

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
        return [_row(names, r) for r in cur.fetchall()]

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
