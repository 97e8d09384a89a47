"""The virtual Catalyst 9300's egress queue counters from the kernel readings
(:mod:`qoslab.vcatalyst.counters`): per emulated queue (the tc plan's bfifos 11:-14:, one per
class of the output policy, :func:`qoslab.ios.mqc.egress_classes`) the bytes and packets sent and
the packets dropped. UADP counts queue drops in bytes; tc counts dropped packets, so
:attr:`QueueStat.dropped_bytes` is dropped packets x the queue's mean sent packet size (1514 B
when it sent none): an estimate, named as such in the fidelity table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ....topology import linux_ifname

#: A full-size frame, the drop-size estimate of a queue that sent nothing.
FRAME_BYTES = 1514


@dataclass
class QueueStat:
    """One emulated egress queue of a port: bytes and packets sent, packets dropped (tc)."""

    sent_bytes: int = 0
    sent_packets: int = 0
    dropped_packets: int = 0

    @property
    def dropped_bytes(self) -> int:
        """Dropped packets x mean sent packet size (see the module doc)."""
        size = self.sent_bytes // self.sent_packets if self.sent_packets else FRAME_BYTES
        return self.dropped_packets * size


def parse_tc_queues(qdiscs: list[dict[str, Any]]) -> list[QueueStat]:
    """Queues 1-4 of a port from ``tc -s -j qdisc show dev X`` (bfifo handles 11:-14:). Pure."""
    out = [QueueStat() for _ in range(4)]
    for q in qdiscs:
        handle = str(q.get("handle", "0:")).split(":")[0]
        if q.get("kind") == "bfifo" and handle in ("11", "12", "13", "14"):
            s = out[int(handle) - 11]
            s.sent_bytes += int(q.get("bytes", 0))
            s.sent_packets += int(q.get("packets", 0))
            s.dropped_packets += int(q.get("drops", 0))
    return out


def queue_stats(sw: Any, ports: list[str]) -> dict[str, list[QueueStat]]:
    """Egress queues 1-4 of ``ports`` (short names) from one ``tc`` reading of the switch
    (``sw.qdiscs()``); zeros for a switch without kernel readings. Raises QoslabError when tc
    fails."""
    qdiscs = sw.qdiscs() if hasattr(sw, "qdiscs") else {}
    return {p: parse_tc_queues(qdiscs.get(linux_ifname(p), [])) for p in ports}
