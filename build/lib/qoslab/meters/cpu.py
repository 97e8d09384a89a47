"""CPU time of a trial's parts, from /proc: the CPU confound, measured.

On the embedded testbed the flood's generators, the kernel's forwarding of their packets (the
namespaces' bridge, veths and qdiscs run in softirq context) and the workload's JVMs share this
machine's cores; on a real cluster the flooders and the switch are other hardware. Per trial this
module measures, over the **workload window** (from the moment every worker listens and the
manager JVM is about to start, until the manager has exited; the flood runs throughout):

- ``cpu_flood_s``: utime+stime of the flood generator's processes (D-ITG ``senders``/``receivers``,
  iperf3 ``clients``/``servers``) and their descendants: a process started with a lifetime runs
  under GNU ``timeout``, whose child is the real ITGSend/ITGRecv/iperf3;
- ``cpu_workers_s``: utime+stime of the worker JVMs (all threads: render, RMI, GC, JIT), and
  ``cpu_busiest_worker_s`` of the worker with the largest ``busy_s`` (the one ``busy_max_s`` is);
- ``cpu_user_s``, ``cpu_system_s`` (system + hardirq), ``cpu_softirq_s``, ``cpu_idle_s`` (idle +
  iowait), ``cpu_steal_s`` (time the hypervisor ran something else): /proc/stat summed over CPUs;
  per CPU in ``cpu_json`` (with the per-worker and per-process values);
- ``cpu_outside_s``: utime+stime of user-space processes outside the testbed and this campaign
  (in the campaign's own network namespace, not this process or its children, not kernel threads):
  other people's work on a shared machine (builds, tests). Processes that both start and end
  inside the window are missed, so it is a lower bound;
- ``cpu_window_s``: the window's wall time; ``cores x window`` = user + system + softirq + idle +
  steal (up to tick rounding).

All values are seconds. Process times come from /proc/PID/stat fields 14-15 (clock ticks of
``SC_CLK_TCK``, 100 per second here; the kernel scales them to the task's exact runtime, the
printed resolution is one tick). Accounting on this kernel is tick-based
(``CONFIG_IRQ_TIME_ACCOUNTING`` off): a tick that lands in softirq counts as softirq in /proc/stat
*and* as stime of the task it interrupted, so process times overlap the softirq column:
workers + flood + everything else = user + system + softirq, not plus softirq.

A light sampler thread re-reads the tracked processes every ``period_s`` (0.1 s: about a dozen
small /proc reads, well under 1 % of a core) and keeps each one's last value, so workers that end
before the window closes (``workers: per-trial``) still count. Processes on other machines (a real
cluster's executors) cannot be read here: :func:`meter_for` gives a meter whose columns stay NULL.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from qoslab.testbed.procs import descendants

from .base import BaseMeter, TrialContext

#: /proc/stat per-CPU fields, in file order (proc(5)); guest times are inside user already.
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
#: Generator attributes holding its processes (``{key: BackgroundProcess}``): D-ITG, iperf3.
FLOOD_ATTRS = ("senders", "receivers", "clients", "servers")
#: The per-trial columns this module fills (name -> SQL type), for the store's ADDED_COLUMNS.
COLUMNS = {"cpu_window_s": "REAL", "cpu_flood_s": "REAL", "cpu_workers_s": "REAL", "cpu_busiest_worker_s": "REAL",
           "cpu_outside_s": "REAL", "cpu_user_s": "REAL", "cpu_system_s": "REAL", "cpu_softirq_s": "REAL",
           "cpu_idle_s": "REAL", "cpu_steal_s": "REAL", "cpu_json": "TEXT"}


def parse_proc_stat(text: str) -> dict[str, tuple[int, ...]]:
    """Per-CPU tick counters of /proc/stat text: ``{"cpu0": (user, nice, system, idle, iowait,
    irq, softirq, steal), ...}`` (the aggregate ``cpu`` line is left out; missing trailing fields
    of old kernels are 0). Pure."""
    out: dict[str, tuple[int, ...]] = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0].startswith("cpu") and parts[0] != "cpu":
            vals = [int(x) for x in parts[1:1 + len(STAT_FIELDS)]]
            out[parts[0]] = tuple(vals + [0] * (len(STAT_FIELDS) - len(vals)))
    return out


def parse_pid_stat(text: str) -> tuple[int, int] | None:
    """``(utime + stime, starttime)`` in clock ticks from /proc/PID/stat text (fields 14, 15, 22;
    the command name may hold spaces and parentheses), or None when malformed. Pure."""
    try:
        f = text.rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12]), int(f[19])
    except (IndexError, ValueError):
        return None


#: PF_KTHREAD in /proc/PID/stat's flags (field 9): a kernel thread.
PF_KTHREAD = 0x00200000


def _user_process(text: str) -> bool:
    try:
        return not int(text.rsplit(")", 1)[1].split()[6]) & PF_KTHREAD
    except (IndexError, ValueError):
        return False


def outside_processes(exclude: set[int]) -> dict[tuple[int, int], int]:
    """``{(pid, starttime): utime+stime}`` of the user-space processes in this process's network
    namespace (the machine's own, where the campaign runs) except ``exclude``: the load that is
    neither the testbed's (its processes live in the hosts' namespaces) nor this campaign's."""
    try:
        root = os.stat("/proc/self/ns/net").st_ino
    except OSError:
        return {}
    out = {}
    for e in os.scandir("/proc"):
        if not e.name.isdigit() or int(e.name) in exclude:
            continue
        try:
            if os.stat(f"/proc/{e.name}/ns/net").st_ino != root:
                continue
            text = Path(f"/proc/{e.name}/stat").read_text()
        except OSError:
            continue
        r = parse_pid_stat(text)
        if r is not None and _user_process(text):
            out[(int(e.name), r[1])] = r[0]
    return out


