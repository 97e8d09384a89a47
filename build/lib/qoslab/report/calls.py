"""The report's call-latency helpers (issue 24; :mod:`qoslab.report.lib` is full): the frames of
the tail table, the p99 comparisons and recovery, the CDF's points, and the per-trial RTO table.
Pure like report.lib: they work on what they are given (calls-stats.json as a dict,
``analysis/README.md`` "Call latency"; the pooled calls.jsonl records; the trials frame with the
``calls_*`` columns of :mod:`qoslab.meters.calls`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

#: The tail statistics of calls-stats.json, with their column labels.
TAIL = {"p50": "p50", "p90": "p90", "p99": "p99", "p99_9": "p99.9"}
#: The per-trial calls_* columns shown in the RTO table, with their labels.
TRIAL_COLUMNS = {"calls_n": "render calls", "calls_p50_ms": "p50 ms", "calls_p99_ms": "p99 ms",
                 "calls_max_ms": "max ms", "calls_wire_n": "wire calls", "calls_rto": "calls with an RTO",
                 "calls_retransmitted": "retransmitted segments", "calls_agree_median_ms": "|manager - wire| median ms",
                 "calls_agree_max_ms": "|manager - wire| max ms"}


def fmt_ms(v: float | None) -> str:
    """Milliseconds with 3 significant digits ("n/a" for None)."""
    return "n/a" if v is None else f"{v:.3g}"


def cell(value: float | None, interval: Sequence[float] | None) -> str:
    """"value [lo - hi]" in ms ("value" alone without an interval)."""
    if interval is None or len(interval) != 2:
        return fmt_ms(value)
    return f"{fmt_ms(value)} [{fmt_ms(interval[0])} - {fmt_ms(interval[1])}]"


def tail_table(cs: Mapping[str, Any], order: Sequence[str]) -> pd.DataFrame:
    """One row per condition (in ``order``, then any others): trials, calls, p50/p90/p99/p99.9 with
    their trial-cluster 95 % intervals, max (no interval: the bootstrap of a maximum is
    inconsistent), mean."""
    conds = cs.get("conditions", {})
    names = [n for n in order if n in conds] + [n for n in conds if n not in order]
    rows = []
    for n in names:
        c = conds[n]
        ci95 = c.get("ci95") or {}
        rows.append({"condition": n, "trials": c.get("trials"), "calls": c.get("calls"),
                     **{label: cell(c.get(k), ci95.get(k)) for k, label in TAIL.items()},
                     "max": fmt_ms(c.get("max")), "mean": cell(c.get("mean"), ci95.get("mean"))})
    return pd.DataFrame(rows, columns=["condition", "trials", "calls", *TAIL.values(), "max", "mean"])


def comparison_table(cs: Mapping[str, Any]) -> pd.DataFrame:
    """The comparisons (b against a) of p50 and p99: difference and ratio with their intervals."""
    rows = [{"a": c["a"], "b": c["b"], "statistic": TAIL.get(c["statistic"], c["statistic"]),
             "a ms": fmt_ms(c.get("a_value")), "b ms": fmt_ms(c.get("b_value")),
             "b - a ms": cell(c.get("difference"), c.get("difference_ci95")),
             "b / a": "n/a" if c.get("ratio") is None else
             f"{c['ratio']:.3g}" + (f" [{c['ratio_ci95'][0]:.3g} - {c['ratio_ci95'][1]:.3g}]"
                                    if c.get("ratio_ci95") else "")}
            for c in cs.get("comparisons", [])]
    return pd.DataFrame(rows, columns=["a", "b", "statistic", "a ms", "b ms", "b - a ms", "b / a"])


def recovery_table(cs: Mapping[str, Any]) -> pd.DataFrame:
    """The recovery of each treated condition on p50 and p99: (congested - treated) / (congested -
    baseline) in percent with its interval ("n/a" when congestion did not raise the quantile, no
    interval when a resample was undefined)."""
    rows = []
    for r in cs.get("recovery", []):
        ratio, ci95 = r.get("ratio"), r.get("ci95")
        val = "n/a" if ratio is None else f"{ratio:.1%}" + (f" [{ci95[0]:.1%} - {ci95[1]:.1%}]" if ci95 else "")
        rows.append({"treated": r["treated"], "congested": r["congested"], "baseline": r["baseline"],
                     "statistic": TAIL.get(r["statistic"], r["statistic"]), "recovery": val,
                     "undefined resamples": r.get("bootstrap_undefined")})
    return pd.DataFrame(rows, columns=["treated", "congested", "baseline", "statistic", "recovery",
                                       "undefined resamples"])


def ecdf(values: Iterable[float]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted values and their empirical CDF (i/n, i = 1..n)."""
    x = np.sort(np.asarray(list(values), dtype=float))
    return x, np.arange(1, len(x) + 1) / max(len(x), 1)


def latencies(records: Iterable[Mapping[str, Any]], order: Sequence[str]) -> dict[str, np.ndarray]:
    """Render-call latencies (ms) per condition of the pooled calls.jsonl records, in ``order``
    (conditions without calls left out)."""
    by: dict[str, list[float]] = {}
    for r in records:
        if r.get("latency_ms") is not None and r.get("method", "render") == "render":
            by.setdefault(str(r["condition"]), []).append(float(r["latency_ms"]))
    names = [n for n in order if n in by] + [n for n in by if n not in order]
    return {n: np.asarray(by[n]) for n in names}


def trial_calls(trials: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame | None:
    """The counted trials' calls_* columns (ordered by condition, then idx), captured trials'
    wire columns filled; None when the store has no calls columns or no trial has a value."""
    if "calls_n" not in trials.columns:
        return None
    t = trials[(trials.status == "done") & (trials.warmup == 0) & trials.calls_n.notna()]
    if not len(t):
        return None
    cols = [c for c in TRIAL_COLUMNS if c in t.columns]
    rank = {n: i for i, n in enumerate(order)}
    t = t.assign(_o=t.condition.map(lambda n: rank.get(n, len(rank)))).sort_values(["_o", "idx"])
    return t[["idx", "condition", "trial", *cols]].rename(columns=TRIAL_COLUMNS).reset_index(drop=True)
