"""EOS queue counters -> neutral :class:`~qoslab.platforms.base.QueueCounters` (pure): eight
queues, one per traffic class (``TC0`` .. ``TC7``; on a 7280R3 traffic class N is tx-queue N),
one threshold, enqueued and dropped packets and bytes.

Read from (Arista's field names and layouts, with the recording or code they come from; the
files and their sources are listed in tests/data/platforms/arista_eos/README.md):

- the JSON eAPI returns (or ``| json`` prints) for ``show interfaces [PORT] counters queue``:
  ``ingressVoqCounters.interfaces.<port>.trafficClasses.TC<n>.{enqueuedPackets, enqueuedBytes,
  droppedPackets, droppedBytes}`` (Arista's SNMP extension arista-northwest/go-passpersist reads
  these), and for ``... counters queue detail`` also ``egressQueueCounters.interfaces.<port>.
  {ucastQueues,mcastQueues}.trafficClasses.TC<n>.dropPrecedences.DP<m>.{...}`` (Arista's ANTA
  ``VerifyInterfacesEgressQueueDrops``);
- the text table ``Egress Queue Counters`` of ``show interfaces counters queue detail`` (Port,
  Traffic Class, DropPrec, DestType, OutEnqPkts, OutEnqOctets, OutDropPkts, OutDropOctets; a
  7500R's output recorded in ntc-templates) and qoslab's ``Ingress VOQ Counters`` table of the same
  columns without DropPrec/DestType.

On a VOQ switch (7280R/7500R) a packet is queued in the ingress VOQ of its egress port and traffic
class, then in the egress queue: enqueued counts are the VOQ's where given (else the egress
queue's), drops are the VOQ's plus the egress queue's.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...eos import interface_name, neutral_port
from ...errors import QoslabError
from ..base import QueueCounters

TCS = [f"TC{n}" for n in range(8)]
_FIELDS = ("enqueuedPackets", "enqueuedBytes", "droppedPackets", "droppedBytes")
_ROW = re.compile(r"^(\S+)\s+TC([0-7])\s+(?:(DP\d(?:-\d)?)\s+(UC|MC)\s+)?(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
_SKIP = re.compile(r"^\s*$|^\s*(Egress Queue Counters|Ingress VOQ Counters|Port\s+Traffic|Class\s*$|-+[\s-]*$)")


def port_key(eos: str) -> str:
    """The key of a port in the result: qoslab's long neutral name (``GigabitEthernet1/0/3``) of
    an EOS front-panel port ``EthernetN``, else the EOS name (``Ethernet3/1/1``)."""
    n = neutral_port(eos)
    name = interface_name(eos) or eos
    return f"GigabitEthernet{n[2:]}" if n else name


class _Acc:
    """Per port: the VOQ's and the egress queues' four counters per traffic class."""

    def __init__(self) -> None:
        self.voq: dict[int, list[int]] = {}
        self.egress: dict[int, list[int]] = {}

    def add(self, where: dict[int, list[int]], tc: int, vals: list[int]) -> None:
        got = where.setdefault(tc, [0, 0, 0, 0])
        where[tc] = [a + b for a, b in zip(got, vals, strict=True)]

    def counters(self) -> QueueCounters:
        rows = []
        for tc in range(8):
            v, e = self.voq.get(tc), self.egress.get(tc, [0, 0, 0, 0])
            enq = v[:2] if v is not None else e[:2]
            drop = [a + b for a, b in zip(v[2:] if v is not None else [0, 0], e[2:], strict=True)]
            rows.append(enq + drop)
        return QueueCounters(list(TCS), enqueued_packets=[[r[0]] for r in rows], enqueued_bytes=[[r[1]] for r in rows],
                             dropped_packets=[[r[2]] for r in rows], dropped_bytes=[[r[3]] for r in rows])


def _tc(key: str, where: str) -> int:
    m = re.fullmatch(r"TC([0-7])", key)
    if not m:
        raise QoslabError(f"{where}: traffic class {key!r}: qoslab counts the eight classes TC0-TC7 one by one")
    return int(m.group(1))


def _values(d: Any, where: str) -> list[int]:
    if not isinstance(d, dict) or any(not isinstance(d.get(f), int) for f in _FIELDS):
        raise QoslabError(f"{where}: expected the integer counters {', '.join(_FIELDS)}")
    return [d[f] for f in _FIELDS]


def _from_json(doc: Any) -> dict[str, _Acc]:
    if not isinstance(doc, dict) or not ({"ingressVoqCounters", "egressQueueCounters"} & set(doc)):
        raise QoslabError("show interfaces counters queue: JSON without ingressVoqCounters or egressQueueCounters")
    ports: dict[str, _Acc] = {}
    for port, d in doc.get("ingressVoqCounters", {}).get("interfaces", {}).items():
        acc = ports.setdefault(port, _Acc())
        for key, c in d.get("trafficClasses", {}).items():
            acc.add(acc.voq, _tc(key, f"ingressVoqCounters {port}"), _values(c, f"ingressVoqCounters {port} {key}"))
    for port, d in doc.get("egressQueueCounters", {}).get("interfaces", {}).items():
        acc = ports.setdefault(port, _Acc())
        for kind in ("ucastQueues", "mcastQueues"):
            for key, c in d.get(kind, {}).get("trafficClasses", {}).items():
                tc = _tc(key, f"egressQueueCounters {port} {kind}")
                for dp, vals in c.get("dropPrecedences", {}).items():
                    acc.add(acc.egress, tc, _values(vals, f"egressQueueCounters {port} {kind} {key} {dp}"))
    return ports


def _from_text(text: str) -> dict[str, _Acc]:
    ports: dict[str, _Acc] = {}
    section = ""
    for n, line in enumerate(text.splitlines(), 1):
        if "Egress Queue Counters" in line or "Ingress VOQ Counters" in line:
            section = "egress" if "Egress" in line else "voq"
            continue
        if _SKIP.match(line):
            continue
        m = _ROW.match(line)
        name = interface_name(m.group(1)) if m else None
        if m is None or name is None or not section:
            raise QoslabError(f"show interfaces counters queue: line {n}: cannot read {line.strip()!r}")
        acc = ports.setdefault(name, _Acc())
        acc.add(acc.voq if section == "voq" else acc.egress, int(m.group(2)), [int(m.group(i)) for i in range(5, 9)])
    return ports


def parse_eos_counters(text: str) -> dict[str, QueueCounters]:
    """``show interfaces [PORT] counters queue [detail]`` output, JSON or text -> {port (see
    :func:`port_key`): QueueCounters of TC0-TC7}. Raises QoslabError naming the line or JSON
    field it cannot read (a traffic-class range such as ``TC0-3`` cannot be split into queues)."""
    body = text.strip()
    if body.startswith("{"):
        try:
            ports = _from_json(json.loads(body))
        except json.JSONDecodeError as e:
            raise QoslabError(f"show interfaces counters queue: not JSON: {e}") from None
    else:
        ports = _from_text(text)
    return {port_key(p): acc.counters() for p, acc in ports.items()}
