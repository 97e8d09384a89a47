"""The virtual switch's kernel readings, dialect-neutral: what the data path counted, as plain
data the dialect packages (:mod:`qoslab.vswitch.dialects`) turn into their show commands.

Sources (one ``nft -j -n list table`` and one ``tc -s -j qdisc show`` per read, for all ports;
``bridge -j fdb show`` for the MAC table):

- DSCP histograms: the ``dscp_in`` set of table ``bridge qoslab`` (IPv4 packets per ingress port
  and DSCP as received, before any rewrite) and ``dscp_out`` (per egress port, after the rewrite,
  as offered to the egress queue). :mod:`qoslab.vswitch.nftcompile` builds both.
- Policers: in profile = packets of a policed class that conformed, out of profile = dropped by it
  (rule comments ``police-in|PORT|CLASS`` / ``police-out|PORT|CLASS``).
- Per policy-map class: packets and bytes classified (in + out of profile), bytes conformed and
  exceeded (:class:`qoslab.vswitch.facts.ClassCounters`).
- Egress queues: each port's qdiscs as tc reports them (:func:`read_qdiscs`, by Linux interface);
  which bfifo is which queue is the tc plan's (:mod:`qoslab.vswitch.tccompile`), read by the
  dialect (the 3750's ``show mls qos interface statistics``, the 9300's queue counters).
- Links: each switch port's packets and bytes in and out (:func:`read_links`: ``show interfaces``).
- MAC table: the bridge's learned addresses on the switch ports (:func:`parse_fdb`).

The parsers (:func:`parse_nft`, :func:`parse_fdb`) are pure; :func:`read_nft`, :func:`read_qdiscs`
and :func:`run_json` run the tools. Counters restart from zero when the switch re-applies its plan
(a push that changes the QoS config).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from typing import Any

from ..errors import QoslabError
from ..portnames import long_port
from .facts import ClassCounters, MacEntry, dotted_mac
from .nftcompile import TABLE


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


def run_json(argv: list[str]) -> Any:
    """Run ``argv`` and parse its JSON output ([] when empty). Raises QoslabError naming the
    command and its first error line when it fails."""
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise QoslabError(f"`{' '.join(argv)}` failed: {(p.stderr.strip().splitlines() or ['no output'])[0]}")
    return json.loads(p.stdout or "[]")


def read_nft(ns: str, families: tuple[str, ...] = ("bridge",)) -> NftCounters:
    """The parsed counters of table ``qoslab`` of each of ``families`` in namespace ``ns``, added
    up (the ``ingress`` data path has a ``bridge`` and a ``netdev`` table:
    :mod:`qoslab.vswitch.ingresscompile`). Raises QoslabError."""
    items: list[Any] = []
    for family in families:
        doc = run_json(["ip", "netns", "exec", ns, "nft", "-j", "-n", "list", "table", family, TABLE])
        if not isinstance(doc, dict) or not isinstance(doc.get("nftables"), list):
            raise QoslabError(f"nft -j list table {family} {TABLE} in {ns}: not an nftables JSON document")
        items += doc["nftables"]
    return parse_nft({"nftables": items})


def read_qdiscs(ns: str) -> dict[str, list[dict[str, Any]]]:
    """Every qdisc of namespace ``ns`` with its statistics, by Linux interface name (one ``tc -s
    -j qdisc show`` for all ports). Raises QoslabError when tc fails (e.g. the namespace is gone)."""
    by_dev: dict[str, list[dict[str, Any]]] = {}
    for q in run_json(["tc", "-n", ns, "-s", "-j", "qdisc", "show"]):
        by_dev.setdefault(str(q.get("dev", "")), []).append(q)
    return by_dev


def read_links(ns: str) -> dict[str, dict[str, Any]]:
    """Every interface's ``stats64`` (``rx``/``tx``: packets, bytes, dropped ...) in namespace
    ``ns``, by Linux interface name (one ``ip -s -j link show``). Raises QoslabError when ip fails."""
    return {str(link.get("ifname", "")): dict(link.get("stats64", {}))
            for link in run_json(["ip", "-n", ns, "-s", "-j", "link", "show"])}


def parse_fdb(entries: list[dict[str, Any]], ports: dict[str, str]) -> list[MacEntry]:
    """The learned addresses of ``bridge -j fdb show br BRIDGE``: dynamic entries (not
    ``permanent``/``static``, not the bridge's own ``self`` ones) on a switch port (``ports``:
    Linux interface name -> short port name), in VLAN 1 unless the entry names one. Pure."""
    out = []
    for e in entries:
        if e.get("state") in ("permanent", "static") or "self" in e.get("flags", []) or e.get("ifname") not in ports:
            continue
        out.append(MacEntry(int(e.get("vlan", 1)), dotted_mac(e["mac"]), ports[e["ifname"]]))
    return out
