"""``show policy-map interface [PORT]`` of IOS-XE (a Catalyst 9300, or a router) parsed into
neutral queue counters (pure).

The two layouts of an output (queuing) policy's counters, as Cisco's genieparser
(``iosxe/show_policy_map.py``) reads them and its recorded outputs show them (the recordings under
tests/data/genie-policy-map-interface/, sources in the README there):

- Catalyst 9000 (UADP): per class ``N packets``, ``(total drops) N`` and ``(bytes output) N``
  (both in bytes); a priority class's are in the ``queue stats for all priority classes`` block
  of its ``priority level``, named by the class's ``Priority Level: N`` line.
- ASR/ISR routers: per class ``N packets, M bytes``, ``(queue depth/total drops/no-buffer
  drops[/flowdrops]) d/t/n`` (packets) and ``(pkts output/bytes output) p/b``; priority classes
  (``Priority: ...`` without counters of their own) share the block ``queue stats for all
  priority classes``.

Interfaces are every name IOS prints (:func:`qoslab.ios.names.interface_name`: Gi, Te,
TwentyFiveGigE, FortyGigabitEthernet, HundredGigE, AppGigabitEthernet, Port-channel, subinterfaces),
each interface's classes its own. What cannot be read is refused with its line number instead of
counting 0: a counter line of another form, a hierarchical policy (``Service-policy :`` inside a
class: its queues are not a flat list), a queueing class without counters, several priority classes
sharing one router block, a class before any interface. Only output queuing policies give queues
(an output policy that only marks or polices has no queue counters: its interface is left out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import QoslabError
from ..ios.names import interface_name
from .base import QueueCounters

_POLICY = re.compile(r"^\s*Service-policy (input|output): (\S+)")
_NESTED = re.compile(r"^\s*Service-policy : (\S+)")
_PRIO_BLOCK = re.compile(r"^\s*queue stats for all priority classes:")
_PRIO_LEVEL = re.compile(r"^\s*priority level (\d+)\s*$")
_CLASS = re.compile(r"^\s*Class-map: (\S+) \((match-any|match-all)\)")
_PACKETS = re.compile(r"^\s*(\d+) packets(?:, (\d+) bytes)?\s*$")
_DROPS = re.compile(r"^\s*\(total drops\) (\d+)\s*$")
_BYTES = re.compile(r"^\s*\(bytes output\) (\d+)\s*$")
_DEPTH = re.compile(r"^\s*\(queue depth/total drops/no-buffer drops(?:/flowdrops)?\) (\d+)/(\d+)/(\d+)(?:/\d+)?\s*$")
_OUTPUT = re.compile(r"^\s*\(pkts output/bytes output\) (\d+)/(\d+)\s*$")
_CLASS_LEVEL = re.compile(r"^\s*Priority Level: (\d+)")
_ROUTER_PRIO = re.compile(r"^\s*Priority: ")
_QUEUEING = re.compile(r"^\s*Queueing\s*$")
#: A line that looks like a queue counter (a parenthesised header over drops or output, or its
#: numbers) but is none of the forms above: refused.
_COUNTERISH = re.compile(r"(drops|output)[^()]*\)|\)\s*\d+(/\d+)+\s*$")


@dataclass
class _Counts:
    """One queue's counters as read; None where the layout does not print one."""

    packets: int | None = None       # the class's packets (Catalyst) / pkts output (router)
    out_bytes: int | None = None
    drops: int | None = None
    router: bool = False             # drops in packets (router layout), else bytes (UADP)


@dataclass
class _Class:
    name: str
    line: int
    counts: _Counts = field(default_factory=_Counts)
    queueing: bool = False
    level: int | None = None        # Catalyst: its priority level
    router_prio: bool = False       # router: a priority class (counted in the block)


@dataclass
class _Port:
    classes: list[_Class] = field(default_factory=list)
    prio: dict[int, _Counts] = field(default_factory=dict)   # Catalyst: priority level -> counters
    router_prio: _Counts | None = None


def _refuse(n: int, line: str, why: str) -> QoslabError:
    return QoslabError(f"show policy-map interface: line {n}: {line.strip()!r}: {why}")


def _counter(c: _Counts, line: str) -> bool:
    """Read a counter line into ``c``; False when it is no counter line."""
    if m := _DROPS.match(line):
        c.drops = int(m.group(1))
    elif m := _BYTES.match(line):
        c.out_bytes = int(m.group(1))
    elif m := _DEPTH.match(line):
        c.drops, c.router = int(m.group(2)), True
    elif m := _OUTPUT.match(line):
        c.packets, c.out_bytes, c.router = int(m.group(1)), int(m.group(2)), True
    else:
        return False
    return True


