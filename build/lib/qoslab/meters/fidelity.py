"""The fidelity meter (registered as ``fidelity``): was this trial emulated faithfully?

A sampler thread (:mod:`.fidelitysampler`) runs over the workload window (``window_begin`` .. ``window_end``) every
``period_s`` (0.1 s = 10 Hz, the playbook's ``fidelity.period_s``) and reads, per sample:

- ``/proc/stat`` (all CPUs): the share of CPU time idle in the interval, and softirq time (the
  namespaces' forwarding);
- ``/proc/pressure/cpu`` (PSI ``some``): the share of the interval in which some runnable task
  waited for a core;
- ``/proc/PID/task/*/schedstat`` of the worker JVMs (and their children): time on a CPU and time
  waiting in a run queue (field 2, ns), per thread, the last value of each kept;
- one qdisc dump of the switch namespace over netlink (every switch port at once, on a kept
  socket: :mod:`qoslab.testbed.netlink`, no process per sample): bytes and packets sent, backlog
  and drops of each port's root qdisc and of its egress queues (the leaf qdiscs), from which the
  departure rate of each interval is compared with the link rate.

At the window's ends it also reads the CPU time of processes outside the testbed and this
campaign (:func:`qoslab.meters.cpu.outside_processes`) and of the flood's processes; at
``end`` the flood's achieved rates (``ctx.flood_result``) against its definition
(``ctx.flood.flows``). The verdict is the pure :func:`qoslab.meters.fidelityjudge.verdict`
(checks and thresholds documented there). Off the embedded testbed (``ctx.local`` false) the
columns say ``unknown`` and why.

Cost: a few dozen small /proc reads and one netlink dump per sample (a ``tc -s -j qdisc show``
process per sample until issue 42: 3-10 ms each, on the switch's core with a ``cpu:`` block);
its own CPU time is ``sampler_cpu_s`` in ``fidelity_json``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from qoslab.meters.base import BaseMeter, TrialContext
from qoslab.meters.fidelityjudge import (
    FidelityThresholds,
    FlowRates,
    Measurements,
    reasons_json,
    unknown,
    verdict,
)
from qoslab.portnames import linux_ifname
from qoslab.testbed.procs import descendants
from qoslab.testbedplan import switch_namespace

from . import cpu
from .cpuloss import host_cpu_loss
from .cpuloss import summary as cpu_summary
from .fidelitysampler import Sampler, intervals
from .hostcpu import HostCpuReader, delivered, host_reader

COLUMNS: dict[str, str] = {
    "fidelity": "TEXT", "fidelity_reasons": "TEXT", "fidelity_samples": "INTEGER",
    "fidelity_idle_min": "REAL", "fidelity_idle_median": "REAL", "fidelity_cpu_wait_s": "REAL",
    "fidelity_cpu_wait_share": "REAL", "fidelity_psi_some": "REAL", "fidelity_outside_cores": "REAL",
    "fidelity_emulation_share": "REAL", "fidelity_port_util": "REAL", "fidelity_backlogged": "INTEGER",
    "fidelity_drops": "INTEGER",
    "fidelity_flood_ratio": "REAL", "fidelity_pacing_error": "REAL", "fidelity_json": "TEXT",
    # with a topology cpu: block (meters.cpuloss): the check that replaces emulation_share, the
    # hosts' use of their budget, the receive CPU share of the flooded hosts
    "fidelity_host_cpu_loss": "REAL", "host_cpu_use": "REAL", "host_throttled": "REAL", "rx_cpu_share": "REAL",
    "rx_cost_us": "REAL", "rx_socket_drops": "INTEGER"}


def flow_rates(ctx: TrialContext) -> list[FlowRates]:
    """The flood's flows, configured (``ctx.flood.flows``, at the rate each sender was set to:
    the generator's ``sender_pps`` where it has one) against achieved (``ctx.flood_result``)."""
    if ctx.flood is None or ctx.flood_result is None:
        return []
    got = {(f.src, f.dst): f for f in ctx.flood_result.flows}
    topo = ctx.topology
    port = (lambda h: linux_ifname(topo.host(h).port)) if topo is not None else (lambda h: None)
    # what each sender was set to send: under kernel pacing its host link's rate (the asked
    # excess never leaves the host under any pacing), else the asked rate
    target = getattr(ctx.flood, "sender_pps", {})
    return [FlowRates(f.src, f.dst, f.wire_bps * target.get(f.index, f.pps) / f.pps if f.pps else f.wire_bps,
                      got[(f.src, f.dst)].received_wire_bps, target.get(f.index, f.pps),
                      got[(f.src, f.dst)].sent_pps, port(f.dst), _exact(got[(f.src, f.dst)]))
            for f in ctx.flood.flows if (f.src, f.dst) in got]


