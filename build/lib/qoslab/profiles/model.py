"""QoS profile files (``qos-profiles/*.yaml``): the model and its loader.

Every field that reaches IOS text is checked against IOS's own syntax when the file is loaded:
object names (class-map, policy-map, named ACL) are IOS words, numbers are in their IOS ranges
(DSCP 0-63, SRR weights 1-255, ports 1-65535, extended ACL numbers 100-199/2000-2699, queue-set
buffers and thresholds), interface names are Catalyst interfaces, and every group, rule and
SPAN reference resolves. What depends on a topology (hosts, ACL numbers of ``pairs`` rules,
collisions between rules) is checked by :func:`qoslab.profiles.render`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..errors import ConfigError, QoslabError
from ..portnames import canonical_port
from ..topology import repo_root
from ..yamlio import FieldProblem, StrictModel, SubFieldProblem, config_error, format_loc, load_model

#: An IOS object name as profiles may write it (class-map, policy-map, named ACL): a letter, then
#: letters, digits, '_', '.', '-'; at most 40 characters (IOS allows more characters, but spaces,
#: quotes and control characters would end the command, and a leading digit reads as a number).
IOS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,39}\Z")
_GROUP = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}\Z")
_HOST = re.compile(r"^[a-z][a-z0-9-]{0,30}\Z")
#: Extended IP access-list numbers (IOS: 100-199, and 2000-2699 as the expanded range).
EXTENDED_ACL_NUMBERS = (range(100, 200), range(2000, 2700))
#: Class-map and policy-map names a profile may not take (compared without case), because on some
#: platform the name already means something: ``class-default``, the implicit class of every
#: policy-map on IOS, IOS-XE and EOS (Cisco IOS QoS configuration guide, "Modular QoS CLI": "the
#: class-default class ... matches all traffic not matched"; Arista EOS User Manual, "Quality of
#: Service": class-default in every policy-map); ``system-cpp-policy``, the control-plane policy of
#: a Catalyst 9300 (Catalyst 9300 Security Configuration Guide, IOS-XE 17, "Configuring Control
#: Plane Policing"), and EOS's ``copp-system-policy`` (EOS User Manual, "Control Plane Policing").
RESERVED_NAMES = ("class-default", "system-cpp-policy", "copp-system-policy")
#: Prefixes of the names platforms' own classes and policies take: ``system-cpp-`` (9300 CoPP
#: classes), ``copp-system-`` (EOS CoPP classes) and ``QOSLAB-``, the renderers' own (the 9300's
#: egress queuing policy QOSLAB-QUEUING and its queue classes QOSLAB-Q1..).
RESERVED_PREFIXES = ("system-cpp-", "copp-system-", "qoslab-")


def _ios_name(v: str, what: str) -> str:
    if not IOS_NAME.match(v):
        raise ValueError(f"{what} {v!r}: 1-40 letters, digits, '_', '.', '-', starting with a letter (IOS name)")
    low = v.lower()
    if low in RESERVED_NAMES or low.startswith(RESERVED_PREFIXES):
        raise ValueError(f"{what} {v!r} is reserved (the switches' own and qoslab's names: class-default, "
                         "system-cpp-*, copp-system-*, QOSLAB-*): rename it")
    return v


def _unique(values: list[Any], what: str) -> None:
    """ValueError naming the first value of ``values`` listed twice."""
    seen: set[Any] = set()
    for x in values:
        if x in seen:
            raise ValueError(f"{what} {x} is listed twice")
        seen.add(x)


def _ints(v: list[int] | None, n: int, lo: int, hi: int, what: str) -> list[int] | None:
    if v is not None and (len(v) != n or any(not lo <= x <= hi for x in v)):
        raise ValueError(f"{what} are {n} numbers, each {lo}-{hi}, got {v}")
    return v


class Group(StrictModel):
    """Hosts of a group: an explicit list, or the first N hosts of the topology."""

    hosts: list[str] | None = Field(None, min_length=1, max_length=64)
    first: int | None = Field(None, ge=1, le=64)

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, v: list[str] | None) -> list[str] | None:
        for h in v or []:
            if not _HOST.match(h):
                raise ValueError(f"{h!r} is not a host name")
        _unique(v or [], "host")
        return v

    @model_validator(mode="after")
    def _one(self) -> Group:
        if (self.hosts is None) == (self.first is None):
            raise ValueError("give either hosts (a list) or first (a number)")
        return self


class Police(StrictModel):
    """``police RATE BURST exceed-action drop`` in the rule's class: bits/s and bytes, in the
    ranges the 3750 command reference gives (8000 - 10^9 bits/s, 8000 - 10^6 bytes)."""

    rate_bps: int = Field(..., ge=8000, le=1_000_000_000)
    burst_bytes: int = Field(..., ge=8000, le=1_000_000)


class Rule(StrictModel):
    """A classification rule, rendered as ACL(s) + class-map + policy-map class setting DSCP.

    ``kind: pairs``: one numbered ACL per ordered pair of hosts of ``group`` (Appendix B: ACL
    1ij = host i -> host j, class ``class1ij``). ``kind: ports``: one named ACL matching TCP/UDP
    ``ports`` and ``port_ranges`` ([LO, HI] inclusive, IOS ``range LO HI``: e.g. Open MPI's TCP
    BTL, ``btl_port_min`` .. ``+btl_port_range - 1``) in both directions (source or destination
    port), class ``name``.
    ``kind: any``: every packet of ``protocol`` from the group's hosts. ``police``: an individual
    policer in the class (exceed-action drop)."""

    name: str
    kind: Literal["pairs", "ports", "any"]
    group: str = "workload"
    protocol: Literal["ip", "tcp", "udp"] = "ip"
    ports: list[int] = Field(default_factory=list, max_length=32)
    port_ranges: list[tuple[int, int]] = Field(default_factory=list, max_length=8)
    set_dscp: int = Field(..., ge=0, le=63)
    acl_base: int = Field(100, ge=100, le=199)
    police: Police | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _ios_name(v, "rule name")

    @field_validator("ports")
    @classmethod
    def _ports(cls, v: list[int]) -> list[int]:
        bad = [p for p in v if not 1 <= p <= 65535]
        if bad:
            raise ValueError(f"ports are 1-65535, got {bad[0]}")
        _unique(v, "port")
        return v

    @field_validator("port_ranges")
    @classmethod
    def _ranges(cls, v: list[tuple[int, int]]) -> list[tuple[int, int]]:
        for lo, hi in v:
            if not 1 <= lo <= hi <= 65535:
                raise ValueError(f"a port range is [LO, HI] with 1 <= LO <= HI <= 65535, got [{lo}, {hi}]")
        return v

    def kind_problem(self) -> tuple[str, str] | None:
        """(field, problem) when the rule's fields do not fit its kind, else None."""
        some = self.ports or self.port_ranges
        if self.kind == "ports" and (not some or self.protocol == "ip"):
            return ("ports" if not some else "protocol", "a `ports` rule needs ports or port_ranges and "
                    "protocol tcp or udp (IOS matches ports of tcp/udp)")
        if self.kind != "ports" and some:
            return ("ports" if self.ports else "port_ranges"), f"a `{self.kind}` rule matches no ports"
        return None