class _Reader:
    """The state of one pass over the text (see :func:`parse_policy_map_interface_xe`)."""

    def __init__(self) -> None:
        self.ports: dict[str, _Port] = {}
        self.port: _Port | None = None
        self.output = False
        self.cls: _Class | None = None
        self.block: _Counts | None = None    # the priority block being read

    def feed(self, n: int, line: str) -> None:
        if (name := interface_name(line)) is not None:
            self.port, self.output, self.cls, self.block = self.ports.setdefault(name, _Port()), False, None, None
        elif m := _POLICY.match(line):
            self.output, self.cls, self.block = m.group(1) == "output", None, None
        elif self.output:
            if self.port is None:
                raise _refuse(n, line, "a policy before any interface")
            self._output_line(n, line, self.port)

    def _output_line(self, n: int, line: str, port: _Port) -> None:
        if _NESTED.match(line):
            raise _refuse(n, line, "a hierarchical policy (a policy inside a class) is not a flat list of queues")
        if _PRIO_BLOCK.match(line):
            self.cls, self.block = None, _Counts()
            port.router_prio = self.block
        elif (m := _PRIO_LEVEL.match(line)) and self.cls is None:
            self.block = port.prio.setdefault(int(m.group(1)), _Counts())
            port.router_prio = None if port.router_prio is self.block else port.router_prio
        elif m := _CLASS.match(line):
            self.cls, self.block = _Class(m.group(1), n), None
            port.classes.append(self.cls)
        elif self.cls is None and self.block is not None:
            if not _counter(self.block, line) and _COUNTERISH.search(line):
                raise _refuse(n, line, "a counter line of a form not read")
        elif self.cls is not None:
            self._class_line(n, line, self.cls)

    def _class_line(self, n: int, line: str, c: _Class) -> None:
        if m := _PACKETS.match(line):
            if c.counts.packets is None and not c.counts.router:
                c.counts.packets = int(m.group(1))
        elif m := _CLASS_LEVEL.match(line):
            c.level = int(m.group(1))
        elif _ROUTER_PRIO.match(line):
            c.router_prio = True
        elif _QUEUEING.match(line):
            c.queueing = True
        elif not _counter(c.counts, line) and _COUNTERISH.search(line):
            raise _refuse(n, line, "a counter line of a form not read")


def _queuing(c: _Class) -> bool:
    """Whether class ``c`` belongs to a queuing policy (a queue, a priority level, counters)."""
    return c.queueing or c.level is not None or c.router_prio or c.counts.drops is not None \
        or c.counts.out_bytes is not None


def _queue(p: _Port, c: _Class, lines: list[str]) -> _Counts:
    """The counters of class ``c``: its own, its priority level's, or the router's priority block."""
    if c.level is not None and c.level in p.prio:
        got = p.prio[c.level]
    elif c.router_prio and c.counts.drops is None:
        if p.router_prio is None or sum(x.router_prio and x.counts.drops is None for x in p.classes) > 1:
            raise _refuse(c.line, lines[c.line - 1], "priority classes sharing one counter block cannot be told apart")
        got = p.router_prio
    else:
        got = c.counts
    if got.drops is None or got.out_bytes is None:
        raise _refuse(c.line, lines[c.line - 1], "a class of a queuing policy without its queue counters "
                      "(total drops, bytes output)")
    return got


def parse_policy_map_interface_xe(text: str) -> dict[str, QueueCounters]:
    """{long interface name: QueueCounters} of the output policies in ``text``: one queue per
    class, one threshold. Catalyst layout: enqueued packets = the class's packets, enqueued bytes
    = bytes output, dropped bytes = total drops. Router layout: enqueued packets/bytes = pkts/bytes
    output, dropped packets = total drops. Interfaces without an output policy are left out.
    Raises QoslabError naming the line of what cannot be read (the module doc)."""
    lines = text.splitlines()
    r = _Reader()
    for n, line in enumerate(lines, 1):
        r.feed(n, line)
    out = {}
    for name, p in r.ports.items():
        if not any(_queuing(c) for c in p.classes):
            continue  # no output policy, or one that only marks/polices: no queues to read
        qs = [_queue(p, c, lines) for c in p.classes]
        router = any(q.router for q in qs)
        names = [c.name for c in p.classes]
        if router:
            out[name] = QueueCounters(names, enqueued_packets=[[q.packets or 0] for q in qs],
                                      dropped_packets=[[q.drops or 0] for q in qs],
                                      enqueued_bytes=[[q.out_bytes or 0] for q in qs])
        else:
            out[name] = QueueCounters(names, enqueued_packets=[[c.counts.packets or 0] for c in p.classes],
                                      enqueued_bytes=[[q.out_bytes or 0] for q in qs],
                                      dropped_bytes=[[q.drops or 0] for q in qs])
    return out
