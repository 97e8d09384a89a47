"""The QoS meaning of a Catalyst 9300 (IOS-XE, MQC) running-config, as the same
:class:`~qoslab.ios.qos.QosConfig` the 3750's compiles from, so the tc and nftables compilers
(:mod:`qoslab.vswitch.tccompile`, :mod:`qoslab.vswitch.nftcompile`) serve both platforms.

Mapping (Catalyst 9300 QoS configuration guide, IOS-XE 17.x; what is not emulated is in
``QosConfig.unsupported`` and the fidelity table, switch-configs/README.md):

- QoS is always on when any port has a service-policy (no ``mls qos`` on IOS-XE); without one
  every port is a single FIFO, as the 3750 with ``mls qos`` off. Ports trust DSCP (the 9300's
  default: "the switch trusts DSCP by default"); input policies mark and police as on the 3750.
- The egress queuing policy (``service-policy output``; the first one attached, in port order)
  gives the egress queues: its ``priority level`` class -> queue 1 with the expedite behaviour of
  ``priority-queue out``, the other classes in policy order (``class-default`` last) -> queues 2-4
  (without a priority class: queues 1-4 in order). The emulation has four queues: a policy with
  more than four classes, a second priority class or ports with different output policies are
  listed as not emulated (their extra classes fall into ``class-default``'s queue).
- ``bandwidth remaining percent`` (or ``bandwidth percent``) -> the queue's SRR-like share
  (HTB assured rates in proportion, as the 3750's ``share``); a queue without one gets 1.
- ``queue-buffers ratio`` -> the queue's buffer share (the 3750's queue-set buffers; queues
  without one split what is left equally); ``queue-limit dscp V percent P`` -> DSCP V drops at
  P % of the queue's limit (WTD): the queue's distinct percentages become thresholds 1 and 2,
  DSCPs without one are at threshold 3 = 100 %.
- DSCPs a class-map matches (``match dscp``) go to that class's queue; the others to
  ``class-default``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..portnames import canonical_port
from .config import RunningConfig, Section
from .grammar import dscp_value
from .qos import InterfaceQos, QosConfig, acl_entries, class_maps_of, monitor_sessions_of, policy_maps_of
from .show_qos import QueueSet

#: Egress queues the virtual switch emulates per port (tc classes 1:11..1:14).
N_EMULATED = 4
#: The synthetic queue-set number that holds the egress policy's buffers and WTD thresholds.
MQC_QUEUE_SET = 3
#: The queue-set of ports without an output policy: equal buffers, tail drop at 100 %.
PLAIN_QUEUE_SET = 4


@dataclass(frozen=True)
class EgressClass:
    """One class of an egress queuing policy: name, emulated queue 1-4, priority level (0 =
    none), share (bandwidth remaining %), buffer ratio (None = not set), DSCP -> drop %."""

    name: str
    queue: int
    priority: int
    share: int
    buffers: int | None
    limits: dict[int, int]


def _class_actions(name: str, children: list[str]) -> tuple[int, int, int | None, dict[int, int]]:
    prio, share, buffers, limits = 0, 0, None, {}
    for c in children:
        w = c.split()
        if w[0] == "priority":
            prio = int(w[2]) if len(w) > 2 else 1
        elif w[0] == "bandwidth":
            share = int(w[-1])
        elif w[0] == "queue-buffers":
            buffers = int(w[2])
        elif w[0] == "queue-limit" and (d := dscp_value(w[2])) is not None:
            limits[d] = int(w[4])
    return prio, share, buffers, limits


def egress_classes(rc: RunningConfig, policy: str) -> tuple[list[EgressClass], list[str]]:
    """The classes of output policy ``policy`` with their emulated queues (see the module doc),
    and notes on what is not emulated. Pure."""
    sec = rc.policy_maps.get(policy)
    notes: list[str] = []
    if sec is None:
        return [], [f"service-policy output {policy}: no such policy-map"]
    subs = [s for s in sec.subsections if s.header != "class class-default"]
    subs += [s for s in sec.subsections if s.header == "class class-default"]
    if not any(s.header == "class class-default" for s in subs):
        subs.append(Section("class class-default"))
    acts = [(s.header.split()[1], *_class_actions(s.header, s.children)) for s in subs]
    prio = [a for a in acts if a[1]]
    rest = [a for a in acts if not a[1]]
    if len(prio) > 1:
        notes.append(f"policy-map {policy}: {len(prio)} priority classes; only {prio[0][0]} is expedited")
        rest = prio[1:] + rest
    ordered = prio[:1] + rest
    if len(ordered) > N_EMULATED:
        notes.append(f"policy-map {policy}: {len(ordered)} queues, {N_EMULATED} emulated; "
                     f"{', '.join(a[0] for a in ordered[N_EMULATED - 1:-1])} share class-default's queue")
        ordered = ordered[:N_EMULATED - 1] + [ordered[-1]]
    return [EgressClass(n, i, p, s, b, lim) for i, (n, p, s, b, lim) in enumerate(ordered, start=1)], notes


def _queue_set(classes: list[EgressClass]) -> tuple[QueueSet, dict[int, int]]:
    """Buffers and WTD thresholds of the classes as a queue-set, and DSCP -> threshold."""
    set_ = [c.buffers for c in classes if c.buffers is not None]
    free = max(0, 100 - sum(set_))
    unset = len(classes) - len(set_)
    buffers = [1] * N_EMULATED
    for c in classes:
        buffers[c.queue - 1] = c.buffers if c.buffers is not None else max(1, free // max(1, unset))
    qs = QueueSet(buffers=buffers, threshold1=[100] * 4, threshold2=[100] * 4, reserved=[100] * 4,
                  maximum=[100] * 4)
    dscp_threshold: dict[int, int] = {}
    for c in classes:
        pcts = sorted(set(c.limits.values()))[:2]
        for t, pct in enumerate(pcts, start=1):
            (qs.threshold1 if t == 1 else qs.threshold2)[c.queue - 1] = pct
        for d, pct in c.limits.items():
            dscp_threshold[d] = pcts.index(pct) + 1 if pct in pcts else 3
    return qs, dscp_threshold


def _plain_queue_set() -> QueueSet:
    """A port without an output policy: four equal buffers, tail drop at 100 % of each."""
    return QueueSet(buffers=[25] * 4, threshold1=[100] * 4, threshold2=[100] * 4, reserved=[100] * 4,
                    maximum=[100] * 4)


def mqc_model(rc: RunningConfig) -> QosConfig:
    """The QoS meaning of an IOS-XE running-config (see the module doc). Pure."""
    cmaps, pmaps = class_maps_of(rc), policy_maps_of(rc)
    iface: dict[str, InterfaceQos] = {}
    outputs: dict[str, str] = {}
    for port, s in rc.interfaces.items():
        if port.startswith("Vlan"):
            continue
        iq = InterfaceQos(trust="dscp", shape=[0] * N_EMULATED, queue_set=PLAIN_QUEUE_SET)
        for line in s.children:
            w = line.split()
            if w[:2] == ["service-policy", "input"]:
                iq.service_policy_in = w[2]
            elif w[:2] == ["service-policy", "output"]:
                outputs[port] = w[2]
        iface[port] = iq
    enabled = bool(outputs) or any(x.service_policy_in for x in iface.values())
    q = QosConfig(enabled, acl_entries(rc), cmaps, pmaps, dict.fromkeys(range(64), 1), iface,
                  monitor_sessions_of(rc), [], queue_sets={PLAIN_QUEUE_SET: _plain_queue_set()},
                  dscp_output_threshold=dict.fromkeys(range(64), 3))
    if not outputs:
        return q
    policy = outputs[min(outputs, key=lambda p: [int(x) for x in canonical_port(p)[2:].split("/")])]
    if len(set(outputs.values())) > 1:
        q.unsupported.append(f"service-policy output: ports use {', '.join(sorted(set(outputs.values())))}; "
                             f"every port is emulated with {policy}")
    classes, notes = egress_classes(rc, policy)
    q.unsupported += notes
    _apply_classes(q, rc, classes)
    for port in outputs:
        piq = q.interfaces[port]
        piq.priority_queue_out = any(c.priority for c in classes)
        piq.share = [1] * N_EMULATED
        for ec in classes:
            piq.share[ec.queue - 1] = max(1, ec.share)
        piq.shape = [0] * N_EMULATED
        piq.queue_set = MQC_QUEUE_SET
    return q


def _apply_classes(q: QosConfig, rc: RunningConfig, classes: list[EgressClass]) -> None:
    """The DSCP -> queue map, the queue-set and the WTD thresholds of the egress classes."""
    default = next(c.queue for c in classes if c.name == "class-default")
    q.dscp_output_queue = dict.fromkeys(range(64), default)
    for c in classes:
        cm = q.class_maps.get(c.name)
        for d in cm.dscps if cm else []:
            q.dscp_output_queue[d] = c.queue
        if cm and cm.acls:
            q.unsupported.append(f"class-map {c.name}: egress classes by ACL are not emulated (DSCP only)")
    qs, dscp_t = _queue_set(classes)
    q.queue_sets[MQC_QUEUE_SET] = qs
    q.dscp_output_threshold = {d: dscp_t.get(d, 3) for d in range(64)}
