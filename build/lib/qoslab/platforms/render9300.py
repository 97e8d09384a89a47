"""QoS profiles rendered to Catalyst 9300 IOS-XE MQC lines (pure), through the Jinja2 template
``switch-configs/catalyst9300-qos.j2``, as a Cisco engineer writes a 9300 QoS config (the
AutoQoS / 2P6Q3T designs of the Catalyst 9300 QoS configuration guide, IOS-XE 17.x, are the
guide): the rules' ACLs and class-maps and an ingress marking policy (``set dscp``, ``police cir
... bc ...``) on ``policy_on``'s ports, class-maps matching DSCP per egress queue and an egress
queuing policy (``priority level 1``, ``bandwidth remaining percent``, ``queue-buffers ratio``,
``queue-limit dscp ... percent``) on ``egress.apply_to``'s ports, SPAN sessions as on the 3750.
How the profile's 3750 terms map: :mod:`qoslab.platforms.neutral`. What the 9300 cannot express
is refused with the profile's file, line and field. Every line is then read by the virtual
switch's IOS-XE interpreter (:mod:`qoslab.ios.xe`) and must be a QoS line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..ios.acl import numbered_kind
from ..ios.aclparse import canonical_entry
from ..ios.qoswalk import QosRules
from ..portnames import long_port
from ..profiles.model import Profile, fail
from ..profiles.render import Acl, check_ios, group_lookup, port_key, rule_acls, spans_of, template
from ..topology import Topology
from .neutral import NeutralQueue, egress_queues, remaining_percent

TEMPLATE = "catalyst9300-qos.j2"
#: The egress queuing policy's name and its queue classes' names (``QOSLAB-Q1`` ...): profiles may
#: not take names starting ``QOSLAB-`` (qoslab.profiles.model.RESERVED_PREFIXES).
EGRESS_POLICY = "QOSLAB-QUEUING"
#: The Catalyst 9300's QoS lines: ACLs, class-maps, policy-maps, SPAN, the soft-buffer
#: multiplier and the queue stats' frame count; on interfaces the service-policies (no ``mls
#: qos`` on IOS-XE). hier-config 3 has no IOS-XE platform; its IOS rules are the ones for IOS-XE too.
C9300_RULES = QosRules(re.compile(r"^(access-list 1\d\d\b|monitor session\b"
                                  r"|qos queue-(softmax-multiplier|stats-frame-count)\b)"),
                       re.compile(r"^(class-map\b|policy-map\b|ip access-list extended\b)"),
                       re.compile(r"^(service-policy\b)"))


def queue_class(q: NeutralQueue) -> str:
    """The class of an egress queue: ``class-default`` for the queue of DSCP 0, else QOSLAB-Qn."""
    return "class-default" if q.default else f"QOSLAB-Q{q.number}"


def _refuse(profile: Profile) -> None:
    """What a 9300 profile cannot say, named by file, line and field."""
    if profile.egress and profile.egress.shape:
        raise fail(profile, ("egress", "shape"), "catalyst9300: SRR shaped queues have no MQC counterpart here "
                                                 "(use `share`)")
    for g, how in profile.trust.items():
        if how != "dscp":
            raise fail(profile, ("trust", g), f"catalyst9300: `trust {how}` is not rendered (the 9300 trusts DSCP "
                                              "by default)")


def _ports(profile: Profile, topology: Topology, group: Callable[[str], list[str]], marking: bool,
           queuing: bool) -> list[tuple[str, list[str]]]:
    ports: dict[str, list[str]] = {h.port: [] for h in topology.hosts}
    if marking:
        for h in group(profile.policy_on):
            ports[topology.host(h).port].append(f"service-policy input {profile.policy_map}")
    if queuing and profile.egress:
        for h in group(profile.egress.apply_to):
            ports[topology.host(h).port].append(f"service-policy output {EGRESS_POLICY}")
    return [(long_port(p), lines) for p, lines in sorted(ports.items(), key=lambda kv: port_key(kv[0])) if lines]


def xe_acl_sections(extra_acls: list[str], acls: list[Acl]) -> list[tuple[str, str, list[str]]]:
    """Every access list as IOS-XE 17.x prints it in its running-config, so that what is pushed is
    what the switch shows (a second ``ios_config`` push changes nothing): (standard|extended, name
    or number, entries ``10 permit ...`` numbered 10, 20 ... in IOS's printed form); numbered lists
    too (``ip access-list extended 112``, qoslab.ios.acl). ``extra_acls`` (``access-list N ...``
    lines) first, then the rules' lists. Pure."""
    lists: dict[str, list[str]] = {}
    for line in extra_acls:
        _, num, entry = line.split(None, 2)
        lists.setdefault(num, []).append(entry)
    for _, name, entries in acls:
        lists.setdefault(name, []).extend(entries)
    out = []
    for name, entries in lists.items():
        kind = numbered_kind(name) or "extended"
        out.append((kind, name, [f"{10 * i} {canonical_entry(e, kind == 'standard', pad=True)}"
                                 for i, e in enumerate(entries, 1)]))
    return out


def render_9300(profile: Profile, topology: Topology, groups: dict[str, list[str]] | None = None) -> list[str]:
    """Profile -> IOS-XE configuration lines (ACLs, class-maps, marking policy, queuing policy,
    interfaces, monitor sessions). Pure. Raises QoslabError (ConfigError naming the profile's
    file, line and field) for what the 9300 cannot express or a group that does not fit."""
    _refuse(profile)
    group = group_lookup(profile, topology, groups)
    acls, classes = rule_acls(profile, topology, group)
    queues = egress_queues(profile) if profile.mls_qos else []
    queues = [q for q in queues if not q.default] + [q for q in queues if q.default]
    text = template(TEMPLATE).render(
        p=profile, acls=xe_acl_sections(profile.extra_acls, acls), classes=classes, queues=queues,
        remaining=remaining_percent(queues), egress_policy=EGRESS_POLICY, queue_class=queue_class,
        ports=_ports(profile, topology, group, bool(classes), bool(queues)), spans=spans_of(profile, topology))
    lines = [line for line in text.splitlines() if line.strip()]
    check_ios(profile, topology, lines, "c9300", C9300_RULES)
    return lines
