"""Per-port QoS counters of the virtual Catalyst, read from the kernel (nftables and tc) into plain
data that the show commands render (:class:`PortCounters`).

Sources (one ``nft -j -n list table`` and one ``tc -s -j qdisc show`` per read):

- DSCP incoming: the ``dscp_in`` set of table ``bridge qoslab`` (IPv4 packets per ingress port and
  DSCP as received, before any rewrite); DSCP outgoing: ``dscp_out`` (per egress port, after the
  rewrite, as offered to the egress queue). :mod:`qoslab.nftcompile` builds both.
- CoS incoming/outgoing: derived, not counted: every frame on the testbed is untagged, so a 3750
  gives it the port's default CoS 0 on the way in; on the way out the DSCP-to-CoS map of the
  DSCP sent (IPv4 packets only, like the DSCP tables).
- Output queues: packets enqueued (sent + still queued) and dropped by each egress queue's bfifo
  (handles 11:-14:; QoS off: the port's single FIFO ``10:`` counts as queue 1). WTD is not
  emulated, so everything counts under threshold 1.
- Policer: in profile = packets of a policed class that conformed, out of profile = dropped by it
  (rule comments ``police-in|PORT|CLASS`` / ``police-out|PORT|CLASS``).

The parsers (:func:`parse_nft`, :func:`parse_tc`) are pure; :func:`read_counters` runs the tools.
Counters restart from zero when the switch re-applies its plan (a push that changes the QoS config).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import QoslabError
from ..nftcompile import TABLE
from ..topology import linux_ifname


def _zeros(n: int) -> list[int]:
    return [0] * n


@dataclass
class PortCounters:
    """One switch port's QoS statistics in packets: ``dscp_in``/``dscp_out`` (64 values each),
    ``cos_in``/``cos_out`` (8), ``enqueued``/``dropped`` per egress queue 1-4 and threshold 1-3
    (``[queue][threshold]``), policer in/out of profile."""

    port: str
    dscp_in: list[int] = field(default_factory=lambda: _zeros(64))
    dscp_out: list[int] = field(default_factory=lambda: _zeros(64))
    cos_in: list[int] = field(default_factory=lambda: _zeros(8))
    cos_out: list[int] = field(default_factory=lambda: _zeros(8))
    enqueued: list[list[int]] = field(default_factory=lambda: [_zeros(3) for _ in range(4)])
    dropped: list[list[int]] = field(default_factory=lambda: [_zeros(3) for _ in range(4)])
    policer_in: int = 0
    policer_out: int = 0

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of all fields."""
        return asdict(self)


@dataclass
class NftCounters:
    """What :func:`parse_nft` finds: per Linux port name the DSCP histograms in and out, and per
    short port name the policer (in, out) packet counts."""

    dscp_in: dict[str, list[int]] = field(default_factory=dict)
    dscp_out: dict[str, list[int]] = field(default_factory=dict)
    policer: dict[str, list[int]] = field(default_factory=dict)


def parse_nft(doc: dict[str, Any]) -> NftCounters:
    """Counters from ``nft -j -n list table bridge qoslab`` output (pure). Raises QoslabError for
    output that is not nft's JSON."""
    if not isinstance(doc, dict) or not isinstance(doc.get("nftables"), list):
        raise QoslabError("nft -j: not an nftables JSON document")
    out = NftCounters()
    for item in doc["nftables"]:
        s = item.get("set")
        if s and s.get("name") in ("dscp_in", "dscp_out"):
            hist = out.dscp_in if s["name"] == "dscp_in" else out.dscp_out
            for e in s.get("elem", []):
                e = e.get("elem", e)
                dev, dscp = e["val"]["concat"]
                hist.setdefault(dev, _zeros(64))[int(dscp)] += int(e.get("counter", {}).get("packets", 0))
        r = item.get("rule")
        if r and "|" in r.get("comment", ""):
            kind, port, _ = r["comment"].split("|", 2)
            packets = sum(int(x["counter"]["packets"]) for x in r.get("expr", []) if isinstance(x.get("counter"), dict))
            if kind in ("police-in", "police-out"):
                out.policer.setdefault(port, [0, 0])[kind == "police-out"] += packets
    return out


def parse_tc(qdiscs: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
    """(enqueued, dropped) packets per egress queue 1-4 from ``tc -s -j qdisc show dev X`` (pure):
    the bfifo with handle 1Q: is queue Q; handle 10: (QoS off, one FIFO) counts as queue 1."""
    enq, drop = _zeros(4), _zeros(4)
    for q in qdiscs:
        if q.get("kind") != "bfifo":
            continue
        handle = int(str(q.get("handle", "0:")).split(":")[0] or 0)
        i = handle - 11 if 11 <= handle <= 14 else 0
        enq[i] += int(q.get("packets", 0)) + int(q.get("qlen", 0))
        drop[i] += int(q.get("drops", 0))
    return enq, drop


def _run_json(argv: list[str]) -> Any:
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise QoslabError(f"`{' '.join(argv)}` failed: {(p.stderr.strip().splitlines() or ['no output'])[0]}")
    return json.loads(p.stdout or "[]")


def combine(port: str, nft: NftCounters, tc: tuple[list[int], list[int]], dscp_cos: dict[int, int]) -> PortCounters:
    """One port's :class:`PortCounters` from parsed nft and tc counters (pure; CoS derived, see
    the module doc)."""
    dev = linux_ifname(port)
    c = PortCounters(port)
    c.dscp_in = list(nft.dscp_in.get(dev, c.dscp_in))
    c.dscp_out = list(nft.dscp_out.get(dev, c.dscp_out))
    c.cos_in[0] = sum(c.dscp_in)
    for d, n in enumerate(c.dscp_out):
        c.cos_out[dscp_cos.get(d, d // 8)] += n
    enq, drop = tc
    for q in range(4):
        c.enqueued[q][0], c.dropped[q][0] = enq[q], drop[q]
    c.policer_in, c.policer_out = nft.policer.get(port, [0, 0])
    return c


def read_counters(ns: str, ports: list[str], dscp_cos: dict[int, int]) -> dict[str, PortCounters]:
    """Counters of ``ports`` (short names, e.g. ``Gi1/0/1``) in switch namespace ``ns``.
    Raises QoslabError when nft or tc fails (e.g. the namespace is gone)."""
    nft = parse_nft(_run_json(["ip", "netns", "exec", ns, "nft", "-j", "-n", "list", "table", "bridge", TABLE]))
    return {p: combine(p, nft, parse_tc(_run_json(["tc", "-n", ns, "-s", "-j", "qdisc", "show", "dev", linux_ifname(p)])),
                       dscp_cos) for p in ports}
