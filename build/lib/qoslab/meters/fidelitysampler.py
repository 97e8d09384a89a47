"""The fidelity meter's sampler (:mod:`.fidelity`): a thread that reads, every ``period_s`` over
a trial's workload window, /proc/stat, /proc/pressure/cpu, the worker JVMs' threads' schedstat and
one qdisc dump of the switch namespace over netlink; and the pure parsers of what it reads."""

from __future__ import annotations

import resource
import threading
import time
from collections.abc import Mapping
from glob import glob
from pathlib import Path
from typing import Any

from qoslab.errors import QoslabError
from qoslab.meters.fidelityjudge import PortInterval
from qoslab.testbed import netlink
from qoslab.testbed.procs import descendants

from .fidelitymeasure import parse_cpu_steal


def parse_cpu_total(text: str) -> tuple[int, int, int]:
    """(idle + iowait ticks, all ticks, softirq ticks) of the aggregate ``cpu`` line of /proc/stat. Pure."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            vals = [int(x) for x in parts[1:9]]
            return vals[3] + vals[4], sum(vals), vals[6]
    return 0, 0, 0


def parse_psi_some(text: str) -> int | None:
    """The ``some`` line's ``total`` (microseconds) of /proc/pressure/cpu, or None. Pure."""
    for line in text.splitlines():
        if line.startswith("some"):
            for f in line.split():
                if f.startswith("total="):
                    return int(f[6:])
    return None


