"""The recovery ratio: its one definition and its one bootstrap (pure, numpy).

The recovery of a QoS profile is the share of the congestion's slowdown it wins back, of three
condition means (seconds): baseline ``b`` (no congestion, FIFO), congested ``c`` (congestion,
FIFO) and treated ``t`` (congestion, the profile)::

    recovery = (c - t) / (c - b)        undefined (NaN) when c <= b (congestion did not slow down)

1.0 is full recovery, 0 none, below 0 the profile made things worse (thesis, chapter V: its 70 %).
The Java statistics (``analysis/``, ``TrialStats.recovery``: the published ratio and its BCa 95 %
interval in stats.json's ``recovery`` block) compute the same quantity; tests/unit/test_stats_scipy.py
checks them against :func:`recovery_ratio` on the thesis's data and on every committed campaign.

The bootstrap here is the Python one, used where the Java tool has no interval: the factorial
block's difference of two recoveries (:mod:`.factorial`, 10,000 replicates) and the sequential
stopping rule's precision check (:mod:`.sequential`, 2,000 replicates). Every condition is
resampled on its own, with replacement, its size kept, from one seeded ``numpy`` generator in a
stated order, so an interval is reproducible from its seed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

Samples = Sequence[float] | npt.NDArray[np.float64]
#: (baseline, congested, treated) condition names.
Triple = tuple[str, str, str]


def recovery_ratio(base: float, cong: float, treat: float) -> float:
    """(cong - treat) / (cong - base) of three means (seconds); NaN when ``cong <= base``."""
    slowdown = cong - base
    return (cong - treat) / slowdown if slowdown > 0 else math.nan


def bootstrap_means(samples: Mapping[str, Samples], order: Sequence[str], resamples: int,
                    seed: int) -> dict[str, npt.NDArray[np.float64]]:
    """``resamples`` bootstrap means of each condition in ``order`` (drawn in that order from one
    ``numpy.random.default_rng(seed)``; a name given twice is drawn once). Returns name -> array of
    shape (resamples,). Raises KeyError for a name not in ``samples``."""
    rng = np.random.default_rng(seed)
    out: dict[str, npt.NDArray[np.float64]] = {}
    for name in order:
        if name in out:
            continue
        x = np.asarray(samples[name], dtype=float)
        out[name] = x[rng.integers(0, len(x), size=(resamples, len(x)))].mean(axis=1)
    return out


def recovery_replicates(means: Mapping[str, Any], triple: Triple) -> npt.NDArray[np.float64]:
    """The recovery of ``triple`` in every bootstrap replicate of ``means`` (from
    :func:`bootstrap_means`), NaN where that replicate shows no slowdown."""
    base, cong, treat = (np.asarray(means[n], dtype=float) for n in triple)
    slowdown = cong - base
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(slowdown > 0, (cong - treat) / slowdown, np.nan)


def percentile_interval(replicates: npt.NDArray[np.float64], level: float = 0.95) -> list[float] | None:
    """The percentile interval [lo, hi] at ``level`` of the defined (finite) replicates; None with
    fewer than two."""
    ok = replicates[np.isfinite(replicates)]
    if len(ok) < 2:
        return None
    tail = (1 - level) / 2 * 100
    return [float(np.percentile(ok, tail)), float(np.percentile(ok, 100 - tail))]


def undefined_share(replicates: npt.NDArray[np.float64]) -> float:
    """The share (0..1) of replicates where the recovery is undefined (no slowdown)."""
    return float(np.mean(~np.isfinite(replicates))) if len(replicates) else 1.0
