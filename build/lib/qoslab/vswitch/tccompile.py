"""Compile a Catalyst 3750 QoS configuration to Linux traffic control on the testbed's switch
ports. :func:`compile_tc` is pure: (QosConfig, topology) -> :class:`TcPlan`.

Egress model per host port (what the Catalyst does on the way out to that host):

- ``mls qos`` off: one FIFO at the link rate (HTB 1:1 + bfifo of the port's buffer), as the
  testbed builds it.
- ``mls qos`` on: HTB class 1:1 at the link rate with four leaf classes 1:11..1:14 = egress
  queues 1-4, each with a bfifo of ``port buffer x queue-set buffer % x WTD threshold %``
  (:func:`wtd_limits`):
  - SRR shared weights -> assured rates ``link x w / sum(w)`` of the shared queues, borrowing up
    to the link rate (ceil);
  - a non-zero SRR shape weight w -> the queue is shaped to ``link / w`` (rate = ceil), and the
    shared queues split what is left;
  - ``priority-queue out`` -> queue 1 gets the link rate minus 1 % as its assured rate and HTB
    prio 0, queues 2-4 share the remaining 1 % and borrow only when queue 1 is idle (HTB prio only
    orders borrowing, so an expedite queue needs almost all the rate as its own; docs/DESIGN.md).
- Queue selection: the egress queue of a packet is its QoS label's queue (DSCP-to-output-queue
  map), chosen at ingress by the nftables ruleset (:mod:`qoslab.vswitch.nftcompile`) as the skb priority
  ``1:1Q``, which HTB takes as the class; anything without one (non-IP from a port the table does
  not know) falls to the HTB default class = the queue of DSCP 0.
- ``monitor session`` -> clsact + u32 ``mirred egress mirror`` to the SPAN destination: ``rx`` on
  the source port's ingress (before the bridge and its nftables rewrite: the DSCP as received),
  ``tx`` on its egress (after the rewrite, before the qdisc: the offered load).

WTD (weighted tail drop): a 3750 egress queue drops a frame when the queue's occupancy reaches
the threshold of the frame's QoS label (threshold 1 or 2 of ``mls qos queue-set output N threshold
Q t1 t2 reserved maximum``, threshold 3 = the maximum; % of the queue's buffer, above 100 % with
buffers borrowed from the common pool). A bfifo has one limit, so each queue gets the limit of the
threshold its DSCPs map to (by default all of them to threshold 1); a queue whose DSCPs map to more
than one threshold gets the highest of them and a note in ``TcPlan.notes`` (frames that would drop
at a lower threshold are kept).

Not emulated (listed in ``TcPlan.notes`` and the fidelity table in switch-configs/README.md): WTD
thresholds within one queue (see above), the reserved threshold and the common buffer pool (a queue
may hold up to its own limit whatever the other queues hold), ingress queues.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ios import InterfaceQos, QosConfig
from ..ios.show_qos import QueueSet
from ..portnames import linux_ifname
from ..testbedplan import htb_quantum, switch_port_lines
from ..topology import Topology

PRIORITY_RESIDUAL = 0.01  # share of the link left to queues 2-4 under priority-queue out


@dataclass
class TcPlan:
    """``ports``: switch interface (Linux name) -> tc batch lines that build its qdiscs and
    filters from scratch; ``notes``: configured features that are not emulated."""

    ports: dict[str, list[str]]
    notes: list[str] = field(default_factory=list)


def queue_rates(link_bps: int, share: list[int], shape: list[int], priority: bool) -> list[tuple[int, int, int]]:
    """(rate, ceil, HTB prio) in bits/s for egress queues 1-4 (see module doc)."""
    if priority:
        rest = int(link_bps * PRIORITY_RESIDUAL)
        w = share[1:]
        out = [(link_bps - rest, link_bps, 0)]
        out += [(max(8000, rest * x // sum(w)), link_bps, 1) for x in w]
        return out
    shaped = [link_bps // s if s else 0 for s in shape]
    free = max(8000 * 4, link_bps - sum(shaped))
    shared_w = sum(share[i] for i in range(4) if not shape[i]) or 1
    out = []
    for i in range(4):
        if shape[i]:
            out.append((max(8000, shaped[i]), max(8000, shaped[i]), 1))
        else:
            out.append((max(8000, free * share[i] // shared_w), link_bps, 1))
    return out


@dataclass(frozen=True)
class QueueLimit:
    """The tail-drop limit of one egress queue: ``threshold`` 1-3 (WTD threshold it emulates),
    ``percent`` (of the queue's buffer, 1-3200), ``limit_bytes`` (bfifo limit), ``mixed`` (the
    thresholds 1-3 the queue's DSCPs map to, when more than one)."""

    threshold: int
    percent: int
    limit_bytes: int
    mixed: tuple[int, ...] = ()


#: the smallest bfifo limit: two full Ethernet frames (1514 B), so a queue always passes traffic
MIN_LIMIT_BYTES = 3028


def threshold_percent(qs: QueueSet, queue: int, threshold: int) -> int:
    """The WTD threshold ``threshold`` (1-3) of egress ``queue`` (1-4) in % of the queue's buffer:
    threshold1/threshold2 of the queue-set, threshold 3 = its maximum; a threshold above the
    maximum acts at the maximum (the queue holds no more; Catalyst 3750 QoS configuration guide,
    "Allocating Buffer Space to and Setting WTD Thresholds for an Egress Queue-Set")."""
    i = queue - 1
    pct = {1: qs.threshold1[i], 2: qs.threshold2[i], 3: qs.maximum[i]}[threshold]
    return min(pct, qs.maximum[i])


def wtd_limits(qos: QosConfig, queue_set: int, port_bytes: int) -> list[QueueLimit]:
    """Tail-drop limits of egress queues 1-4 of a port in queue-set ``queue_set`` whose buffer is
    ``port_bytes`` bytes (pure): ``port_bytes x buffer % x threshold %``, at least
    :data:`MIN_LIMIT_BYTES`. The threshold of a queue is the one its DSCPs map to (DSCP-to-output
    map, queue and threshold); when they map to several, the one with the highest % (see the
    module doc). Raises KeyError for a queue-set other than 1 or 2."""
    qs = qos.queue_sets[queue_set]
    out = []
    for q in range(1, 5):
        used = sorted({qos.dscp_output_threshold.get(d, 1) for d in range(64) if qos.dscp_output_queue[d] == q} or {1})
        t = max(used, key=lambda x: (threshold_percent(qs, q, x), x))
        pct = threshold_percent(qs, q, t)
        limit = max(MIN_LIMIT_BYTES, port_bytes * qs.buffers[q - 1] * pct // 10000)
        out.append(QueueLimit(t, pct, limit, tuple(used) if len(used) > 1 else ()))
    return out


def port_queue_limits(qos: QosConfig, topo: Topology, port: str) -> list[QueueLimit]:
    """:func:`wtd_limits` of switch ``port`` (short name, e.g. ``Gi1/0/1``): its queue-set, the
    topology's port buffer. Pure."""
    iq = qos.interfaces.get(port) or InterfaceQos()
    return wtd_limits(qos, iq.queue_set, topo.buffers.switch_port_bytes)


def _queue_lines(qos: QosConfig, topo: Topology, dev: str, iq: InterfaceQos, limits: list[QueueLimit]) -> list[str]:
    """HTB root, class 1:1 at the link rate and the four egress queues 1:11..1:14 of one port."""
    rate, burst = topo.link.rate, topo.link.burst_bytes
    rates = queue_rates(rate, iq.share, iq.shape, iq.priority_queue_out)
    quantum = htb_quantum(rate)
    lines = [f"qdisc replace dev {dev} root handle 1: htb default 1{qos.dscp_output_queue[0]}",
             f"class replace dev {dev} parent 1: classid 1:1 htb rate {rate}bit ceil {rate}bit "
             f"burst {burst}b cburst {burst}b quantum {quantum}"]
    for q in range(1, 5):
        r, c, prio = rates[q - 1]
        limit = limits[q - 1].limit_bytes
        lines.append(f"class replace dev {dev} parent 1:1 classid 1:1{q} htb rate {r}bit ceil {c}bit "
                     f"burst {burst}b cburst {burst}b prio {prio} quantum {min(quantum, htb_quantum(r))}")
        lines.append(f"qdisc replace dev {dev} parent 1:1{q} handle 1{q}: bfifo limit {limit}")
    return lines


def span_lines(monitor: dict[int, dict[str, list[Any]]], plan: TcPlan) -> None:
    """SPAN: clsact + mirred on each source port, before any queueing (``rx`` on ingress, ``tx``
    on egress). ``monitor``: session number -> {"sources": [(short port, direction)],
    "destinations": [short port]} (:attr:`qoslab.ios.QosConfig.monitor`)."""
    for sess in sorted(monitor):
        s = monitor[sess]
        for dst in s["destinations"]:
            ddev = linux_ifname(dst)
            for port, direction in s["sources"]:
                sdev = linux_ifname(port)
                if sdev not in plan.ports:
                    plan.notes.append(f"monitor session {sess}: source {port} has no host on the testbed")
                    continue
                lines = plan.ports[sdev]
                if f"qdisc add dev {sdev} clsact" not in lines:
                    lines.append(f"qdisc add dev {sdev} clsact")
                for hook, wanted in (("ingress", ("both", "rx")), ("egress", ("both", "tx"))):
                    if direction in wanted:
                        lines.append(f"filter add dev {sdev} {hook} protocol all pref {sess} u32 match u32 0 0 "
                                     f"action mirred egress mirror dev {ddev}")


def compile_tc(qos: QosConfig, topo: Topology) -> TcPlan:
    """QoS configuration -> tc plan for every host port of the switch (pure; see the module doc)."""
    plan = TcPlan({})
    plan.notes = [f"not emulated: {u}" for u in qos.unsupported]
    approximated: dict[tuple[int, int], str] = {}  # (queue-set, queue) -> note
    for h in topo.hosts:
        dev = linux_ifname(h.port)
        if not qos.enabled:
            plan.ports[dev] = switch_port_lines(topo, h.port)
            continue
        iq = qos.interfaces.get(h.port) or InterfaceQos()
        limits = port_queue_limits(qos, topo, h.port)
        plan.ports[dev] = _queue_lines(qos, topo, dev, iq, limits)
        for q, lim in enumerate(limits, start=1):
            if lim.mixed:
                approximated[(iq.queue_set, q)] = (
                    f"approximated: queue-set {iq.queue_set} queue {q} has DSCPs at WTD thresholds "
                    f"{', '.join(map(str, lim.mixed))}; one tail drop at threshold {lim.threshold} "
                    f"({lim.percent} % of the queue's buffer) for all of them")
    plan.notes += [approximated[k] for k in sorted(approximated)]
    span_lines(qos.monitor, plan)
    return plan
