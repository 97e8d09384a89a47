"""Statistics of a campaign: trials.csv (and the network-wait variant) from the store, and the
Java statistics tool (Apache Commons Math, ``analysis/``) run over it with the comparisons the
playbook's matrix and baseline call for; with censored attempts (:mod:`.censoring`) also the
censoring sensitivity (stats-censored.json)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from qoslab.errors import QoslabError
from qoslab.stats.calls import run_call_stats
from qoslab.stats.censoring import CensoredAttempt, censored_attempts, censoring_summary, write_censored_csv
from qoslab.stats.factorial import factorial_block
from qoslab.stats.fidelity import fidelity_block, is_invalid
from qoslab.stats.jar import run_analysis
from qoslab.stats.metrics import declared_metrics, higher_is_better_recovery, metric_block, secondary_block
from qoslab.stats.staging import staged
from qoslab.stats.stopping import stopping_summary
from qoslab.stats.switchq import switch_queues_block
from qoslab.trials.comparisons import plan_comparisons
from qoslab.trials.playbook import Playbook
from qoslab.trials.store import METRICS, Store
from qoslab.workloads.metrics import MetricSet


def export_csv(store: Store, path: Path, metric: str = "elapsed_s", exclude_invalid: bool = False,
               declared: MetricSet | None = None) -> int:
    """Write ``condition,trial,elapsed_s`` rows of the done, valid, non-warm-up trials (the column
    keeps its name so the statistics read either file; ``metric`` chooses its content: one of
    METRICS or a metric of ``declared``, in its unit); returns the number of rows. Trials without
    the metric (older stores) are left out, and with ``exclude_invalid`` those the fidelity
    monitor judged invalid (:mod:`.fidelitystats`). Raises QoslabError for an unknown metric."""
    known = [*METRICS, *(m.name for m in declared.all)] if declared else list(METRICS)
    if metric not in known:
        raise QoslabError(f"unknown metric {metric!r}: one of {sorted(known)}")
    n = 0
    with open(path, "w") as f:
        f.write("condition,trial,elapsed_s\n")
        for row in store.trials(counted=True):
            if exclude_invalid and is_invalid(row):
                continue
            e = row.metric(metric)
            if e is not None:
                f.write(f"{row.condition},{row.trial},{e!r}\n")
                n += 1
    return n


def run_stats(pb: Playbook, csv: Path, out: Path) -> dict[str, Any]:
    """Run the Java statistics on ``csv`` (see :func:`plan_comparisons`) into ``out``; returns
    stats.json as a dict. Raises QoslabError with the tool's message when it fails."""
    compare, recovery = plan_comparisons(pb)
    args = ["stats", "--csv", str(csv), "--out", str(out), "--baseline", pb.baseline_condition().name,
                         "--tost-margin", str(pb.equivalence_margin)]
    for a, b in compare:
        args += ["--compare", f"{a}|{b}"]
    for r in recovery:
        args += ["--recovery", "|".join(r)]
    return run_analysis(args, "statistics", out)


#: The files a campaign's statistics write (globs): a run replaces them together and removes those of
#: an earlier run it did not write again (censoring.json is kept: a censored campaign does not remake it).
MANAGED = ("trials.csv", "trials-network.csv", "trials-all.csv", "trials-censored.csv", "stats.json",
           "stats-network.json", "stats-all.json", "stats-censored.json", "calls.jsonl", "calls-stats.json",
           "trials-metric-*.csv", "stats-metric-*.json")


