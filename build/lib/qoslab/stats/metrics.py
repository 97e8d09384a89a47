"""A campaign's declared metrics (issue 34): which metric its statistics are about, in which unit,
and the statistics of each secondary metric.

The workload's declaration travels with every trial (the store's ``metrics_json``); a campaign
whose trials declare nothing is about ``elapsed_s`` in seconds (:data:`DEFAULT`) and its
statistics files are exactly what they always were. With a declaration, stats.json gets a
``metric`` block (the primary metric: name, unit, direction) and a ``secondary`` block (name ->
unit, direction and the file ``stats-metric-NAME.json`` with that metric's own statistics, made
from ``trials-metric-NAME.csv``). The Java tool's keys keep their names (``difference_s``,
``mde_s``, ...): their values are in the metric's unit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qoslab.errors import QoslabError
from qoslab.trials.store import Store
from qoslab.workloads.metrics import DEFAULT, MetricSet

__all__ = ["declared_metrics", "metric_block", "secondary_block", "DEFAULT"]


def declared_metrics(store: Store) -> MetricSet | None:
    """The metric set the counted trials declare, or None when none declares any (a built-in
    workload, or a command without ``metrics``). Raises QoslabError when two trials declare
    different sets (the trial indices named) or only some trials declare one."""
    seen: dict[str, Any] | None = None
    first, missing = -1, -1
    for row in store.trials(counted=True):
        d = row.declared
        if d is None:
            missing = row.idx if missing < 0 else missing
            continue
        if seen is None:
            seen, first = d["set"], row.idx
        elif d["set"] != seen:
            raise QoslabError(f"trials {first} and {row.idx} declare different metrics ({seen} vs {d['set']}): "
                              "a campaign has one metric set")
    if seen is not None and missing >= 0:
        raise QoslabError(f"trial {missing} declares no metrics but trial {first} does: a campaign has one metric set")
    return MetricSet.from_dict(seen) if seen is not None else None


def metric_block(ms: MetricSet) -> dict[str, Any]:
    """stats.json's ``metric`` block: the primary metric (name, unit, direction[, decimals])."""
    return ms.primary.as_dict()


ExportFn = Callable[[Path, str], int]
StatsFn = Callable[[Path, Path], dict[str, Any]]


def secondary_block(ms: MetricSet, folder: Path, export: ExportFn, run: StatsFn) -> dict[str, Any]:
    """The statistics of every secondary metric: ``export(csv, name)`` writes
    ``trials-metric-NAME.csv`` (returns its rows), ``run(csv, out)`` runs the statistics into
    ``stats-metric-NAME.json``. Returns stats.json's ``secondary`` block: name -> unit, direction,
    ``stats`` (the file name) or ``skipped`` (why: fewer than 2 trials with a value)."""
    out: dict[str, Any] = {}
    for m in ms.secondary:
        csv, js = folder / f"trials-metric-{m.name}.csv", folder / f"stats-metric-{m.name}.json"
        js.unlink(missing_ok=True)
        entry: dict[str, Any] = {k: v for k, v in m.as_dict().items() if k != "name"}
        if export(csv, m.name) < 2:
            entry["skipped"] = "fewer than 2 trials with a value"
        else:
            sec = run(csv, js)
            if m.direction == "higher":
                js.write_text(json.dumps(higher_is_better_recovery(sec, csv), indent=1) + "\n")
            entry["stats"] = js.name
        out[m.name] = entry
    return out


def higher_is_better_recovery(stats: dict[str, Any], csv: Path) -> dict[str, Any]:
    """For a higher-is-better metric (throughput): the Java tool's recovery is defined for a
    slowdown (congested mean above the baseline's) and is None for a metric congestion lowers, so
    each ``recovery`` entry of ``stats`` is replaced by the same ratio on the negated values,
    (c - t) / (c - b) = (-c + t) / (-c + b), with a percentile bootstrap interval
    (:mod:`.recovery`, the statistics' resamples and seed; ``method`` says so). ``csv``: the
    statistics' input (condition,trial,value). Returns ``stats`` changed in place."""
    import csv as csvmod
    import math

    from qoslab.stats.recovery import bootstrap_means, percentile_interval, recovery_ratio, recovery_replicates

    samples: dict[str, list[float]] = {}
    with open(csv) as f:
        for r in csvmod.DictReader(f):
            samples.setdefault(r["condition"], []).append(-float(r["elapsed_s"]))
    st = stats["settings"]
    for rec in stats.get("recovery", []):
        triple = (rec["baseline"], rec["congested"], rec["treated"])
        means = [sum(samples[n]) / len(samples[n]) for n in triple]
        ratio = recovery_ratio(*means)
        reps = recovery_replicates(bootstrap_means(samples, triple, int(st["bootstrap_resamples"]),
                                                   int(st["bootstrap_seed"])), triple)
        rec.update({"ratio": None if math.isnan(ratio) else ratio, "ci95": percentile_interval(reps),
                    "method": "percentile bootstrap of the negated values (higher is better)"})
    return stats