def _read_pid(pid: int) -> tuple[int, int] | None:
    try:
        return parse_pid_stat(Path(f"/proc/{pid}/stat").read_text())
    except OSError:
        return None


def flood_processes(flood: object | None) -> dict[str, int]:
    """``{label: pid}`` of a generator's processes (see FLOOD_ATTRS; label ``attr:key@node``)."""
    out: dict[str, int] = {}
    for attr in FLOOD_ATTRS:
        for key, proc in (getattr(flood, attr, None) or {}).items():
            out[f"{attr}:{key}@{getattr(proc, 'node', '?')}"] = int(proc.pid)
    return out


@dataclass
class Snapshot:
    """/proc at one moment: monotonic time (s), per-CPU ticks (see parse_proc_stat),
    ``{(pid, starttime): utime+stime ticks}`` of the tracked processes and of the processes outside
    the testbed (see outside_processes; None = not read)."""

    t: float
    cpus: dict[str, tuple[int, ...]]
    procs: dict[tuple[int, int], int] = field(default_factory=dict)
    outside: dict[tuple[int, int], int] | None = None


def summarize(start: Snapshot, end: Snapshot, groups: Mapping[str, Mapping[str, Iterable[tuple[int, int]]]],
              busiest: str | None, hz: float) -> dict[str, Any]:
    """The columns (see COLUMNS) from two snapshots. ``groups``: ``{"flood": {label: keys},
    "workers": {host: keys}}`` with keys ``(pid, starttime)``; ``busiest``: the host whose worker
    was busiest (or None); ``hz``: clock ticks per second. A process absent from either snapshot
    counts 0; no ``flood`` group (no flood ran) gives ``cpu_flood_s`` 0; a group without a
    readable member gives NULL (None). Pure."""
    def secs(keys: Iterable[tuple[int, int]]) -> float:
        return sum(end.procs[k] - start.procs[k] for k in keys if k in start.procs and k in end.procs) / hz

    per = {g: {label: round(secs(keys), 3) for label, keys in members.items()} for g, members in groups.items()}
    cpus = {c: {f: (end.cpus[c][i] - start.cpus[c][i]) / hz for i, f in enumerate(STAT_FIELDS)}
            for c in sorted(start.cpus) if c in end.cpus}

    def tot(*fields: str) -> float:
        return round(sum(v[f] for v in cpus.values() for f in fields), 3)

    flood, workers = per.get("flood", {}), per.get("workers", {})
    outside = None
    if start.outside is not None and end.outside is not None:  # started inside the window: all of it counts
        outside = round(sum(v - start.outside.get(k, 0) for k, v in end.outside.items()) / hz, 3)
    return {"cpu_window_s": round(end.t - start.t, 3),
            "cpu_flood_s": 0.0 if "flood" not in groups else round(sum(flood.values()), 3) if flood else None,
            "cpu_workers_s": round(sum(workers.values()), 3) if workers else None,
            "cpu_busiest_worker_s": workers.get(busiest) if busiest else None, "cpu_outside_s": outside,
            "cpu_user_s": tot("user", "nice"), "cpu_system_s": tot("system", "irq"),
            "cpu_softirq_s": tot("softirq"), "cpu_idle_s": tot("idle", "iowait"), "cpu_steal_s": tot("steal"),
            "cpu_json": json.dumps({"window_s": round(end.t - start.t, 3), "clk_tck": hz,
                                    "cpus": {c: {f: round(v, 3) for f, v in d.items()} for c, d in cpus.items()},
                                    "workers": workers, "flood": flood, "busiest_worker": busiest})}


