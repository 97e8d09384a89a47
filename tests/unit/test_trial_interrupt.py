"""Issue 45, "Ctrl-C under load": `test_interrupt.py::...[ctrl-c]` failed once while other
campaigns loaded the machine ("the campaign was still running 60 s after SIGINT").

The window: a gated workload's lane arms the go gate (:meth:`GoGate.arm`) and only then spawns
the manager (``ip netns exec`` ... ``java``); the trial opens the gate at once. An interrupt that
comes after the go but before the spawn has entered the head node's namespace ends every process
in the namespaces (:meth:`Testbed.end_survivors`) once, finds no manager, and then waited without
a timeout for the lane, whose manager then started, read ``go`` and ran its whole render. On a
loaded machine the spawn (a fork of a large Python process, ``ip``'s exec and setns, the JVM's
start) takes long enough for the test's interrupt, sent 0.3 s after the go file appeared, to land
in it. Here the late spawn is made deterministic with fakes (no testbed): the manager appears 0.5 s
after the gate is armed and, unless ended, runs 20 s.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

import qoslab.campaign.launch as launch_mod
import qoslab.campaign.trial as trial_mod
from qoslab.campaign.watchdog import clear_interrupt, request_interrupt
from qoslab.workloads.gate import GO_FILE
from qoslab.workloads.pool import WorkloadRun

MANAGER_RUN_S = 20.0  # what the late manager runs when nothing ends it
SPAWN_DELAY_S = 0.5   # from the gate's arming to the manager being in the namespace


class _Namespaces:
    """The testbed as the interrupt path sees it: processes in its namespaces, ended by PID."""

    def __init__(self) -> None:
        self.procs: list[threading.Event] = []
        self.sweeps = 0

    def end_survivors(self) -> list[int]:
        self.sweeps += 1
        for p in self.procs:
            p.set()
        return list(range(len(self.procs)))


class _LateManager:
    """A gated backend whose manager enters the namespace SPAWN_DELAY_S after arming the gate."""

    gated = True

    def __init__(self, ns: _Namespaces) -> None:
        self.ns = ns

    def run(self, wl, executor_of, address_of, out_dir, pool=None, lifetime_s=None, on_started=None, gate=None):
        on_started({})
        gate.arm(SimpleNamespace(node_dir=lambda p: str(p)))
        time.sleep(SPAWN_DELAY_S)
        ended = threading.Event()
        self.ns.procs.append(ended)
        if ended.wait(MANAGER_RUN_S):
            return WorkloadRun({"valid": False, "error": "manager killed"}, {})
        return WorkloadRun({"valid": True, "elapsed_s": MANAGER_RUN_S}, {})


def _interrupt_after_go(go: os.PathLike, delay_s: float) -> threading.Thread:
    """SIGINT to this process ``delay_s`` after the go file appears (as the integration test does)."""

    def send() -> None:
        end = time.monotonic() + 30
        while not os.path.exists(go) and time.monotonic() < end:
            time.sleep(0.005)
        time.sleep(delay_s)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=send, daemon=True)
    t.start()
    return t


def test_an_interrupt_between_the_go_and_the_managers_spawn_ends_the_late_manager(tmp_path, monkeypatch):
    ns = _Namespaces()
    monkeypatch.setattr(launch_mod, "backend", lambda kind: _LateManager(ns))
    lanes = ThreadPoolExecutor(max_workers=2)
    env = SimpleNamespace(pb=SimpleNamespace(settle="fixed", settle_s=0.01), testbed=ns, pool=None,
                          executor_of=lambda h: None, topo=SimpleNamespace(host=lambda h: SimpleNamespace(ip="x")),
                          lanes=lambda: lanes)
    plan = SimpleNamespace(workload=None, workload_kind="late", lifetime_s=60.0, flows=())
    flood = SimpleNamespace(start=lambda: None, errors=[])
    meters = SimpleNamespace(window_begin=lambda: None, window_end=lambda: None)
    ctx = SimpleNamespace()

    def on_sigint(signum, frame):  # what the CLI's handler does
        request_interrupt()
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        _interrupt_after_go(tmp_path / "workload" / GO_FILE, 0.1)
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            launch = launch_mod.Launch(env, plan, tmp_path, ctx, meters, flood)  # gated: started with the trial
            trial_mod._flood_and_workload(env, plan, ctx, meters, flood, launch, {})
        took = time.monotonic() - t0
    finally:
        signal.signal(signal.SIGINT, old)
        clear_interrupt()
        for p in ns.procs:
            p.set()
        lanes.shutdown()
    assert len(ns.procs) == 1 and ns.procs[0].is_set(), "the late manager was not ended"
    assert took < SPAWN_DELAY_S + 3, f"the interrupted trial took {took:.1f} s: it waited for the late manager's run"
    assert ns.sweeps >= 2  # the first sweep came before the manager was there
