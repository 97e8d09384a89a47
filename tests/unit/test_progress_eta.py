"""The progress bar's ETA: per condition, its mean trial time so far times its trials left,
summed (a pure function), and the bar's bookkeeping when a sequential campaign skips trials."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.progress import Progress

from qoslab.campaign.eta import eta_s
from qoslab.cli.campaign import _TrialProgress


def test_eta_is_each_conditions_mean_times_its_remaining_trials():
    wall = {"slow": [80.0, 100.0], "fast": [2.0, 4.0, 3.0]}
    assert eta_s(["slow"] * 4 + ["fast"] * 20, wall, {}) == pytest.approx(4 * 90.0 + 20 * 3.0)
    # one mean over all trials (rich's ETA) would say 24 x 37.8 = 907 s; per condition: 420 s
    assert eta_s([], wall, {}) == 0.0
    assert eta_s(["fast"], {}, {"fast": [1.0]}) is None  # nothing measured in this run yet
    # a condition not seen in this run: its earlier render times plus this run's overhead
    assert eta_s(["new", "new"], wall, {"new": [5.0, 7.0]}, overhead_s=0.5) == pytest.approx(2 * 6.5)


def _row(idx: int, cond: str, elapsed: float) -> dict:
    return {"idx": idx, "condition": cond, "trial": idx, "warmup": False, "elapsed_s": elapsed}


def test_progress_eta_per_condition_and_skipped_trials(monkeypatch):
    clock = iter([0.0, 0.0, 90.0, 93.0, 96.0])
    monkeypatch.setattr("qoslab.cli.campaign.time.monotonic", lambda: next(clock))
    console = Console(file=io.StringIO(), width=120)
    pending = {0: "slow", 1: "fast", 2: "fast", 3: "slow", 4: "fast", 5: "slow"}
    with Progress(console=console) as prog:
        bar = _TrialProgress(prog, {}, pending)
        bar.started(0, 6)
        bar.trial(_row(0, "slow", 89.0))
        bar.trial(_row(1, "fast", 2.5))
        task = prog.tasks[0]
        assert task.fields["eta"] == "ETA 0:03:06"  # 2 slow x 90 s + 2 fast x 3 s
        bar.skipped([3, 4])  # a sequential stop: one slow and one fast trial will not run
        bar.trial(_row(2, "fast", 2.5))
        task = prog.tasks[0]
        assert task.total == 4 and task.completed == 3
        assert task.fields["eta"] == "ETA 0:01:30"  # the last slow trial
