"""Simulated sequential campaigns (pure, seeded): does stopping on precision keep a later test honest?

A :class:`Scenario` is a Table-5 matrix with known populations: ``no congestion fifo`` (the
baseline) and ``no congestion thesis`` drawn from the *same* population (no effect: every
significant Welch test between them is a type I error), ``congestion fifo`` and
``congestion thesis`` from others (a known effect). Each simulated campaign draws ``max`` trials
per condition, runs the playbook's rule (:func:`.sequential.evaluate`) on the first ``min``,
``min + every``, ... trials of every condition (all conditions advance together, as the runner's
stages) and stops where it holds; then, on the trials up to the stop, it tests the null pair
(Welch, alpha 0.05) and checks whether the 95 % Welch intervals of the mean differences (the null
pair's and the effect pair's) cover the true differences. The fixed design (all ``max`` trials) of
the same draws is scored alongside.

Scenarios: :func:`synthetic` (lognormal, shaped like the 10 Mbit/s Table-5 campaign) and
:func:`appendix_a` (the thesis's Appendix A trial times, resampled: the uncongested QoS column
for both uncongested conditions, congested without QoS for ``congestion fifo``, congested with
QoS for ``congestion thesis``).
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qoslab.stats.sequential import evaluate, t_sf2, welch_t
from qoslab.trials.playbook import SequentialTrials, StopRule

BASE, NULL, CONG, TREAT = "no congestion fifo", "no congestion thesis", "congestion fifo", "congestion thesis"
CONDITIONS = (BASE, CONG, NULL, TREAT)
RECOVERIES = [(BASE, CONG, TREAT)]

#: Draws ``n`` trial times of a condition.
Sampler = Callable[[np.random.Generator, str, int], np.ndarray]


@dataclass(frozen=True)
class Scenario:
    """Populations of the four conditions (a sampler) and their true means."""

    name: str
    sample: Sampler
    means: dict[str, float]


@dataclass(frozen=True)
class SimResult:
    """Rates over the simulated campaigns: Welch type I error of the null pair, coverage of the
    95 % intervals of the null and the effect pair's mean differences, for the sequential design
    and the fixed one (all ``max`` trials); the mean trials per condition and the share stopped
    before ``max``."""

    scenario: str
    campaigns: int
    type1: float
    coverage_null: float
    coverage_effect: float
    fixed_type1: float
    fixed_coverage_null: float
    fixed_coverage_effect: float
    mean_trials: float
    stopped_early: float


def synthetic() -> Scenario:
    """Lognormal populations shaped like the 10 Mbit/s Table-5 campaign (means and coefficients
    of variation of docs/results/thesis-table5-20261123, congested fifo's tail damped to CV 0.35)."""
    shape = {BASE: (1.30, 0.16), NULL: (1.30, 0.16), CONG: (19.3, 0.35), TREAT: (2.09, 0.20)}

    def sample(rng: np.random.Generator, cond: str, n: int) -> np.ndarray:
        mean, cv = shape[cond]
        s2 = np.log1p(cv * cv)
        return rng.lognormal(np.log(mean) - s2 / 2, np.sqrt(s2), n)

    return Scenario("synthetic lognormal", sample, {c: m for c, (m, _) in shape.items()})


def appendix_a(csv_path: Path) -> Scenario:
    """The thesis's Appendix A Table-5 data (``trial,congestion,qos,elapsed_s``) as populations."""
    cols: dict[tuple[str, str], list[float]] = {}
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            cols.setdefault((row["congestion"], row["qos"]), []).append(float(row["elapsed_s"]))
    pops = {BASE: cols[("no", "yes")], NULL: cols[("no", "yes")], CONG: cols[("yes", "no")],
            TREAT: cols[("yes", "yes")]}
    arrays = {c: np.asarray(v) for c, v in pops.items()}

    def sample(rng: np.random.Generator, cond: str, n: int) -> np.ndarray:
        return rng.choice(arrays[cond], size=n, replace=True)

    return Scenario("thesis Appendix A (resampled)", sample, {c: float(v.mean()) for c, v in arrays.items()})


def stop_at(design: SequentialTrials, data: dict[str, np.ndarray], seed: int, b: int) -> int:
    """Trials per condition after which the rule stops the campaign (``max`` when it never holds)."""
    for m in design.checkpoints()[:-1]:
        d = evaluate(design.stop, {c: v[:m] for c, v in data.items()}, RECOVERIES, seed + m, b=b)
        if d.stop:
            return m
    return design.max


def _score(sc: Scenario, data: dict[str, np.ndarray], n: int) -> tuple[bool, bool, bool]:
    """(null pair significant at 0.05, the null pair's 95 % Welch interval covers 0, the effect
    pair's covers the true difference). An interval covers a value when the Welch test of that
    value does not reject it at 0.05 (the same thing, without the t quantile)."""
    d0, se0, df0 = welch_t(data[BASE][:n], data[NULL][:n])
    d1, se1, df1 = welch_t(data[BASE][:n], data[CONG][:n])
    true1 = sc.means[CONG] - sc.means[BASE]
    p0 = t_sf2(d0 / se0, df0) if se0 > 0 else 1.0
    p1 = t_sf2((d1 - true1) / se1, df1) if se1 > 0 else 0.0
    return p0 < 0.05, p0 >= 0.05, p1 >= 0.05


def stop_on_significance(design: SequentialTrials, data: dict[str, np.ndarray], seed: int, b: int) -> int:
    """A rule that *is* a test (for contrast): stop as soon as the null pair's Welch p < 0.05.
    It inflates the type I error; the precision rule must not."""
    for m in design.checkpoints()[:-1]:
        d, se, df = welch_t(data[BASE][:m], data[NULL][:m])
        if se > 0 and t_sf2(d / se, df) < 0.05:
            return m
    return design.max


#: A stopping rule of the simulation: (design, data, seed, bootstrap resamples) -> trials per condition.
Stopper = Callable[[SequentialTrials, dict[str, np.ndarray], int, int], int]


def simulate(sc: Scenario, design: SequentialTrials, campaigns: int = 400, seed: int = 0,
             b: int = 400, stopper: Stopper | None = None) -> SimResult:
    """Run ``campaigns`` simulated campaigns of ``design`` on ``sc`` (seeded; ``b``: bootstrap
    resamples of a recovery check; ``stopper``: the stopping rule, default :func:`stop_at`, the
    playbook's)."""
    rng = np.random.default_rng(seed)
    stop = stopper or stop_at
    seq, fixed, ns = [], [], []
    for k in range(campaigns):
        data = {c: sc.sample(rng, c, design.max) for c in CONDITIONS}
        n = stop(design, data, seed * 100_003 + k * 1_000, b)
        ns.append(n)
        seq.append(_score(sc, data, n))
        fixed.append(_score(sc, data, design.max))
    s, f = np.asarray(seq, dtype=float), np.asarray(fixed, dtype=float)
    return SimResult(sc.name, campaigns, float(s[:, 0].mean()), float(s[:, 1].mean()), float(s[:, 2].mean()),
                     float(f[:, 0].mean()), float(f[:, 1].mean()), float(f[:, 2].mean()), float(np.mean(ns)),
                     float(np.mean([n < design.max for n in ns])))


def design(metric: str, half_width: float, lo: int = 10, hi: int = 50, every: int = 5) -> SequentialTrials:
    """A sequential design (as a playbook's ``trials:``) with a precision rule."""
    return SequentialTrials(min=lo, max=hi, every=every, stop=StopRule(metric=metric, half_width=half_width))
