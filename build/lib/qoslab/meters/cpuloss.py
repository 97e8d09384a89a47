"""What the hosts' CPU budgets saw over a trial's window (issue 42), as numbers (pure): the share of
the hosts' budget the emulation took (``host_cpu_loss``, the fidelity check that replaces
``emulation_share`` on a topology with a ``cpu:`` block), how much of their budget the hosts used
and were throttled, and the flood's receive CPU share (a scale-model quantity).

The hosts run on ``hosts_cpus`` (H cores) with capacities b_i (:mod:`qoslab.scale.cpu`); the
trial's hosts (workload hosts and flood destinations) have B = sum b_i. Over a window of T
seconds H offers H x T CPU seconds; what is not the hosts' to use is

- interrupt work on H: ``irq`` + ``softirq`` of /proc/stat's per-CPU lines (the packets' path
  that landed on the hosts' cores instead of the switch's) and ``steal`` (the hypervisor's);
- tasks on H that are in no host's cgroup: H's ``user`` + ``nice`` + ``system`` less every host
  cgroup's CPU time (``cpuacct.usage``): the harness, the virtual switch, other users' work.

``free`` = H x T less both, and less the CPU of the hosts that are not the trial's. Two upper bounds
of what the trial's hosts lost, as shares of their budget B x T:

- the **capacity deficit** ``max(0, B x T - free) / (B x T)``: what H could not offer them (0 when H
  has room for all of them); it over-reads when the others' work ran only in time the hosts left
  idle (the testbed gives the hosts' group the largest CFS weight, so another user's process on H
  mostly does);
- the **shortfall** ``(B x T - their CPU time) / (B x T)``: what they did not get; it over-reads
  when a host did not want its whole budget (a workload waiting for the network).

``host_cpu_loss`` is the smaller: the hosts cannot have lost more than either. The bench
(``bench/cpubudget_bench.py``) checks it against busy loops in host cgroups, which want their whole
budget, so their loss is known exactly (the shortfall), with other work on H that must be caught.

This kernel accounts CPU time by ticks (CONFIG_TICK_CPU_ACCOUNTING, no IRQ_TIME_ACCOUNTING): a
tick that lands in softirq counts as softirq in /proc/stat, and softirq that runs while a task
runs is also charged to that task (and so to its cgroup's quota). Both readings are therefore
estimates of the same few percent; the bench says how close.

The receive CPU share of a flooded host is its flood receiver's CPU time (user + system, from
/proc/PID/stat) over its capacity x T: the share of a node's CPU an incoming flood takes, the
quantity the thesis names ("decreased CPU availability on machines due to handling of incoming UDP
packets", V.C.1). ``rx_socket_drops``: packets the host's UDP sockets dropped for a full receive
buffer (``UdpRcvbufErrors``, /proc/net/snmp of the host's namespace): the flood arrived, the host
had no CPU to take it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

#: /proc/stat per-CPU columns, in order (Documentation/filesystems/proc.rst, "1.7 Miscellaneous kernel statistics").
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def parse_percpu(text: str) -> dict[int, tuple[int, ...]]:
    """The per-CPU lines of /proc/stat -> {cpu: ticks in :data:`STAT_FIELDS` order}. Pure."""
    out: dict[int, tuple[int, ...]] = {}
    for line in text.splitlines():
        f = line.split()
        if f and f[0].startswith("cpu") and f[0][3:].isdigit():
            vals = [int(x) for x in f[1:9]]
            out[int(f[0][3:])] = tuple(vals + [0] * (8 - len(vals)))
    return out


def parse_udp_rcvbuf_errors(snmp: str) -> int | None:
    """``RcvbufErrors`` of the ``Udp:`` lines of /proc/net/snmp (header line, then values), or None. Pure."""
    lines = [line.split() for line in snmp.splitlines() if line.startswith("Udp:")]
    if len(lines) < 2 or "RcvbufErrors" not in lines[0]:
        return None
    try:
        return int(lines[1][lines[0].index("RcvbufErrors")])
    except (IndexError, ValueError):
        return None


@dataclass
class CpuWindow:
    """One trial window's CPU readings on the hosts' cores (all deltas over ``window_s``):
    ``percpu``: /proc/stat ticks per CPU (:data:`STAT_FIELDS`) at ``hz`` ticks/s; ``usage_s``:
    every host cgroup's CPU seconds; ``budget``: the trial's hosts -> capacity (cores);
    ``periods`` / ``throttled``: CFS periods and throttled periods per host;
    ``rx_cpu_s`` / ``rx_packets`` / ``rx_drops``: per flooded host, its flood receiver's CPU
    seconds, packets it received, UDP receive-buffer drops."""

    window_s: float
    hz: float
    host_cpus: frozenset[int]
    percpu: Mapping[int, tuple[int, ...]]
    usage_s: Mapping[str, float]
    budget: Mapping[str, float]
    periods: Mapping[str, int] = field(default_factory=dict)
    throttled: Mapping[str, int] = field(default_factory=dict)
    rx_cpu_s: Mapping[str, float] = field(default_factory=dict)
    rx_packets: Mapping[str, int] = field(default_factory=dict)
    rx_drops: Mapping[str, int] = field(default_factory=dict)


def delta(a: Mapping[int, tuple[int, ...]], b: Mapping[int, tuple[int, ...]]) -> dict[int, tuple[int, ...]]:
    """Per-CPU tick deltas ``b - a`` (CPUs in both). Pure."""
    return {c: tuple(y - x for x, y in zip(a[c], b[c], strict=True)) for c in b if c in a}


def _sum(d: Mapping[int, tuple[int, ...]], cpus: Iterable[int], names: Iterable[str]) -> int:
    idx = [STAT_FIELDS.index(n) for n in names]
    return sum(d[c][i] for c in cpus if c in d for i in idx)


def stolen_s(w: CpuWindow) -> dict[str, float]:
    """CPU seconds on the hosts' cores that were not the hosts' to use: ``interrupts`` (irq +
    softirq), ``steal``, ``other_tasks`` (task time in no host cgroup, >= 0), and ``hosts``
    (every host cgroup's CPU time)."""
    cpus = w.host_cpus
    tasks = _sum(w.percpu, cpus, ("user", "nice", "system")) / w.hz
    hosts = sum(w.usage_s.values())
    return {"interrupts": _sum(w.percpu, cpus, ("irq", "softirq")) / w.hz,
            "steal": _sum(w.percpu, cpus, ("steal",)) / w.hz,
            "other_tasks": max(0.0, tasks - hosts), "hosts": hosts}


def capacity_deficit(w: CpuWindow) -> float | None:
    """What the hosts' cores could not offer the trial's hosts, as a share of their budget (module
    doc), in [0, 1]; None without a budget or a window."""
    b = sum(w.budget.values()) * w.window_s
    if b <= 0 or w.window_s <= 0:
        return None
    s = stolen_s(w)
    others = sum(v for h, v in w.usage_s.items() if h not in w.budget)  # hosts that are not the trial's
    free = len(w.host_cpus) * w.window_s - s["interrupts"] - s["steal"] - s["other_tasks"] - others
    return min(1.0, max(0.0, (b - free) / b))


def host_cpu_loss(w: CpuWindow) -> float | None:
    """The share of the trial's hosts' budget they lost to work that is not theirs (module doc):
    the smaller of :func:`capacity_deficit` and the shortfall 1 - :func:`host_cpu_use`, in [0, 1];
    None without a budget or a window."""
    k, use = capacity_deficit(w), host_cpu_use(w)
    if k is None or use is None:
        return None
    return min(k, max(0.0, 1.0 - use))


def host_cpu_use(w: CpuWindow) -> float | None:
    """The trial's hosts' CPU time against their budget (sum over hosts), or None."""
    b = sum(w.budget.values()) * w.window_s
    return sum(w.usage_s.get(h, 0.0) for h in w.budget) / b if b > 0 else None


def throttled_share(w: CpuWindow) -> float | None:
    """Share of the trial's hosts' CFS periods in which they were throttled (ran out of budget), or None."""
    n = sum(w.periods.get(h, 0) for h in w.budget)
    return sum(w.throttled.get(h, 0) for h in w.budget) / n if n else None


def rx_cpu_share(w: CpuWindow) -> float | None:
    """The flooded hosts' receive CPU share: their flood receivers' CPU time over their capacity x
    the window (mean over flooded hosts), or None without a flood."""
    shares = [s / (w.budget[h] * w.window_s) for h, s in w.rx_cpu_s.items()
              if w.budget.get(h) and w.window_s > 0]
    return sum(shares) / len(shares) if shares else None


def rx_cost_us(w: CpuWindow) -> float | None:
    """CPU microseconds a flood receiver spent per packet it received (all flooded hosts), or None."""
    pkts = sum(w.rx_packets.values())
    return 1e6 * sum(w.rx_cpu_s.values()) / pkts if pkts else None


def summary(w: CpuWindow) -> dict[str, float | None]:
    """Every quantity above, rounded, for the trial's columns and JSON."""
    def r(v: float | None) -> float | None:
        return None if v is None else round(v, 4)
    s = stolen_s(w)
    return {"host_cpu_loss": r(host_cpu_loss(w)), "capacity_deficit": r(capacity_deficit(w)),
            "host_cpu_use": r(host_cpu_use(w)),
            "host_throttled": r(throttled_share(w)), "rx_cpu_share": r(rx_cpu_share(w)),
            "rx_cost_us": r(rx_cost_us(w)), "rx_socket_drops": float(sum(w.rx_drops.values())) if w.rx_drops else None,
            **{f"{k}_s": r(v) for k, v in s.items()}}
