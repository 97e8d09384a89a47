"""The campaign's SQLite results store: the schedule and one row per trial, each committed as
the trial ends (WAL journal, synchronous FULL), so a killed run loses at most the trial it was in.

A row's ``status`` is ``pending``, ``running`` (an attempt is under way, or was killed: the next
run sets it back to pending), ``done`` or ``failed`` (its last run used up its retries; the next
``--resume`` runs it again). ``attempts`` counts attempts started, ``failures`` those that ended
in an error (a killed attempt is neither a success nor a failure)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from .evidence import COLUMNS as EVIDENCE_COLUMNS
from .playbook import ScheduledTrial

SCHEMA = """
CREATE TABLE IF NOT EXISTS trials (
  idx INTEGER PRIMARY KEY, condition TEXT NOT NULL, trial INTEGER NOT NULL, warmup INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
  elapsed_s REAL, total_s REAL, checksum INTEGER, valid INTEGER,
  flood_json TEXT, capture_summary TEXT, config_hash TEXT, phases_json TEXT, error TEXT,
  started REAL, finished REAL, busy_max_s REAL, failures INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
#: Columns added to ``trials`` after the first schema (name -> SQL type).
ADDED_COLUMNS = {"busy_max_s": "REAL", "failures": "INTEGER NOT NULL DEFAULT 0", **EVIDENCE_COLUMNS}


class Store:
    """The campaign's SQLite results store (one row per scheduled trial)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)  # explicit transactions
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(trials)")}
        for col, typ in ADDED_COLUMNS.items():  # a campaign folder from an older qoslab resumes too
            if col not in cols:
                self.db.execute(f"ALTER TABLE trials ADD COLUMN {col} {typ}")

    def init(self, trials: list[ScheduledTrial], meta: dict[str, Any]) -> None:
        """Insert the schedule and the campaign's meta values (one transaction)."""
        with self.tx():
            self.db.executemany("INSERT INTO trials (idx, condition, trial, warmup) VALUES (?,?,?,?)",
                                [(t.idx, t.condition, t.trial, int(t.warmup)) for t in trials])
            self.db.executemany("INSERT INTO meta VALUES (?,?)", [(k, json.dumps(v)) for k, v in meta.items()])

    def tx(self) -> Any:
        """A context manager: one IMMEDIATE transaction, rolled back on an exception."""
        db = self.db

        class _Tx:
            def __enter__(self) -> None:
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, et: Any, e: Any, tb: Any) -> None:
                db.execute("ROLLBACK" if et else "COMMIT")
        return _Tx()

    def meta(self, key: str) -> Any:
        """A meta value (JSON-decoded) or None."""
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def pending(self) -> list[tuple[int, str, int, bool, int]]:
        """(idx, condition, trial, warmup, attempts) of every trial not done (pending, interrupted
        or failed), in schedule order: what a run of the campaign runs."""
        return [(r[0], r[1], r[2], bool(r[3]), r[4]) for r in self.db.execute(
            "SELECT idx, condition, trial, warmup, attempts FROM trials WHERE status != 'done' ORDER BY idx")]

    def reset_interrupted(self) -> list[int]:
        """Set trials left ``running`` by a killed run back to ``pending`` (their attempt is not a
        failure); returns their indices."""
        with self.tx():
            idx = [r[0] for r in self.db.execute("SELECT idx FROM trials WHERE status='running' ORDER BY idx")]
            self.db.execute("UPDATE trials SET status='pending' WHERE status='running'")
        return idx

    def record(self, idx: int, **cols: Any) -> None:
        """Set columns of trial ``idx`` (one transaction). Column names come from code, never from input."""
        keys = ", ".join(f"{k}=?" for k in cols)
        with self.tx():
            self.db.execute(f"UPDATE trials SET {keys} WHERE idx=?", (*cols.values(), idx))

    def counts(self) -> dict[str, int]:
        """Trials per status (pending, running, done, failed)."""
        return dict(self.db.execute("SELECT status, COUNT(*) FROM trials GROUP BY status").fetchall())

    def close(self) -> None:
        """Close the database connection (the store is unusable afterwards)."""
        self.db.close()

    def captured_conditions(self) -> set[str]:
        """Names of the conditions that already have a finished trial with a capture summary."""
        return {c for (c,) in self.db.execute("SELECT DISTINCT condition FROM trials WHERE status='done' "
                                              "AND capture_summary IS NOT NULL")}

    def done_times(self) -> dict[str, list[float]]:
        """Render times (seconds) of the done, valid, non-warm-up trials per condition, in run order."""
        out: dict[str, list[float]] = {}
        for c, e in self.db.execute("SELECT condition, elapsed_s FROM trials WHERE status='done' AND warmup=0 "
                                    "AND valid=1 ORDER BY idx"):
            out.setdefault(c, []).append(e)
        return out


