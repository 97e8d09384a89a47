"""Trial-time distributions of the testbed and the thesis (Appendix A), each normalised by its own
world's uncongested-fifo mean (issue 32). Pure: the thesis's CSV rows and a campaign's trial rows
come in as mappings (``thesis-table5-qos.csv``: congestion, qos, elapsed_s;
``thesis-table3-scaling.csv``: machines, elapsed_s; the campaign's trials: condition, elapsed_s).
Used by ``scripts/scale_overlay.py`` and the report's scale section (:mod:`qoslab.report.scale`).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

#: Campaign condition -> (congestion, qos) of the thesis's CSV.
CONDITIONS = {"no congestion fifo": ("no", "no"), "congestion fifo": ("yes", "no"),
              "no congestion thesis": ("no", "yes"), "congestion thesis": ("yes", "yes")}
BASELINE = "no congestion fifo"

Row = Mapping[str, Any]


def thesis_times(table5: Iterable[Row], table3: Iterable[Row]) -> dict[str, list[float]]:
    """The thesis's trial times (s) per campaign condition name; the no-congestion/no-QoS trials
    are Table 3's 4-machine rows (the thesis's Table 4/5 baseline), as in its Table 5."""
    out: dict[str, list[float]] = {c: [] for c in CONDITIONS}
    for r in table5:
        key = (str(r["congestion"]), str(r["qos"]))
        name = next((c for c, k in CONDITIONS.items() if k == key), None)
        if name is not None and name != BASELINE:
            out[name].append(float(r["elapsed_s"]))
    out[BASELINE] = [float(r["elapsed_s"]) for r in table3 if int(r["machines"]) == 4]
    return out


def campaign_times(trials: Iterable[Row]) -> dict[str, list[float]]:
    """A campaign's trial times (s) per condition of :data:`CONDITIONS` (other conditions left out)."""
    out: dict[str, list[float]] = {c: [] for c in CONDITIONS}
    for r in trials:
        if r["condition"] in out:
            out[r["condition"]].append(float(r["elapsed_s"]))
    return out


def normalised(times: Mapping[str, list[float]]) -> dict[str, list[float]]:
    """Every time divided by the same world's uncongested-fifo mean, sorted per condition."""
    ref = statistics.mean(times[BASELINE])
    return {c: sorted(t / ref for t in v) for c, v in times.items()}


def quantile(v: list[float], p: int) -> float:
    """The ``p``-th percentile of ``v`` (inclusive method; the value itself for one trial)."""
    return statistics.quantiles(v, n=100, method="inclusive")[p - 1] if len(v) > 1 else v[0]


def summary_rows(worlds: Mapping[str, Mapping[str, list[float]]]) -> list[dict[str, Any]]:
    """One row per condition and world of normalised times: n, p10, median, p90, max, mean
    (conditions without trials left out)."""
    rows = []
    for c in CONDITIONS:
        for w, d in worlds.items():
            v = d.get(c) or []
            if v:
                rows.append({"condition": c, "world": w, "n": len(v), "p10": quantile(v, 10),
                             "median": statistics.median(v), "p90": quantile(v, 90), "max": max(v),
                             "mean": statistics.mean(v)})
    return rows
