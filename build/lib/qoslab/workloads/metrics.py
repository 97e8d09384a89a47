"""Metrics as data (issue 34, pure): what a trial measures, in which unit, and which way is better.

A workload declares a primary metric (the one the campaign's statistics, console and report are
about) and any secondary metrics (each gets its own statistics and table). The built-in workloads
declare :data:`DEFAULT` (``elapsed_s``, seconds, lower is better, three decimals: the RayTracer's
render time as it always was). A ``command`` workload declares its own in the head command's
result line (src/qoslab/README.md, the contract)::

    {"elapsed_s": 4.2, "p99_rtt_ms": 1.02, "p50_rtt_ms": 0.61, "ops_s": 8123,
     "metrics": {"p99_rtt_ms": {"unit": "ms", "primary": true}, "p50_rtt_ms": {"unit": "ms"},
                 "ops_s": {"unit": "ops/s", "direction": "higher"}}}

Each declared metric's value is the result's key of the same name (or a ``value`` inside its
declaration). The primary metric is the one with ``primary: true``, else the first declared.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import QoslabError

__all__ = ["Metric", "MetricSet", "DEFAULT", "parse_declaration", "decimals", "fmt"]

NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
DIRECTIONS = ("lower", "higher")


@dataclass(frozen=True)
class Metric:
    """One metric: ``name`` (a result key; also part of file names), ``unit`` (free text such as
    "s", "ms", "ops/s"), ``direction`` ("lower" or "higher" is better) and ``decimals`` (fixed
    decimals for tables and figures, or None: chosen from the data, :func:`decimals`)."""

    name: str
    unit: str = "s"
    direction: str = "lower"
    decimals: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON form: name, unit, direction (decimals only when fixed)."""
        out: dict[str, Any] = {"name": self.name, "unit": self.unit, "direction": self.direction}
        if self.decimals is not None:
            out["decimals"] = self.decimals
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Metric:
        """The inverse of :meth:`as_dict`."""
        return cls(str(d["name"]), str(d.get("unit", "s")), str(d.get("direction", "lower")), d.get("decimals"))


@dataclass(frozen=True)
class MetricSet:
    """A workload's metrics: the ``primary`` one and the ``secondary`` ones (in declared order)."""

    primary: Metric
    secondary: tuple[Metric, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """JSON form: {"primary": {...}, "secondary": [{...}, ...]}."""
        return {"primary": self.primary.as_dict(), "secondary": [m.as_dict() for m in self.secondary]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MetricSet:
        """The inverse of :meth:`as_dict`."""
        return cls(Metric.from_dict(d["primary"]), tuple(Metric.from_dict(m) for m in d.get("secondary", [])))

    @property
    def all(self) -> tuple[Metric, ...]:
        """The primary metric, then the secondary ones."""
        return (self.primary, *self.secondary)


#: What every built-in workload measures: the run's elapsed time in seconds, lower is better.
DEFAULT = MetricSet(Metric("elapsed_s", "s", "lower", 3))


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        return None
    return float(v)


def _one(name: Any, spec: Any, result: Mapping[str, Any]) -> tuple[Metric, float, bool]:
    """(metric, value, primary?) of one declaration; QoslabError naming the field when wrong."""
    where = f"metrics.{name}"
    if not isinstance(name, str) or not NAME.match(name):
        raise QoslabError(f"{where}: a metric name is a letter or _ then up to 63 letters, digits, _ . -")
    spec = {} if spec is None else spec
    if not isinstance(spec, Mapping):
        raise QoslabError(f"{where}: expected a mapping such as {{\"unit\": \"ms\"}}, got {spec!r}")
    unknown = sorted(set(spec) - {"unit", "direction", "primary", "value", "decimals"})
    if unknown:
        raise QoslabError(f"{where}: unknown key {unknown[0]!r} (known: unit, direction, primary, value, decimals)")
    unit = spec.get("unit", "s")
    if not isinstance(unit, str) or not 0 < len(unit) <= 16:
        raise QoslabError(f"{where}.unit: a text of 1-16 characters, got {unit!r}")
    direction = spec.get("direction", "lower")
    if direction not in DIRECTIONS:
        raise QoslabError(f"{where}.direction: 'lower' or 'higher' (which is better), got {direction!r}")
    dec = spec.get("decimals")
    if dec is not None and (isinstance(dec, bool) or not isinstance(dec, int) or not 0 <= dec <= 9):
        raise QoslabError(f"{where}.decimals: an integer 0-9, got {dec!r}")
    value = _number(spec["value"] if "value" in spec else result.get(name))
    if value is None:
        raise QoslabError(f"{where}: the result line has no finite number for {name!r} "
                          f"(give it as a key of the result line or as metrics.{name}.value)")
    return Metric(name, unit, str(direction), dec), value, spec.get("primary") is True


def parse_declaration(result: Mapping[str, Any]) -> tuple[MetricSet, dict[str, float]] | None:
    """The metrics a head command's result line declares (its ``metrics`` key) and their values
    (name -> number, in each metric's unit); None without a ``metrics`` key. Raises QoslabError
    (one line naming the field) for a malformed declaration, a missing or non-numeric value, or
    more than one ``primary``."""
    decl = result.get("metrics")
    if decl is None:
        return None
    if not isinstance(decl, Mapping) or not decl:
        raise QoslabError("metrics: expected a non-empty mapping name -> {unit, direction, primary}")
    parsed = [_one(name, spec, result) for name, spec in decl.items()]
    primaries = [m for m, _, p in parsed if p]
    if len(primaries) > 1:
        raise QoslabError(f"metrics: more than one primary metric ({', '.join(m.name for m in primaries)})")
    primary = primaries[0] if primaries else parsed[0][0]
    return (MetricSet(primary, tuple(m for m, _, _ in parsed if m is not primary)),
            {m.name: v for m, v, _ in parsed})


def decimals(metric: Metric, values: Iterable[float | None]) -> int:
    """Decimals to print ``metric``'s values with: its fixed ``decimals``, else enough for three
    significant digits of the smallest non-zero magnitude among ``values`` (0-6; 3 without any):
    a p99 of 1.02 ms prints as 1.02, one of 0.0123 s as 0.0123."""
    if metric.decimals is not None:
        return metric.decimals
    mags = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    if not mags:
        return 3
    return max(0, min(6, 2 - math.floor(math.log10(min(mags)))))


def fmt(value: float | None, places: int, unit: str = "") -> str:
    """``value`` with ``places`` decimals and the unit after a space ("n/a" for None)."""
    if value is None:
        return "n/a"
    return f"{value:.{places}f}" + (f" {unit}" if unit else "")


def primary_value(metrics_json: str | None, elapsed_s: float | None) -> tuple[Metric, float | None]:
    """A trial's primary metric and its value from its stored ``metrics_json`` (the store's
    column: ``{"set": ..., "values": ...}``), else :data:`DEFAULT`'s with ``elapsed_s`` (seconds)."""
    if not metrics_json:
        return DEFAULT.primary, elapsed_s
    import json

    d = json.loads(metrics_json)
    m = Metric.from_dict(d["set"]["primary"])
    v = d.get("values", {}).get(m.name)
    return m, (float(v) if isinstance(v, (int, float)) else None)
