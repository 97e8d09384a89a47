"""Reads what :mod:`.cpuloss` judges, at the two ends of a trial's window, on a testbed whose
topology has a ``cpu:`` block: /proc/stat's per-CPU lines, every host cgroup's counters
(:meth:`qoslab.testbed.cpuplace.CpuPlacement.read`), and per flooded host its flood receiver's
CPU ticks (/proc/PID/stat) and its namespace's UDP counters (/proc/PID/net/snmp of that
receiver: ``InDatagrams``, ``RcvbufErrors``). A few small /proc reads per end; nothing runs.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from qoslab.scale.cpu import host_cores
from qoslab.testbed.cpuplace import CpuPlacement, HostCpu
from qoslab.testbed.procs import descendants

from . import cpu
from .base import TrialContext
from .cpuloss import CpuWindow, delta, parse_percpu
from .fidelityjudge import FlowRates


def _udp(pid: int) -> tuple[int, int] | None:
    """(InDatagrams, RcvbufErrors) of the network namespace of ``pid``, or None."""
    try:
        lines = [line.split() for line in Path(f"/proc/{pid}/net/snmp").read_text().splitlines()
                 if line.startswith("Udp:")]
        head, vals = lines[0], lines[1]
        return int(vals[head.index("InDatagrams")]), int(vals[head.index("RcvbufErrors")])
    except (OSError, IndexError, ValueError):
        return None


def _ticks(pid: int) -> int:
    """utime + stime ticks of ``pid`` and its descendants (a receiver runs under ``timeout``)."""
    n = 0
    for p in descendants(pid):
        try:
            r = cpu.parse_pid_stat(Path(f"/proc/{p}/stat").read_text())
        except OSError:
            continue
        if r is not None:
            n += r[0]
    return n


def receivers(flood: Any) -> dict[str, int]:
    """Flooded host -> PID of its flood receiver (D-ITG's ``receivers``: host -> process; iperf3's
    ``servers``: flow -> process on its node; the first per host)."""
    out: dict[str, int] = {}
    for attr in ("receivers", "servers"):
        for key, proc in (getattr(flood, attr, None) or {}).items():
            host = getattr(proc, "node", None) or str(key)
            out.setdefault(host, int(proc.pid))
    return out


class HostCpuReader:
    """The two readings of one window (:meth:`begin`, :meth:`end`) and the :class:`CpuWindow`
    between them. ``budget_hosts``: the trial's hosts whose loss counts (workload hosts and
    flood destinations); ``flood``: the running generator (None without congestion)."""

    def __init__(self, place: CpuPlacement, budget_hosts: list[str], flood: Any = None) -> None:
        assert place.block is not None
        self.place, self.flood = place, flood
        self.hosts = [h.name for h in place.topo.hosts]
        self.budget = {h: host_cores(place.block, place.topo.host(h).cpu) for h in budget_hosts}
        self.rx = receivers(flood)
        self._a: tuple[float, dict[int, tuple[int, ...]], dict[str, HostCpu], dict[str, int],
                       dict[str, tuple[int, int] | None]] | None = None
        self._b: Any = None

    def _read(self) -> tuple[float, dict[int, tuple[int, ...]], dict[str, HostCpu], dict[str, int],
                             dict[str, tuple[int, int] | None]]:
        return (time.monotonic(), parse_percpu(Path("/proc/stat").read_text()), self.place.read(self.hosts),
                {h: _ticks(p) for h, p in self.rx.items()}, {h: _udp(p) for h, p in self.rx.items()})

    def begin(self) -> None:
        """The first reading (window begin)."""
        self._a = self._read()

    def end(self) -> None:
        """The second reading (window end)."""
        self._b = self._read()

    def window(self) -> CpuWindow | None:
        """The deltas as a :class:`CpuWindow`, or None before both readings."""
        if self._a is None or self._b is None:
            return None
        (t0, c0, g0, r0, u0), (t1, c1, g1, r1, u1) = self._a, self._b
        hz = float(os.sysconf("SC_CLK_TCK"))
        assert self.place.block is not None
        rx_pk, rx_dr = {}, {}
        for h in self.rx:
            a, b = u0.get(h), u1.get(h)
            if a is not None and b is not None:
                rx_pk[h], rx_dr[h] = b[0] - a[0], b[1] - a[1]
        return CpuWindow(
            window_s=t1 - t0, hz=hz, host_cpus=self.place.block.host_set, percpu=delta(c0, c1),
            usage_s={h: (g1[h].usage_ns - g0[h].usage_ns) / 1e9 for h in g1 if h in g0},
            budget=self.budget,
            periods={h: g1[h].nr_periods - g0[h].nr_periods for h in g1 if h in g0},
            throttled={h: g1[h].nr_throttled - g0[h].nr_throttled for h in g1 if h in g0},
            # receivers on the switch's cores (cpu.flood_receivers: switch) cost the hosts nothing
            rx_cpu_s={h: (r1[h] - r0[h]) / hz if self.place.block.flood_receivers == "host" else 0.0
                      for h in r1 if h in r0 and h in self.budget},
            rx_packets=rx_pk, rx_drops=rx_dr)


def host_reader(ctx: TrialContext) -> HostCpuReader | None:
    """The reader of the hosts' CPU budgets for this trial (its workload hosts and flood
    destinations), or None without a topology ``cpu:`` block."""
    topo = ctx.topology
    if topo is None or topo.cpu is None:
        return None
    plan = ctx.plan
    hosts = list(getattr(getattr(plan, "workload", None), "hosts", None) or [])
    hosts += [f.dst for f in getattr(plan, "flows", ())]
    return HostCpuReader(CpuPlacement(topo), list(dict.fromkeys(hosts)), ctx.flood)


def delivered(flows: list[FlowRates], w: CpuWindow | None) -> list[FlowRates]:
    """``flows`` with each received rate counting what its host's UDP sockets dropped for a full
    receive buffer (``w.rx_drops`` against ``w.rx_packets`` in the window): with a CPU budget a
    receiver that gets no CPU drops at the socket, on the host, after the network delivered the
    packet (the flood_ratio check judges the network). ``flows`` unchanged without ``w``."""
    if w is None:
        return flows
    out = []
    for f in flows:
        got, lost = w.rx_packets.get(f.dst, 0), w.rx_drops.get(f.dst, 0)
        k = (got + lost) / got if got > 0 and lost > 0 else 1.0
        out.append(replace(f, received_wire_bps=f.received_wire_bps * k))
    return out
