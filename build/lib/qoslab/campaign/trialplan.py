"""One trial resolved, purely, into what it will do: :class:`TrialPlan` (issue 31).

:func:`plan_trial` turns (playbook, condition, topology, the campaign's floods and profiles) into
everything a trial of that condition needs to know before it starts anything: the workload's
settings and backend, the flood's resolved flows, the hosts and switch ports involved, the ports
the flood saturates, the QoS profile's IOS lines and their fingerprint, the capture's host and
port, and the lifetime of every process it starts. :func:`qoslab.campaign.trial.run_trial` then
only executes a plan, and ``qoslab campaign plan`` prints from the same plans, so what is printed
is what runs.

Pure: no file, process, socket or clock. The campaign resolves its flood and profile references
to definitions once (the campaign folder's snapshot) and passes them in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import QoslabError
from ..platforms.base import get_platform, platform_for_model
from ..portnames import linux_ifname
from ..profiles.model import Profile
from ..topology import Topology
from ..trafficgen.definitions import FloodDefinition, ResolvedFlow
from ..trafficgen.patterns import resolve
from ..trials.playbook import Condition, Playbook

#: Seconds a trial's processes may outlive its timeout before their own lifetime ends them (the
#: runner ends an overrunning trial at ``trial_timeout_s``; the margin covers stopping and decoding).
LIFETIME_MARGIN_S = 60.0
#: Share of what the flood delivers to its least loaded destination port that every flooded port
#: must send before the workload starts (see :func:`settle_share`).
SETTLE_SHARE = 0.95


@dataclass(frozen=True)
class TrialPlan:
    """What every trial of one condition does (the trial folder and whether it captures are the
    runner's, per trial).

    - ``condition``, ``congestion``: the condition's name and whether it floods;
    - ``workload``: the condition's workload settings (a :class:`qoslab.workloads.base.WorkloadBase`
      subclass, overrides applied), ``workload_kind`` the backend's registered name;
    - ``flood``: the flood definition (None: no congestion) and ``flows`` its flows resolved on the
      topology (addresses, packets/s, ports; the safety interlock's checks passed);
    - ``hosts``: workload hosts then flood hosts, each once; ``ports``: their switch ports (short
      names, topology order): the ports the switch meter reads;
    - ``flooded_ports`` / ``flood_sources``: the flood's destination ports and source hosts
      (settle and drain watch these); ``settle_share``: share of the link rate each flooded port
      must reach (0..1);
    - ``profile``: the QoS profile, ``profile_lines`` its IOS lines for the workload hosts,
      ``config_hash`` their fingerprint (16 hex digits of SHA-256);
    - ``capture_host`` / ``capture_ip``: the host a capture's directions are relative to and its
      address; ``capture_ifname``: the SPAN destination's Linux interface name;
    - ``lifetime_s``: the bounded lifetime (seconds) of every process the trial starts.
    """

    condition: str
    congestion: bool
    workload: Any
    workload_kind: str
    flood: FloodDefinition | None
    flows: tuple[ResolvedFlow, ...]
    hosts: tuple[str, ...]
    ports: tuple[str, ...]
    flooded_ports: tuple[str, ...]
    flood_sources: tuple[str, ...]
    settle_share: float
    profile: Profile
    profile_lines: tuple[str, ...]
    config_hash: str
    capture_host: str
    capture_ip: str
    capture_ifname: str
    lifetime_s: float

    def describe(self) -> list[tuple[str, str]]:
        """The plan as (what, description) lines for ``qoslab campaign plan``."""
        flood = ("none" if self.flood is None else
                 f"{self.flood.name}: {len(self.flows)} flow(s) into {', '.join(self.flooded_ports)} "
                 f"(settled at {self.settle_share:.0%} of the link)")
        return [("workload", f"{self.workload_kind} on {', '.join(self.workload.hosts)}"),
                ("flood", flood),
                ("switch ports", ", ".join(self.ports)),
                ("profile", f"{self.profile.name}: {len(self.profile_lines)} IOS lines, config {self.config_hash}"),
                ("capture", f"{self.capture_ifname} (directions relative to {self.capture_host} "
                            f"{self.capture_ip})"),
                ("lifetime", f"{self.lifetime_s:g} s per process")]


def config_hash(lines: list[str] | tuple[str, ...]) -> str:
    """A short fingerprint of a rendered switch config (16 hex digits of its SHA-256)."""
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def trial_lifetime(pb: Playbook) -> float:
    """The bounded lifetime (seconds) of every process a trial starts: ``trial_timeout_s`` plus
    LIFETIME_MARGIN_S."""
    return pb.trial_timeout_s + LIFETIME_MARGIN_S


def ports_of(topo: Topology, hosts: list[str] | tuple[str, ...]) -> list[str]:
    """Switch ports (short names) of ``hosts`` in topology order, without repeats."""
    wanted = set(hosts)
    return [h.port for h in topo.hosts if h.name in wanted]


def settle_share(topo: Topology, flows: list[ResolvedFlow] | tuple[ResolvedFlow, ...],
                 share: float = SETTLE_SHARE) -> float:
    """The share (0..1) of the link rate every flooded port must send before the workload starts:
    ``share`` of what the flood delivers to its least loaded destination port (the mean rate of
    its flows there, capped at the link rate), so a flood below the link rate (an incast at 0.9x,
    on-off bursts) settles as soon as it is established, as one above it does."""
    into: dict[str, float] = {}
    for f in flows:
        port = topo.host(f.dst).port
        into[port] = into.get(port, 0.0) + f.mean_pps * f.frame_bytes * 8
    return share * min(1.0, min(into.values(), default=topo.link.rate) / topo.link.rate)


def capture_host_of(pb: Playbook, cond: Condition, topo: Topology, profile: Profile) -> str:
    """The host a capture's directions are relative to: ``capture_host``, else the source of the
    profile's SPAN session to the capture port, else the workload's head node."""
    if pb.capture_host:
        return pb.capture_host
    for s in profile.span:
        if s.destination == pb.capture_port and s.source in topo.host_names:
            return str(s.source)
    return str(pb.workload_of(cond).hosts[0])


def plan_trial(pb: Playbook, cond: Condition, topo: Topology, floods: Mapping[str, FloodDefinition],
               profiles: Mapping[str, Profile]) -> TrialPlan:
    """The :class:`TrialPlan` of ``cond``. ``floods``: flood reference (as the playbook names it)
    -> definition; ``profiles``: profile reference -> profile (both the campaign's snapshot).
    Raises QoslabError for a reference missing from them, and what :func:`resolve` and
    :func:`render` raise (UnsafeTarget, ConfigError) for a flood or profile that does not fit
    the topology."""
    wl = pb.workload_of(cond)
    ref = pb.flood_of(cond)
    if ref is not None and ref not in floods:
        raise QoslabError(f"condition {cond.name!r}: flood {ref} is not among the campaign's floods")
    if cond.profile not in profiles:
        raise QoslabError(f"condition {cond.name!r}: profile {cond.profile} is not among the campaign's profiles")
    defn = floods[ref] if ref is not None else None
    flows = tuple(resolve(defn, topo, require_confirmation=False)) if defn is not None else ()
    hosts = tuple(dict.fromkeys([*wl.hosts, *(h for f in flows for h in (f.src, f.dst))]))
    profile = profiles[cond.profile]
    plat = get_platform(platform_for_model(topo.switch.model))
    lines = tuple(plat.render(profile, topo, {"workload": list(wl.hosts)}))
    cap_host = capture_host_of(pb, cond, topo, profile)
    return TrialPlan(
        condition=cond.name, congestion=cond.congestion, workload=wl, workload_kind=str(wl.kind), flood=defn,
        flows=flows, hosts=hosts, ports=tuple(ports_of(topo, hosts)),
        flooded_ports=tuple(sorted({topo.host(f.dst).port for f in flows})),
        flood_sources=tuple(sorted({f.src for f in flows})), settle_share=settle_share(topo, flows),
        profile=profile, profile_lines=lines, config_hash=config_hash(lines), capture_host=cap_host,
        capture_ip=str(topo.host(cap_host).ip), capture_ifname=linux_ifname(pb.capture_port),
        lifetime_s=trial_lifetime(pb))
