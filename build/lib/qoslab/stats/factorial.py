"""The factorial block of stats.json: the QoS factor's recovery at every level of the other
factors, and whether recoveries differ between levels.

The recoveries themselves (ratio and BCa 95 % interval, the one published interval of a recovery)
are the Java tool's (``--recovery`` triples planned per level by
:func:`qoslab.trials.comparisons.plan_comparisons`); this module labels them with their levels and adds
what the Java tool does not compute: for every two recoveries of the same treated profile, the
difference ``recovery(a) - recovery(b)`` with a seeded percentile bootstrap interval
(:mod:`qoslab.stats.recovery`: every distinct condition resampled independently with replacement,
a condition shared by both recoveries, such as their common baseline, resampled once per replicate). An interval
that excludes 0 says the recoveries differ between the two levels.
"""

from __future__ import annotations

import csv
import itertools
from pathlib import Path
from typing import Any

import numpy as np

from qoslab.stats.recovery import bootstrap_means, percentile_interval, recovery_ratio, recovery_replicates
from qoslab.trials.playbook import Playbook

#: Bootstrap replicates of a difference of recoveries.
RESAMPLES = 10_000
#: The factor whose recovery is measured.
QOS_FACTOR = "profile"


def read_trials(csv_path: Path) -> dict[str, np.ndarray]:
    """trials.csv (``condition,trial,elapsed_s``) as condition -> values."""
    out: dict[str, list[float]] = {}
    with open(csv_path, newline="") as f:
        for row in csv.DictReader(f):
            out.setdefault(row["condition"], []).append(float(row["elapsed_s"]))
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def recovery_difference(data: dict[str, np.ndarray], a: tuple[str, str, str], b: tuple[str, str, str], *,
                        resamples: int = RESAMPLES, seed: int = 1, level: float = 0.95) -> dict[str, Any]:
    """recovery(a) - recovery(b) of two (baseline, congested, treated) triples with its percentile
    bootstrap interval; replicates where either recovery is undefined are dropped and counted."""
    m = bootstrap_means(data, sorted(set(a) | set(b)), resamples, seed)
    point = recovery_ratio(*(float(data[n].mean()) for n in a)) - recovery_ratio(*(float(data[n].mean()) for n in b))
    diff = recovery_replicates(m, a) - recovery_replicates(m, b)
    ci = percentile_interval(diff, level)
    return {"difference": None if np.isnan(point) else point, "ci95": ci,
            "excludes_zero": None if ci is None else bool(ci[0] > 0 or ci[1] < 0),
            "bootstrap_undefined": int(np.sum(~np.isfinite(diff))), "resamples": resamples, "seed": seed}


def factorial_block(pb: Playbook, stats: dict[str, Any], csv_path: Path) -> dict[str, Any] | None:
    """stats.json's ``factorial`` block for a playbook with ``factors:`` (None without): the
    factors, each Java recovery labelled with its levels (without the QoS factor), and the
    difference between every two recoveries of the same treated profile."""
    if not pb.factors:
        return None
    levels = {c.name: c.levels for c in pb.conditions}
    data = read_trials(csv_path)
    seed = pb.seed if pb.seed is not None else 1
    recs = []
    for r in stats.get("recovery", []):
        treated = levels.get(r["treated"], {})
        recs.append({"levels": {k: v for k, v in treated.items() if k != QOS_FACTOR},
                     "profile": treated.get(QOS_FACTOR), "reference_profile": levels.get(r["congested"], {})
                     .get(QOS_FACTOR), "baseline": r["baseline"], "congested": r["congested"],
                     "treated": r["treated"], "ratio": r.get("ratio"), "ci95": r.get("ci95")})
    diffs = []
    for x, y in itertools.combinations(recs, 2):
        if x["profile"] != y["profile"]:
            continue
        ta = (x["baseline"], x["congested"], x["treated"])
        tb = (y["baseline"], y["congested"], y["treated"])
        if not all(n in data for n in (*ta, *tb)):
            continue
        diffs.append({"a": x["levels"], "b": y["levels"], "profile": x["profile"],
                      **recovery_difference(data, ta, tb, seed=seed)})
    factors = {k: v for k, v in pb.factors.items() if k != "include"}
    return {"factors": factors, "qos_factor": QOS_FACTOR, "recoveries": recs, "differences": diffs,
            "method": "recoveries: the Java tool's BCa 95 % intervals; differences: percentile bootstrap "
                      f"({RESAMPLES} replicates, numpy, seed {seed}), conditions resampled independently"}
