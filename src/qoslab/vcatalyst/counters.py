"""Per-port QoS counters of the virtual Catalyst, read from the kernel (nftables and tc) into the
plain data the show renderers take (:class:`qoslab.ios.show_qos.PortCounters`,
:class:`qoslab.vcatalyst.show_mqc.ClassCounters`).

Sources (one ``nft -j -n list table`` and one ``tc -s -j qdisc show`` per read, for all ports):

- DSCP incoming: the ``dscp_in`` set of table ``bridge qoslab`` (IPv4 packets per ingress port and
  DSCP as received, before any rewrite); DSCP outgoing: ``dscp_out`` (per egress port, after the
  rewrite, as offered to the egress queue). :mod:`qoslab.vcatalyst.nftcompile` builds both.
- CoS incoming/outgoing: derived, not counted: every frame on the testbed is untagged, so a 3750
  gives it the port's default CoS 0 on the way in; on the way out the DSCP-to-CoS map of the
  DSCP sent (IPv4 packets only, like the DSCP tables).
- Output queues: packets enqueued (sent + still queued) and dropped by each egress queue's bfifo
  (handles 11:-14:; QoS off: the port's single FIFO ``10:`` counts as queue 1). A queue's bfifo
  limit is the WTD threshold its DSCPs map to (:func:`qoslab.vcatalyst.tccompile.wtd_limits`), and
  its packets count under that threshold.
- Policer: in profile = packets of a policed class that conformed, out of profile = dropped by it
  (rule comments ``police-in|PORT|CLASS`` / ``police-out|PORT|CLASS``).
- Per policy-map class (``show policy-map interface``): packets and bytes classified (in + out of
  profile), bytes conformed and exceeded.

The parsers (:func:`parse_nft`, :func:`parse_tc`) are pure; :func:`read_counters` runs the tools.
Counters restart from zero when the switch re-applies its plan (a push that changes the QoS config).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any

from ..errors import QoslabError
from ..ios.show_qos import PortCounters
from ..topology import linux_ifname, long_port
from .nftcompile import TABLE
from .show_mqc import ClassCounters


def _zeros(n: int) -> list[int]:
    return [0] * n


@dataclass
class NftCounters:
    """What :func:`parse_nft` finds: per Linux port name the DSCP histograms in and out, per
    short port name the policer (in, out) packet counts, per (long port, class) the class counters."""

    dscp_in: dict[str, list[int]] = field(default_factory=dict)
    dscp_out: dict[str, list[int]] = field(default_factory=dict)
    policer: dict[str, list[int]] = field(default_factory=dict)
    classes: dict[tuple[str, str], ClassCounters] = field(default_factory=dict)


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
            _rule_counters(out, r)
    return out


def _rule_counters(out: NftCounters, r: dict[str, Any]) -> None:
    """Add one commented rule's counter to the policer and class counters."""
    kind, port, cls = r["comment"].split("|", 2)
    cnt = [x["counter"] for x in r.get("expr", []) if isinstance(x.get("counter"), dict)]
    packets, nbytes = sum(int(c["packets"]) for c in cnt), sum(int(c["bytes"]) for c in cnt)
    if kind in ("police-in", "police-out"):
        out.policer.setdefault(port, [0, 0])[kind == "police-out"] += packets
    c = out.classes.setdefault((long_port(port), cls), ClassCounters())
    c.packets += packets
    c.bytes += nbytes
    if kind == "police-in":
        c.conformed_bytes += nbytes
    elif kind == "police-out":
        c.exceeded_bytes += nbytes


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


def run_json(argv: list[str]) -> Any:
    """Run ``argv`` and parse its JSON output ([] when empty). Raises QoslabError naming the
    command and its first error line when it fails."""
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise QoslabError(f"`{' '.join(argv)}` failed: {(p.stderr.strip().splitlines() or ['no output'])[0]}")
    return json.loads(p.stdout or "[]")


def combine(port: str, nft: NftCounters, tc: tuple[list[int], list[int]], dscp_cos: dict[int, int],
            thresholds: list[int] | None = None) -> PortCounters:
    """One port's :class:`PortCounters` from parsed nft and tc counters (pure; CoS derived, see
    the module doc). ``thresholds``: the WTD threshold 1-3 each egress queue 1-4 emulates
    (:func:`qoslab.vcatalyst.tccompile.wtd_limits`), under which its enqueued and dropped packets are
    counted; default threshold 1 for every queue."""
    dev = linux_ifname(port)
    c = PortCounters()
    c.dscp_in = list(nft.dscp_in.get(dev, c.dscp_in))
    c.dscp_out = list(nft.dscp_out.get(dev, c.dscp_out))
    c.cos_in[0] = sum(c.dscp_in)
    for d, n in enumerate(c.dscp_out):
        c.cos_out[dscp_cos.get(d, d // 8)] += n
    enq, drop = tc
    for q in range(4):
        t = (thresholds or [1, 1, 1, 1])[q] - 1
        c.enqueued[q][t], c.dropped[q][t] = enq[q], drop[q]
    c.policer_in, c.policer_out = nft.policer.get(port, [0, 0])
    return c


def read_nft(ns: str) -> NftCounters:
    """The parsed counters of table ``bridge qoslab`` in namespace ``ns``. Raises QoslabError."""
    return parse_nft(run_json(["ip", "netns", "exec", ns, "nft", "-j", "-n", "list", "table", "bridge", TABLE]))


def read_counters(ns: str, ports: list[str], dscp_cos: dict[int, int],
                  thresholds: dict[str, list[int]] | None = None) -> dict[str, PortCounters]:
    """Counters of ``ports`` (short names, e.g. ``Gi1/0/1``) in switch namespace ``ns``.
    Raises QoslabError when nft or tc fails (e.g. the namespace is gone)."""
    nft = read_nft(ns)
    by_dev: dict[str, list[dict[str, Any]]] = {}
    for q in run_json(["tc", "-n", ns, "-s", "-j", "qdisc", "show"]):  # every port's qdiscs at once
        by_dev.setdefault(str(q.get("dev", "")), []).append(q)
    tc = {p: parse_tc(by_dev.get(linux_ifname(p), [])) for p in ports}
    return {p: combine(p, nft, tc[p], dscp_cos, (thresholds or {}).get(p)) for p in ports}
