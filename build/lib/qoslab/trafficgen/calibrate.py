"""Measuring ITGSend's plain pacing (``qoslab flood calibrate``): real D-ITG probes on the
testbed, kept as a :class:`.calibration.Calibration`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import QoslabError
from ..executors import Executor
from ..testbed.procs import tree_cpu_ticks
from ..topology import Topology
from .calibration import Calibration
from .definitions import L2_OVERHEAD, FloodDefinition, Flow
from .ditg import DitgGenerator
from .ditgpacing import FlowPacing
from .ditgsched import sender_id


def _probe(topology: Topology, executor_of: Callable[[str], Executor], pairs: list[tuple[str, str]],
           out_dir: Path, payload_bytes: int, probe_s: float, rate: int, poll: bool) -> tuple[float, float]:
    """One calibration probe: every pair sends at ``-C rate`` (``-poll`` or not) for ``probe_s``
    seconds. Returns (slowest flow's packets/s as ITGDec counted them, CPU % of one core per sender,
    the sender's whole process tree). Raises QoslabError when a flow failed."""
    defn = FloodDefinition(name="calibrate", payload_bytes=payload_bytes, rate=rate, duration_s=probe_s,
                           pacing="poll", flows=[Flow(src=a, dst=b) for a, b in pairs])
    fr = DitgGenerator(defn, topology, executor_of, out_dir / f"probe-{rate}-{int(poll)}")
    fr.pacing = {f.index: FlowPacing("poll" if poll else "plain", rate, poll, f.pps) for f in fr.flows}
    with fr:
        fr.start()
        senders = list(fr.senders.values())
        first = {p.pid: tree_cpu_ticks(p.pid) for p in senders}
        last = dict(first)
        t0 = time.monotonic()
        while any(executor_of(p.node).poll(p) is None for p in senders):  # sample CPU while they run
            for p in senders:
                last[p.pid] = max(last[p.pid], tree_cpu_ticks(p.pid))
            time.sleep(0.05)
        wall = time.monotonic() - t0
        res = fr.stop()
    if res.errors:
        raise QoslabError("calibration probe failed: " + "; ".join(res.errors))
    cpu_s = sum(last[k] - first[k] for k in first) / os.sysconf("SC_CLK_TCK") / len(senders)
    return min(f.sent_pps for f in res.flows), 100.0 * cpu_s / max(wall, 1e-6)


def calibrate(topology: Topology, executor_of: Callable[[str], Executor], pairs: list[tuple[str, str]],
              out_dir: Path, payload_bytes: int = 1400, max_multiple: float = 2.0, probe_s: float = 2.0,
              progress: Callable[[str], None] = lambda s: None) -> Calibration:
    """Measure ITGSend without -poll with all ``pairs`` (src, dst) sending at once, as the flood
    will: starting at half the target, -C doubles until the slowest flow sends at least
    ``max_multiple`` x the link rate on the wire; one more probe at the interpolated -C for 1.5x
    the link rate refines the point floods use most. Then the accuracy and CPU cost of -poll at 1.5x.
    Each probe is real D-ITG traffic for ``probe_s`` seconds decoded by ITGDec; the achieved rate
    of a probe is its slowest flow's. Returns the calibration (not yet saved)."""
    frame_bits = (payload_bytes + L2_OVERHEAD["UDP"]) * 8
    target = max_multiple * topology.link.rate / frame_bits
    points: list[tuple[int, float, float]] = []

    def probe(rate: int, poll: bool) -> tuple[float, float]:
        achieved, cpu = _probe(topology, executor_of, pairs, out_dir, payload_bytes, probe_s, rate, poll)
        if not poll:
            points.append((rate, achieved, cpu))
            progress(f"-C {rate}: slowest of {len(pairs)} flows sent {achieved:.0f} packets/s "
                     f"({achieved * frame_bits / topology.link.rate:.2f}x link), {cpu:.0f}% of a core each")
        return achieved, cpu

    rate = int(target / 2)
    while probe(rate, poll=False)[0] < target and rate <= 64 * target:
        rate *= 2
    pps15 = 1.5 * topology.link.rate / frame_bits
    cal = Calibration(topology.name, payload_bytes, points)
    if cal.covers(pps15):  # refine where floods usually ask (the thesis's 1.5x): one probe at the estimate
        rate = cal.rate_for(pps15)
        if rate not in {c for c, _, _ in points}:
            probe(rate, poll=False)
            points.sort()
    achieved, cpu = probe(int(pps15), poll=True)
    progress(f"-poll -C {int(pps15)}: slowest flow sent {achieved:.0f} packets/s, {cpu:.0f}% of a core each")
    return Calibration(topology.name, payload_bytes, points,
                       poll={"requested_pps": int(pps15), "achieved_pps": achieved, "cpu_pct": cpu,
                             "flows": len(pairs)},
                       kernel=os.uname().release, sender=sender_id())
