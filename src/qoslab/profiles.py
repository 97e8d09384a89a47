"""QoS profiles (``qos-profiles/*.yaml``) and their rendering to Catalyst 3750 IOS lines.

A profile is written in the switch's own terms (mls qos, trust, ACL -> class-map -> policy-map
``set dscp``, ingress queues, egress SRR weights, queue-sets, ``priority-queue out``, DSCP maps,
SPAN). Hosts are named through groups resolved against a topology (``workload: {first: 4}``),
so one profile fits any cluster size; a campaign may pass its own group members.

:func:`render` is pure: (profile, topology, groups) -> IOS config lines, through the Jinja2
template ``switch-configs/catalyst3750-qos.j2``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import jinja2
from pydantic import Field, field_validator

from .errors import ConfigError, QoslabError
from .topology import Topology, canonical_port, long_port, repo_root
from .yamlio import StrictModel, load_model

TEMPLATES = repo_root() / "switch-configs"


class Group(StrictModel):
    """Hosts of a group: an explicit list, or the first N hosts of the topology."""

    hosts: list[str] | None = None
    first: int | None = Field(None, ge=1)


class Police(StrictModel):
    """``police RATE BURST exceed-action drop`` in the rule's class: bits/s and bytes, in the
    ranges the 3750 command reference gives (8000 - 10^9 bits/s, 8000 - 10^6 bytes)."""

    rate_bps: int = Field(..., ge=8000, le=1_000_000_000)
    burst_bytes: int = Field(..., ge=8000, le=1_000_000)


class Rule(StrictModel):
    """A classification rule, rendered as ACL(s) + class-map + policy-map class setting DSCP.

    ``kind: pairs``: one numbered ACL per ordered pair of hosts of ``group`` (Appendix B: ACL
    1ij = host i -> host j, class ``class1ij``). ``kind: ports``: one named ACL matching TCP
    ``ports`` in both directions (source or destination port), class ``name``.
    ``kind: any``: every packet of ``protocol`` from the group's hosts. ``police``: an individual
    policer in the class (exceed-action drop)."""

    name: str
    kind: Literal["pairs", "ports", "any"]
    group: str = "workload"
    protocol: Literal["ip", "tcp", "udp"] = "ip"
    ports: list[int] = Field(default_factory=list)
    set_dscp: int = Field(..., ge=0, le=63)
    acl_base: int = Field(100, ge=100, le=199)
    police: Police | None = None


class PriorityIn(StrictModel):
    queue: int = Field(2, ge=1, le=2)
    bandwidth: int = Field(10, ge=0, le=40)


class Ingress(StrictModel):
    """``mls qos srr-queue input ...`` (not emulated by tc: see the fidelity table)."""

    bandwidth: list[int] | None = None
    buffers: list[int] | None = None
    priority_queue: PriorityIn | None = None


class Egress(StrictModel):
    """Egress settings for the ports of ``apply_to``: SRR share or shape weights (4 queues),
    expedite queue, queue-set."""

    apply_to: str = "workload"
    share: list[int] | None = None
    shape: list[int] | None = None
    priority_queue_out: bool = False
    queue_set: int | None = Field(None, ge=1, le=2)

    @field_validator("share", "shape")
    @classmethod
    def _four(cls, v):
        if v is not None and len(v) != 4:
            raise ValueError("SRR weights are four numbers, one per egress queue")
        return v


class QueueSet(StrictModel):
    buffers: list[int] | None = None
    thresholds: dict[int, list[int]] = Field(default_factory=dict)


class Span(StrictModel):
    """A SPAN session (``monitor session``): ``source`` is a host name (its port) or a port name,
    ``destination`` a port name (SPAN sessions of campaigns come from here only)."""

    session: int = Field(..., ge=1, le=66)
    source: str
    destination: str
    direction: Literal["both", "rx", "tx"] = "both"
    encapsulation: Literal["replicate"] | None = None

    @field_validator("destination")
    @classmethod
    def _destination(cls, v: str) -> str:
        return canonical_port(v)


class Profile(StrictModel):
    """A Catalyst 3750 QoS profile (see module doc)."""

    name: str
    description: str = ""
    mls_qos: bool = False
    groups: dict[str, Group] = Field(default_factory=lambda: {"workload": Group(first=4)})
    trust: dict[str, Literal["dscp", "cos"]] = Field(default_factory=dict)
    policy_map: str = "qoslab"
    rules: list[Rule] = Field(default_factory=list)
    policy_on: str = "workload"
    extra_acls: list[str] = Field(default_factory=list)
    ingress: Ingress = Ingress()
    egress: Egress | None = None
    queue_sets: dict[int, QueueSet] = Field(default_factory=dict)
    dscp_output_map: dict[int, list[int]] = Field(default_factory=dict)
    span: list[Span] = Field(default_factory=list)


PROFILE_DIR = repo_root() / "qos-profiles"


def profile_path(path_or_name: str | Path) -> Path:
    """Where a profile lives: a name (``thesis``) -> ``qos-profiles/thesis.yaml``; anything with a
    suffix or an existing path -> that path. Does not check that it exists."""
    p = Path(path_or_name)
    if not p.suffix and not p.exists():
        return PROFILE_DIR / f"{path_or_name}.yaml"
    return p


def load_profile(path_or_name: str | Path) -> Profile:
    """A profile by path or by name (``thesis`` -> qos-profiles/thesis.yaml). Raises ConfigError
    naming file, line and field (or the profiles that exist, for an unknown name)."""
    p = profile_path(path_or_name)
    if not p.exists():
        known = ", ".join(sorted(f.stem for f in PROFILE_DIR.glob("*.yaml")))
        raise ConfigError(f"no profile {str(path_or_name)!r} (qos-profiles/: {known})")
    return load_model(p, Profile)


def resolve_groups(profile: Profile, topology: Topology, overrides: dict[str, list[str]] | None = None
                   ) -> dict[str, list[str]]:
    """Group name -> host names. ``overrides`` (e.g. a campaign's workload hosts) win.
    Raises QoslabError for unknown hosts or a group larger than the topology."""
    out = {}
    for name, g in profile.groups.items():
        if overrides and name in overrides:
            hosts = list(overrides[name])
        elif g.hosts is not None:
            hosts = list(g.hosts)
        else:
            first = g.first or len(topology.hosts)
            if first > len(topology.hosts):
                raise QoslabError(f"profile {profile.name}: group {name} wants the first {g.first} hosts, "
                                  f"topology {topology.name} has {len(topology.hosts)}")
            hosts = topology.host_names[:first]
        for h in hosts:
            try:
                topology.host(h)
            except KeyError as e:
                raise QoslabError(f"profile {profile.name}: group {name}: {e.args[0]}") from None
        out[name] = hosts
    return out


Acl = tuple[str, str, list[str]]          # (numbered|named, id, entries)
PolicyClassRow = tuple[str, str, bool, int, Police | None]  # (class name, ACL id, named?, DSCP, policer)


def _rule_acls(profile: Profile, topology: Topology, group: Callable[[str], list[str]]
               ) -> tuple[list[Acl], list[PolicyClassRow]]:
    """ACLs and policy-map classes of the profile's rules (pure)."""
    acls: list[Acl] = []
    classes: list[PolicyClassRow] = []
    for r in profile.rules:
        hosts = group(r.group)
        if r.kind == "pairs":
            if len(hosts) > 9:
                raise QoslabError(f"profile {profile.name}: rule {r.name}: pairs ACLs number 1ij, at most 9 hosts")
            for i, a in enumerate(hosts, 1):
                for j, b in enumerate(hosts, 1):
                    if i != j:
                        num = r.acl_base + 10 * i + j
                        entry = f"permit {r.protocol} host {topology.host(a).ip} host {topology.host(b).ip}"
                        acls.append(("num", str(num), [entry]))
                        classes.append((f"class{num}", str(num), False, r.set_dscp, r.police))
        elif r.kind == "ports":
            entries = []
            for port in r.ports:
                entries += [f"permit {r.protocol} any any eq {port}", f"permit {r.protocol} any eq {port} any"]
            acls.append(("named", r.name, entries))
            classes.append((r.name, r.name, True, r.set_dscp, r.police))
        else:
            acls.append(("named", r.name, [f"permit {r.protocol} host {topology.host(h).ip} any" for h in hosts]))
            classes.append((r.name, r.name, True, r.set_dscp, r.police))
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


def render(profile: Profile, topology: Topology, groups: dict[str, list[str]] | None = None) -> list[str]:
    """Profile -> IOS configuration lines (config-mode order: globals, ACLs, class-maps,
    policy-map, interfaces, monitor sessions). Pure. Raises QoslabError for a group that does
    not fit (unknown host, more than 9 hosts in a ``pairs`` rule: ACL numbers 1ij)."""
    g = resolve_groups(profile, topology, groups)

    def group(name: str) -> list[str]:
        if name not in g:
            raise QoslabError(f"profile {profile.name}: no group {name!r} (groups: {', '.join(g)})")
        return g[name]

    acls, classes = _rule_acls(profile, topology, group)
    ports = _interface_lines(profile, topology, group, bool(classes))
    spans = []
    for s in profile.span:
        src = topology.host(s.source).port if s.source in topology.host_names else s.source
        spans.append((s.session, src, s.destination, s.direction, s.encapsulation))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    port_lines = [(long_port(port), lines) for port, lines in sorted(ports.items(), key=lambda kv: _port_key(kv[0]))
                  if lines]
    text = env.get_template("catalyst3750-qos.j2").render(
        p=profile, acls=acls, classes=classes, extra_acls=profile.extra_acls, ports=port_lines, spans=spans)
    return [line for line in text.splitlines() if line.strip()]


def _port_key(port: str) -> tuple[int, ...]:
    return tuple(int(x) for x in port[2:].split("/"))
