"""A qoslab profile's egress queuing in EOS terms (pure): traffic classes, tx-queue scheduling,
drop thresholds, and the ``qos map`` lines that put every DSCP where the profile wants it.

Profiles are written in the Catalyst 3750's terms (:mod:`qoslab.platforms.neutral`); on an Arista
7280R3 (EOS User Manual, QoS chapter: a packet's traffic class picks its transmit queue, "TC N
to tx-queue N" by default; tx-queues are ``priority strict`` by default, ``no priority`` makes one
round robin, sharing by ``bandwidth percent``) they carry over as:

- egress queue q -> one traffic class and the tx-queue of the same number: :data:`TC_OF_QUEUE`,
  chosen so that EOS's default maps already agree where they can (DSCP 40-47 are TC 5, DSCP 0-7
  and CoS 0 TC 1); the DSCPs whose traffic class differs from EOS's default map get ``qos map dscp
  ... to traffic-class N``; if DSCP 0's queue is not TC 1, ``qos map cos 0`` follows it (an
  untrusted or CoS-trusting port classifies untagged frames by CoS 0);
- the expedite queue (``priority_queue_out``) -> its tx-queue stays strict priority (the default:
  nothing rendered), every other queue -> ``no priority`` and ``bandwidth percent`` = the SRR
  share weights scaled to 100 (:func:`~qoslab.platforms.neutral.remaining_percent`);
- SRR shape weight w -> ``shape rate P percent``, P = 100/w rounded (refused below 1 %);
- queue-set buffers and WTD thresholds -> the tail-drop limit each DSCP would meet in the
  emulated 3750 queue (port buffer ``buffers.switch_port_bytes`` x buffer % x threshold %, as
  :func:`qoslab.vswitch.tccompile.wtd_limits`), as ``random-detect drop minimum-threshold L
  bytes maximum-threshold L bytes drop-probability 100`` (a WRED curve that is a step: tail drop
  at L); several thresholds in one queue -> drop precedences 0-2 (``qos map dscp ... drop-precedence
  D``), the highest limit at 0; a limit of the whole port buffer or more needs no line.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...eos.config import DEFAULT_COS_TC, DEFAULT_DSCP_TC
from ...profiles.model import Profile, fail
from ...topology import Topology
from ..neutral import NeutralQueue, dscp_queues, egress_queues, queue_set_of, remaining_percent

#: Neutral egress queue (1-4) -> EOS traffic class = tx-queue (see the module doc).
TC_OF_QUEUE = {1: 5, 2: 1, 3: 2, 4: 4}
#: The smallest tail-drop limit (two full frames, as the emulated 3750's; tccompile.MIN_LIMIT_BYTES).
MIN_LIMIT_BYTES = 3028


@dataclass(frozen=True)
class TxQueue:
    """One used tx-queue: its traffic class ``tc`` (= tx-queue number), the neutral queue it
    carries, strict priority or round robin with ``percent``, ``shape_percent`` (None: unshaped)
    and tail-drop limits (drop precedence, bytes) with the DSCPs at each."""

    tc: int
    queue: int
    strict: bool
    percent: int | None
    shape_percent: int | None
    limits: tuple[tuple[int, int], ...]

    def lines(self) -> list[str]:
        """The tx-queue block's lines in EOS's order (empty: a default strict-priority queue)."""
        out = [] if self.strict else ["no priority", f"bandwidth percent {self.percent}"]
        if self.shape_percent is not None:
            out.append(f"shape rate {self.shape_percent} percent")
        for dp, limit in self.limits:
            prefix = f"random-detect drop drop-precedence {dp} " if dp else "random-detect drop "
            out.append(f"{prefix}minimum-threshold {limit} bytes maximum-threshold {limit} bytes drop-probability 100")
        return out


def _limit(profile: Profile, topology: Topology, queue: int, threshold: int) -> int:
    """The emulated 3750 queue's tail-drop bytes for WTD ``threshold`` of ``queue``."""
    qs = queue_set_of(profile)
    i = queue - 1
    pct = min({1: qs.threshold1[i], 2: qs.threshold2[i], 3: qs.maximum[i]}[threshold], qs.maximum[i])
    return max(MIN_LIMIT_BYTES, topology.buffers.switch_port_bytes * qs.buffers[i] * pct // 10000)


def drop_precedences(profile: Profile, topology: Topology) -> dict[int, tuple[int, int | None]]:
    """DSCP -> (drop precedence 0-2, tail-drop bytes or None for the whole port buffer): per
    queue, the distinct limits of its DSCPs' thresholds, highest first, are drop precedences 0,
    1, 2. Pure."""
    queue, thr = dscp_queues(profile)
    out: dict[int, tuple[int, int | None]] = {}
    port = topology.buffers.switch_port_bytes
    for q in range(1, 5):
        dscps = [d for d in range(64) if queue[d] == q]
        limit = {d: _limit(profile, topology, q, thr[d]) for d in dscps}
        ranked = sorted({min(v, port) for v in limit.values()}, reverse=True)
        for d in dscps:
            lim = min(limit[d], port)
            out[d] = (ranked.index(lim), None if lim >= port else lim)
    return out


def _shape_percent(profile: Profile, q: NeutralQueue) -> int | None:
    shape = profile.egress.shape if profile.egress else None
    w = shape[q.number - 1] if shape else 0
    if not w or q.expedite:
        return None
    if 100 / w < 1:
        raise fail(profile, ("egress", "shape"), f"arista_eos: shape weight {w} (1/{w} of the link) is below "
                                                 "`shape rate 1 percent`, the least EOS shapes a tx-queue to")
    return round(100 / w)


def tx_queues(profile: Profile, topology: Topology) -> list[TxQueue]:
    """The tx-queues of the profile's egress ports, by traffic class (empty without ``mls_qos``
    or ``egress``). Raises QoslabError (file, line, field) for what EOS cannot express."""
    queues = egress_queues(profile) if profile.mls_qos else []
    pct = remaining_percent(queues)
    dps = drop_precedences(profile, topology)
    out = []
    for q in queues:
        limits = sorted({dps[d] for d in q.dscps if dps[d][1] is not None})
        out.append(TxQueue(TC_OF_QUEUE[q.number], q.number, q.expedite, pct.get(q.number),
                           _shape_percent(profile, q), tuple((dp, lim) for dp, lim in limits if lim is not None)))
    return sorted(out, key=lambda t: t.tc)


def map_lines(profile: Profile, topology: Topology) -> list[str]:
    """The ``qos map`` lines (as ``show running-config`` prints them: CoS first, then DSCP, one
    line per traffic class and drop precedence, DSCPs ascending) that differ from EOS's defaults."""
    if not profile.mls_qos or profile.egress is None:
        return []
    queue, _ = dscp_queues(profile)
    dps = drop_precedences(profile, topology)
    groups: dict[tuple[int, int], list[int]] = {}
    for d in range(64):
        tc, dp = TC_OF_QUEUE[queue[d]], dps[d][0]
        if tc != DEFAULT_DSCP_TC[d] or dp:
            groups.setdefault((tc, dp), []).append(d)
    out = []
    if TC_OF_QUEUE[queue[0]] != DEFAULT_COS_TC[0]:
        out.append(f"qos map cos 0 to traffic-class {TC_OF_QUEUE[queue[0]]}")
    for (tc, dp), ds in sorted(groups.items()):
        out.append(f"qos map dscp {' '.join(map(str, ds))} to traffic-class {tc}" + (f" drop-precedence {dp}" if dp
                                                                                   else ""))
    return out


def traffic_class_of(profile: Profile, dscp: int) -> int:
    """The traffic class a packet marked ``dscp`` by a policy lands in (``set traffic-class``)."""
    queue, _ = dscp_queues(profile)
    return TC_OF_QUEUE[queue[dscp]]
