"""What the fidelity monitor measured over one trial's window (:class:`Measurements`: per-port
sampling intervals, the flood's flows, CPU figures) and the pure computations on ports and flows
the verdict uses (:mod:`.fidelityjudge`): which samples prove a port busy, which ports a flood
fills, what each flood flow could get from its port (max-min fair shares) and how much of it
arrived. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PortInterval:
    """One sampling interval of one switch port: seconds, bytes sent by its root qdisc, queued
    bytes at the interval's start and end, packets dropped in it."""

    dt: float
    sent_bytes: int
    backlog_start: int
    backlog_end: int
    drops: int = 0

    @property
    def backlogged(self) -> bool:
        """The queue held packets at both ends of the interval (the port sent all along if its
        arrivals kept it full: a flood at >= the link rate)."""
        return self.backlog_start > 0 and self.backlog_end > 0

    def covered(self, link_rate_bps: float) -> bool:
        """The bytes queued at the interval's start alone keep a ``link_rate_bps`` link busy for
        the whole interval (``backlog_start`` x 8 >= rate x ``dt``): a work-conserving port sent
        all along, whatever arrived."""
        return self.backlog_start * 8 >= link_rate_bps * self.dt


@dataclass(frozen=True)
class FlowRates:
    """One flood flow: configured and received wire rates (bits/s), configured and sent packets/s."""

    src: str
    dst: str
    configured_wire_bps: float
    received_wire_bps: float
    configured_pps: float
    sent_pps: float
    port: str | None = None  # the destination's switch port (a key of Measurements.ports), if known
    #: the sent rate is trusted to a percent: a user-space paced sender (whose own rate is what can
    #: go wrong) or a kernel-paced one counted by its class queue over netlink; a kernel-paced flow
    #: whose rate came from D-ITG's log (50-packet batches) or a remote read is not judged by
    #: offered_load: the kernel set its rate, only the measurement would be off
    sent_exact: bool = True


@dataclass
class Measurements:
    """What the sampler measured over one trial's workload window (None = not measured)."""

    link_rate_bps: float
    idle_shares: list[float] = field(default_factory=list)
    ports: dict[str, list[PortInterval]] = field(default_factory=dict)
    flows: list[FlowRates] = field(default_factory=list)
    outside_cores: float | None = None
    emulation_cores: float | None = None
    cores: int = 1
    worker_wait_s: float | None = None
    worker_run_s: float | None = None
    psi_some_share: float | None = None
    window_s: float | None = None
    host_cpu_loss: float | None = None  # meters.cpuloss, with a topology cpu: block (replaces emulation_share)
    steal_share: float | None = None  # /proc/stat steal over the window / all cores' time (the hypervisor's)