class PriorityIn(StrictModel):
    """``mls qos srr-queue input priority-queue QUEUE bandwidth PERCENT`` (queue 1-2, 0-40 %)."""

    queue: int = Field(2, ge=1, le=2)
    bandwidth: int = Field(10, ge=0, le=40)


class Ingress(StrictModel):
    """``mls qos srr-queue input ...`` (not emulated by tc: see the fidelity table)."""

    bandwidth: list[int] | None = None
    buffers: list[int] | None = None
    priority_queue: PriorityIn | None = None

    @field_validator("bandwidth")
    @classmethod
    def _bw(cls, v: list[int] | None) -> list[int] | None:
        return _ints(v, 2, 1, 100, "ingress SRR weights")

    @field_validator("buffers")
    @classmethod
    def _buf(cls, v: list[int] | None) -> list[int] | None:
        return _ints(v, 2, 0, 100, "ingress buffer percentages")


class Egress(StrictModel):
    """Egress settings for the ports of ``apply_to``: SRR share or shape weights (4 queues),
    expedite queue, queue-set."""

    apply_to: str = "workload"
    share: list[int] | None = None
    shape: list[int] | None = None
    priority_queue_out: bool = False
    queue_set: int | None = Field(None, ge=1, le=2)

    @field_validator("share")
    @classmethod
    def _share(cls, v: list[int] | None) -> list[int] | None:
        return _ints(v, 4, 1, 255, "SRR weights (share)")

    @field_validator("shape")
    @classmethod
    def _shape(cls, v: list[int] | None) -> list[int] | None:
        return _ints(v, 4, 0, 65535, "SRR weights (shape)")


