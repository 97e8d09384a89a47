"""``show platform hardware fed switch active qos queue stats interface PORT`` of a Catalyst 9300
(UADP, IOS-XE 16.x/17.x) parsed into neutral queue counters (pure).

The output (genieparser's IOS-XE recordings ``ShowPlatformHardwareFedActiveQosQueueStats``, Cisco's
"Troubleshoot Output Drops on Catalyst 9000 Switches"; tests/data/show-recordings/README.md): an
``AQM Global counters`` head, then the ``Hardware Enqueue Counters`` table (per queue 0-7: buffers,
``Enqueue-TH0..2``, on some releases ``Qpolicer``) and the ``Hardware Drop Counters`` table
(``Drop-TH0..2``, ``SBufDrop``, ``QebDrop``, on some ``QpolicerDrop``), each under a units line:
``(Bytes)``, or ``(Frames)`` with ``qos queue-stats-frame-count``. It names no interface: the
caller knows the port from the command. This is how a 9300 reports per-queue enqueues and drops
without any output policy (``show policy-map interface`` shows queues only under one).
"""

from __future__ import annotations

import re

from ..errors import QoslabError
from .base import QueueCounters

_ENQ_HEAD = re.compile(r"Hardware Enqueue Counters\s*$")
_DROP_HEAD = re.compile(r"Hardware Drop Counters\s*$")
_UNITS = re.compile(r"^\s*(?:\(Count\))?\s*\((Bytes|Frames)\)")
_ROW = re.compile(r"^\s*(\d)\s+(\d+(?:\s+\d+)+)\s*$")
#: Lines that carry nothing the counters need (rules, headings, the AQM head).
_SKIP = re.compile(r"^\s*(-+|=+|-- .*|Q\s+(Buffers|Drop-TH0).*|AQM Global counters|Global(Hard|Soft)Limit:.*|"
                   r"High Watermark.*|Asic:.*|\S*#.*)?\s*$")


def parse_fed_queue_stats(text: str, port: str) -> QueueCounters:
    """The queues 0-7 of ``port`` (long name, from the command) x thresholds TH0-TH2: enqueued and
    dropped bytes, or frames (``enqueued_packets``/``dropped_packets``) when the tables say
    ``(Frames)``. Raises QoslabError naming the line of anything it cannot read, or when a table
    is missing."""
    enq: dict[int, list[int]] = {}
    drop: dict[int, list[int]] = {}
    table: dict[int, list[int]] | None = None
    units = ""
    for n, line in enumerate(text.splitlines(), 1):
        if _ENQ_HEAD.search(line) or _DROP_HEAD.search(line):
            table = enq if _ENQ_HEAD.search(line) else drop
            continue
        if m := _UNITS.match(line):
            if units and m.group(1) != units:
                raise QoslabError(f"fed queue stats: line {n}: {m.group(1)} after {units} in one output")
            units = m.group(1)
            continue
        if m := _ROW.match(line):
            if table is None:
                raise QoslabError(f"fed queue stats: line {n}: {line.strip()!r} before any counters table")
            values = [int(x) for x in m.group(2).split()]
            table[int(m.group(1))] = values[1:4] if table is enq else values[0:3]
            continue
        if not _SKIP.match(line):
            raise QoslabError(f"fed queue stats: line {n}: cannot read {line.strip()!r}")
    if not enq or not drop:
        raise QoslabError(f"fed queue stats of {port}: no {'enqueue' if not enq else 'drop'} counters table")
    queues = sorted(set(enq) | set(drop))
    e = [enq.get(q, [0, 0, 0]) for q in queues]
    d = [drop.get(q, [0, 0, 0]) for q in queues]
    names = [str(q) for q in queues]
    if units == "Frames":
        return QueueCounters(names, enqueued_packets=e, dropped_packets=d)
    return QueueCounters(names, enqueued_bytes=e, dropped_bytes=d)