def busiest_host(per_worker: list[dict]) -> str | None:
    """The host of the worker with the largest ``busy_s`` in a workload result's ``per_worker``."""
    rows = [w for w in per_worker if w.get("busy_s") is not None and w.get("host")]
    return max(rows, key=lambda w: w["busy_s"])["host"] if rows else None


class TrialCpu:
    """The CPU meter of one trial (see the module doc): :meth:`begin` when the workers listen
    (``run_workload``'s ``on_started``), :meth:`end` when the workload has returned, :meth:`close`
    always (stops the sampler; idempotent), :meth:`columns` for the store row (all NULL when
    disabled or never begun). Never raises for a process that is gone."""

    def __init__(self, enabled: bool = True, period_s: float = 0.1) -> None:
        self.enabled, self.period_s = enabled, period_s
        self.hz = float(os.sysconf("SC_CLK_TCK"))
        self.groups: dict[str, dict[str, list[tuple[int, int]]]] = {}
        self.start: Snapshot | None = None
        self.stop: Snapshot | None = None
        self._last: dict[tuple[int, int], int] = {}
        self._lock = threading.Lock()
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    @staticmethod
    def _cpus() -> dict[str, tuple[int, ...]]:
        return parse_proc_stat(Path("/proc/stat").read_text())

    @staticmethod
    def _outside() -> dict[tuple[int, int], int]:
        return outside_processes(set(descendants(os.getpid())))

    def _track(self, group: str, label: str, pid: int) -> None:
        for p in descendants(pid):
            r = _read_pid(p)
            if r is not None:
                self.groups.setdefault(group, {}).setdefault(label, []).append((p, r[1]))
                self._last[(p, r[1])] = r[0]

    def begin(self, workers: Mapping[str, Any], flood: object | None) -> None:
        """Start the window: ``workers`` is ``{host: BackgroundProcess}`` (what ``on_started``
        gets), ``flood`` the running generator or None."""
        if not self.enabled or self.start is not None:
            return
        self.groups = {"workers": {}} if workers else {}
        if flood is not None:
            self.groups["flood"] = {}
        for host, proc in workers.items():
            self._track("workers", host, int(proc.pid))
        for label, pid in flood_processes(flood).items():
            self._track("flood", label, pid)
        self.start = Snapshot(time.monotonic(), self._cpus(), dict(self._last), self._outside())
        self._thread = threading.Thread(target=self._sample_loop, name="trial-cpu", daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        keys = [k for members in self.groups.values() for ks in members.values() for k in ks]
        for pid, st in keys:
            r = _read_pid(pid)
            if r is not None and r[1] == st:  # same process (not a reused PID)
                with self._lock:
                    self._last[(pid, st)] = r[0]

    def _sample_loop(self) -> None:
        while not self._halt.wait(self.period_s):
            self._sample()

    def end(self) -> None:
        """Close the window (a last sample of what still runs, /proc/stat now)."""
        if self.start is None or self.stop is not None:
            return
        self._sample()
        with self._lock:
            self.stop = Snapshot(time.monotonic(), self._cpus(), dict(self._last), self._outside())
        self.close()

    def close(self) -> None:
        """Stop the sampler thread (idempotent)."""
        self._halt.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)

    def columns(self, per_worker: list[dict]) -> dict[str, Any]:
        """The trial's ``cpu_*`` columns (all None when the window was not measured)."""
        if self.start is None or self.stop is None:
            return dict.fromkeys(COLUMNS)
        return summarize(self.start, self.stop, self.groups, busiest_host(per_worker), self.hz)


def meter_for(local: bool) -> TrialCpu:
    """A meter that measures when the trial's processes run on this machine (``local``: the
    embedded testbed), else one whose columns stay NULL."""
    return TrialCpu(enabled=local)


class CpuMeter(BaseMeter):
    """CPU time of the trial's parts over the workload window (this module); NULL columns when the
    trial's processes are not on this machine (``ctx.local`` false)."""

    COLUMNS: ClassVar[Mapping[str, str]] = COLUMNS

    def __init__(self, ctx: TrialContext) -> None:
        super().__init__(ctx)
        self.meter = meter_for(ctx.local)

    def window_begin(self, ctx: TrialContext) -> None:
        """Start the window: track the workers and the flood's processes."""
        self.meter.begin(ctx.workers, ctx.flood)

    def window_end(self, ctx: TrialContext) -> None:
        """Close the window."""
        self.meter.end()

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        """The ``cpu_*`` columns (the busiest worker from the workload's per-worker results)."""
        return self.meter.columns(ctx.result.get("per_worker", []))

    def close(self) -> None:
        """Stop the sampler thread."""
        self.meter.close()
