"""A topology's ``cpu:`` block: the testbed's CPU as part of the scale model (issue 42). Pure: the
machine's facts come in as arguments.

On a real cluster every node has CPUs of its own and the switch forwards in hardware; on the
embedded testbed hosts, switch and flood share this machine's cores. The block makes the sharing
a design instead of an accident (as Mininet-HiFi's ``CPULimitedHost`` does, Handigol et al.,
CoNEXT 2012):

- ``hosts_cpus``: the cores the hosts' processes run on (a cpuset list, ``"0"``, ``"0-3"``,
  ``"0,2"``); every process a trial starts on a host joins that host's cgroup, which has this
  cpuset and a CPU capacity;
- ``host_cores``: the capacity of a host in cores (CFS bandwidth: quota = cores x period per
  period), unless the host sets its own ``cpu:`` (``hosts[].cpu``); a flood's receiver runs in
  the cgroup of the host it floods, so the CPU a real node spends on an incoming flood comes out
  of that host's capacity (the thesis's "decreased CPU availability on machines due to handling of
  incoming UDP packets", V.C.1);
- ``switch_cpus``: the cores of the switch and of what stands for the network: the bridge's
  forwarding and the ports' qdiscs (steered there with RPS, ``steer``), the flood senders, the
  virtual switch and the harness itself;
- ``period_ms``: the CFS bandwidth period (Linux: ``cpu.cfs_period_us``, 1 ms to 1 s); a host
  runs at most cores x period in each period, so a short period keeps a throttled host's pauses
  short against the scaled timers (the minimum RTO);
- ``steer``: RPS (``/sys/class/net/DEV/queues/rx-0/rps_cpus``) of every switch port and host
  interface to ``switch_cpus``, so the packets' path through veth, bridge, qdiscs and the
  receiving stack runs on the switch's cores, not on the core of whichever host sent them;
- ``receive_on`` (issue 52): where the hosts' interfaces (the host end of each veth, ``eth0`` in
  the host's namespace) process what they receive: ``switch`` (default, the placement of every
  result before it) steers them with the switch ports to ``switch_cpus``; ``hosts`` steers them to
  ``hosts_cpus``, so a host's IP + UDP receive (the softirq that delivers a flood to its socket)
  costs the hosts' cores, as on a real node, and not the switch's core (the largest item of the
  switch core's cost per flood packet, bench/README.md "Switch path cost"). Needs ``steer``.
  The **flood senders stay on ``switch_cpus``** in both: a thesis flood source is a machine of its
  own (V.C.1: one D-ITG sender per target, each on its own NIC), not one of the workload's nodes,
  and the hosts' cores carry exactly the workload hosts' budgets (``host_cores`` x hosts =
  ``hosts_cpus``), so a sender there would take budget no thesis node paid (the ``senders-on-hosts``
  variant of ``bench/cpubudget_bench.py`` reads it as loss). The topology does not mark flood
  hosts (the flood file names its sources), so ``receive_on`` applies to every host interface; a
  UDP flood's sources receive next to nothing;
- ``rx_usecs`` (issue 52, with ``receive_on: hosts``): a host interface's receive in a NAPI poll
  thread of its own on ``hosts_cpus`` that, while packets arrive, polls every ``rx_usecs``
  microseconds on its own core's timer instead of being woken for each packet: a NIC's interrupt
  moderation (``ethtool -C rx-usecs``). Without it (``null``, the default) RPS hands the packets
  from the switch's core to the hosts' core with an inter-processor interrupt whenever that core's
  backlog has gone idle, a VM exit in this VM: ``native_write_msr``, 45 % of the switch core's
  samples at 100 Mbit/s (about 15 of its 34 us a forwarded packet; bench/README.md "Moderated
  receive"). Kernel means (:func:`host_rx_lines`): GRO on
  with ``gro_max_size`` 0 (a veth has a NAPI context only with GRO or XDP; size 0 merges nothing,
  so a host still receives wire-size frames), ``napi_defer_hard_irqs`` :data:`DEFER_POLLS`,
  ``gro_flush_timeout`` = ``rx_usecs``, ``threaded`` 1 (Documentation/networking/napi.rst, "Software
  IRQ coalescing" and "Threaded NAPI"); the thread runs on ``hosts_cpus`` at real-time priority
  :data:`RX_THREAD_PRIORITY` (as a softirq would, ahead of the hosts' processes). **Experimental**:
  it changes the experiment (docs/results/rx-usecs-quick-20261130: the polls preempt the hosts'
  processes; at 50 Mbit/s the congested render 2.14 -> 3.77 s), so it is for measuring the switch
  core's cost, not for results;
- ``br_netfilter``: ``net.bridge.bridge-nf-call-iptables`` (and ip6tables, arptables) in the
  switch namespace; the testbed's QoS uses nftables' bridge family, which does not need it, and a
  real switch runs no IP firewall on bridged frames (off by default);
- ``flood_receivers``: ``host`` (default) runs a flood's receivers in the budgets of the hosts
  they flood; ``switch`` on the switch's cores, outside any budget: the receive CPU share 0, the
  sensitivity row of docs/scale-model.md;
- ``manager_boot`` (issue 48): where a gated workload's manager JVM boots before its go
  (:mod:`qoslab.workloads.gate`): ``outside`` (default since 4bb8c9d) in the host's boot group, on
  the hosts' cores without the host's quota, moved into the budget before the go (the manager's start,
  ``phases_json.manager_start_s``, 0.66-0.78 s against a 4.2 s trial); ``budget`` in the host's
  budget from its first instruction, as a thesis node's manager booted on its own loaded CPU
  (every run before 4bb8c9d). Which one holds
  the thesis's experiment is measured in docs/results/manager-boot-20261201.

Checks (:func:`check_cpu`, called when an embedded topology is loaded, errors name the field):
the cpusets exist on this machine and do not overlap; ``receive_on: hosts`` has ``steer``; a
host's capacity fits its cpuset; ``rx_usecs`` has ``receive_on: hosts``; a capacity's quota is
at least the kernel's 1 ms (``cpu.cfs_quota_us`` >= 1000). Whether the hosts a campaign uses can
all get their capacity at once is the playbook's check (:func:`budget_sum_problem`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import Field, field_validator

from ..yamlio import FieldProblem, StrictModel

#: The kernel's least CFS quota (``cpu.cfs_quota_us`` >= 1000 us, kernel/sched/core.c
#: ``min_cfs_quota_period``); ``cpu.cfs_period_us`` lies in 1 ms .. 1 s.
MIN_QUOTA_MS = 1.0
#: Linux cpuset list syntax: ``0``, ``0-3``, ``0,2-3`` (Documentation/admin-guide/cgroup-v1/cpusets.rst).
_CPULIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$", re.ASCII)  # "٠" is no CPU
#: Highest CPU number a cpuset may name (the kernel's NR_CPUS is at most 8192).
MAX_CPU = 8191
#: ``napi_defer_hard_irqs`` of a host interface with ``rx_usecs``: the empty polls the NAPI thread
#: makes on its timer before it waits to be woken again (Documentation/networking/napi.rst).
DEFER_POLLS = 10
#: SCHED_FIFO priority of a host interface's NAPI thread (that of the kernel's threaded interrupt
#: handlers, kernel/irq/manage.c ``sched_set_fifo``: MAX_RT_PRIO / 2).
RX_THREAD_PRIORITY = 50


def parse_cpulist(text: str) -> frozenset[int]:
    """``"0,2-3"`` -> {0, 2, 3}. Raises ValueError for anything that is not a cpuset list, a range
    that runs backwards or a CPU above :data:`MAX_CPU`."""
    s = text.strip() if isinstance(text, str) else ""
    if not _CPULIST.match(s):
        raise ValueError(f"{text!r} is not a CPU list (write e.g. 0, 0-3 or 0,2)")
    out: set[int] = set()
    for part in s.split(","):
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if b < a:
            raise ValueError(f"CPU range {part} runs backwards")
        if b > MAX_CPU:
            raise ValueError(f"CPU {b} is above {MAX_CPU}")
        out.update(range(a, b + 1))
    return frozenset(out)


def format_cpulist(cpus: Iterable[int]) -> str:
    """{0, 2, 3} -> ``"0,2-3"`` (the kernel's own form)."""
    xs, parts = sorted(set(cpus)), []
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        parts.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ",".join(parts)


def cpu_mask(cpus: Iterable[int]) -> str:
    """The hex mask sysfs takes for ``rps_cpus``/``xps_cpus``: {1} -> ``"2"``, {0, 1} -> ``"3"``;
    32-bit words comma-separated from the highest, as the kernel prints them."""
    m = 0
    for c in cpus:
        m |= 1 << c
    words = []
    while True:
        words.append(m & 0xFFFFFFFF)
        m >>= 32
        if not m:
            break
    words.reverse()  # the highest word unpadded, the lower ones as 8 hex digits
    return ",".join([f"{words[0]:x}", *(f"{w:08x}" for w in words[1:])])


def mask_cpus(text: str) -> frozenset[int]:
    """The inverse of :func:`cpu_mask`: sysfs's ``"2"`` -> {1}, ``"0,00000003"`` -> {0, 1}, ``"0"`` -> {}
    (what ``rps_cpus`` reads back). Raises ValueError for anything that is not a hex mask."""
    s = text.strip() if isinstance(text, str) else ""
    words = s.split(",")
    if not s or any(not w or len(w) > 8 or any(c not in "0123456789abcdefABCDEF" for c in w) for w in words):
        raise ValueError(f"{text!r} is not a CPU mask (hex words, e.g. 2 or 0,00000003)")
    m = 0
    for w in words:
        m = (m << 32) | int(w, 16)
    return frozenset(i for i in range(m.bit_length()) if m >> i & 1)


class CpuBlock(StrictModel):
    """The ``cpu:`` block of a topology (see the module doc). ``hosts_cpus`` and ``switch_cpus``
    are cpuset lists; ``host_cores`` cores; ``period_ms`` milliseconds."""

    hosts_cpus: str = Field(description="cpuset of the hosts' processes, e.g. '0'")
    switch_cpus: str = Field(description="cpuset of the switch, the flood senders and the harness, e.g. '1'")
    host_cores: float = Field(strict=True, gt=0, le=1024, description="CPU capacity of a host, cores")
    period_ms: float = Field(10.0, strict=True, ge=1, le=1000, description="CFS bandwidth period, ms")
    steer: bool = Field(True, strict=True, description="RPS of the switch ports (and the host interfaces: see "
                                                       "receive_on) to switch_cpus")
    br_netfilter: bool = Field(False, strict=True, description="bridge-nf-call-iptables in the switch namespace")
    flood_receivers: Literal["host", "switch"] = Field("host", description="where a flood's receivers run")
    manager_boot: Literal["outside", "budget"] = Field(
        "outside", description="where a gated workload's manager JVM boots before its go: outside = the host's "
                               "boot group without the quota (default), budget = the host's CPU budget")
    receive_on: Literal["switch", "hosts"] = Field(
        "switch", description="CPUs that process what the host interfaces receive (RPS): switch = switch_cpus "
                              "(default), hosts = hosts_cpus (a host's receive costs the hosts' cores); needs steer")
    rx_usecs: int | None = Field(
        None, strict=True, ge=10, le=10000,
        description="experimental (it changes the experiment: docs/results/rx-usecs-quick-20261130): with "
                    "receive_on: hosts, a host interface's receive polled every rx_usecs microseconds while "
                    "packets arrive (interrupt moderation, ethtool -C rx-usecs) by a NAPI thread on hosts_cpus, "
                    "instead of one inter-processor interrupt per packet (RPS); null = RPS")

    @field_validator("hosts_cpus", "switch_cpus", mode="before")
    @classmethod
    def _cpulist(cls, v: object) -> str:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise ValueError(f"{v!r} is not a CPU list (write e.g. 0, 0-3 or 0,2)")
        return format_cpulist(parse_cpulist(str(v)))

    def rps_masks(self) -> tuple[str, str]:
        """The ``rps_cpus`` masks (:func:`cpu_mask`) of (the switch ports and SPAN ports, the hosts'
        interfaces): ``"0"`` (no RPS: the receiving CPU does the work) for both without ``steer``, and
        for the hosts' interfaces with ``rx_usecs`` (their NAPI thread receives, :func:`host_rx_lines`)."""
        if not self.steer:
            return "0", "0"
        sw = cpu_mask(self.switch_set)
        if self.receive_on == "hosts":
            return sw, "0" if self.rx_usecs is not None else cpu_mask(self.host_set)  # rx_usecs: its NAPI thread
        return sw, sw

    @property
    def host_set(self) -> frozenset[int]:
        """The hosts' CPUs."""
        return parse_cpulist(self.hosts_cpus)

    @property
    def switch_set(self) -> frozenset[int]:
        """The switch's CPUs."""
        return parse_cpulist(self.switch_cpus)

    def quota_us(self, cores: float) -> int:
        """CFS quota (microseconds per period) of a host of ``cores`` cores."""
        return int(round(cores * self.period_ms * 1000))

    @property
    def period_us(self) -> int:
        """CFS period in microseconds."""
        return int(round(self.period_ms * 1000))


def host_rx_lines(block: CpuBlock, dev: str) -> list[str]:
    """The shell lines (run in a host's namespace, in order) that put ``dev``'s receive in a NAPI
    thread polled every ``block.rx_usecs`` (see the module doc); [] without ``rx_usecs``. Pure.
    The thread it makes is named ``napi/DEV-ID`` (net/core/dev.c ``napi_kthread_create``); pinning
    it to ``hosts_cpus`` at :data:`RX_THREAD_PRIORITY` is the caller's (it has a PID only then)."""
    if block.rx_usecs is None:
        return []
    d = f"/sys/class/net/{dev}"
    return [f"ip link set dev {dev} gro_max_size 0",  # merge nothing: wire-size frames, as with GRO off
            f"ethtool -K {dev} gro on",  # a veth's NAPI context (drivers/net/veth.c veth_gro_requested)
            f"echo {DEFER_POLLS} > {d}/napi_defer_hard_irqs",
            f"echo {block.rx_usecs * 1000} > {d}/gro_flush_timeout",  # nanoseconds
            f"echo 1 > {d}/threaded"]


#: The step (ms) in which :func:`period_for` lengthens a CFS period.
PERIOD_STEP_MS = 0.5


def period_for(cores: float, period_ms: float) -> float:
    """The CFS bandwidth period (ms) at which a host of ``cores`` cores gets a quota of at least
    the kernel's MIN_QUOTA_MS: ``period_ms`` when it already does, else the least multiple of
    PERIOD_STEP_MS that does (0.0948 cores at 10 ms: 11.0 ms). A longer period keeps the capacity
    and makes the throttling coarser. Pure. Raises ValueError when ``cores`` is not positive or
    even the kernel's longest period (1000 ms) gives less than MIN_QUOTA_MS."""
    if not cores > 0 or math.isinf(cores):
        raise ValueError(f"host capacity {cores!r} cores: must be a positive number")
    if cores * period_ms >= MIN_QUOTA_MS - 1e-9:
        return period_ms
    longer = math.ceil(MIN_QUOTA_MS / cores / PERIOD_STEP_MS - 1e-9) * PERIOD_STEP_MS
    if longer > 1000:
        raise ValueError(f"{cores:g} cores is a quota below the kernel's {MIN_QUOTA_MS:g} ms at any period "
                         "(at most 1000 ms)")
    return longer


def host_cores(block: CpuBlock, host_cpu: float | None) -> float:
    """A host's capacity (cores): its own ``cpu:`` or the block's ``host_cores``."""
    return block.host_cores if host_cpu is None else host_cpu


def check_cpu(block: CpuBlock | None, host_cpus: Mapping[str, float | None], online: frozenset[int] | None,
              environment: str = "embedded") -> None:
    """Check ``block`` against the hosts' own ``cpu:`` values (host name -> cores or None, in file
    order) and this machine's online CPUs (``online``; None: not checked). Without a block no host
    may set ``cpu:``. Raises FieldProblem naming the field at fault."""
    if block is None:
        for i, (name, own) in enumerate(host_cpus.items()):
            if own is not None:
                raise FieldProblem(("hosts", i, "cpu"), f"host {name}: cpu: needs the topology's cpu: block "
                                                        "(hosts_cpus, switch_cpus, host_cores)")
        return
    if environment != "embedded":
        raise FieldProblem(("cpu",), "a cpu: block is for the embedded testbed (a real cluster's nodes have "
                                     "CPUs of their own); remove it")
    hs, ss = block.host_set, block.switch_set
    if online is not None:
        for name, cpus in (("hosts_cpus", hs), ("switch_cpus", ss)):
            missing = sorted(cpus - online)
            if missing:
                raise FieldProblem(("cpu", name), f"CPU {format_cpulist(missing)} is not on this machine "
                                                  f"(online: {format_cpulist(online)})")
    if block.receive_on == "hosts" and not block.steer:
        raise FieldProblem(("cpu", "receive_on"), "receive_on: hosts steers the host interfaces with RPS, which "
                                                  "steer: false turns off: set steer: true or receive_on: switch")
    if block.rx_usecs is not None and block.receive_on != "hosts":
        raise FieldProblem(("cpu", "rx_usecs"), "rx_usecs moderates the hosts' receive on the hosts' cores, which "
                                                "receive_on: switch does not put there: set receive_on: hosts or "
                                                "remove rx_usecs")
    both = hs & ss
    if both:
        raise FieldProblem(("cpu", "switch_cpus"), f"CPU {format_cpulist(both)} is in both hosts_cpus and "
                                                   "switch_cpus: the switch's work would land on the hosts' cores")
    for i, (name, own) in enumerate(host_cpus.items()):
        cores = host_cores(block, own)
        loc: tuple[object, ...] = ("cpu", "host_cores") if own is None else ("hosts", i, "cpu")
        if cores > len(hs):
            raise FieldProblem(loc, f"host {name}: {cores:g} cores do not fit hosts_cpus {block.hosts_cpus} "
                                    f"({len(hs)} core{'s' if len(hs) != 1 else ''})")
        if cores * block.period_ms < MIN_QUOTA_MS - 1e-9:
            raise FieldProblem(loc, f"host {name}: {cores:g} cores at period_ms {block.period_ms:g} is a quota of "
                                    f"{cores * block.period_ms:g} ms, below the kernel's {MIN_QUOTA_MS:g} ms: "
                                    "raise cpu.period_ms")


def budget_sum_problem(block: CpuBlock, host_cpus: Mapping[str, float | None], used: Iterable[str]) -> str | None:
    """Why the hosts ``used`` by a campaign (its workload hosts and flood destinations) cannot all
    get their capacity at once (their sum exceeds the cores of ``hosts_cpus``), or None."""
    names = sorted(set(used))
    total = sum(host_cores(block, host_cpus.get(h)) for h in names)
    if total > len(block.host_set) + 1e-9:
        return (f"the hosts it uses ({', '.join(names)}) have {total:g} cores of capacity together, more than "
                f"the {len(block.host_set)} of hosts_cpus {block.hosts_cpus}: lower cpu.host_cores or hosts[].cpu")
    return None


def online_cpus(text: str) -> frozenset[int] | None:
    """The CPUs of ``text`` (the content of ``/sys/devices/system/cpu/online``, e.g. ``"0-1\\n"``);
    None when it cannot be parsed."""
    try:
        return parse_cpulist(text.strip())
    except ValueError:
        return None
