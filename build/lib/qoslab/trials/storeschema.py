"""The schema of the campaign store, ``trials.sqlite`` (:mod:`qoslab.trials.store` opens and
writes it): the base table, the migrations numbered by SQLite's ``user_version``, the read-only
connection a reader uses, the check that a file is a qoslab store, and the upgrade a writer applies
(migrations due, then the meters' columns). With :mod:`.store` the only code that speaks SQL
(tests/unit/test_architecture.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS trials (
  idx INTEGER PRIMARY KEY, condition TEXT NOT NULL, trial INTEGER NOT NULL, warmup INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
  elapsed_s REAL, total_s REAL, checksum INTEGER, valid INTEGER,
  flood_json TEXT, capture_summary TEXT, config_hash TEXT, phases_json TEXT, error TEXT,
  started REAL, finished REAL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
#: The ``trials`` columns of :data:`SCHEMA` (every qoslab store has them: the first one had).
SCHEMA_COLUMNS = ("idx", "condition", "trial", "warmup", "status", "attempts", "elapsed_s", "total_s", "checksum",
                  "valid", "flood_json", "capture_summary", "config_hash", "phases_json", "error", "started",
                  "finished")
#: Schema migrations: user_version N -> N+1 is MIGRATIONS[N] (columns name -> SQLite type added).
#: 0 -> 1: the worker busy times and the failure count (the first campaigns had neither).
#: 1 -> 2: the workload's declared metrics (issue 34: ``{"set": MetricSet, "values": name -> number}``).
MIGRATIONS: list[dict[str, str]] = [
    {"busy_max_s": "REAL", "failures": "INTEGER NOT NULL DEFAULT 0"},
    {"metrics_json": "TEXT"},
]


def connect_ro(path: Path) -> sqlite3.Connection:
    """A read-only connection that writes nothing beside ``path`` (see the module doc)."""
    immutable = "" if Path(f"{path}-wal").exists() else "&immutable=1"
    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro{immutable}", uri=True, isolation_level=None)
    db.execute("PRAGMA query_only = ON")
    return db


def problem(db: sqlite3.Connection) -> str | None:
    """Why the database of ``db`` is not a qoslab campaign store this qoslab can open, or None."""
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not {"trials", "meta"} <= tables:
        return "it has no trials and meta tables" + (f" (tables: {', '.join(sorted(tables))[:120]})" if tables
                                                     else ": an empty database")
    have = {r[1] for r in db.execute("PRAGMA table_info(trials)")}
    missing = [c for c in SCHEMA_COLUMNS if c not in have]
    if missing:
        return f"its trials table lacks the column(s) {', '.join(missing[:5])}"
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        return f"schema version {version} is newer than this qoslab's {len(MIGRATIONS)} (made by a newer qoslab)"
    return None


def wanted(columns: Mapping[str, str] | None) -> dict[str, str]:
    """Every column a store must have beyond the schema's: the migrations' and the meters'."""
    if columns is None:
        from qoslab.meters.base import meter_columns
        columns = meter_columns()
    return {c: t for m in MIGRATIONS for c, t in m.items()} | dict(columns)


def upgrade(db: sqlite3.Connection, columns: Mapping[str, str] | None) -> None:
    """Apply the migrations due and add the missing meter columns, on ``db`` (a writable
    connection to a new store or to a migration's copy)."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    have = {r[1] for r in db.execute("PRAGMA table_info(trials)")}
    db.execute("BEGIN IMMEDIATE")
    try:
        for n in range(version, len(MIGRATIONS)):
            for col, typ in MIGRATIONS[n].items():
                if col not in have:  # a store made between migrations may have some
                    db.execute(f"ALTER TABLE trials ADD COLUMN {col} {typ}")
                    have.add(col)
        for col, typ in wanted(columns).items():
            if col not in have:  # column names come from code (meters), never input
                db.execute(f"ALTER TABLE trials ADD COLUMN {col} {typ}")
        db.execute(f"PRAGMA user_version = {max(version, len(MIGRATIONS))}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
