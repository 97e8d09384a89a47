"""The QoS meaning of a Catalyst 3750 running-config (:func:`qos_model`): what the tc compiler
needs, with the Catalyst 3750 defaults filled in for anything not configured.

Defaults (Catalyst 3750 QoS configuration guide, 12.2(25)SE): ``mls qos`` off; ports untrusted
when QoS is on; egress DSCP map 0-15 -> q2, 16-31 -> q3, 32-39 and 48-63 -> q4, 40-47 -> q1;
queue-set 1 and 2 buffers 25 25 25 25, WTD thresholds 100 100 (queue 2: 200 200), reserved 50,
maximum 400, every DSCP at threshold 1; ``srr-queue bandwidth shape 25 0 0 0`` and ``share 25 25 25
25``; ingress: DSCP 40-47 -> queue 2 (priority, 10 %), others -> queue 1; ``mls qos rewrite ip
dscp`` on; CoS-to-DSCP map 0 8 16 24 32 40 48 56; DSCP-to-CoS map DSCP // 8.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..portnames import canonical_port
from .acl import Ace
from .config import RunningConfig
from .grammar import dscp_value
from .show_qos import QueueSet, default_dscp_output_q, dscp_output_q_from_config, queue_sets_from_config

#: Catalyst 3750 default DSCP output map (QoS configuration guide 12.2(25)SE, "Configuring
#: Egress Queue Characteristics"): 0-15 -> queue 2, 16-31 -> 3, 32-39 and 48-63 -> 4, 40-47 -> 1
#: (the queues of :func:`.show_qos.default_dscp_output_q`).
DEFAULT_DSCP_OUTPUT_QUEUE = {d: q for d, (q, _) in default_dscp_output_q().items()}
#: Catalyst 3750 default CoS-to-DSCP map (QoS configuration guide, "Configuring the CoS-to-DSCP Map").
DEFAULT_COS_DSCP = [0, 8, 16, 24, 32, 40, 48, 56]
#: Catalyst 3750 default DSCP-to-CoS map (same guide, "Configuring the DSCP-to-CoS Map"): DSCP // 8.
DEFAULT_DSCP_COS = {d: d // 8 for d in range(64)}


@dataclass
class ClassMap:
    """A class-map: match-all or match-any over ACL names and DSCP values."""

    name: str
    match_all: bool
    acls: list[str]
    dscps: list[int]


@dataclass(frozen=True)
class Police:
    """``police RATE BURST exceed-action drop``: an individual policer, ``rate_bps`` bits/s,
    ``burst_bytes`` bytes (token bucket; packets over it are dropped)."""

    rate_bps: int
    burst_bytes: int


@dataclass
class PolicyClass:
    """A class of a policy-map: the DSCP it sets, the trust it applies, its policer."""

    class_name: str
    set_dscp: int | None
    trust: str | None
    police: Police | None = None


@dataclass
class InterfaceQos:
    """Per-port QoS: trust (None = untrusted), input service-policy, SRR weights, expedite queue,
    queue-set."""

    trust: str | None = None
    service_policy_in: str | None = None
    share: list[int] = field(default_factory=lambda: [25, 25, 25, 25])
    shape: list[int] = field(default_factory=lambda: [25, 0, 0, 0])
    priority_queue_out: bool = False
    queue_set: int = 1


@dataclass
class QosConfig:
    """Everything the tc compiler needs, with Catalyst 3750 defaults filled in."""

    enabled: bool
    acls: dict[str, list[Ace]]  # entries in sequence order
    class_maps: dict[str, ClassMap]
    policy_maps: dict[str, list[PolicyClass]]
    dscp_output_queue: dict[int, int]
    interfaces: dict[str, InterfaceQos]
    monitor: dict[int, dict[str, list[Any]]]  # session -> {"sources": [(port, dir)], "destinations": [port]}
    unsupported: list[str]     # configured but not emulated (ingress queues, port rate limit ...)
    rewrite_dscp: bool = True  # ``mls qos rewrite ip dscp``: the DS field leaves with the QoS label
    #: egress queue-sets 1 and 2 (buffers, WTD thresholds, reserved, maximum; 3750 defaults)
    queue_sets: dict[int, QueueSet] = field(default_factory=lambda: {1: QueueSet(), 2: QueueSet()})
    #: DSCP -> WTD threshold 1-3 in its egress queue (``dscp-map queue Q threshold T``; default 1)
    dscp_output_threshold: dict[int, int] = field(default_factory=lambda: dict.fromkeys(range(64), 1))
    cos_dscp: list[int] = field(default_factory=lambda: list(DEFAULT_COS_DSCP))
    dscp_cos: dict[int, int] = field(default_factory=lambda: dict(DEFAULT_DSCP_COS))


def _globals(rc: RunningConfig, q: QosConfig) -> None:
    for line in rc.globals_:
        w = line.split()
        if (w[:5] == ["mls", "qos", "srr-queue", "output", "dscp-map"]
                or w[:4] == ["mls", "qos", "queue-set", "output"] and w[5] in ("buffers", "threshold")):
            pass  # the output map, queue-set buffers and WTD thresholds: qos_model (tccompile.wtd_limits)
        elif line == "no mls qos rewrite ip dscp":
            q.rewrite_dscp = False
        elif w[:4] == ["mls", "qos", "map", "cos-dscp"]:
            q.cos_dscp = [int(x) for x in w[4:12]]
        elif w[:4] == ["mls", "qos", "map", "dscp-cos"]:
            q.dscp_cos[int(w[4])] = int(w[6])
        elif line != "mls qos":
            q.unsupported.append(line)


def acl_entries(rc: RunningConfig) -> dict[str, list[Ace]]:
    """{access list: its entries in the order IOS evaluates them (sequence numbers)}."""
    return {name: acl.aces() for name, acl in rc.acls.items()}


def class_maps_of(rc: RunningConfig) -> dict[str, ClassMap]:
    out = {}
    for name, s in rc.class_maps.items():
        acls, dscps = [], []
        for c in s.children:
            w = c.split()
            if w[:2] == ["match", "access-group"]:
                acls.append(w[-1])
            elif w[:3] == ["match", "ip", "dscp"]:
                dscps += [int(x) for x in w[3:]]
            elif w[:2] == ["match", "dscp"]:  # IOS-XE (qoslab.ios.xe): names or numbers
                dscps += [v for x in w[2:] if (v := dscp_value(x)) is not None]
        out[name] = ClassMap(name, "match-any" not in s.header, acls, dscps)
    return out


def policy_maps_of(rc: RunningConfig) -> dict[str, list[PolicyClass]]:
    out = {}
    for name, s in rc.policy_maps.items():
        pcs = []
        for sub in s.subsections:
            setd = trust = police = None
            for c in sub.children:
                w = c.split()
                if w[0] == "set":
                    setd = dscp_value(w[-1])
                elif w[0] == "trust":
                    trust = w[1]
                elif w[0] == "police":  # 3750: police RATE BURST; IOS-XE: police cir RATE bc BURST
                    police = Police(int(w[2]), int(w[4])) if w[1] == "cir" else Police(int(w[1]), int(w[2]))
            pcs.append(PolicyClass(sub.header.split()[1], setd, trust, police))
        out[name] = pcs
    return out


def _interface_qos(port: str, children: list[str], unsupported: list[str]) -> InterfaceQos:
    q = InterfaceQos()
    for c in children:
        w = c.split()
        if w[:3] == ["mls", "qos", "trust"]:
            q.trust = w[3]
        elif w[:2] == ["service-policy", "input"]:
            q.service_policy_in = w[2]
        elif w[:3] == ["srr-queue", "bandwidth", "share"]:
            q.share = [int(x) for x in w[3:7]]
        elif w[:3] == ["srr-queue", "bandwidth", "shape"]:
            q.shape = [int(x) for x in w[3:7]]
        elif w[:2] == ["priority-queue", "out"]:
            q.priority_queue_out = True
        elif w[0] == "queue-set":
            q.queue_set = int(w[1])
        elif w[:3] == ["srr-queue", "bandwidth", "limit"]:
            unsupported.append(f"interface {port}: {c}")
    return q


def monitor_sessions_of(rc: RunningConfig) -> dict[int, dict[str, list[Any]]]:
    mon: dict[int, dict[str, list[Any]]] = {}
    for line in rc.monitor:
        w = line.split()
        sess = mon.setdefault(int(w[2]), {"sources": [], "destinations": []})
        port = canonical_port(w[5])
        if w[3] == "source":
            sess["sources"].append((port, w[6] if len(w) > 6 else "both"))
        else:
            sess["destinations"].append(port)
    return mon


def mls_qos_model(rc: RunningConfig) -> QosConfig:
    """The QoS meaning of a Catalyst 3750 (``mls qos``) running-config, its defaults filled in
    (pure). Any dialect's: :func:`qoslab.ios.qosmodel.qos_model`."""
    out_q = dscp_output_q_from_config(rc.globals_)
    q = QosConfig("mls qos" in rc.globals_, acl_entries(rc), class_maps_of(rc), policy_maps_of(rc),
                  {d: qt[0] for d, qt in out_q.items()}, {}, monitor_sessions_of(rc), [],
                  queue_sets=queue_sets_from_config(rc.globals_),
                  dscp_output_threshold={d: qt[1] for d, qt in out_q.items()})
    _globals(rc, q)
    q.interfaces = {port: _interface_qos(port, s.children, q.unsupported)
                    for port, s in rc.interfaces.items() if not port.startswith("Vlan")}
    return q