def campaign_stats(pb: Playbook, store: Store, folder: Path, out: Path | None = None) -> dict[str, Any]:
    """trials.csv + stats.json (render times) and, when the trials hold worker busy times,
    trials-network.csv + stats-network.json (network wait, see METRICS); with the manager's call
    times, calls.jsonl + calls-stats.json and their summary in stats.json's ``calls``
    (:mod:`.callstats`); the fidelity verdicts in ``fidelity`` (trials judged invalid are left out
    of the main statistics; with any, trials-all.csv + stats-all.json hold every trial). Written
    into ``out`` (default: the campaign ``folder``, whose trial artifacts are read) all together
    or not at all (:mod:`.staging`: stats.json last; a failure leaves ``out`` as it was, so no
    half-written stats.json is ever read back). Returns stats.json. Raises QoslabError when a
    trial is not done (failed, pending or interrupted: no statistics over unequal trial counts;
    ``--resume`` runs them) or fewer than 2 valid trials exist. Trials a sequential campaign
    skipped are absent, not missing; what stopped it is stats.json's ``stopping``
    (:func:`.stopping.stopping_summary`)."""
    timed_out = censored_failed_trials(pb, store, folder)
    left = sorted((s, n - (len(timed_out) if s == "failed" else 0)) for s, n in store.counts().items()
                  if s not in ("done", "skipped"))
    left = [(s, n) for s, n in left if n]
    if left:
        what = ", ".join(f"{n} {status}" for status, n in left)
        raise QoslabError(f"{folder}: campaign incomplete ({what}): no statistics over unequal trial counts; "
                          f"`qoslab campaign run --resume {folder}` runs them")
    with staged(out or folder, MANAGED, last="stats.json") as work:
        return _stats_into(pb, store, folder, work, timed_out)


