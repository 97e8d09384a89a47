"""The trial's workload launch (qoslab.campaign.launch, issue 42): a gated backend starts with the
congested trial, so its manager boots while the trial prepares, and runs only at the go; an
ungated one (or one without a flood) starts when the trial asks; a gate that never got its go is
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


def test_a_gated_workload_starts_with_the_trial_and_runs_at_the_go(tmp_path, env, monkeypatch):
    be = _Backend(gated=True)
    monkeypatch.setattr(launch_mod, "backend", lambda kind: be)
    plan, ctx, meters, windows = _parts(tmp_path)
    flood = object()
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


@pytest.mark.parametrize("gated, flood", [(False, object()), (True, None)])
def test_an_ungated_workload_starts_when_the_trial_asks(tmp_path, env, monkeypatch, gated, flood):
    be = _Backend(gated=gated)
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