def _exact(r: Any) -> bool:
    """Whether a flow result's sent rate is trusted to a percent (FlowRates.sent_exact)."""
    return getattr(r, "pacing", None) != "kernel" or getattr(r, "sent_from", None) == "class counter"


class FidelityMeter(BaseMeter):
    """Samples the trial's window and judges it (see the module doc); thresholds from the
    playbook's ``fidelity:`` block (``ctx.playbook``), defaults otherwise."""

    COLUMNS: ClassVar[Mapping[str, str]] = COLUMNS

    def __init__(self, ctx: TrialContext) -> None:
        super().__init__(ctx)
        pb = ctx.playbook
        self.th: FidelityThresholds = getattr(pb, "fidelity", None) or FidelityThresholds()
        self.sampler: Sampler | None = None
        self.outside: list[tuple[float, dict[tuple[int, int], int]]] = []
        self.flood_pids: list[int] = []
        self.flood_ticks: list[dict[tuple[int, int], int]] = []
        self.hz = float(os.sysconf("SC_CLK_TCK"))
        self.hostcpu: HostCpuReader | None = None  # with a topology cpu: block

    def _outside(self) -> None:
        self.outside.append((time.monotonic(), cpu.outside_processes(set(descendants(os.getpid())))))
        ticks = {}
        for p in self.flood_pids:
            try:
                r = cpu.parse_pid_stat(Path(f"/proc/{p}/stat").read_text())
            except OSError:
                continue
            if r is not None:
                ticks[(p, r[1])] = r[0]
        self.flood_ticks.append(ticks)

    def window_begin(self, ctx: TrialContext) -> None:
        """Start sampling (only on the embedded testbed)."""
        if not ctx.local or ctx.topology is None:
            return
        self.flood_pids = sorted({d for pid in cpu.flood_processes(ctx.flood).values() for d in descendants(pid)})
        self._outside()
        self.hostcpu = host_reader(ctx)
        if self.hostcpu is not None:
            self.hostcpu.begin()
        self.sampler = Sampler(switch_namespace(ctx.topology.name), self.th.period_s,
                               [int(p.pid) for p in ctx.workers.values()])
        self.sampler.start()

    def window_end(self, ctx: TrialContext) -> None:
        """Stop sampling."""
        if self.sampler is not None:
            self.sampler.stop()
            self._outside()
            if self.hostcpu is not None:
                self.hostcpu.end()

    def close(self) -> None:
        """Stop the sampler thread (idempotent)."""
        if self.sampler is not None:
            self.sampler.stop()

    def measurements(self, ctx: TrialContext) -> Measurements:
        """What the sampler saw, for :func:`.fidelitycheck.verdict`."""
        s = self.sampler
        assert s is not None and ctx.topology is not None
        topo = ctx.topology
        w = self.hostcpu.window() if self.hostcpu is not None else None
        flows = delivered(flow_rates(ctx), w)
        hosts = [f.dst for f in flows] if ctx.flood is not None else []
        ports = [linux_ifname(topo.host(h).port) for h in hosts] if hosts else [linux_ifname(p) for p in ctx.ports]
        m = Measurements(link_rate_bps=topo.link.rate, idle_shares=s.idle_shares(),
                         ports={p: intervals(s.tc, p) for p in dict.fromkeys(ports)}, flows=flows,
                         psi_some_share=s.psi_share(), host_cpu_loss=host_cpu_loss(w) if w is not None else None,
                         steal_share=s.steal_share())
        wt = s.worker_times()
        if wt is not None:
            m.worker_run_s, m.worker_wait_s = wt
        if len(self.outside) == 2:
            (t0, a), (t1, b) = self.outside
            m.window_s = t1 - t0
            m.outside_cores = sum(v - a.get(k, 0) for k, v in b.items()) / self.hz / max(t1 - t0, 1e-6)
            fa, fb = self.flood_ticks
            flood_s = sum(v - fa[k] for k, v in fb.items() if k in fa) / self.hz
            soft = s.softirq_s(self.hz)
            if soft is not None:
                m.emulation_cores, m.cores = (flood_s + soft) / max(t1 - t0, 1e-6), os.cpu_count() or 1
        return m

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        """The ``fidelity*`` columns."""
        out: dict[str, Any] = dict.fromkeys(self.COLUMNS)
        if not ctx.local:
            out["fidelity"], out["fidelity_reasons"] = unknown(
                "not on the embedded testbed: this machine's /proc and tc do not describe the trial's hosts")
            return out
        if self.sampler is None:
            out["fidelity"], out["fidelity_reasons"] = unknown("the workload window was never opened")
            return out
        m = self.measurements(ctx)
        v, reasons, s = verdict(m, self.th)
        r4 = _round4
        out.update({"fidelity": v, "fidelity_reasons": reasons_json(reasons), "fidelity_samples": s["samples"],
                    "fidelity_idle_min": r4(s["idle_min"]), "fidelity_idle_median": r4(s["idle_median"]),
                    "fidelity_cpu_wait_s": r4(m.worker_wait_s), "fidelity_cpu_wait_share": r4(s["worker_wait_share"]),
                    "fidelity_psi_some": r4(m.psi_some_share), "fidelity_outside_cores": r4(m.outside_cores),
                    "fidelity_emulation_share": r4(s["emulation_share"]),
                    "fidelity_port_util": r4(s["port_util"]), "fidelity_backlogged": s["backlogged"],
                    "fidelity_drops": s["drops"], "fidelity_flood_ratio": r4(s["flood_ratio"]),
                    "fidelity_pacing_error": r4(s["pacing_error"]),
                    "fidelity_json": json.dumps(self._details(m, s))})
        w = self.hostcpu.window() if self.hostcpu is not None else None
        if w is not None:
            c = cpu_summary(w)
            drops = c["rx_socket_drops"]
            out.update({"fidelity_host_cpu_loss": c["host_cpu_loss"], "host_cpu_use": c["host_cpu_use"],
                        "host_throttled": c["host_throttled"], "rx_cpu_share": c["rx_cpu_share"],
                        "rx_cost_us": c["rx_cost_us"], "rx_socket_drops": None if drops is None else int(drops)})
        return out

    def _details(self, m: Measurements, s: dict[str, Any]) -> dict[str, Any]:
        sm = self.sampler
        assert sm is not None
        w = self.hostcpu.window() if self.hostcpu is not None else None
        host = None if w is None else {**cpu_summary(w), "usage_s": {h: round(v, 4) for h, v in w.usage_s.items()},
                                       "budget_cores": dict(w.budget)}
        return {"thresholds": self.th.model_dump(), "link_rate_bps": m.link_rate_bps, "window_s": m.window_s,
                "host_cpu": host,
                "port_util_by_port": s["port_util_by_port"], "idle_shares": [round(x, 3) for x in m.idle_shares],
                "ports": {p: [[round(iv.dt, 3), iv.sent_bytes, iv.backlog_end, iv.drops] for iv in ivs]
                          for p, ivs in m.ports.items()},
                "flows": [f.__dict__ for f in m.flows], "worker_run_s": _round4(m.worker_run_s),
                "sampler_cpu_s": round(sm.own_cpu_s, 4), "errors": sm.errors}


def _round4(v: float | None) -> float | None:
    return None if v is None else round(v, 4)
