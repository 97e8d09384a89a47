"""The workload of one trial, launched (:func:`qoslab.campaign.trial.run_trial`).

A backend that takes a go gate (:mod:`qoslab.workloads.gate`: ``raytracer``, ``matmul``,
``pingpong``) is started with the trial itself: its manager JVM boots (0.34-0.42 s
median here, ``manager_start_s``) while the trial pushes the condition's profile, starts the
flood's receivers and the capture, reads the switch's counters and waits for the flood to settle,
and its measured run begins at the go, once every flooded port is saturated. Nothing it measures
moves: the manager sends nothing before the go (its lookups are part of its run), so the
capture and the switch's 'before' counters still come before any trial traffic. Started after
the receivers and the counters instead (issue 26's gate), the JVM's boot only overlapped the
settle (0.13-0.16 s), and the 0.06-0.13 s of the receivers' start or the push (whichever the trial
had) came on top of every congested trial (issue 42: 0.32-0.36 s median harness overhead of the
congested conditions after the rtt meter's fix, ``bench/results/overhead-newquick-after-rtt.json``).
A trial without a flood is gated the same way (issue 48): its manager boots while the trial
pushes the condition's profile and reads the switch's counters. Before, it started after them,
so an uncongested trial's push (0.17-0.36 s a "no congestion fifo" trial of make run, after a
thesis trial) was all harness overhead, and the conditions' workloads were launched two ways.
Any other backend (``command``) starts once the flood is established (at once without one);
the meters' window begins right before the manager's run either way. On the embedded testbed
with a ``cpu:`` block the manager boots outside its host's CPU budget and is moved into it before
the go (:mod:`qoslab.workloads.gate`).

``overhead_s`` of the trial counts the workload from its launch, less the manager's wait at the
gate (``go_wait_s``: the harness's time when the trial's preparation outlasts the JVM's boot).
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from pathlib import Path
from typing import Any

from qoslab.meters.base import MeterSet, TrialContext

from ..workloads import backend
from ..workloads.gate import GO_FILE, GoGate
from .trialenv import TrialEnv
from .trialplan import TrialPlan
from .watchdog import interrupt_requested

#: Seconds between two sweeps of the workload's processes after an interrupt (see :meth:`Launch.close`).
END_SWEEP_S = 0.5


class Launch:
    """The workload of one trial: gated (``gate`` set, started at construction in one of the
    campaign's lanes, :meth:`TrialEnv.lanes`) when the backend takes a gate, with or without a
    flood, else started by :meth:`run`. ``started`` is when it was launched (monotonic seconds; for an
    ungated one set by :meth:`run`). Call :meth:`close` in every case (idempotent)."""

    def __init__(self, env: TrialEnv, plan: TrialPlan, tdir: Path, ctx: TrialContext, meters: MeterSet,
                 flood: Any) -> None:
        self.env, self.plan, self.tdir, self.ctx, self.meters, self.flood = env, plan, tdir, ctx, meters, flood
        self.be = backend(plan.workload_kind)
        # every trial, congested or not: the same launch in every condition (issue 48)
        gated = bool(getattr(self.be, "gated", False))
        self.gate = GoGate(tdir / "workload" / GO_FILE) if gated else None
        self.started = time.monotonic()
        self.future: Future[Any] | None = env.lanes().submit(self._run) if self.gate is not None else None
        self._closed = False

    def _on_started(self, workers: Any) -> None:
        self.ctx.workers, self.ctx.flood = workers, self.flood
        if self.gate is None:
            self.meters.window_begin()

    def _run(self) -> Any:
        extra = {"gate": self.gate} if self.gate is not None else {}
        env = self.env
        return self.be.run(self.plan.workload, env.executor_of, lambda h: env.topo.host(h).ip,
                           self.tdir / "workload", pool=env.pool, lifetime_s=self.plan.lifetime_s,
                           on_started=self._on_started, **extra)

    def run(self) -> Any:
        """The workload's run, once the flood is established: an ungated backend starts now; a
        gated one gets its go (and the meters their window) as soon as its manager waits for it
        (one that boots outside its host's CPU budget: once it has booted, :meth:`GoGate.wait_booted`).
        Returns the backend's :class:`qoslab.workloads.base.WorkloadRun`; raises what it raised."""
        if self.future is None or self.gate is None:  # (both None or neither: the two for the type checker)
            self.started = time.monotonic()
            return self._run()
        while not self.gate.armed.wait(0.005) and not self.future.done():
            pass
        if self.gate.armed.is_set():
            future = self.future
            self.gate.wait_booted(lambda: not future.done() and not interrupt_requested())
            self.meters.window_begin()
            self.gate.open()
        return self.future.result()

    def close(self) -> None:
        """A gated workload that did not get its go ends without a run (the gate is aborted) and
        is waited for; after an interrupt its processes are ended first (:meth:`_end`)."""
        if self._closed or self.gate is None or self.future is None:
            return
        self._closed = True
        self.gate.abort()
        if interrupt_requested():
            self._end(self.future)  # past the go: end its processes rather than wait for its run
        wait_futures([self.future])

    def _end(self, launched: Future[Any]) -> None:
        """After an interrupt: end the workload's processes (on the testbed every process in the
        hosts' namespaces that its executors started, by PID; elsewhere the pool's workers) so the
        trial stops within seconds, and again every END_SWEEP_S until the lane running the workload
        is done (issue 45): the lane arms the go gate before it spawns the manager, and on a loaded
        machine the spawn (the fork, ``ip netns exec``, the JVM) can enter the head node's namespace
        after the first sweep; that manager then read ``go`` and ran its whole run while the trial
        waited for it (the Ctrl-C test's "still running 60 s after SIGINT", 2 of 10 runs beside two
        busy loops)."""
        env = self.env
        while not launched.done():
            if env.testbed is not None:
                env.testbed.end_survivors()
            elif env.pool is not None:
                env.pool.close()
            else:
                return  # nothing of ours to end here (a manager over SSH ends with its bound)
            wait_futures([launched], timeout=END_SWEEP_S)