def parse_qdiscs(doc: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per device of ``tc -s -j qdisc show`` output: the root qdisc's ``bytes``, ``packets``,
    ``backlog``, ``drops`` and ``queues`` (leaf qdisc handle -> [backlog, drops]). Pure."""
    out: dict[str, dict[str, Any]] = {}
    for q in doc:
        dev = q.get("dev")
        if not dev:
            continue
        d = out.setdefault(dev, {"bytes": 0, "packets": 0, "backlog": 0, "drops": 0, "queues": {}})
        if q.get("root"):
            d.update(bytes=int(q.get("bytes", 0)), packets=int(q.get("packets", 0)),
                     backlog=int(q.get("backlog", 0)), drops=int(q.get("drops", 0)))
        elif q.get("kind") not in ("ingress", "clsact"):
            d["queues"][str(q.get("handle"))] = [int(q.get("backlog", 0)), int(q.get("drops", 0))]
    return out


def qdiscs_of(counters: Mapping[str, list[netlink.QdiscCounters]]) -> dict[str, dict[str, Any]]:
    """:func:`parse_qdiscs`'s shape from a netlink dump (:func:`qoslab.testbed.netlink.qdisc_counters`):
    per device the root qdisc's counters and its leaf queues (handle as tc prints it, ``10:``). Pure."""
    out: dict[str, dict[str, Any]] = {}
    for dev, qs in counters.items():
        d = out.setdefault(dev, {"bytes": 0, "packets": 0, "backlog": 0, "drops": 0, "queues": {}})
        for q in qs:
            if q.root:
                d.update(bytes=q.bytes, packets=q.packets, backlog=q.backlog, drops=q.drops)
            elif q.kind not in ("ingress", "clsact"):
                d["queues"][f"{q.handle >> 16:x}:"] = [q.backlog, q.drops]
    return out


def intervals(samples: list[tuple[float, dict[str, Any]]], dev: str) -> list[PortInterval]:
    """The :class:`PortInterval` of ``dev`` between consecutive samples ``(t, parse_qdiscs())``;
    an interval where a counter went backwards (the switch re-applied its plan) is left out. Pure."""
    out = []
    for (t0, a), (t1, b) in zip(samples, samples[1:], strict=False):
        pa, pb = a.get(dev), b.get(dev)
        if pa is None or pb is None or pb["bytes"] < pa["bytes"] or pb["drops"] < pa["drops"]:
            continue
        out.append(PortInterval(t1 - t0, pb["bytes"] - pa["bytes"], pa["backlog"], pb["backlog"],
                                pb["drops"] - pa["drops"]))
    return out


def thread_schedstat(pids: list[int]) -> dict[tuple[int, int], tuple[int, int]]:
    """``{(pid, tid): (run ns, run-queue wait ns)}`` of every thread of ``pids`` and their descendants."""
    out = {}
    for p in {d for pid in pids for d in descendants(pid)}:
        for f in glob(f"/proc/{p}/task/*/schedstat"):
            try:
                run, wait = Path(f).read_text().split()[:2]
            except (OSError, ValueError):
                continue
            out[(p, int(f.split("/")[4]))] = (int(run), int(wait))
    return out


class Sampler:
    """The sampler thread of one trial (see the module doc). ``ports``: Linux names of the switch
    ports to read; ``worker_pids``: the worker JVMs' PIDs."""

    def __init__(self, switch_ns: str, period_s: float, worker_pids: list[int]) -> None:
        self.switch_ns, self.period_s, self.worker_pids = switch_ns, period_s, worker_pids
        self.cpu: list[tuple[float, int, int, int | None, int]] = []  # t, idle, all, psi us, softirq
        self.steal: list[int] = []  # steal ticks at each sample of self.cpu
        self.tc: list[tuple[float, dict[str, Any]]] = []
        self.threads_start: dict[tuple[int, int], tuple[int, int]] = {}
        self.threads: dict[tuple[int, int], tuple[int, int]] = {}
        self.errors: list[str] = []
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self.own_cpu_s = 0.0

    def start(self) -> None:
        """First sample now, then every period in a thread."""
        self.threads_start = thread_schedstat(self.worker_pids)
        self.threads = dict(self.threads_start)
        self.sample()
        self._thread = threading.Thread(target=self._loop, name="trial-fidelity", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        t0 = resource.getrusage(resource.RUSAGE_THREAD)
        nxt = time.monotonic()
        while True:
            nxt += self.period_s
            if self._halt.wait(max(0.0, nxt - time.monotonic())):
                break
            self.sample()
        t1 = resource.getrusage(resource.RUSAGE_THREAD)
        self.own_cpu_s = t1.ru_utime + t1.ru_stime - t0.ru_utime - t0.ru_stime

    def sample(self) -> None:
        """One sample of /proc and tc (errors are kept, never raised)."""
        t = time.monotonic()
        try:
            stat = Path("/proc/stat").read_text()
            idle, total, softirq = parse_cpu_total(stat)
            try:
                psi = parse_psi_some(Path("/proc/pressure/cpu").read_text())
            except OSError:
                psi = None
            self.cpu.append((t, idle, total, psi, softirq))
            self.steal.append(parse_cpu_steal(stat))
            self.threads.update(thread_schedstat(self.worker_pids))
            try:  # one RTM_GETQDISC dump on a kept netlink socket: no process per sample (testbed.netlink),
                # stamped when the kernel took the counts (not after this thread's wait and parse)
                snap = netlink.qdisc_snapshot(self.switch_ns)
                self.tc.append((snap.at, qdiscs_of(snap.counters)))
            except QoslabError as e:
                if len(self.errors) < 5:
                    self.errors.append(f"qdiscs: {str(e)[:200]}")
        except (OSError, ValueError) as e:
            if len(self.errors) < 5:
                self.errors.append(str(e)[:200])

    def stop(self) -> None:
        """Stop the thread and take a last sample (idempotent)."""
        if self._halt.is_set():
            return
        self._halt.set()
        if self._thread is not None:
            self._thread.join(timeout=3)
        self.sample()

    def idle_shares(self) -> list[float]:
        """Idle share of every interval."""
        return [(b[1] - a[1]) / (b[2] - a[2]) for a, b in zip(self.cpu, self.cpu[1:], strict=False) if b[2] > a[2]]

    def steal_share(self) -> float | None:
        """Steal ticks over the window as a share of all ticks (every core's time), or None."""
        if len(self.cpu) < 2 or self.cpu[-1][2] <= self.cpu[0][2]:
            return None
        return (self.steal[-1] - self.steal[0]) / (self.cpu[-1][2] - self.cpu[0][2])

    def psi_share(self) -> float | None:
        """Share of the window in which some task waited for a core (PSI), or None."""
        if len(self.cpu) < 2 or self.cpu[0][3] is None or self.cpu[-1][3] is None:
            return None
        return (self.cpu[-1][3] - self.cpu[0][3]) / 1e6 / max(self.cpu[-1][0] - self.cpu[0][0], 1e-6)

    def softirq_s(self, hz: float) -> float | None:
        """Softirq CPU seconds (all cores) over the window (the namespaces' forwarding)."""
        return (self.cpu[-1][4] - self.cpu[0][4]) / hz if len(self.cpu) >= 2 else None

    def worker_times(self) -> tuple[float, float] | None:
        """(run s, wait s) of the worker threads over the window, or None without workers."""
        if not self.threads:
            return None
        run = sum(v[0] - self.threads_start.get(k, (0, 0))[0] for k, v in self.threads.items())
        wait = sum(v[1] - self.threads_start.get(k, (0, 0))[1] for k, v in self.threads.items())
        return run / 1e9, wait / 1e9