class QueueSet(StrictModel):
    """``mls qos queue-set output N buffers`` (4 percentages, 0-99) and ``threshold QUEUE`` (queue
    1-4: drop threshold 1 and 2 and maximum 1-3200 %, reserved 1-100 %)."""

    buffers: list[int] | None = None
    thresholds: dict[int, list[int]] = Field(default_factory=dict)

    @field_validator("buffers")
    @classmethod
    def _buf(cls, v: list[int] | None) -> list[int] | None:
        return _ints(v, 4, 0, 99, "queue-set buffer percentages")

    @field_validator("thresholds")
    @classmethod
    def _thr(cls, v: dict[int, list[int]]) -> dict[int, list[int]]:
        for q, t in v.items():
            if not 1 <= q <= 4:
                raise SubFieldProblem((q,), f"threshold queue {q}: queues are 1-4")
            try:
                _ints(t, 4, 1, 3200, f"queue {q} thresholds")
            except ValueError as e:
                raise SubFieldProblem((q,), str(e)) from None
            if t[2] > 100:
                raise SubFieldProblem((q,), f"queue {q}: the reserved threshold (third number) is 1-100, got {t[2]}")
        return v


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

    @field_validator("source")
    @classmethod
    def _source(cls, v: str) -> str:
        if _HOST.match(v):
            return v
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
    source: str | None = Field(None, exclude=True, description="file this profile was read from")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}\Z", v):
            raise ValueError(f"profile name {v!r}: 1-40 letters, digits, '.', '_', '-'")
        return v

    @field_validator("policy_map")
    @classmethod
    def _pmap(cls, v: str) -> str:
        return _ios_name(v, "policy-map name")

    @field_validator("groups")
    @classmethod
    def _groups(cls, v: dict[str, Group]) -> dict[str, Group]:
        for g in v:
            if not _GROUP.match(g):
                raise ValueError(f"group name {g!r}: a letter, then letters, digits, '_', '-'")
        return v

    @field_validator("extra_acls")
    @classmethod
    def _extra(cls, v: list[str]) -> list[str]:
        for i, line in enumerate(v):
            m = re.match(r"^access-list (\d{1,4}) (permit|deny) [a-z0-9 ./]+\Z", line, re.ASCII)
            if not m or not any(int(m.group(1)) in r for r in EXTENDED_ACL_NUMBERS):
                raise SubFieldProblem((i,), f"{line!r} is not a numbered extended ACL line (access-list "
                                            "100-199|2000-2699 permit|deny ...)")
        return v

    @field_validator("dscp_output_map")
    @classmethod
    def _dscp_map(cls, v: dict[int, list[int]]) -> dict[int, list[int]]:
        queue_of: dict[int, int] = {}
        for q, d in v.items():
            if not 1 <= q <= 4 or not d or any(not 0 <= x <= 63 for x in d):
                raise SubFieldProblem((q,), f"queue {q}: {d}: queues are 1-4, DSCP values 0-63")
            for x in d:  # a DSCP goes to one queue: IOS keeps the last dscp-map line, so a second one moves it
                if x in queue_of:
                    raise SubFieldProblem((q,), f"DSCP {x} is mapped twice (queues {queue_of[x]} and {q}): a DSCP "
                                                "goes to one queue")
                queue_of[x] = q
        return v

    @field_validator("queue_sets")
    @classmethod
    def _qsets(cls, v: dict[int, QueueSet]) -> dict[int, QueueSet]:
        for k in v:
            if not 1 <= k <= 2:
                raise SubFieldProblem((k,), f"queue-sets are 1 and 2, got {k}")
        return v

    @model_validator(mode="after")
    def _references(self) -> Profile:
        refs: list[tuple[tuple[Any, ...], str]] = [(("policy_on",), self.policy_on)]
        refs += [(("rules", i, "group"), r.group) for i, r in enumerate(self.rules)]
        refs += [(("trust", g), g) for g in self.trust]
        if self.egress:
            refs.append((("egress", "apply_to"), self.egress.apply_to))
        for loc, g in refs:
            if g not in self.groups:
                raise FieldProblem(loc, f"no group {g!r} (groups: {', '.join(self.groups) or 'none'})")
        for i, r in enumerate(self.rules):
            if (problem := r.kind_problem()) is not None:
                raise FieldProblem(("rules", i, problem[0]), problem[1])
        names = [r.name for r in self.rules]
        for i, n in enumerate(names):
            if n in names[:i]:
                raise FieldProblem(("rules", i, "name"), f"rule name {n!r} is used twice (an ACL and class-map each)")
        dests: dict[str, int] = {}
        for i, sp in enumerate(self.span):
            if dests.setdefault(sp.destination, sp.session) != sp.session:
                raise FieldProblem(("span", i, "destination"), f"{sp.destination} is already the destination of "
                                                               f"session {dests[sp.destination]}")
            if sp.source == sp.destination:
                raise FieldProblem(("span", i, "source"), "a SPAN session cannot mirror its destination port")
        return self


