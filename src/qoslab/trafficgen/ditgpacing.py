"""How D-ITG's senders are paced (the ``ditg`` generator, :mod:`.ditg`): which ``-C``/``-poll`` a
flow asks for (:func:`plan_pacing`: ``kernel``, ``poll`` or ``plain`` per flow) and the kernel
pacing's host classes. How they are scheduled (real-time class, timer slack) is :mod:`.ditgsched`'s.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import QoslabError
from ..executors import Executor
from ..testbed import netlink
from ..testbedplan import HOST_IF
from ..topology import Topology
from .calibration import Calibration
from .definitions import FloodDefinition, ResolvedFlow, kernel_queue_limit, kernel_rates
from .kernelpace import flood_class_lines, flush_lines, teardown_lines

#: ITGSend's ``-C`` under kernel pacing, as a multiple of the packets/s the host link gives the
#: flow: far enough above it that the sender is always behind its own schedule, so it never waits
#: in user space and blocks in sendto() on its full socket buffer instead (the shaped host link
#: drains it at the link rate). Measured here at 100 Mbit/s (8,668 packets/s of 1442-byte frames):
#: ``-C`` 40,000 -> 8,671 packets/s received, no drop at the host queue, the sender asleep in the
#: kernel and 4 % of a core (`-poll` at 1.1x: a whole core). Any factor > 1 works; 2 keeps the
#: damage bounded should a host queue ever drop instead of blocking (the sender then sends 2x).
KERNEL_C_FACTOR = 2.0

def pacing_for(defn: FloodDefinition, flow: ResolvedFlow, calibration: Calibration | None) -> tuple[int, bool]:
    """``(-C, poll)`` for ``flow`` paced in user space: ``poll`` pacing asks the wanted packets/s
    with ``-poll``; ``plain`` asks the calibrated -C; ``auto`` (and ``kernel``, which only
    :func:`plan_pacing` applies) is plain when the calibration covers the rate, else poll.
    Raises QoslabError for ``plain`` without a covering calibration."""
    pacing = defn.pacing
    if pacing in ("auto", "kernel"):  # kernel is decided for the whole flood by plan_pacing
        pacing = "plain" if calibration and calibration.covers(flow.pps) else "poll"
    if pacing == "poll":
        return int(round(flow.pps)), True
    if calibration is None or not calibration.covers(flow.pps):
        raise QoslabError(f"flood {defn.name}: pacing 'plain' needs a calibration covering {flow.pps:.0f} "
                          "packets/s: run `qoslab flood calibrate`")
    return calibration.rate_for(flow.pps), False


@dataclass(frozen=True)
class FlowPacing:
    """How one D-ITG flow is paced: ``mode`` (``kernel``, ``poll``, ``plain``), ITGSend's ``-C``
    (``itg_rate``, packets/s), ``-poll`` or not, and ``sender_pps``: the packets/s the sender is
    set to send (the host link's rate under kernel pacing, else the flow's asked rate)."""

    mode: str
    itg_rate: int
    poll: bool
    sender_pps: float


def kernel_paced(defn: FloodDefinition, flows: list[ResolvedFlow], link_bps: float,
                 below_link: bool = True) -> dict[int, float] | str | None:
    """Whether ``defn`` runs kernel-paced: None when its ``pacing`` is ``poll`` or ``plain``, else
    :func:`~.definitions.kernel_rates` of its resolved ``flows`` (a dict: it does, ``auto``
    included; a string: why it does not qualify). ``below_link``: the hosts' links are the
    testbed's, so a flow below the link rate gets an HTB class of its own (:mod:`.kernelpace`).
    A kernel-paced flood needs no calibration. Pure."""
    return kernel_rates(flows, link_bps, below_link) if defn.pacing in ("kernel", "auto") else None


def plan_pacing(defn: FloodDefinition, flows: list[ResolvedFlow], link_bps: float,
                calibration: Calibration | None, below_link: bool = True) -> dict[int, FlowPacing]:
    """Pacing of every flow (by index). ``kernel``: -C = KERNEL_C_FACTOR x the link's packets/s,
    no -poll, the rate from :func:`~.definitions.kernel_rates` (the flow's own HTB class on the
    testbed, ``below_link``; the link off it); ``auto``: kernel when the whole flood qualifies,
    else :func:`pacing_for` per flow (plain with a covering calibration, else poll);
    ``poll``/``plain``: :func:`pacing_for`. Raises QoslabError for ``kernel`` on a flood that does
    not qualify (naming the flow and why), for ``plain`` without a covering calibration and for a
    ``pin_cpu`` this machine does not have."""
    placement(defn)  # a CPU this machine does not have is an error now, not at start
    rates = kernel_paced(defn, flows, link_bps, below_link)
    if isinstance(rates, dict):
        link_pps = {f.index: link_bps / (f.frame_bytes * 8) for f in flows}
        return {i: FlowPacing("kernel", int(math.ceil(KERNEL_C_FACTOR * link_pps[i])), False, pps)
                for i, pps in rates.items()}
    if defn.pacing == "kernel":
        raise QoslabError(f"flood {defn.name}: pacing 'kernel': {rates} (use poll or plain)")
    out = {}
    for f in flows:
        rate, poll = pacing_for(defn, f, calibration)
        out[f.index] = FlowPacing("poll" if poll else "plain", rate, poll, f.mean_pps)
    return out


def host_queue_state(ex: Executor) -> tuple[int, int, dict[str, tuple[int, int]]] | None:
    """(packets dropped so far, packets queued now) by the root qdiscs of the host of ``ex`` (a
    root's counts include its children's), and every qdisc's (packets sent, packets queued now)
    by handle (``"100:"``: a kernel-paced flow's class queue, :mod:`.kernelpace`), from one
    ``tc -s -j qdisc show`` there; None when tc could not be read. Kernel pacing reads it before
    and after a flood: its senders should block, never lose packets at home; what is still queued
    when they stop left the host after them."""
    r = ex.run(["tc", "-s", "-j", "qdisc", "show"], check=False, timeout=10)
    try:
        doc = json.loads(r.stdout or "null")
        roots = [q for q in doc if q.get("root")]
        sent = {str(q["handle"]): (int(q.get("packets", 0)), int(q.get("qlen", 0))) for q in doc if q.get("handle")}
        return sum(int(q.get("drops", 0)) for q in roots), sum(int(q.get("qlen", 0)) for q in roots), sent
    except (ValueError, TypeError, AttributeError, KeyError):
        return None


def host_queue_state_ns(ns: str, dev: str = HOST_IF
                        ) -> tuple[float, float, tuple[int, int, dict[str, tuple[int, int]]]] | None:
    """:func:`host_queue_state` of ``dev`` in the testbed namespace ``ns`` read in this process
    over netlink (one RTM_GETQDISC dump, :mod:`qoslab.testbed.netlink`: no process, where a
    ``tc`` through ``ip netns exec`` takes 10-30 ms), with the moment the kernel took the counts:
    ``(at, spread, state)``, ``at`` in monotonic seconds, within +-``spread`` seconds of it
    (:class:`~qoslab.testbed.netlink.QdiscSnapshot`: the dump's own send/recv, not this
    thread's wait for the lock or pyroute2's parsing); None when the namespace is gone."""
    try:
        snap = netlink.qdisc_snapshot(ns)
    except QoslabError:
        return None
    qs = snap.counters.get(dev, [])
    roots = [q for q in qs if q.root]
    return (snap.at, snap.spread, (sum(q.drops for q in roots), sum(q.qlen for q in roots),
                                   {f"{q.handle >> 16:x}:": (q.packets, q.qlen) for q in qs}))


def host_queue_drops(ex: Executor) -> tuple[int, int] | None:
    """(drops, queued packets) of :func:`host_queue_state`, None when tc could not be read."""
    st = host_queue_state(ex)
    return None if st is None else (st[0], st[1])


def sndbuf_default() -> int:
    """``net.core.wmem_default`` of this machine (bytes; a UDP socket's send buffer), 212,992 when unreadable."""
    try:
        return int(Path("/proc/sys/net/core/wmem_default").read_text())
    except (OSError, ValueError):
        return 212_992


def flood_class_plan(flow: ResolvedFlow, pps: float, topology: Topology) -> tuple[list[str], list[str]]:
    """(install lines, teardown lines) of the HTB class that paces ``flow`` at ``pps`` packets/s
    on its testbed host (:mod:`.kernelpace`): the rate in bits/s of frames, the link's burst, a
    queue of :func:`~.definitions.kernel_queue_limit` (the socket fills first, so the sender
    blocks and its host drops nothing). Pure but for this machine's socket buffer size."""
    link, rate, burst, limit = _class_params(flow, pps, topology)
    return (flood_class_lines(flow.index, flow.dst_ip, rate, link, burst, limit),
            teardown_lines(flow.index, link, burst))


def flood_flush_plan(flow: ResolvedFlow, pps: float, topology: Topology) -> list[str]:
    """The :func:`~.kernelpace.flush_lines` of the class :func:`flood_class_plan` installs for
    ``flow`` at ``pps`` packets/s. Pure but for this machine's socket buffer size."""
    return flush_lines(flow.index, _class_params(flow, pps, topology)[3])


def _class_params(flow: ResolvedFlow, pps: float, topology: Topology) -> tuple[int, int, int, int]:
    """(link, class rate, burst, queue limit) of ``flow``'s class: bits/s, bits/s, bytes, bytes."""
    link = int(topology.link.rate)
    rate = min(link, int(round(pps * flow.frame_bytes * 8)))
    return link, rate, topology.link.burst_bytes, kernel_queue_limit(topology.buffers.host_bytes, sndbuf_default())


def check_pin(defn: FloodDefinition, topology: Topology) -> None:
    """With the topology's ``cpu:`` block the senders run on the switch's cores and the receivers
    in their hosts' budgets: a ``pin_cpu`` outside ``cpu.switch_cpus`` would put the senders on
    the hosts' cores. Raises QoslabError naming both."""
    if topology.cpu is None or defn.pin_cpu is None:
        return
    n = os.cpu_count() or 1
    cpu = n - 1 if defn.pin_cpu == "last" else defn.pin_cpu
    if cpu not in topology.cpu.switch_set:
        raise QoslabError(f"flood {defn.name}: pin_cpu {defn.pin_cpu} (CPU {cpu}) is not one of the switch's cores "
                          f"(topology {topology.name} cpu.switch_cpus {topology.cpu.switch_cpus}): with a cpu: "
                          "block the senders run there; pin to one of them or drop pin_cpu")


def receivers_outside(topology: Topology) -> bool:
    """Whether a flood's receivers run on the switch's cores rather than in their hosts' budgets
    (topology ``cpu.flood_receivers: switch``: the receive CPU share 0)."""
    return topology.cpu is not None and topology.cpu.flood_receivers == "switch"


def placement(defn: FloodDefinition) -> list[str]:
    """The command prefix that runs a D-ITG process of ``defn`` on its ``pin_cpu``
    (``taskset -c N``; ``last`` = this machine's highest CPU), [] without one. Measured here
    (kernel-paced campaign flood, 4 flows at 50 Mbit/s, 5 s, twice each): the D-ITG processes took
    258 and 227 ticks and softirq 142 and 141 on any CPU, 129 and 100 and softirq 62 and 59 on
    CPU 0, the same 50.0 Mbit/s delivered: each packet's sender wakes its receiver without an
    inter-processor interrupt, costly on a virtual machine. Raises QoslabError for a CPU this
    machine does not have (a cluster's nodes are assumed to have it)."""
    if defn.pin_cpu is None:
        return []
    n = os.cpu_count() or 1
    cpu = n - 1 if defn.pin_cpu == "last" else defn.pin_cpu
    if not 0 <= cpu < n:
        raise QoslabError(f"flood {defn.name}: pin_cpu {cpu}: this machine has CPUs 0..{n - 1}")
    return ["taskset", "-c", str(cpu)]
