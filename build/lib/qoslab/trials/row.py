"""One row of a campaign store's ``trials`` table as Python data (:class:`TrialRow`), the base
columns' names and types, and the per-trial metrics the statistics can be made of. No SQL here:
:mod:`.store` reads and writes the table and hands rows out through :func:`row_of`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

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


def row_of(names: list[str], values: tuple[Any, ...]) -> TrialRow:
    """A :class:`TrialRow` from a ``SELECT *`` row (column ``names``, ``values``); columns an older
    store lacks keep their defaults, columns beyond the base ones are ``measurements``."""
    d = dict(zip(names, values, strict=True))
    base = {k: d.pop(k) for k in list(d) if k in BASE_COLUMNS}
    base["warmup"] = bool(base["warmup"])
    base["valid"] = None if base.get("valid") is None else bool(base["valid"])
    base["failures"] = base.get("failures") or 0
    return TrialRow(**base, measurements=d)


def json_why(e: Exception) -> str:
    """Why a text did not load as JSON, in a few words (the decoder's message and position)."""
    return f"{e.msg} at character {e.pos}" if isinstance(e, json.JSONDecodeError) else type(e).__name__


def metrics_problem(text: Any) -> str | None:
    """Why a stored ``metrics_json`` is not ``{"set": {...}, "values": {...}}``, or None."""
    try:
        d = json.loads(text)
    except (TypeError, ValueError) as e:
        return f"is not JSON ({json_why(e)})"
    if not (isinstance(d, dict) and isinstance(d.get("set"), dict) and isinstance(d.get("values"), dict)
            and isinstance(d["set"].get("primary"), dict) and isinstance(d["set"]["primary"].get("name"), str)):
        return "is not a metric set (a JSON object with set.primary and values)"
    return None
