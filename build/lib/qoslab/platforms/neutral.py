"""A profile's egress queuing in platform-neutral terms (pure): the queues, which DSCPs each
takes, the expedite queue, the shares, the buffers and the drop thresholds.

Profiles are written in the 3750's terms (qos-profiles/README.md); this is how they carry over:

- the DSCP-to-output-queue map (the 3750 default and ``dscp_output_map``) -> the DSCPs of each
  queue -> on a 9300 a class-map ``match dscp`` per queue; the queue of DSCP 0 is ``class-default``;
- ``egress.priority_queue_out`` (queue 1 expedited) -> the expedite queue -> ``priority level 1``;
- ``egress.share`` (SRR shared weights) -> the other queues' weights -> ``bandwidth remaining
  percent`` (weights scaled to 100);
- queue-set ``buffers`` -> buffer % per queue -> ``queue-buffers ratio``;
- queue-set thresholds (% of the queue's buffer, up to its maximum) and each DSCP's threshold 1-3
  -> the drop % of the queue's limit per DSCP, ``100 x threshold / maximum`` (at most 100) ->
  ``queue-limit dscp V percent P`` where P < 100;
- ``egress.shape`` -> no neutral term: refused for the 9300 (no shaped SRR queues);
- ``ingress`` (ingress queues) -> no neutral term: not rendered for the 9300 (no ingress queues on
  its front-panel ports); ``trust: dscp`` is the 9300's default (nothing rendered), other trust
  states are refused.

Sources: Catalyst 3750 QoS configuration guide 12.2(25)SE ("Configuring Egress Queue
Characteristics": default DSCP map, queue-sets, WTD thresholds); Catalyst 9300 QoS configuration
guide, IOS-XE 17.x ("Queuing and Scheduling": priority level, bandwidth remaining, queue-buffers
ratio, WTD with queue-limit).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ios.qos import DEFAULT_DSCP_OUTPUT_QUEUE
from ..ios.show_qos import QueueSet
from ..profiles.model import Profile


@dataclass(frozen=True)
class NeutralQueue:
    """One egress queue: its number in the profile (1-4), DSCPs, expedite, weight, buffer %,
    and drop % (of the queue's limit) per DSCP below 100."""

    number: int
    dscps: tuple[int, ...]
    expedite: bool
    weight: int
    buffer_percent: int
    drop_percent: tuple[tuple[int, int], ...]

    @property
    def default(self) -> bool:
        """The queue of DSCP 0 (unclassified traffic): MQC's ``class-default``."""
        return 0 in self.dscps


def dscp_queues(profile: Profile) -> tuple[dict[int, int], dict[int, int]]:
    """(DSCP -> queue 1-4, DSCP -> WTD threshold 1-3) as the 3750 template renders the profile:
    the 3750 default map, with ``dscp_output_map`` DSCPs at threshold 3."""
    queue = dict(DEFAULT_DSCP_OUTPUT_QUEUE)
    thr = dict.fromkeys(range(64), 1)
    for q, dscps in profile.dscp_output_map.items():
        for d in dscps:
            queue[d], thr[d] = q, 3
    return queue, thr


def drop_percent(qs: QueueSet, queue: int, threshold: int) -> int:
    """The 3750 WTD threshold as a % of the queue's maximum (1-100)."""
    i = queue - 1
    top = qs.maximum[i]
    t = {1: qs.threshold1[i], 2: qs.threshold2[i], 3: top}[threshold]
    return max(1, min(100, round(100 * min(t, top) / top)))


def queue_set_of(profile: Profile) -> QueueSet:
    """The queue-set the profile's egress ports use (``egress.queue_set``, default 1): the 3750
    defaults with the profile's buffers and thresholds over them. Pure."""
    src = profile.queue_sets.get(profile.egress.queue_set or 1) if profile.egress else None
    qs = QueueSet()
    if src is not None:
        if src.buffers:
            qs.buffers = list(src.buffers)
        for q, (t1, t2, reserved, maximum) in src.thresholds.items():
            qs.threshold1[q - 1], qs.threshold2[q - 1] = t1, t2
            qs.reserved[q - 1], qs.maximum[q - 1] = reserved, maximum
    return qs


def egress_queues(profile: Profile) -> list[NeutralQueue]:
    """The egress queues of a profile with ``egress`` settings (queues without DSCPs left out),
    in queue order. Pure; empty without ``egress``."""
    e = profile.egress
    if e is None:
        return []
    qs = queue_set_of(profile)
    share = e.share or [25, 25, 25, 25]
    queue, thr = dscp_queues(profile)
    out = []
    for q in range(1, 5):
        dscps = tuple(d for d in range(64) if queue[d] == q)
        if not dscps:
            continue
        drops = tuple((d, p) for d in dscps if (p := drop_percent(qs, q, thr[d])) < 100)
        out.append(NeutralQueue(q, dscps, e.priority_queue_out and q == 1, share[q - 1], qs.buffers[q - 1], drops))
    return out


def remaining_percent(queues: list[NeutralQueue]) -> dict[int, int]:
    """Queue -> ``bandwidth remaining percent`` of the queues that are not expedited: the
    weights scaled to 100 (each at least 1, rounded down so they never sum above 100)."""
    rest = [q for q in queues if not q.expedite]
    total = sum(q.weight for q in rest) or 1
    return {q.number: max(1, 100 * q.weight // total) for q in rest}
