"""What the virtual EOS switch's show commands report, gathered once per command from the
switch object (its EosConfig, topology, identity) and the kernel's readings: the identity of a
7280R3 on EOS 4.32 (:class:`EosFacts`), each front port's state and counters (:class:`Port`), and
each port's eight queues (:class:`Queue`, from the tc plan's bfifos ``20:`` .. ``27:``,
:mod:`.datapath`).

tc counts sent bytes and packets and dropped packets per queue; dropped bytes are estimated as
dropped packets x the queue's mean sent packet size (1514 B when it sent none), as for the 9300
(named in the fidelity table). A port's output counters are its root qdisc's (what the switch sent toward the host), its
input counters the port's link statistics where the switch reads them (``sw.links()``), else 0.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ....eos import eos_port
from ....portnames import linux_ifname

#: The EOS release the virtual switch reports (a 4.32 feature release of 2024; "current EOS 4.3x").
VERSION = "4.32.2F"
INTERNAL = "4.32.2F-38195967.4322F"
#: A full-size frame: the dropped-bytes estimate of a queue that sent nothing.
FRAME_BYTES = 1514


@dataclass
class EosFacts:
    """``show version``'s identity: model, serial (virtual, ``QSL`` + hex of the topology name),
    MACs (locally administered), uptime and boot time (epoch seconds)."""

    hostname: str
    model: str
    serial: str
    mac: str
    uptime_s: float
    booted: float
    build_id: str


def facts(sw: Any) -> EosFacts:
    """The switch's identity (never a real device's)."""
    h = hashlib.sha256(sw.topo.name.encode()).hexdigest()
    mac = f"02:{h[8:10]}:{h[10:12]}:{h[12:14]}:00:00"
    build = f"{h[16:24]}-{h[24:28]}-{h[28:32]}-{h[32:36]}-{h[36:48]}"
    return EosFacts(sw.running.hostname, sw.topo.switch.model, f"QSL{h[:8].upper()}", mac, time.time() - sw.booted,
                    sw.booted, build)


def dotted(mac: str) -> str:
    """``02:ab:cd:ef:00:01`` -> ``02ab.cdef.0001`` (EOS's text form)."""
    x = mac.replace(":", "")
    return f"{x[0:4]}.{x[4:8]}.{x[8:12]}"


class Queue(NamedTuple):
    """One tx-queue as tc counts it: bytes and packets sent, packets dropped."""

    sent_bytes: int = 0
    sent_packets: int = 0
    dropped_packets: int = 0

    @property
    def dropped_bytes(self) -> int:
        """Dropped packets x the mean sent packet size (see the module doc)."""
        return self.dropped_packets * (self.sent_bytes // self.sent_packets if self.sent_packets else FRAME_BYTES)


@dataclass
class Port:
    """A front port: EOS name, description, shut down, a host attached (link up), the link rate
    (bit/s), MAC, output counters (root qdisc) and its eight queues."""

    name: str
    description: str = ""
    shutdown: bool = False
    up: bool = False
    bps: int = 0
    mac: str = ""
    out_bytes: int = 0
    out_packets: int = 0
    out_drops: int = 0
    in_bytes: int = 0
    in_packets: int = 0
    queues: list[Queue] = field(default_factory=lambda: [Queue() for _ in range(8)])


def parse_queues(qdiscs: list[dict[str, Any]]) -> list[Queue]:
    """tx-queues 0-7 of a port from its ``tc -s -j qdisc show`` entries (bfifos 20:-27:). Pure."""
    sums = [[0, 0, 0] for _ in range(8)]
    for q in qdiscs:
        handle = str(q.get("handle", "0:")).split(":")[0]
        if q.get("kind") == "bfifo" and len(handle) == 2 and handle[0] == "2" and handle[1] in "01234567":
            for i, key in enumerate(("bytes", "packets", "drops")):
                sums[int(handle[1])][i] += int(q.get(key, 0))
    return [Queue(*s) for s in sums]


def ports(sw: Any, only: str | None = None) -> list[Port]:
    """Every front port of the switch (the topology's ports, as ``EthernetN``), with one kernel
    reading for all; ``only``: that port alone."""
    hosts = {eos_port(h.port) for h in sw.topo.hosts}
    qdiscs = sw.qdiscs() if hasattr(sw, "qdiscs") else {}
    links = sw.links() if hasattr(sw, "links") else {}
    f = facts(sw)
    out = []
    for i, neutral in enumerate(sw.topo.switch.ports, 1):
        name = eos_port(neutral)
        if only is not None and name != only:
            continue
        intf = sw.running.interfaces.get(name)
        lines = intf.lines if intf is not None else []
        desc = next((x.split(None, 1)[1] for x in lines if x.startswith("description ")), "")
        p = Port(name, desc, "shutdown" in lines, name in hosts and "shutdown" not in lines, sw.topo.link.rate,
                 f"{f.mac[:-5]}{i // 256:02x}:{i % 256:02x}")
        mine = qdiscs.get(linux_ifname(neutral), [])
        root: dict[str, Any] = next((q for q in mine if q.get("root")), {})
        p.out_bytes, p.out_packets, p.out_drops = (int(root.get(k, 0)) for k in ("bytes", "packets", "drops"))
        p.queues = parse_queues(mine)
        rx = links.get(linux_ifname(neutral), {}).get("rx", {})
        p.in_bytes, p.in_packets = int(rx.get("bytes", 0)), int(rx.get("packets", 0))
        out.append(p)
    return out
