"""One trial of a campaign, phase by phase (docs/DESIGN.md, "One trial, as data flows"):

0. a trial's gated workload (congested or not) (:mod:`.launch`) starts: its manager JVM boots through 1-5;
1. switch: push the condition's profile (only when it differs from what the switch has); the
   switch meter starts reading the 'before' counters in the background;
2. flood_prepare: the flood's receivers start (they send nothing);
3. capture: start a live capture on the SPAN destination port (by the capture policy);
4. switch_ready: the 'before' counters are complete;
5. congestion: start the flood's senders and wait until every flooded port is saturated;
6. workload: the playbook's workload backend (:mod:`qoslab.workloads`; a gated one gets its go);
   its JSON result;
7. stop: the flood's senders stop, its packets drain from the queues, then the switch's 'after'
   counters are read while the receivers decode and the capture stops;
8. the trial's row for the store.

Every phase's wall time goes into ``phases_json`` (``stop_parts``: the stop's own steps, seconds
from the workload's end: ``halted``, ``drained``, the generator's own ``stop_times`` such as
``receivers_stopped`` and ``decoded``, ``flood_stopped``; ``start_parts``: the flood's start, seconds
from ``switch_ready``: ``classes`` (its kernel pacing's classes, installed while the receivers
started unless that failed), ``senders``, ``settled``), with ``overhead_s`` (the trial's wall time
minus the workload phase, a gated one's from its launch less its wait at the gate, ``go_wait_s``:
what the harness costs per trial), ``workload_s`` (that workload time), ``manager_start_s`` (the workload
phase minus the manager's own run: its JVM start and the workers' check), ``saturated`` and
``drained``. Any failure raises; the runner records it.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from pathlib import Path
from typing import Any

from qoslab.meters.base import MeterSet, TrialContext

from ..capture import LiveCapture
from ..errors import QoslabError
from ..trafficgen import FloodResult, open_flood
from ..trafficgen.base import DRAIN_WAIT_S
from ..trials.playbook import Condition
from ..workloads import backend
from .launch import Launch
from .trialenv import TrialEnv
from .trialplan import TrialPlan

#: Seconds the flood's senders must have run before their start is checked (D-ITG): none, they are
#: checked again once the flood has settled (a sender that fails later fails the trial at stop:
#: its exit code).
START_CHECK_S = 0.0
#: Seconds a trial waits at most for the flood's packets to leave the queues once its senders
#: have stopped (a full 128 KiB queue drains in 0.105 s at 10 Mbit/s, 1.05 s at 1 Mbit/s; a
#: kernel-paced flood's class queues are emptied at its halt, trafficgen.kernelrun.flush).
DRAIN_TIMEOUT_S = 3.0
#: Seconds a capture keeps running after the workload: the capture's JRMP call matching closes a
#: connection's last call at the capture's end only after 1 s without traffic (``--call-quiet``,
#: capture/README.md "JRMP calls"); stopped sooner, those calls are incomplete.
CALL_QUIET_S = 1.2


def _push(env: TrialEnv, plan: TrialPlan, tdir: Path) -> None:
    if env.current_config != plan.config_hash:
        env.current_config = None  # unknown until the push has succeeded
        env.switch.push(list(plan.profile_lines), tdir / "switch", plan.profile.name)
        env.current_config = plan.config_hash


def _start_capture(env: TrialEnv, plan: TrialPlan, tdir: Path) -> LiveCapture:
    if env.testbed is None:
        raise QoslabError("live capture needs the embedded testbed's SPAN namespace (or a capture host)")
    cap = LiveCapture(env.testbed.span_executor(), plan.capture_ifname, tdir / "capture", plan.capture_ip,
                      "flow", write=tdir / "capture" / "capture.pcap", lifetime_s=plan.lifetime_s, calls=True)
    cap.start()
    return cap


def _settle(env: TrialEnv, plan: TrialPlan) -> bool | None:
    """Wait for the flood to be established; returns whether every flooded port was saturated
    (None for a fixed wait)."""
    pb = env.pb
    if pb.settle == "fixed" or env.testbed is None:
        time.sleep(pb.settle_s)
        return None
    ports = list(plan.flooded_ports)
    delay = max((f.start_delay_s for f in plan.flows), default=0)
    saturated = env.testbed.wait_ports_saturated(ports, pb.settle_s + delay, plan.settle_share)
    if not saturated:
        env.log(f"the flood did not saturate every port of {', '.join(ports)} within {pb.settle_s:g} s; "
                "the workload starts anyway (phases: saturated false)")
    return saturated


def _flood_json(fres: FloodResult | None) -> str | None:
    if fres is None:
        return None
    return json.dumps([{"src": f.src, "dst": f.dst, "sent_pps": round(f.sent_pps),
                        "received_wire_bps": round(f.received_wire_bps), "loss_pct": round(f.loss_pct, 2),
                        "delay_avg_s": f.delay_avg_s} for f in fres.flows])


def run_trial(env: TrialEnv, cond: Condition, tdir: Path, capture_due: bool) -> dict[str, Any]:
    """Run one trial of ``cond`` with its artifacts in ``tdir``: the condition's :class:`TrialPlan`
    (resolved once, :meth:`TrialEnv.plan_of`) executed; returns its store row (columns -> values;
    the registered meters' columns included, see :mod:`qoslab.meters`). Raises QoslabError (or
    anything unexpected) when the trial failed."""
    t = {"start": time.monotonic()}
    tdir.mkdir(parents=True, exist_ok=True)
    plan = env.plan_of(cond)
    defn = plan.flood
    ctx = TrialContext(condition=plan.condition, congestion=plan.congestion, trial_dir=tdir,
                       local=env.testbed is not None, switch=env.switch, ports=list(plan.ports), log=env.log,
                       topology=env.topo, playbook=env.pb, plan=plan, executor_of=env.executor_of)
    meters = MeterSet(ctx)
    flood, prepared, launch = None, None, None
    parts: dict[str, float] = {}  # the stop's steps (monotonic times)
    try:
        if defn is not None:  # the receivers start (no packet sent) while the switch is pushed and read
            flood = open_flood(defn, env.topo, env.executor_of, tdir / "flood", generator=env.pb.generator,
                               calibration=env.calibration, keep_logs=env.pb.keep_ditg_logs,
                               lifetime_s=plan.lifetime_s, start_check_s=START_CHECK_S)
        prepared = env.lanes().submit(flood.prepare) if flood is not None else None
        launch = Launch(env, plan, tdir, ctx, meters, flood)  # a gated manager boots meanwhile (.launch)
        _push(env, plan, tdir)
        meters.begin()
        t["switch"] = time.monotonic()
        run, saturated, fres, summary = _traffic(env, plan, tdir, capture_due, ctx, meters, t, flood, prepared,
                                                 launch, parts)
        meters.end()
        t["stop"] = time.monotonic()
        columns = meters.columns()
    finally:
        if launch is not None:
            launch.close()  # failed before its go: the waiting manager ends without a run
        meters.close()
        if flood is not None and flood.result is None:  # failed before _traffic took it over
            if prepared is not None:
                wait_futures([prepared])
            flood.stop()
    r = run.result
    if r.get("valid") is not True:
        raise QoslabError(f"workload failed: {r.get('error') or 'checksum ' + str(r.get('checksum'))}")
    metrics = backend(plan.workload_kind).row(r)
    if fres is not None and not fres.ok:
        raise QoslabError("flood failed: " + "; ".join(fres.errors))
    phases = _phases(t, r, meters, ctx, saturated, launch.started)
    if parts:
        phases["stop_parts"] = {k: round(v - t["workload"], 3) for k, v in parts.items()}
    started: dict[str, float] = getattr(flood, "start_times", None) or {}
    if started:  # the flood's start: classes installed, senders started, ports settled (from switch_ready)
        phases["start_parts"] = {k: round(v - t["switch_ready"], 3) for k, v in started.items()}
    return {**metrics, "valid": 1, "flood_json": _flood_json(fres),
            "capture_summary": str((tdir / "capture" / "summary.json").relative_to(env.out)) if summary else None,
            "config_hash": env.current_config, "phases_json": json.dumps(phases), **columns}


def _phases(t: dict[str, float], r: dict[str, Any], meters: MeterSet, ctx: TrialContext, saturated: bool | None,
            launched: float) -> dict[str, Any]:
    """The trial's ``phases_json`` (see the module doc): every phase's seconds from ``t`` (monotonic
    times in the phases' order, from ``start``), ``saturated``, ``drained``, the meters' seconds;
    for a gated workload (its result ``r`` has ``go_wait_s``) ``workload_s``, from its launch at
    ``launched`` (monotonic) less that wait; ``overhead_s`` (the wall time until now less the
    workload's) and ``manager_start_s``."""
    keys = list(t)
    phases: dict[str, Any] = {k: round(t[k] - t[keys[i - 1]], 3) for i, k in enumerate(keys) if i}
    if saturated is not None:
        phases["saturated"] = saturated
    if ctx.drained is not None:
        phases["drained"] = ctx.drained
    switch_meter = meters.meters.get("switch")
    phases["switch_stats"] = round(getattr(switch_meter, "seconds", meters.seconds.get("switch", 0.0)), 3)
    phases["meters"] = {k: round(v, 3) for k, v in meters.seconds.items()}
    workload_s = phases.get("workload", 0.0)
    if isinstance(r.get("go_wait_s"), (int, float)):  # gated: the workload ran from its launch, less its wait
        phases["go_wait_s"] = round(r["go_wait_s"], 3)
        workload_s = t["workload"] - launched - r["go_wait_s"]
        phases["workload_s"] = round(workload_s, 3)
    phases["overhead_s"] = round(time.monotonic() - t["start"] - workload_s, 3)
    if isinstance(r.get("elapsed_total_s"), (int, float)):  # the manager JVM's start (within the workload)
        phases["manager_start_s"] = round(workload_s - r["elapsed_total_s"], 3)
    return phases


def _traffic(env: TrialEnv, plan: TrialPlan, tdir: Path, capture_due: bool, ctx: TrialContext, meters: MeterSet,
             t: dict[str, float], flood: Any, prepared: Future[None] | None,
             launch: Launch, parts: dict[str, float]) -> tuple[Any, bool | None, FloodResult | None, dict | None]:
    """Capture, flood and workload of one trial, stopped in every case: (workload run, saturated,
    flood result, capture summary). Fills ``ctx`` and calls the meters' window hooks. ``flood``
    (None: no congestion) has been preparing its receivers (``prepared``, they send nothing)
    while the switch was pushed and its 'before' counters read; its senders start once that
    reading is complete. ``launch``: the trial's workload (a gated one booting since the trial began)."""
    cap, saturated, fres, summary = None, None, None, None
    ok = False
    try:
        if prepared is not None:
            prepared.result()  # re-raises what went wrong while the receivers started
        t["flood_prepare"] = time.monotonic()
        cap = _start_capture(env, plan, tdir) if capture_due else None
        t["capture_start"] = time.monotonic()
        meters.traffic_begin()  # the switch's 'before' counters are complete: no trial traffic before
        t["switch_ready"] = time.monotonic()
        run, saturated = _flood_and_workload(env, plan, ctx, meters, flood, launch, t)
        ok = True
    finally:
        ended = time.monotonic()
        fres, summary = _stop(env, plan, flood, cap, ctx, meters if ok else None, ended, parts)
    ctx.capture_summary = summary
    return run, saturated, fres, summary


def _flood_up(env: TrialEnv, plan: TrialPlan, flood: Any) -> bool | None:
    """Start the flood's senders and wait until it is established; returns ``saturated`` (see
    :func:`_settle`). Raises QoslabError when a sender failed to start."""
    flood.start()
    if flood.errors:
        raise QoslabError("flood did not start: " + "; ".join(flood.errors))
    saturated = _settle(env, plan)
    getattr(flood, "start_times", {})["settled"] = time.monotonic()
    late: list[str] = getattr(flood, "check_senders", list)()
    if late:
        raise QoslabError("flood did not start: " + "; ".join(late))
    return saturated


def _flood_and_workload(env: TrialEnv, plan: TrialPlan, ctx: TrialContext, meters: MeterSet, flood: Any,
                        launch: Launch, t: dict[str, float]) -> tuple[Any, bool | None]:
    """The flood's senders, then the workload's run (:class:`.launch.Launch`: a gated manager has
    been booting since the trial began and gets its go now, any other backend starts now):
    (workload run, saturated). The meters' window begins right before the manager's run."""
    saturated = None
    try:
        if flood is not None:
            saturated = _flood_up(env, plan, flood)
        t["flood_start"] = time.monotonic()
        run = launch.run()
    finally:
        launch.close()
    ctx.result = run.result
    meters.window_end()
    t["workload"] = time.monotonic()
    return run, saturated


def _drain(env: TrialEnv, plan: TrialPlan) -> bool | None:
    """After the flood's senders stopped: wait until its packets have left the queues toward its
    destinations (the testbed's qdiscs, polled) and return whether they did within
    DRAIN_TIMEOUT_S; without a testbed wait the generator's fixed DRAIN_WAIT_S (None)."""
    if env.testbed is None:
        time.sleep(DRAIN_WAIT_S)
        return None
    ports = list(plan.flooded_ports)
    drained = env.testbed.wait_drained(ports, list(plan.flood_sources), DRAIN_TIMEOUT_S)
    if not drained:
        env.log(f"the flood's queues toward {', '.join(ports)} were not empty {DRAIN_TIMEOUT_S:g} s after its "
                "senders stopped (phases: drained false)")
    return drained


def _stop(env: TrialEnv, plan: TrialPlan, flood: Any, cap: LiveCapture | None, ctx: TrialContext,
          meters: MeterSet | None, ended: float, parts: dict[str, float]) -> tuple[FloodResult | None, dict | None]:
    """Stop the flood and the capture side by side (both always; an error of either is raised
    once both are done, the flood's when both failed). Given ``meters`` (the trial went well so
    far), the flood's senders stop first, its packets drain from the queues (``ctx.drained``),
    and the meters' ``traffic_end`` runs while its receivers decode and the capture stops.
    The capture stops no sooner than CALL_QUIET_S after ``ended`` (the workload's end,
    monotonic seconds), so each connection's last JRMP call is timed."""
    def stop_flood() -> FloodResult | None:
        if flood is not None and meters is not None:
            flood.halt()
            parts["halted"] = time.monotonic()
            ctx.drained = _drain(env, plan)
            parts["drained"] = time.monotonic()
        if meters is not None:
            meters.traffic_end()  # every trial packet has passed the switch
        fres = flood.stop() if flood is not None else None
        if flood is not None:
            parts.update(getattr(flood, "stop_times", {}))
            parts["flood_stopped"] = time.monotonic()
        ctx.flood_result = fres
        return fres

    if cap is None:
        return stop_flood(), None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="flood-stop") as pool:
        fut = pool.submit(stop_flood)
        try:
            time.sleep(max(0.0, CALL_QUIET_S - (time.monotonic() - ended)))
            summary = cap.stop()
        finally:
            fres = fut.result()
    return fres, summary