def parse_cpu_steal(text: str) -> int:
    """Steal ticks (the 8th field: time the hypervisor ran something else) of the aggregate ``cpu``
    line of /proc/stat, 0 where the kernel does not count it. Pure."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            return int(parts[8]) if len(parts) > 8 else 0
    return 0


def port_utilisation(intervals: Sequence[PortInterval], link_rate_bps: float, flooded: bool = False) -> list[float]:
    """Departure rate / link rate of every interval in which the port must have sent all along:
    on a ``flooded`` port (a flood at >= the link rate keeps it full) every
    :attr:`PortInterval.backlogged` one, elsewhere every :meth:`PortInterval.covered` one (see
    the module doc: bursty traffic leaves a queue at both ends of a sample that idled in
    between). Pure."""
    return [iv.sent_bytes * 8 / iv.dt / link_rate_bps for iv in intervals
            if iv.dt > 0 and (iv.backlogged if flooded else iv.covered(link_rate_bps))]


#: A port is flooded when the flood flows into it ask at least this share of the link: 1.0 less
#: the rounding of a rate to whole packets/s (a kernel-paced flood is configured at the link rate).
FLOODED_SHARE = 0.999


def flooded_ports(m: Measurements) -> set[str]:
    """The ports of ``m.ports`` whose flood flows (``FlowRates.port``) ask >= FLOODED_SHARE of
    the link rate in all (configured wire bits/s). Pure."""
    asked: dict[str, float] = {}
    for f in m.flows:
        if f.port is not None:
            asked[f.port] = asked.get(f.port, 0.0) + f.configured_wire_bps
    return {p for p, bps in asked.items() if bps >= FLOODED_SHARE * m.link_rate_bps}


def max_min_shares(room: float, demands: list[float]) -> list[float]:
    """Max-min fair shares of ``room`` (bits/s) among flows asking ``demands`` (bits/s), in the
    given order: every flow gets min(its demand, an equal share of what the smaller ones left)
    (water-filling). 4 flows asking 3 Mbit/s of 10 Mbit/s get 2.5 each; 1 and 9 of 6 get 1 and 5. Pure."""
    out = [0.0] * len(demands)
    left, rest = max(room, 0.0), sorted(range(len(demands)), key=lambda i: demands[i])
    while rest:
        fair = left / len(rest)
        i = rest.pop(0)
        out[i] = min(max(demands[i], 0.0), fair)
        left -= out[i]
    return out


def flood_capacity(m: Measurements) -> list[float]:
    """Per flow of ``m.flows`` the rate it could get (bits/s): its max-min fair share
    (:func:`max_min_shares`) of its destination port's room among the flood flows into that port,
    each asking its configured wire rate. Room = link rate less the other traffic the port sent
    (its departures over all sampled intervals less the received rates of every flood flow
    through it, never below 0); without the port's samples, or without a known port, the link
    rate (a flow without a port is judged alone). An incast of 4 x 3 Mbit/s into a 10 Mbit/s
    port: 2.5 Mbit/s each. Pure."""
    flood_at: dict[str, float] = {}
    for f in m.flows:
        if f.port is not None:
            flood_at[f.port] = flood_at.get(f.port, 0.0) + f.received_wire_bps
    out = [0.0] * len(m.flows)
    groups: dict[str | None, list[int]] = {}
    for k, f in enumerate(m.flows):
        groups.setdefault(f.port, []).append(k)
    for port, idxs in groups.items():
        room = m.link_rate_bps
        ivs = m.ports.get(port, []) if port is not None else []
        dt = sum(iv.dt for iv in ivs)
        if port is not None and dt > 0:
            departures = sum(iv.sent_bytes for iv in ivs) * 8 / dt
            room = max(m.link_rate_bps - max(departures - flood_at[port], 0.0), 0.0)
        members = [idxs] if port is not None else [[k] for k in idxs]
        for group in members:
            for k, share in zip(group, max_min_shares(room, [m.flows[k].configured_wire_bps for k in group]),
                                strict=True):
                out[k] = share
    return out


def flood_ratios(m: Measurements) -> list[float]:
    """The flood_ratio check's values: received / what could arrive (pure). Flows into one port
    that together ask more than its room (an oversubscribed incast: the sum of their
    :func:`flood_capacity` shares is then the room) are judged together, their total received
    rate against the room: a full FIFO port divides itself among them by arrival timing, not
    fairly (issue 45: 4 x 3 Mbit/s into a 10 Mbit/s port that ran at 1.00 of the link arrived at
    2.90 / 2.94 / 1.88 / 2.26 Mbit/s, 0.75 of the fair share for the third, yet the port lost
    nothing it could have sent). Every other flow alone, against its share."""
    cap = flood_capacity(m)
    ports: dict[str, list[int]] = {}
    for k, f in enumerate(m.flows):
        if f.port is not None:
            ports.setdefault(f.port, []).append(k)
    out: list[float] = []
    together: set[int] = set()
    for idxs in ports.values():
        room = sum(cap[k] for k in idxs)
        if len(idxs) > 1 and sum(m.flows[k].configured_wire_bps for k in idxs) > room * (1 + 1e-9):
            together.update(idxs)
            if room > 0:
                out.append(sum(m.flows[k].received_wire_bps for k in idxs) / room)
    return out + [f.received_wire_bps / d for k, (f, d) in enumerate(zip(m.flows, cap, strict=True))
                  if k not in together and d > 0]
