"""``show policy-map interface [PORT]`` of a Catalyst 9300 (IOS-XE 17.x) parsed into neutral
queue counters (pure).

The output's layout (Catalyst 9300 QoS configuration guide, IOS-XE 17.x, "Monitoring QoS"
examples; Cisco's genieparser ``iosxe/show_policy_map.py`` reads the same blocks): per interface,
``Service-policy input|output: NAME``, then per class ``Class-map: NAME (match-any|match-all)``,
``N packets``, ``Match: ...``; an egress queuing class has ``(total drops) N`` and ``(bytes output)
N`` (UADP counts queue drops in bytes), a priority class's are in the ``queue stats for all
priority classes`` block of its ``priority level``. Only output policies give queues.
"""

from __future__ import annotations

import re

from ..errors import QoslabError
from ..ios.names import parse_port
from .base import QueueCounters

_IFACE = re.compile(r"^\s*((?:[A-Z][A-Za-z-]*Ethernet|Port-channel)\S+)\s*$")
_POLICY = re.compile(r"^\s*Service-policy (input|output): (\S+)")
_PRIO_BLOCK = re.compile(r"^\s*queue stats for all priority classes:")
_PRIO_LEVEL = re.compile(r"^\s*priority level (\d+)\s*$")
_CLASS = re.compile(r"^\s*Class-map: (\S+) \((match-any|match-all)\)")
_PACKETS = re.compile(r"^\s*(\d+) packets")
_DROPS = re.compile(r"^\s*\(total drops\) (\d+)")
_BYTES = re.compile(r"^\s*\(bytes output\) (\d+)")
_CLASS_LEVEL = re.compile(r"^\s*Priority Level: (\d+)")


class _Port:
    def __init__(self) -> None:
        self.classes: list[str] = []
        self.packets: dict[str, int] = {}
        self.drops: dict[str, int] = {}
        self.bytes: dict[str, int] = {}
        self.level: dict[str, int] = {}
        self.prio: dict[int, tuple[int, int]] = {}


def _feed(p: _Port, line: str, state: dict[str, str | int | None]) -> None:
    if m := _PRIO_BLOCK.match(line):
        state["cls"], state["prio"] = None, 0
    elif (m := _PRIO_LEVEL.match(line)) and state["cls"] is None:
        state["prio"] = int(m.group(1))
    elif m := _CLASS.match(line):
        state["cls"], state["prio"] = m.group(1), None
        p.classes.append(m.group(1))
    elif (m := _PACKETS.match(line)) and isinstance(state["cls"], str):
        p.packets[state["cls"]] = int(m.group(1))
    elif (m := _CLASS_LEVEL.match(line)) and isinstance(state["cls"], str):
        p.level[state["cls"]] = int(m.group(1))
    elif m := (_DROPS.match(line) or _BYTES.match(line)):
        which = "drops" if line.strip().startswith("(total drops)") else "bytes"
        if isinstance(state["prio"], int) and state["cls"] is None:
            d, b = p.prio.get(state["prio"], (0, 0))
            p.prio[state["prio"]] = (int(m.group(1)), b) if which == "drops" else (d, int(m.group(1)))
        elif isinstance(state["cls"], str):
            getattr(p, which)[state["cls"]] = int(m.group(1))


def parse_policy_map_interface_xe(text: str) -> dict[str, QueueCounters]:
    """{long port name: QueueCounters} of the output policies in ``text`` (one queue per class,
    one threshold: enqueued packets = the class's packets, enqueued bytes = bytes output, dropped
    bytes = total drops; dropped packets are not counted). Ports without an output policy are left
    out. Raises QoslabError for a class line outside any interface."""
    ports: dict[str, _Port] = {}
    port: _Port | None = None
    direction = ""
    state: dict[str, str | int | None] = {"cls": None, "prio": None}
    for n, line in enumerate(text.splitlines(), 1):
        if m := _IFACE.match(line):
            name = parse_port(m.group(1)) or m.group(1)
            port, direction = ports.setdefault(name, _Port()), ""
            continue
        if m := _POLICY.match(line):
            direction, state = m.group(1), {"cls": None, "prio": None}
            continue
        if direction != "output":
            continue
        if port is None:
            raise QoslabError(f"show policy-map interface: line {n}: {line.strip()!r} before any interface")
        _feed(port, line, state)
    out = {}
    for name, p in ports.items():
        if not p.classes:
            continue
        drops, sent = [], []
        for c in p.classes:
            d, b = p.prio.get(p.level[c], (0, 0)) if c in p.level else (p.drops.get(c, 0), p.bytes.get(c, 0))
            drops.append([d])
            sent.append([b])
        out[name] = QueueCounters(list(p.classes), enqueued_packets=[[p.packets.get(c, 0)] for c in p.classes],
                                  enqueued_bytes=sent, dropped_bytes=drops)
    return out
