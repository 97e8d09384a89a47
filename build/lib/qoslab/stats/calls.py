"""Call-latency statistics of a campaign (issue 24): every counted trial's render calls, as the
manager timed them (``trials/NNNN/workload/workload-calls.jsonl``), pooled into ``calls.jsonl``
with ``condition`` and ``trial`` fields, and ``qoslab-analysis calls`` over it (analysis/README.md,
"Call latency": per-condition p50/p90/p99/p99.9/max with trial-cluster bootstrap intervals, p99
comparisons and p99 recovery) into ``calls-stats.json``, with the same comparisons and recovery
triples as the render-time statistics (:func:`qoslab.trials.comparisons.plan_comparisons`). Its summary goes into
stats.json under ``calls`` (:func:`stats_block`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from qoslab.meters.calls import read_jsonl
from qoslab.stats.fidelity import is_invalid
from qoslab.stats.jar import run_analysis
from qoslab.trials.layout import workload_dir
from qoslab.trials.store import Store
from qoslab.workloads.pool import CALLS_FILE

#: Fields of a manager record kept in the pooled file (besides condition and trial).
KEEP = ("worker", "method", "frame", "index", "rows", "latency_ms", "request_bytes", "reply_bytes")


def manager_calls_path(folder: Path, idx: int) -> Path:
    """Where a trial's manager call times are (its workload folder)."""
    return workload_dir(folder, idx) / CALLS_FILE


def pooled_records(trials: Iterable[tuple[str, int, Sequence[Mapping[str, Any]]]]) -> list[dict[str, Any]]:
    """The successful render calls of (condition, trial, manager records) as flat records with
    ``condition`` and ``trial`` (pure)."""
    out = []
    for cond, trial, records in trials:
        for r in records:
            if r.get("method") == "render" and r.get("ok") and r.get("latency_ms") is not None:
                out.append({"condition": cond, "trial": trial, **{k: r.get(k) for k in KEEP}})
    return out


def export_calls(store: Store, folder: Path, path: Path, exclude_invalid: bool = True) -> tuple[dict[str, int], int]:
    """Write the counted trials' render calls to ``path`` (JSON lines), with ``exclude_invalid``
    without the trials the fidelity monitor judged ``invalid`` (as the main statistics when their
    exclusion applies, stats.json's ``fidelity.excluded_applied``); returns (calls per condition
    (conditions whose trials have no calls file are absent), trials left out as invalid)."""
    trials = []
    invalid = 0
    for row in store.trials(counted=True):
        if exclude_invalid and is_invalid(row):
            invalid += 1
            continue
        f = manager_calls_path(folder, row.idx)
        if f.is_file():
            trials.append((row.condition, row.trial, read_jsonl(f)[0]))
    recs = pooled_records(trials)
    with open(path, "w") as fh:
        for r in recs:
            fh.write(json.dumps(r) + "\n")
    counts: dict[str, int] = {}
    for r in recs:
        counts[r["condition"]] = counts.get(r["condition"], 0) + 1
    return counts, invalid


def calls_argv(calls: Path, out: Path, compare: Iterable[tuple[str, str]],
               recovery: Iterable[tuple[str, str, str]], have: Iterable[str], seed: int = 1) -> list[str]:
    """Arguments of ``qoslab-analysis calls`` (for :func:`qoslab.stats.jar.run_analysis`) with the
    comparisons and triples whose conditions all have calls (``have``)."""
    ok = set(have)
    argv = ["calls", "--calls", str(calls), "--by", "condition", "--trial", "trial",
                         "--value", "latency_ms",
            "--where", "method=render", "--seed", str(seed), "--out", str(out)]
    for a, b in compare:
        if a in ok and b in ok:
            argv += ["--compare", f"{a}|{b}"]
    for r in recovery:
        if set(r) <= ok:
            argv += ["--recovery", "|".join(r)]
    return argv


def stats_block(cs: Mapping[str, Any], file: str = "calls-stats.json") -> dict[str, Any]:
    """What stats.json keeps of calls-stats.json (pure): per condition the quantiles, their
    intervals and counts, the comparisons, the recovery (per-trial figures are the calls meter's store
    columns, not computed here)."""
    keep = ("trials", "calls", "p50", "p90", "p99", "p99_9", "max", "mean", "ci95", "calls_with_rto",
            "retransmitted_segments")
    return {"file": file, "value": "manager render-call latency (ms)", "settings": cs.get("settings"),
            "conditions": {n: {k: c.get(k) for k in keep if k in c} for n, c in cs.get("conditions", {}).items()},
            "comparisons": cs.get("comparisons", []), "recovery": cs.get("recovery", [])}


def run_call_stats(store: Store, folder: Path, compare: Iterable[tuple[str, str]],
                   recovery: Iterable[tuple[str, str, str]], exclude_invalid: bool = False,
                   out: Path | None = None) -> dict[str, Any] | None:
    """``calls.jsonl`` and ``calls-stats.json`` in ``out`` (default ``folder``, whose trials'
    call times are read); returns :func:`stats_block` of it, or None when no counted trial has
    call times (a campaign from before issue 24: stale files are removed); ``excluded_invalid_trials``
    counts the trials left out as fidelity-invalid. Raises QoslabError with the tool's message
    when it fails."""
    calls, out = (out or folder) / "calls.jsonl", (out or folder) / "calls-stats.json"
    have, invalid = export_calls(store, folder, calls, exclude_invalid)
    if not have:
        calls.unlink(missing_ok=True)
        out.unlink(missing_ok=True)
        return None
    cs = run_analysis(calls_argv(calls, out, compare, recovery, have), "call-latency statistics", out, timeout_s=600)
    return {**stats_block(cs), "excluded_invalid_trials": invalid}
