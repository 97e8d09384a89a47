"""QoS profiles rendered to Arista EOS configuration lines (pure), through the Jinja2 template
``switch-configs/arista-eos-qos.j2``, as an Arista engineer writes a 7280R3's QoS config (EOS User
Manual, QoS chapter): ``qos map`` lines for the DSCPs the profile queues differently from EOS's
defaults; the rules' access lists (named ``QOSLAB-<id>``: EOS has no numbered lists) and QoS
class-maps; a ``policy-map type quality-of-service`` that marks (``set dscp``, and ``set
traffic-class`` to the class the new DSCP queues in) and polices (``police rate ... bps burst-size
... bytes``) on ``policy_on``'s ports; ``qos trust dscp`` where the profile trusts DSCP; the
tx-queue scheduling and drop thresholds of :mod:`.mapping` on ``egress.apply_to``'s ports;
``monitor session`` for SPAN. Lines are in ``show running-config`` form (three-space indents), so a
second push of the same profile is an empty diff. Every line is then read by the EOS interpreter
(:mod:`qoslab.eos`) and must be a QoS line by :data:`EOS_RULES`.

Not rendered: ingress queues (a 7280R3 queues at ingress in virtual output queues scheduled by the
egress port; there is nothing to configure), ``trust: cos`` (EOS's default on switched ports),
SPAN ``encapsulation replicate`` (an EOS mirror destination sends the frames as they were).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ...eos import EosConfig, eos_port, load_config
from ...eos.config import natural_key
from ...eos.linekeys import line_keys
from ...errors import QoslabError
from ...ios.qoswalk import QosRules, non_qos_lines
from ...profiles.model import Profile, fail
from ...profiles.render import group_lookup, port_key, rule_acls, spans_of, template
from ...topology import Topology
from .mapping import TxQueue, map_lines, traffic_class_of, tx_queues

TEMPLATE = "arista-eos-qos.j2"
#: The prefix of every access list a profile owns on EOS (``QOSLAB-112``, ``QOSLAB-rmi``).
ACL_PREFIX = "QOSLAB-"
#: An EOS switch's QoS lines: ``qos map``/``qos rewrite``, SPAN; the profile's access lists,
#: QoS class-maps and policy-maps; on interfaces trust, default CoS/DSCP, the QoS service-policy,
#: port shaping and tx-queue blocks (with their lines). hier-config's EOS driver diffs them; it
#: undoes ``no priority`` with ``priority``, which EOS refuses (``% Incomplete command``): the
#: strict-priority form is ``priority strict`` (EOS User Manual, "priority (tx-queue)"); it removes
#: ``qos trust dscp`` with ``no qos trust dscp``, which EOS takes as ``no qos trust`` (trust off, a
#: setting of its own): ``default qos trust`` returns to the port's default.
EOS_RULES = QosRules(
    re.compile(r"^(qos map |qos rewrite |monitor session )"),
    re.compile(rf"^(ip access-list {ACL_PREFIX}|class-map type qos |policy-map type quality-of-service )"),
    re.compile(r"^(no qos trust$|qos (trust|cos|dscp) |service-policy type qos |shape rate |tx-queue )"),
    "ARISTA_EOS", negations=((r"^(\s*)priority$", r"\1priority strict"),
                             (r"^(\s*)no qos trust \S+$", r"\1default qos trust")), keys=line_keys)


def acl_name(acl_id: str) -> str:
    """The EOS access list of a rule's ACL id (``112`` -> ``QOSLAB-112``)."""
    return ACL_PREFIX + acl_id


def eos_ports(topology: Topology) -> dict[str, str]:
    """The topology's switch ports (short neutral names) -> EOS names. Raises QoslabError naming
    the topology for a port an EOS switch does not have."""
    try:
        return {p: eos_port(p) for p in topology.switch.ports}
    except ValueError as e:
        raise QoslabError(f"topology {topology.name}: {e}") from None


def _acls(profile: Profile, acls: list[tuple[str, str, list[str]]]) -> list[tuple[str, list[str]]]:
    out: dict[str, list[str]] = {}
    for line in profile.extra_acls:  # access-list N permit|deny ...: the numbered list N's entries
        num, entry = line.split(maxsplit=2)[1:]
        out.setdefault(acl_name(num), []).append(entry)
    for _kind, acl_id, entries in acls:
        out.setdefault(acl_name(acl_id), []).extend(entries)
    return sorted(out.items(), key=lambda kv: natural_key(kv[0]))


def _ports(profile: Profile, topology: Topology, group: Callable[[str], list[str]], marking: bool,
           queues: list[TxQueue]) -> list[tuple[str, list[str], list[TxQueue]]]:
    names = eos_ports(topology)
    lines: dict[str, list[str]] = {h.port: [] for h in topology.hosts}
    txq: dict[str, list[TxQueue]] = {h.port: [] for h in topology.hosts}
    if marking:
        for h in group(profile.policy_on):
            lines[topology.host(h).port].append(f"service-policy type qos input {profile.policy_map}")
    for grp, how in profile.trust.items():
        if how == "dscp":
            for h in group(grp):
                lines[topology.host(h).port].append("qos trust dscp")
    if profile.egress and queues:
        for h in group(profile.egress.apply_to):
            txq[topology.host(h).port] = queues
    out = [(names[p], lines[p], txq[p]) for p in sorted(lines, key=port_key)]
    return [row for row in out if row[1] or any(q.lines() for q in row[2])]


def render_eos(profile: Profile, topology: Topology, groups: dict[str, list[str]] | None = None) -> list[str]:
    """Profile -> EOS configuration lines (``qos map``, access lists, class-maps, policy-map,
    interfaces with their tx-queues, monitor sessions). Pure. Raises QoslabError (naming the
    profile's file, line and field) for what EOS cannot express, a group that does not fit, or a
    topology port an EOS switch does not have."""
    group = group_lookup(profile, topology, groups)
    acls, classes = rule_acls(profile, topology, group)
    spans = [(s, eos_ports(topology)[src], eos_ports(topology)[dst], d) for s, src, dst, d, _ in
             spans_of(profile, topology)]
    text = template(TEMPLATE).render(
        p=profile, maps=map_lines(profile, topology), acls=_acls(profile, acls), classes=classes,
        acl_name=acl_name, tc_of=lambda d: traffic_class_of(profile, d),
        ports=_ports(profile, topology, group, bool(classes), tx_queues(profile, topology)), spans=spans)
    lines = [line for line in text.splitlines() if line.strip()]
    check_eos(profile, topology, lines)
    return lines


def check_eos(profile: Profile, topology: Topology, lines: list[str]) -> None:
    """Every rendered line must be valid EOS (the virtual EOS switch's interpreter) and a QoS line
    by :data:`EOS_RULES`."""
    cfg = EosConfig.factory(topology.switch.hostname, list(eos_ports(topology).values()))
    errors = load_config("\n".join(lines), cfg)
    if errors:
        raise fail(profile, ("name",), f"renders invalid EOS ({errors[0]}): a field holds something EOS does not take")
    other = non_qos_lines(lines, EOS_RULES)
    if other:
        raise fail(profile, ("name",), f"renders a line that is not QoS configuration: {other[0]!r}")
