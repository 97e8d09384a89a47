"""Failed attempts whose render time is right-censored, and the censoring sensitivity.

A trial attempt fails with a *call timeout* when one render call gets no reply within the
workload's call timeout (``workload.timeout_s``; the JDK's RMI response timeout then raises
``SocketTimeoutException: Read timed out``) or a worker's whole job overruns its calls times that
timeout. Such an attempt rendered for at least the call timeout (and at least the manager's
``elapsed_render_s`` at the failure, which managers since this module also print): its render time
is **right-censored** at that bound, not missing. The runner re-runs a failed attempt, so the
campaign's n trials per condition hold successful attempts only: the slowest attempts of a
congested condition are left out, which understates its mean, the slowdown and the recovery.

The campaign's statistics therefore come twice when any attempt was censored:

- ``stats.json``: the successful attempts (the campaign's design: n per condition);
- ``stats-censored.json``: the same tool on ``trials-censored.csv``, the successful attempts plus
  every censored attempt at its lower bound (seconds). Its means, slowdowns and recovery ratios
  are lower bounds of those of all attempts when only the congested reference condition is
  censored (the usual case: fifo under congestion), and its rank tests treat a censored attempt as
  no slower than its bound (conservative).

``censoring.json`` lists the censored attempts (condition, trial, attempt, bound, error).

The record is the campaign folder itself: an earlier attempt of trial ``idx`` is kept as
``trials/NNNN.attempt-K/`` with its manager result ``workload/workload-result.json``; the last
attempt of a trial that is still failed is ``trials/NNNN/``.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from qoslab.trials.playbook import Playbook
from qoslab.trials.store import Store

#: Messages of a render-phase call timeout from managers that do not print ``call_timeout``
#: (qoslab before this module): the RMI response timeout, or a whole job overrunning (its bound, s).
_READ_TIMEOUT = re.compile(r"render failed: .*SocketTimeoutException: Read timed out")
_OVERRUN = re.compile(r"render did not finish within ([0-9.]+(?:[eE][-+]?[0-9]+)?) s")
_ATTEMPT_DIR = re.compile(r"^(\d{4,})(?:\.attempt-(\d+))?$")


@dataclass(frozen=True)
class CensoredAttempt:
    """One failed attempt with a right-censored render time: ``bound_s`` (seconds) is a lower
    bound of its render time; ``attempt`` is 1-based in the order the attempts ran."""

    idx: int
    condition: str
    trial: int
    attempt: int
    bound_s: float
    error: str


def censoring_bound(result: dict[str, Any], call_timeout_s: float) -> float | None:
    """The lower bound (seconds) of a failed attempt's render time from its manager result
    (``workload-result.json``), or None when the attempt is not censored (it succeeded, or failed
    for another reason: a dead worker, a checksum, a lookup timeout before the render).

    A manager that prints ``call_timeout`` decides itself, and the bound is the larger of
    ``call_timeout_s`` and its ``elapsed_render_s`` (matmul: ``failed_after_s``) at the failure;
    for an older manager's result the error text decides, and the bound is ``call_timeout_s`` (a
    read timeout: that one call took longer) or the overrun's own bound. Pure."""
    if result.get("valid") is not False:
        return None
    if "call_timeout" in result:
        if result["call_timeout"] is not True:
            return None
        elapsed = result.get("elapsed_render_s", result.get("failed_after_s"))  # matmul: failed_after_s
        return max(call_timeout_s, float(elapsed or 0.0))
    error = str(result.get("error") or "")
    if _READ_TIMEOUT.search(error):
        return call_timeout_s
    m = _OVERRUN.search(error)
    return max(call_timeout_s, float(m.group(1))) if m else None


def _attempt_dirs(trials_dir: Path, done: set[int]) -> list[tuple[int, int, Path]]:
    """(idx, attempt, folder) of every attempt that did not end the trial successfully: the
    ``NNNN.attempt-K`` folders (attempt K) and the last folder of a trial that is not done."""
    out = []
    for d in trials_dir.iterdir() if trials_dir.is_dir() else []:
        m = _ATTEMPT_DIR.match(d.name)
        if not m or not d.is_dir():
            continue
        idx = int(m.group(1))
        if m.group(2):
            out.append((idx, int(m.group(2)), d))
        elif idx not in done:
            out.append((idx, 1 + sum(1 for _ in trials_dir.glob(f"{d.name}.attempt-*")), d))
    return sorted(out)


def censored_attempts(pb: Playbook, store: Store, folder: Path) -> list[CensoredAttempt]:
    """Every censored attempt of the campaign in ``folder`` (non-warm-up trials only), in run
    order. Attempts killed with their run, or failed before the manager printed a result, have no
    ``workload-result.json`` and are not censored. An unreadable result file counts as not
    censored (it is not evidence of a render time)."""
    rows = {r.idx: (r.condition, r.trial, r.warmup, r.status) for r in store.trials()}
    done = {idx for idx, (_, _, _, status) in rows.items() if status == "done"}
    out = []
    for idx, attempt, d in _attempt_dirs(folder / "trials", done):
        if idx not in rows or rows[idx][2]:
            continue
        cond, trial = rows[idx][0], rows[idx][1]
        try:
            result = json.loads((d / "workload" / "workload-result.json").read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(result, dict):
            continue
        bound = censoring_bound(result, pb.workload_of(pb.condition(cond)).timeout_s)
        if bound is not None:
            out.append(CensoredAttempt(idx, cond, trial, attempt, bound, str(result.get("error", ""))[:300]))
    return out


def censoring_summary(pb: Playbook, censored: list[CensoredAttempt], counts: dict[str, int]) -> dict[str, Any]:
    """``censoring.json``: per condition the successful trials (``counts``), the censored attempts
    and their bounds (seconds, min/max), the call timeout (seconds), and the attempt list. Pure."""
    per: dict[str, Any] = {}
    for c in pb.conditions:
        mine = [a for a in censored if a.condition == c.name]
        per[c.name] = {"successful": counts.get(c.name, 0), "censored": len(mine),
                       "call_timeout_s": pb.workload_of(c).timeout_s,
                       "bound_min_s": min((a.bound_s for a in mine), default=None),
                       "bound_max_s": max((a.bound_s for a in mine), default=None)}
    return {"definition": "a failed attempt whose render call got no reply within the call timeout: its "
                          "render time is at least bound_s (right-censored); stats-censored.json adds these "
                          "attempts at their bound to the successful ones",
            "conditions": per, "attempts": [asdict(a) for a in censored]}


def write_censored_csv(trials_csv: Path, censored: list[CensoredAttempt], out: Path) -> int:
    """``out``: the rows of ``trials_csv`` (``condition,trial,elapsed_s``) plus one row per censored
    attempt at its bound (seconds; ``trial`` is the scheduled trial number). Returns the row count."""
    lines = trials_csv.read_text().splitlines()
    rows = lines[1:] + [f"{a.condition},{a.trial},{a.bound_s!r}" for a in censored]
    out.write_text("\n".join([lines[0], *rows]) + "\n")
    return len(rows)
