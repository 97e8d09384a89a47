"""The virtual Catalyst 9300's egress queue counters from the kernel readings
(:mod:`qoslab.vswitch.counters`): per emulated queue (the tc plan's bfifos 11:-14:, one per
class of the output policy, :func:`qoslab.ios.mqc.egress_classes`; a port with one FIFO, ``10:``,
has one queue) the bytes and packets sent and queued and the packets dropped. UADP counts queue
drops in bytes; tc counts dropped packets, so :attr:`QueueStat.dropped_bytes` is dropped packets x
the queue's mean sent packet size (1514 B when it sent none): an estimate, named as such in the
fidelity table (frames, ``qos queue-stats-frame-count``, are exact).

:func:`fed_queues` lays them out as ``show platform hardware fed switch active qos queue stats
interface X`` shows them: UADP queues 0-7 of the port, each counted under the WTD threshold (TH0,
TH1, TH2) its DSCPs map to (the emulated queue's threshold 1-3, :func:`qoslab.vswitch.tccompile.
port_queue_limits`; a queue without ``queue-limit`` is at TH2, the queue's full limit)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ....ios import qos_model
from ....portnames import linux_ifname
from ...tccompile import port_queue_limits

#: A full-size frame, the drop-size estimate of a queue that sent nothing.
FRAME_BYTES = 1514


@dataclass
class QueueStat:
    """One emulated egress queue of a port: bytes and packets sent, packets dropped (tc)."""

    sent_bytes: int = 0
    sent_packets: int = 0
    dropped_packets: int = 0
    backlog_bytes: int = 0
    backlog_packets: int = 0

    @property
    def dropped_bytes(self) -> int:
        """Dropped packets x mean sent packet size (see the module doc)."""
        size = self.sent_bytes // self.sent_packets if self.sent_packets else FRAME_BYTES
        return self.dropped_packets * size


def parse_tc_queues(qdiscs: list[dict[str, Any]]) -> list[QueueStat]:
    """Queues 1-4 of a port from ``tc -s -j qdisc show dev X`` (bfifo handles 11:-14:; the one
    FIFO ``10:`` of a port without egress queues counts as queue 1). Pure."""
    out = [QueueStat() for _ in range(4)]
    for q in qdiscs:
        handle = str(q.get("handle", "0:")).split(":")[0]
        if q.get("kind") == "bfifo" and handle in ("10", "11", "12", "13", "14"):
            s = out[max(0, int(handle) - 11)]
            s.sent_bytes += int(q.get("bytes", 0))
            s.sent_packets += int(q.get("packets", 0))
            s.dropped_packets += int(q.get("drops", 0))
            s.backlog_bytes += int(q.get("backlog", 0))
            s.backlog_packets += int(q.get("qlen", 0))
    return out


#: UADP egress queues per port (Catalyst 9300 QoS configuration guide, IOS-XE 17.x: up to 8
#: queues, 3 WTD thresholds each); ``show platform hardware fed ... qos queue stats`` lists them all.
FED_QUEUES = 8


@dataclass(frozen=True)
class FedQueue:
    """One UADP queue as the fed queue stats show it: ``threshold`` 0-2 (the TH column its
    counts are under), frames and bytes enqueued (sent + still queued), frames dropped, bytes
    dropped (estimated, :attr:`QueueStat.dropped_bytes`), buffers in use (frames queued)."""

    threshold: int = 2
    enqueued_frames: int = 0
    enqueued_bytes: int = 0
    dropped_frames: int = 0
    dropped_bytes: int = 0
    buffers: int = 0


def fed_layout(stats: list[QueueStat], thresholds: list[int] | None) -> list[FedQueue]:
    """UADP queues 0-7 of a port from its emulated queues 1-4 (pure): queue Q -> UADP queue Q-1,
    counted under TH(threshold - 1) (``thresholds``: the WTD threshold 1-3 each emulated queue
    is at; None: a port with one FIFO, its counts in queue 0 at TH2); queues it has not: zeros."""
    n = len(thresholds) if thresholds else 1
    out = []
    for i in range(FED_QUEUES):
        if i >= n:
            out.append(FedQueue())
            continue
        s = stats[i]
        out.append(FedQueue((thresholds[i] - 1) if thresholds else 2, s.sent_packets + s.backlog_packets,
                            s.sent_bytes + s.backlog_bytes, s.dropped_packets, s.dropped_bytes, s.backlog_packets))
    return out


def queue_stats(sw: Any, ports: list[str]) -> dict[str, list[QueueStat]]:
    """Egress queues 1-4 of ``ports`` (short names) from one ``tc`` reading of the switch
    (``sw.qdiscs()``); zeros for a switch without kernel readings. Raises QoslabError when tc
    fails."""
    qdiscs = sw.qdiscs() if hasattr(sw, "qdiscs") else {}
    return {p: parse_tc_queues(qdiscs.get(linux_ifname(p), [])) for p in ports}


def fed_queues(sw: Any, port: str) -> list[FedQueue]:
    """The UADP queues 0-7 of switch ``port`` (short name) from one ``tc`` reading
    (:func:`fed_layout`); the thresholds from the running-config's QoS model. Raises QoslabError
    when tc fails."""
    qos = qos_model(sw.running)
    thresholds = [x.threshold for x in port_queue_limits(qos, sw.topo, port)] if qos.enabled else None
    return fed_layout(queue_stats(sw, [port])[port], thresholds)