def _stats_into(pb: Playbook, store: Store, folder: Path, work: Path, timed_out: list[CensoredAttempt]
                ) -> dict[str, Any]:
    """:func:`campaign_stats`'s files written into ``work`` (the trial artifacts read from ``folder``)."""
    fidelity = fidelity_block(pb, store)
    drop = bool(fidelity["excluded_applied"])
    ms = declared_metrics(store)
    primary = ms.primary.name if ms else "elapsed_s"
    if primary != "elapsed_s":  # censoring bounds are seconds of elapsed_s: not this metric's
        timed_out = []
    main = export_csv(store, work / "trials.csv", primary, exclude_invalid=drop, declared=ms)
    if main < 2:
        raise QoslabError(f"{folder}: fewer than 2 valid trials, no statistics")
    source = work / "trials.csv"
    if timed_out:  # censor_timeouts: one row per timed-out trial at its bound beside the successful ones
        source = work / "trials-censored.csv"
        write_censored_csv(work / "trials.csv", timed_out, source)
    stats = run_stats(pb, source, work / "stats.json")
    if ms is not None and ms.primary.direction == "higher":
        higher_is_better_recovery(stats, source)
    if timed_out:
        stats["censored"] = censored_block(timed_out)
    stats.update(_blocks(pb, store, folder, stats, source, exclude_invalid=drop, work=work))
    if ms is not None:  # a declared metric set (without one stats.json is what it always was)
        stats["metric"] = metric_block(ms)
        stats["secondary"] = secondary_block(
            ms, work, lambda csv, name: export_csv(store, csv, name, exclude_invalid=drop, declared=ms),
            lambda csv, out: run_stats(pb, csv, out))
    stats["fidelity"] = fidelity
    (work / "stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    if fidelity["excluded"]:  # the second set: every trial, invalid ones included
        export_csv(store, work / "trials-all.csv", primary, declared=ms)
        if timed_out:
            write_censored_csv(work / "trials-all.csv", timed_out, work / "trials-all.csv")
        run_stats(pb, work / "trials-all.csv", work / "stats-all.json")
    # (a timed-out trial has no network wait: with censored trials the network statistics would
    # compare unequal, survivor-only samples, so there are none)
    network = export_csv(store, work / "trials-network.csv", "network_s", exclude_invalid=drop)
    if network == main and not timed_out and primary == "elapsed_s":
        run_stats(pb, work / "trials-network.csv", work / "stats-network.json")
    if not timed_out:
        censoring_stats(pb, store, folder, work)
    return stats


def censored_failed_trials(pb: Playbook, store: Store, folder: Path) -> list[CensoredAttempt]:
    """With ``censor_timeouts``: the last attempt of every failed trial, when every failed trial's
    last attempt is censored (a call timeout with a bound); else [] (the campaign is incomplete as
    before). Warm-up trials are not counted (they are not censored attempts)."""
    failed = {row.idx for row in store.trials() if row.status == "failed" and not row.warmup}
    if not pb.censor_timeouts or not failed:
        return []
    last: dict[int, CensoredAttempt] = {}
    for a in censored_attempts(pb, store, folder):
        if a.idx in failed and (a.idx not in last or a.attempt > last[a.idx].attempt):
            last[a.idx] = a
    return [last[i] for i in sorted(last)] if set(last) == failed else []


def censored_block(timed_out: list[CensoredAttempt]) -> dict[str, Any]:
    """stats.json's ``censored`` block: per condition the timed-out trials counted at their bound
    (seconds), and what that means for the statistics."""
    per: dict[str, list[float]] = {}
    for a in timed_out:
        per.setdefault(a.condition, []).append(a.bound_s)
    return {"trials": len(timed_out), "conditions": {c: {"n": len(b), "bounds_s": b} for c, b in per.items()},
            "meaning": "each timed-out trial counts at its lower bound (censor_timeouts): the means of these "
                       "conditions, and the slowdowns and recoveries computed from them, are lower bounds"}


def _blocks(pb: Playbook, store: Store, folder: Path, stats: dict[str, Any],
            source: Path | None = None, exclude_invalid: bool = False, work: Path | None = None) -> dict[str, Any]:
    """stats.json's optional blocks: ``stopping`` (sequential campaigns), ``calls`` (per-call
    latency tails; without the fidelity-invalid trials when ``exclude_invalid``, as the main
    statistics), ``factorial`` (recoveries per factor level), ``overhead_s`` (harness cost),
    ``switch_queues`` (per-queue switch counters, :mod:`.switchq`). Files go to ``work``
    (default ``folder``)."""
    out: dict[str, Any] = {}
    stopping = stopping_summary(pb, store)
    if stopping is not None:  # which rule stopped each condition, and after how many trials
        out["stopping"] = stopping
    calls = run_call_stats(store, folder, *plan_comparisons(pb), exclude_invalid=exclude_invalid, out=work)
    if calls is not None:  # per-call latency tails (calls-stats.json, summarised), see .callstats
        out["calls"] = calls
    factorial = factorial_block(pb, stats, source or (work or folder) / "trials.csv")
    if factorial is not None:  # recoveries per level of the other factors and their differences
        out["factorial"] = factorial
    overhead = overhead_summary(store)
    if overhead is not None:  # the harness's cost per trial (phases_json's overhead_s)
        out["overhead_s"] = overhead
    queues = switch_queues_block(store)
    if queues is not None:  # per-queue switch counters of any platform (issue 36), see .switchq
        out["switch_queues"] = queues
    return out


def overhead_summary(store: Store) -> dict[str, Any] | None:
    """Median harness overhead (trial wall time minus the workload phase, ``overhead_s`` of
    ``phases_json``) per condition and over all counted trials, seconds; None when no trial
    recorded it (older stores)."""
    per: dict[str, list[float]] = {}
    for row in store.trials(counted=True):
        v = json.loads(row.phases_json).get("overhead_s") if row.phases_json else None
        if isinstance(v, (int, float)):
            per.setdefault(row.condition, []).append(float(v))
    if not per:
        return None
    every = [v for vs in per.values() for v in vs]
    return {"median": round(statistics.median(every), 3), "n": len(every),
            "conditions": {c: round(statistics.median(vs), 3) for c, vs in per.items()}}


def censoring_stats(pb: Playbook, store: Store, folder: Path, out: Path | None = None,
                    trials_csv: Path | None = None) -> dict[str, Any]:
    """``censoring.json`` (see :mod:`.censoring`) and, when any attempt was censored,
    ``trials-censored.csv`` and ``stats-censored.json`` (the statistics with every censored attempt
    at its lower bound), written into ``out`` (default ``folder``: callers stage it, see
    :mod:`.staging`); a stale stats-censored.json there is removed when none is. Needs
    ``trials_csv`` (default ``out``/trials.csv). A declared primary metric other than elapsed_s
    gets no censored statistics (the bounds are seconds of elapsed_s).
    Returns censoring.json as a dict. Raises QoslabError when the statistics fail."""
    out = out or folder
    censored = censored_attempts(pb, store, folder)
    counts = {c: len(v) for c, v in store.done_times().items()}
    summary = censoring_summary(pb, censored, counts)
    (out / "censoring.json").write_text(json.dumps(summary, indent=1) + "\n")
    for stale in ("trials-censored.csv", "stats-censored.json"):
        (out / stale).unlink(missing_ok=True)
    ms = declared_metrics(store)
    if censored and (ms is None or ms.primary.name == "elapsed_s"):  # bounds are seconds of elapsed_s
        write_censored_csv(trials_csv or out / "trials.csv", censored, out / "trials-censored.csv")
        run_stats(pb, out / "trials-censored.csv", out / "stats-censored.json")
    return summary