PROFILE_DIR = repo_root() / "qos-profiles"


def profile_path(path_or_name: str | Path) -> Path:
    """Where a profile lives: a bare name (``thesis``) -> ``qos-profiles/thesis.yaml``; an
    absolute path as given; any other path relative to the repository, as a playbook's topology
    and flood files are (issue 34: one rule for every reference, whatever the current directory;
    the CLI makes a path the user typed absolute first). Does not check that it exists."""
    p = Path(path_or_name)
    if p.is_absolute():
        return p
    if not p.suffix and len(p.parts) == 1:
        return PROFILE_DIR / f"{path_or_name}.yaml"
    in_repo = repo_root() / p
    return p if p.resolve() == in_repo.resolve() else in_repo  # as written when that is the same file (messages)


def load_profile(path_or_name: str | Path) -> Profile:
    """A profile by path or by name (``thesis`` -> qos-profiles/thesis.yaml). Raises ConfigError
    naming file, line and field (or the profiles that exist, for an unknown name)."""
    p = profile_path(path_or_name)
    if not p.exists():
        known = ", ".join(sorted(f.stem for f in PROFILE_DIR.glob("*.yaml")))
        given = Path(path_or_name)
        if given.is_absolute() or given.suffix or len(given.parts) > 1:  # a path, not a name: say where it looked
            where = "" if given.is_absolute() else \
                " (relative paths are read from the repository: give an absolute one)"
            raise ConfigError(f"no profile file {p if given.is_absolute() else repo_root() / given}{where}")
        raise ConfigError(f"no profile {str(path_or_name)!r} (qos-profiles/: {known})")
    return load_model(p, Profile).model_copy(update={"source": str(p)})


def fail(profile: Profile, loc: tuple[Any, ...], msg: str) -> QoslabError:
    """A render-time problem of a profile field: ``FILE:LINE: FIELD: msg`` when the profile came
    from a file, else ``profile NAME: FIELD: msg``."""
    if profile.source:
        return config_error(profile.source, loc, msg)
    return QoslabError(f"profile {profile.name}: {format_loc(loc)}: {msg}")
