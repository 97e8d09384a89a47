"""Compile a Catalyst 3750 QoS configuration to Linux traffic control on the testbed's switch
ports. :func:`compile_tc` is pure: (QosConfig, topology) -> :class:`TcPlan`.

Egress model per host port (what the Catalyst does on the way out to that host):

- ``mls qos`` off: one FIFO at the link rate (HTB 1:1 + bfifo of the port's buffer), as the
  testbed builds it.
- ``mls qos`` on: HTB class 1:1 at the link rate with four leaf classes 1:11..1:14 = egress
  queues 1-4, each with a bfifo of ``buffer x queue-set %``:
  - SRR shared weights -> assured rates ``link x w / sum(w)`` of the shared queues, borrowing up
    to the link rate (ceil);
  - a non-zero SRR shape weight w -> the queue is shaped to ``link / w`` (rate = ceil), and the
    shared queues split what is left;
  - ``priority-queue out`` -> queue 1 gets the link rate minus 1 % as its assured rate and HTB
    prio 0, queues 2-4 share the remaining 1 % and borrow only when queue 1 is idle (HTB prio only
    orders borrowing, so an expedite queue needs almost all the rate as its own; DESIGN.md).
- Classification at egress, by the ingress port the packet came from (each host has its own
  port, so ingress port == source address): the ingress port's policy-map classes (ACL -> set
  dscp) map matching packets to the queue of the set DSCP; a port trusting DSCP maps by the
  packet's DSCP; anything else is DSCP 0 (untrusted) -> the HTB default class = queue of DSCP 0.
  DSCP -> queue uses the output map (Catalyst 3750 default unless configured).
- ``monitor session`` -> clsact + u32 ``mirred egress mirror`` to the SPAN destination: ``rx`` on
  the source port's ingress, ``tx`` on its egress (before the qdisc: the offered load).

Not emulated (listed in ``TcPlan.notes`` and the fidelity table in switch-configs/README.md): WTD
thresholds, ingress queues, rewriting the DSCP on the wire (this kernel lacks pedit/skbedit: the
*queue* follows the marked DSCP, the packet keeps its own), ``deny`` ACEs in class ACLs.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from .ios import Ace, InterfaceQos, QosConfig
from .netplan import htb_quantum, switch_port_lines
from .topology import Host, Topology, linux_ifname

PRIORITY_RESIDUAL = 0.01  # share of the link left to queues 2-4 under priority-queue out


@dataclass
class TcPlan:
    """``ports``: switch interface (Linux name) -> tc batch lines that build its qdiscs and
    filters from scratch; ``notes``: configured features that are not emulated."""

    ports: dict[str, list[str]]
    notes: list[str] = field(default_factory=list)


def dscp_blocks(dscps: set[int]) -> list[tuple[int, int]]:
    """Cover a set of DSCP values (0-63) with aligned prefix blocks, as (value, prefix bits):
    e.g. {40..47} -> [(40, 3)] (101xxx). Returns the fewest such blocks (greedy, like CIDR)."""
    out = []
    d = 0
    while d < 64:
        if d not in dscps:
            d += 1
            continue
        size = 1
        while d % (size * 2) == 0 and size * 2 <= 64 and all(x in dscps for x in range(d, d + size * 2)):
            size *= 2
        out.append((d, 6 - size.bit_length() + 1))
        d += size
    return out


def _dsfield(value: int, bits: int) -> str:
    """u32 match on the DSCP bits of the ToS byte: DSCP prefix ``value``/``bits``."""
    mask = (0xFF << (8 - bits)) & 0xFC if bits else 0
    return f"match ip dsfield 0x{(value << 2) & mask:02x} 0x{mask:02x}"


def _ace_match(ace: Ace, src_ip: str, dst_ip: str) -> str | None:
    """u32 match of a permit ACE for packets from ``src_ip`` leaving the port of ``dst_ip``; None
    when the ACE cannot match them there (a unicast ACE for another destination is pruned)."""
    if ace.action != "permit":
        return None
    if ace.src is not None and ipaddress.IPv4Address(src_ip) not in ace.src:
        return None
    if ace.dst is not None and ace.dst.prefixlen == 32 and ipaddress.IPv4Address(dst_ip) not in ace.dst:
        return None
    parts = [f"match ip src {src_ip}/32"]
    if ace.dst is not None:
        parts.append(f"match ip dst {ace.dst}")
    if ace.proto in ("tcp", "udp"):
        parts.append(f"match ip protocol {6 if ace.proto == 'tcp' else 17} 0xff")
        if ace.src_port is not None:
            parts.append(f"match ip sport {ace.src_port} 0xffff")
        if ace.dst_port is not None:
            parts.append(f"match ip dport {ace.dst_port} 0xffff")
    return " ".join(parts)


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


def _queue_lines(qos: QosConfig, topo: Topology, dev: str, iq: InterfaceQos) -> list[str]:
    """HTB root, class 1:1 at the link rate and the four egress queues 1:11..1:14 of one port."""
    rate, burst = topo.link.rate, topo.link.burst_bytes
    rates = queue_rates(rate, iq.share, iq.shape, iq.priority_queue_out)
    buffers = qos.queue_set_buffers.get(iq.queue_set, [25, 25, 25, 25])
    quantum = htb_quantum(rate)
    lines = [f"qdisc replace dev {dev} root handle 1: htb default 1{qos.dscp_output_queue[0]}",
             f"class replace dev {dev} parent 1: classid 1:1 htb rate {rate}bit ceil {rate}bit "
             f"burst {burst}b cburst {burst}b quantum {quantum}"]
    for q in range(1, 5):
        r, c, prio = rates[q - 1]
        limit = max(3028, topo.buffers.switch_port_bytes * buffers[q - 1] // 100)
        lines.append(f"class replace dev {dev} parent 1:1 classid 1:1{q} htb rate {r}bit ceil {c}bit "
                     f"burst {burst}b cburst {burst}b prio {prio} quantum {min(quantum, htb_quantum(r))}")
        lines.append(f"qdisc replace dev {dev} parent 1:1{q} handle 1{q}: bfifo limit {limit}")
    return lines


def _policy_matches(qos: QosConfig, src: Host, dst: Host, iq: InterfaceQos, notes: list[str]) -> list[tuple[str, int]]:
    """u32 matches and queues for packets from ``src`` (its port's policy-map classes, in order)
    leaving toward ``dst``."""
    out = []
    for pc in qos.policy_maps.get(iq.service_policy_in, []) if iq.service_policy_in else []:
        cm = qos.class_maps.get(pc.class_name)
        if cm is None or pc.set_dscp is None:
            continue
        matches = []
        for acl in cm.acls:
            for ace in qos.acls.get(acl, []):
                m = _ace_match(ace, src.ip, dst.ip)
                if m:
                    matches.append(m)
                if ace.action == "deny":
                    notes.append(f"not emulated: deny entry in ACL {acl}")
        matches += [f"match ip src {src.ip}/32 {_dsfield(d, 6)}" for d in cm.dscps]
        out += [(m, qos.dscp_output_queue[pc.set_dscp]) for m in matches]
    return out


def _classifier_lines(qos: QosConfig, topo: Topology, dst: Host, dev: str, notes: list[str]) -> list[str]:
    """u32 filters on ``dst``'s port choosing the egress queue by the ingress port the packet came
    from (each host has its own port, so ingress port == source address): 1. its policy-map
    classes (ACL -> set dscp -> queue of that DSCP); 2. trusted DSCP: the packet's own DSCP;
    3. anything else (untrusted, or trust cos on untagged frames: CoS 0 -> DSCP 0) falls to the
    HTB default class = the queue of DSCP 0."""
    host_of_port = {h.port: h for h in topo.hosts}
    lines, pref = [], 10
    for src_port, src_iq in sorted(qos.interfaces.items()):
        src = host_of_port.get(src_port)
        if src is None or src_port == dst.port:
            continue
        for m, q in _policy_matches(qos, src, dst, src_iq, notes):
            lines.append(f"filter add dev {dev} parent 1: protocol ip pref {pref} u32 {m} flowid 1:1{q}")
            pref += 1
        if src_iq.trust == "dscp":
            for q in range(1, 5):
                for value, bits in dscp_blocks({d for d, qq in qos.dscp_output_queue.items() if qq == q}):
                    lines.append(f"filter add dev {dev} parent 1: protocol ip pref {pref} u32 "
                                 f"match ip src {src.ip}/32 {_dsfield(value, bits)} flowid 1:1{q}")
                    pref += 1
    return lines


def _span_lines(qos: QosConfig, plan: TcPlan) -> None:
    """SPAN: clsact + mirred on each source port, before any queueing (``rx`` on ingress, ``tx``
    on egress)."""
    for sess in sorted(qos.monitor):
        s = qos.monitor[sess]
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
    for h in topo.hosts:
        dev = linux_ifname(h.port)
        if not qos.enabled:
            plan.ports[dev] = switch_port_lines(topo, h.port)
            continue
        iq = qos.interfaces.get(h.port) or InterfaceQos()
        plan.ports[dev] = _queue_lines(qos, topo, dev, iq) + _classifier_lines(qos, topo, h, dev, plan.notes)
    _span_lines(qos, plan)
    return plan
