"""QoS profiles rendered to Catalyst 3750 IOS lines (pure).

:func:`render`: (profile, topology, groups) -> IOS config lines, through the Jinja2 template
``switch-configs/catalyst3750-qos.j2``. What the file alone cannot tell is checked here, naming
the profile's file, line and field: group members are hosts of the topology, ``pairs`` ACL
numbers stay in the extended range, rules do not collide (ACL numbers, ACL and class-map names),
SPAN ports exist. The rendered lines are then read by the virtual Catalyst's IOS interpreter
(:mod:`qoslab.ios`): every line must be valid IOS and a QoS line (:func:`qoslab.ios.qoswalk.non_qos_lines`),
so nothing else can ever reach a switch through a profile.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import jinja2

from ..errors import QoslabError
from ..ios import RunningConfig, load_config
from ..ios.qoswalk import C3750_RULES, QosRules, non_qos_lines
from ..ios.xe import dscp_name
from ..portnames import long_port
from ..topology import Topology, repo_root
from .model import Police, Profile, fail

TEMPLATES = repo_root() / "switch-configs"


def resolve_groups(profile: Profile, topology: Topology, overrides: dict[str, list[str]] | None = None
                   ) -> dict[str, list[str]]:
    """Group name -> host names. ``overrides`` (e.g. a campaign's workload hosts) win.
    Raises QoslabError (ConfigError with file and line) for unknown hosts or a group larger
    than the topology."""
    out = {}
    for name, g in profile.groups.items():
        if overrides and name in overrides:
            hosts = list(overrides[name])
        elif g.hosts is not None:
            hosts = list(g.hosts)
        else:
            assert g.first is not None
            if g.first > len(topology.hosts):
                raise fail(profile, ("groups", name, "first"), f"group {name} wants the first {g.first} hosts, "
                                                               f"topology {topology.name} has {len(topology.hosts)}")
            hosts = topology.host_names[: g.first]
        for h in hosts:
            if h not in topology.host_names:
                raise fail(profile, ("groups", name), f"group {name}: no host {h!r} in topology {topology.name} "
                                                      f"(hosts: {', '.join(topology.host_names)})")
        out[name] = hosts
    return out


def group_lookup(profile: Profile, topology: Topology, overrides: dict[str, list[str]] | None = None
                 ) -> Callable[[str], list[str]]:
    """The groups of :func:`resolve_groups` (same arguments, same errors) as a function group name
    -> host names, which raises QoslabError naming the profile and its groups for an unknown name."""
    g = resolve_groups(profile, topology, overrides)

    def group(name: str) -> list[str]:
        if name not in g:
            raise QoslabError(f"profile {profile.name}: no group {name!r} (groups: {', '.join(g)})")
        return g[name]

    return group


Acl = tuple[str, str, list[str]]          # (numbered|named, id, entries)
PolicyClassRow = tuple[str, str, bool, int, Police | None]  # (class name, ACL id, named?, DSCP, policer)


def _pairs(profile: Profile, i: int, topology: Topology, hosts: list[str]) -> tuple[list[Acl], list[PolicyClassRow]]:
    r = profile.rules[i]
    if len(hosts) > 9:
        raise fail(profile, ("rules", i, "group"), f"rule {r.name}: pairs ACLs number 1ij, at most 9 hosts "
                                                   f"(group {r.group} has {len(hosts)})")
    acls: list[Acl] = []
    classes: list[PolicyClassRow] = []
    for a_i, a in enumerate(hosts, 1):
        for b_i, b in enumerate(hosts, 1):
            if a_i != b_i:
                num = r.acl_base + 10 * a_i + b_i
                if num > 199:
                    raise fail(profile, ("rules", i, "acl_base"), f"rule {r.name}: ACL {num} (base {r.acl_base} + "
                                                                  f"{10 * a_i + b_i}) is outside 100-199")
                entry = f"permit {r.protocol} host {topology.host(a).ip} host {topology.host(b).ip}"
                acls.append(("num", str(num), [entry]))
                classes.append((f"class{num}", str(num), False, r.set_dscp, r.police))
    return acls, classes


def rule_acls(profile: Profile, topology: Topology, group: Callable[[str], list[str]]
               ) -> tuple[list[Acl], list[PolicyClassRow]]:
    """ACLs and policy-map classes of the profile's rules (pure). Raises QoslabError naming the
    rule when two rules (or a rule and ``extra_acls``) would make the same ACL or class-map."""
    acls: list[Acl] = []
    classes: list[PolicyClassRow] = []
    owner: dict[str, int] = {}  # ACL id or class name -> rule index (-1: extra_acls)
    for line in profile.extra_acls:
        owner[line.split()[1]] = -1
    for i, r in enumerate(profile.rules):
        hosts = group(r.group)
        if r.kind == "pairs":
            a, c = _pairs(profile, i, topology, hosts)
        elif r.kind == "ports":
            entries = []
            for port in r.ports:
                entries += [f"permit {r.protocol} any any eq {port}", f"permit {r.protocol} any eq {port} any"]
            for lo, hi in r.port_ranges:
                rng = f"range {lo} {hi}"
                entries += [f"permit {r.protocol} any any {rng}", f"permit {r.protocol} any {rng} any"]
            a, c = [("named", r.name, entries)], [(r.name, r.name, True, r.set_dscp, r.police)]
        else:
            a = [("named", r.name, [f"permit {r.protocol} host {topology.host(h).ip} any" for h in hosts])]
            c = [(r.name, r.name, True, r.set_dscp, r.police)]
        mine = {x[1] for x in a} | {x[0] for x in c}
        for key in sorted(mine):
            if key in owner:
                other = "extra_acls" if owner[key] < 0 else f"rules[{owner[key]}]"
                raise fail(profile, ("rules", i, "name" if r.kind != "pairs" else "acl_base"),
                           f"rule {r.name} collides with {other}: both make ACL or class-map {key}")
        owner.update({k: i for k in mine})
        acls += a
        classes += c
    return acls, classes


def _interface_lines(profile: Profile, topology: Topology, group: Callable[[str], list[str]],
                     with_policy: bool) -> dict[str, list[str]]:
    """Port (short name) -> its QoS interface lines: trust, SRR weights, queue-set, expedite
    queue, service-policy (pure)."""
    ports: dict[str, list[str]] = {h.port: [] for h in topology.hosts}
    for grp, how in profile.trust.items():
        for h in group(grp):
            ports[topology.host(h).port].append(f"mls qos trust {how}")
    if profile.egress:
        e = profile.egress
        for h in group(e.apply_to):
            lines = ports[topology.host(h).port]
            if e.share:
                lines.append("srr-queue bandwidth share " + " ".join(map(str, e.share)))
            if e.shape:
                lines.append("srr-queue bandwidth shape " + " ".join(map(str, e.shape)))
            if e.queue_set:
                lines.append(f"queue-set {e.queue_set}")
            if e.priority_queue_out:
                lines.append("priority-queue out")
    if with_policy:
        for h in group(profile.policy_on):
            ports[topology.host(h).port].append(f"service-policy input {profile.policy_map}")
    return ports


def spans_of(profile: Profile, topology: Topology) -> list[tuple[int, str, str, str, str | None]]:
    """The profile's SPAN sessions for ``topology``: (session, source port, destination port,
    direction, encapsulation). Raises QoslabError (file, line, field) for a source that is neither
    a host nor a port, a destination that is no port of the switch or is a host's own port (a SPAN
    destination port sends only the mirrored copies and forwards nothing: its host would be cut off,
    Catalyst 3750 configuration guide, "Configuring SPAN and RSPAN", destination port
    characteristics). Pure."""
    out: list[tuple[int, str, str, str, str | None]] = []
    host_on = {h.port: h.name for h in topology.hosts}
    for i, s in enumerate(profile.span):
        if s.destination in host_on:
            raise fail(profile, ("span", i, "destination"),
                       f"{s.destination} is {host_on[s.destination]}'s port: a SPAN destination forwards no traffic, "
                       f"so {host_on[s.destination]} would be cut off (SPAN destinations of topology {topology.name}: "
                       f"{', '.join(topology.switch.span_destinations) or 'none'})")
        if s.source in topology.host_names:
            src = topology.host(s.source).port
        elif s.source in topology.switch.ports:
            src = s.source
        else:
            raise fail(profile, ("span", i, "source"), f"{s.source!r} is neither a host of topology {topology.name} "
                                                      "nor one of its switch ports")
        if s.destination not in topology.switch.ports:
            raise fail(profile, ("span", i, "destination"), f"{s.destination} is not a port of the switch of "
                                                           f"topology {topology.name}")
        out.append((s.session, src, s.destination, s.direction, s.encapsulation))
    return out


def check_ios(profile: Profile, topology: Topology, lines: list[str], dialect: str = "c3750",
              rules: QosRules = C3750_RULES) -> None:
    """Every rendered line must be valid in ``dialect`` (the virtual Catalyst's interpreter) and a
    QoS line by ``rules``."""
    errors = load_config("\n".join(lines), RunningConfig.factory(topology.switch.hostname, topology.switch.ports,
                                                                 dialect))
    if errors:
        raise fail(profile, ("name",), f"renders invalid IOS ({errors[0]}): a field holds something IOS does not take")
    other = non_qos_lines(lines, rules)
    if other:
        raise fail(profile, ("name",), f"renders a line that is not QoS configuration: {other[0]!r}")


@lru_cache(maxsize=4)
def template(name: str) -> jinja2.Template:
    """The Jinja2 template ``name`` of switch-configs/, read and compiled once per process."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["dscp"] = dscp_name  # IOS-XE prints DSCP names (catalyst9300-qos.j2)
    return env.get_template(name)


def render(profile: Profile, topology: Topology, groups: dict[str, list[str]] | None = None) -> list[str]:
    """Profile -> IOS configuration lines (config-mode order: globals, ACLs, class-maps,
    policy-map, interfaces, monitor sessions). Pure. Raises QoslabError (ConfigError naming the
    profile's file, line and field when it came from a file) for a group that does not fit
    (unknown host, more than 9 hosts in a ``pairs`` rule: ACL numbers 1ij), colliding rules, an
    unknown SPAN port, or a line IOS would not take."""
    group = group_lookup(profile, topology, groups)
    acls, classes = rule_acls(profile, topology, group)
    ports = _interface_lines(profile, topology, group, bool(classes))
    spans = spans_of(profile, topology)
    port_lines = [(long_port(port), lines) for port, lines in sorted(ports.items(), key=lambda kv: port_key(kv[0]))
                  if lines]
    text = template("catalyst3750-qos.j2").render(
        p=profile, acls=acls, classes=classes, extra_acls=profile.extra_acls, ports=port_lines, spans=spans)
    lines = [line for line in text.splitlines() if line.strip()]
    check_ios(profile, topology, lines)
    return lines


def port_key(port: str) -> tuple[int, ...]:
    return tuple(int(x) for x in port[2:].split("/"))
