"""Sequential stopping on precision (pure): is the primary estimate's 95 % interval narrow enough?

The rule (a playbook's ``trials: {min, max, every, stop: {rule: precision, ...}}``, see
:class:`.playbook.StopRule`) looks only at how wide an interval is, never at whether it excludes
a value, so stopping on it does not test a hypothesis and a later test's type I error stays near
its nominal level (shown by :mod:`.seqsim`). The intervals here are the stopping check's only
(Student t for a mean, percentile bootstrap for a recovery ratio, seeded); the campaign's
statistics stay the Java tool's (BCa, Welch, ...).

Student's t distribution is computed here (regularized incomplete beta by its continued
fraction) so that the package needs numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from qoslab.stats.recovery import bootstrap_means, percentile_interval, recovery_replicates, undefined_share
from qoslab.trials.playbook import StopRule

#: Bootstrap resamples of the recovery check.
BOOTSTRAP_B = 2000


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbeta) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbeta) * _betacf(b, a, 1.0 - x) / b


def t_sf2(t: float, df: float) -> float:
    """Two-sided tail probability P(|T| >= |t|) of Student's t with ``df`` degrees of freedom."""
    return betainc(df / 2.0, 0.5, df / (df + t * t))


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile (0.5 < p < 1) of Student's t with ``df`` degrees of freedom."""
    target = 2.0 * (1.0 - p)
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > target:
        hi *= 2.0
    for _ in range(80):
        mid = (lo + hi) / 2.0
        if t_sf2(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10 * hi:
            break
    return (lo + hi) / 2.0


def mean_half_width(x: Sequence[float] | np.ndarray, level: float = 0.95) -> float:
    """Half-width of the t interval of the mean of ``x`` (inf for fewer than 2 values)."""
    n = len(x)
    if n < 2:
        return math.inf
    sd = float(np.std(np.asarray(x, dtype=float), ddof=1))
    return t_quantile(0.5 + level / 2.0, float(n - 1)) * sd / math.sqrt(n)


def welch_t(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> tuple[float, float, float]:
    """Welch's comparison of b against a: (mean difference b - a, its standard error, the
    Welch-Satterthwaite degrees of freedom)."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    va, vb = float(np.var(xa, ddof=1)) / len(xa), float(np.var(xb, ddof=1)) / len(xb)
    diff, se = float(xb.mean() - xa.mean()), math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va * va / (len(xa) - 1) + vb * vb / (len(xb) - 1)) if se > 0 else float(len(xa) - 1)
    return diff, se, df


def welch(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
          level: float = 0.95) -> tuple[float, float, float]:
    """Welch's comparison of b against a: (mean difference b - a, its t interval's half-width,
    two-sided p value)."""
    diff, se, df = welch_t(a, b)
    if se == 0.0:
        return diff, 0.0, 1.0 if diff == 0.0 else 0.0
    return diff, t_quantile(0.5 + level / 2.0, df) * se, t_sf2(diff / se, df)


def recovery_half_width(base: Sequence[float] | np.ndarray, cong: Sequence[float] | np.ndarray,
                        treat: Sequence[float] | np.ndarray, seed: int,
                        b: int = BOOTSTRAP_B, level: float = 0.95) -> float:
    """Half-width of the percentile-bootstrap interval of the recovery ratio of three samples
    (each resampled on its own, ``b`` times, seeded); inf when over 5 % of the resamples show no
    slowdown (the ratio is undefined there)."""
    means = bootstrap_means({"b": base, "c": cong, "t": treat}, ("b", "c", "t"), b, seed)
    r = recovery_replicates(means, ("b", "c", "t"))
    ci = percentile_interval(r, level)
    if undefined_share(r) > 0.05 or ci is None:
        return math.inf
    return (ci[1] - ci[0]) / 2.0


@dataclass(frozen=True)
class Decision:
    """One check of the rule after ``n`` trials per condition: whether it holds (``stop``), the
    half-widths it compared (estimate -> half-width; relative to the mean for ``metric: mean``)
    and the target."""

    n: int
    stop: bool
    half_widths: dict[str, float] = field(default_factory=dict)
    target: float = 0.0

    def as_json(self) -> dict[str, object]:
        """The decision as JSON values (an infinite half-width as None)."""
        return {"n": self.n, "stop": self.stop, "target": self.target,
                "half_widths": {k: (round(v, 6) if math.isfinite(v) else None) for k, v in self.half_widths.items()}}


def evaluate(rule: StopRule, data: Mapping[str, Sequence[float] | np.ndarray],
             recoveries: Sequence[tuple[str, str, str]], seed: int, b: int = BOOTSTRAP_B) -> Decision:
    """Check ``rule`` on the trial values per condition (every condition the same number ``n``,
    the smallest counts). ``recoveries``: (baseline, congested, treated) triples of the matrix,
    needed for ``metric: recovery`` (no triple: the rule never holds); ``b``: bootstrap resamples."""
    n = min((len(v) for v in data.values()), default=0)
    widths: dict[str, float] = {}
    if rule.metric == "recovery":
        for i, (base, c, t) in enumerate(recoveries):
            widths[f"recovery of {t}"] = recovery_half_width(data[base], data[c], data[t], seed + i, b)
    else:
        for name, v in data.items():
            m = float(np.mean(v)) if len(v) else 0.0
            widths[f"mean of {name}"] = mean_half_width(v) / abs(m) if m else math.inf
    stop = bool(widths) and all(w <= rule.half_width for w in widths.values())
    return Decision(n, stop, widths, rule.half_width)
