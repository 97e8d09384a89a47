"""The trial's workload launch (qoslab.campaign.launch, issue 42): a gated backend starts with the
trial, congested or not (issue 48), so its manager boots while the trial prepares, and runs only
at the go; an ungated one starts when the trial asks; a gate that never got its go is
aborted and its manager ends without a run."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

import qoslab.campaign.launch as launch_mod
from qoslab.workloads.pool import WorkloadRun


class _Backend:
    """A workload backend that records when its run starts, arms the gate it gets, and waits for
    the go (or the abort) as the managers' --go-file does."""

    def __init__(self, gated: bool) -> None:
        self.gated = gated
        self.started_at: float | None = None
        self.events: list[str] = []

    def run(self, wl, executor_of, address_of, out_dir, pool=None, lifetime_s=None, on_started=None, gate=None):
        self.started_at = time.monotonic()
        on_started({"jp-2": SimpleNamespace(pid=1)})
        if gate is None:
            self.events.append("ran")
            return WorkloadRun({"valid": True, "elapsed_s": 0.1}, {})
        node = Path(gate.arm(SimpleNamespace(node_dir=lambda p: str(p))))
        while True:  # the manager polls its go file
            time.sleep(0.005)
            text = node.read_text() if node.exists() else ""
            if text.startswith("go"):
                self.events.append("go")
                return WorkloadRun({"valid": True, "elapsed_s": 0.1, "go_wait_s": 0.0}, {})
            if text.startswith("abort"):
                self.events.append("abort")
                return WorkloadRun({"valid": False, "error": "aborted"}, {})


@pytest.fixture()
def env():
    lanes = ThreadPoolExecutor(max_workers=2)
    yield SimpleNamespace(lanes=lambda: lanes, executor_of=lambda h: None, pool=None, testbed=None,
                          topo=SimpleNamespace(host=lambda h: SimpleNamespace(ip="198.18.0.1")))
    lanes.shutdown()


def _parts(tmp_path):
    windows: list[str] = []
    meters = SimpleNamespace(window_begin=lambda: windows.append("begin"))
    plan = SimpleNamespace(workload=None, workload_kind="fake", lifetime_s=60.0)
    return plan, SimpleNamespace(), meters, windows


@pytest.mark.parametrize("flood", [object(), None])  # without a flood too (issue 48): one launch for all
def test_a_gated_workload_starts_with_the_trial_and_runs_at_the_go(tmp_path, env, monkeypatch, flood):
    be = _Backend(gated=True)
    monkeypatch.setattr(launch_mod, "backend", lambda kind: be)
    plan, ctx, meters, windows = _parts(tmp_path)
    t0 = time.monotonic()
    launch = launch_mod.Launch(env, plan, tmp_path, ctx, meters, flood)
    time.sleep(0.2)  # the trial pushes, starts the receivers, settles the flood ...
    assert be.started_at is not None and be.started_at - t0 < 0.2  # ... while the manager boots
    assert be.events == [] and windows == []  # no run and no meter window before the go
    run = launch.run()
    launch.close()
    assert run.result["valid"] and be.events == ["go"] and windows == ["begin"]
    assert launch.started <= be.started_at and ctx.flood is flood and "jp-2" in ctx.workers


def test_a_gated_workload_without_its_go_ends_without_a_run(tmp_path, env, monkeypatch):
    be = _Backend(gated=True)
    monkeypatch.setattr(launch_mod, "backend", lambda kind: be)
    plan, ctx, meters, windows = _parts(tmp_path)
    launch = launch_mod.Launch(env, plan, tmp_path, ctx, meters, object())
    time.sleep(0.05)
    launch.close()  # e.g. the push failed
    launch.close()  # idempotent
    assert be.events == ["abort"] and windows == [] and launch.future is not None and launch.future.done()


@pytest.mark.parametrize("flood", [object(), None])
def test_an_ungated_workload_starts_when_the_trial_asks(tmp_path, env, monkeypatch, flood):
    be = _Backend(gated=False)
    monkeypatch.setattr(launch_mod, "backend", lambda kind: be)
    plan, ctx, meters, windows = _parts(tmp_path)
    launch = launch_mod.Launch(env, plan, tmp_path, ctx, meters, flood)
    time.sleep(0.05)
    assert be.started_at is None and launch.gate is None and launch.future is None
    asked = time.monotonic()
    run = launch.run()
    launch.close()
    assert run.result["valid"] and be.events == ["ran"] and windows == ["begin"]
    assert launch.started >= asked and be.started_at >= asked


T = {"start": 100.0, "switch": 100.1, "flood_prepare": 100.15, "capture_start": 100.15, "switch_ready": 100.2,
     "flood_start": 100.35, "workload": 101.5, "stop": 101.7}


@pytest.mark.parametrize("result, overhead, workload_s", [
    # gated: the workload from its launch with the trial (100.0) to its end, less its wait at the gate
    ({"go_wait_s": 0.05, "elapsed_total_s": 0.8}, 101.75 - 100.0 - (101.5 - 100.0 - 0.05), 1.45),
    # ungated: the workload phase (from the flood's start)
    ({"elapsed_total_s": 0.8}, 101.75 - 100.0 - 1.15, None),
])
def test_phases_count_a_gated_workload_from_its_launch(monkeypatch, result, overhead, workload_s):
    import qoslab.campaign.trial as trial_mod

    monkeypatch.setattr(trial_mod, "time", SimpleNamespace(monotonic=lambda: 101.75))  # "now" for overhead_s
    meters = SimpleNamespace(meters={}, seconds={"rtt": 0.0, "switch": 0.02})
    ph = trial_mod._phases(dict(T), result, meters, SimpleNamespace(drained=True), True, 100.0)
    assert ph["switch"] == 0.1 and ph["workload"] == 1.15 and ph["stop"] == 0.2
    assert ph["saturated"] is True and ph["drained"] is True and ph["switch_stats"] == 0.02
    assert ph["overhead_s"] == pytest.approx(overhead, abs=1e-3)
    assert ph.get("workload_s") == (pytest.approx(workload_s) if workload_s is not None else None)
    assert ph["manager_start_s"] == pytest.approx((workload_s or 1.15) - 0.8, abs=1e-3)
