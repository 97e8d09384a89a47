"""The counters of ``show mls qos interface PORT statistics`` (a 3750's per-port QoS counters,
:class:`qoslab.ios.show_qos.PortCounters`) from the virtual switch's kernel readings
(:mod:`qoslab.vswitch.counters`: nftables DSCP sets and policer rules, tc queues).

- DSCP incoming/outgoing: the ``dscp_in`` / ``dscp_out`` histograms of the port.
- CoS incoming/outgoing: derived, not counted: every frame on the testbed is untagged, so a 3750
  gives it the port's default CoS 0 on the way in; on the way out the DSCP-to-CoS map of the
  DSCP sent (IPv4 packets only, like the DSCP tables).
- Output queues: packets enqueued (sent + still queued) and dropped by each egress queue's bfifo
  (handles 11:-14:; QoS off: the port's single FIFO ``10:`` counts as queue 1). A queue's bfifo
  limit is the WTD threshold its DSCPs map to (:func:`qoslab.vswitch.tccompile.wtd_limits`), and
  its packets count under that threshold.
- Policer: in profile = packets of a policed class that conformed, out of profile = dropped by it.

:func:`parse_tc` and :func:`combine` are pure; :func:`port_counters` asks the switch.
"""

from __future__ import annotations

from typing import Any

from ....ios import qos_model
from ....ios.show_qos import PortCounters
from ....portnames import canonical_port, linux_ifname
from ...counters import NftCounters
from ...tccompile import port_queue_limits


def parse_tc(qdiscs: list[dict[str, Any]]) -> tuple[list[int], list[int]]:
    """(enqueued, dropped) packets per egress queue 1-4 from ``tc -s -j qdisc show dev X`` (pure):
    the bfifo with handle 1Q: is queue Q; handle 10: (QoS off, one FIFO) counts as queue 1."""
    enq, drop = [0] * 4, [0] * 4
    for q in qdiscs:
        if q.get("kind") != "bfifo":
            continue
        handle = int(str(q.get("handle", "0:")).split(":")[0] or 0)
        i = handle - 11 if 11 <= handle <= 14 else 0
        enq[i] += int(q.get("packets", 0)) + int(q.get("qlen", 0))
        drop[i] += int(q.get("drops", 0))
    return enq, drop


def combine(port: str, nft: NftCounters, tc: tuple[list[int], list[int]], dscp_cos: dict[int, int],
            thresholds: list[int] | None = None) -> PortCounters:
    """One port's :class:`PortCounters` from parsed nft and tc counters (pure; CoS derived, see
    the module doc). ``thresholds``: the WTD threshold 1-3 each egress queue 1-4 emulates
    (:func:`qoslab.vswitch.tccompile.wtd_limits`), under which its enqueued and dropped packets are
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


def port_counters(sw: Any, ports_long: list[str]) -> dict[str, PortCounters]:
    """``{long port name as given: PortCounters}`` of several ports from one kernel reading (one
    ``nft`` and one ``tc`` run for all: ``show mls qos interface statistics`` of every port costs
    as much as one port's). A switch object without kernel readings (``nft_counters``,
    ``qdiscs``) may give each port's counters itself (``counters(long_port)``: a test double);
    else zeros. Raises QoslabError when nft or tc fails."""
    if not hasattr(sw, "qdiscs") and hasattr(sw, "counters"):
        return {p: sw.counters(p) for p in ports_long}
    short = {p: canonical_port(p) for p in ports_long}
    qos = qos_model(sw.running)
    thresholds = {s: [x.threshold for x in port_queue_limits(qos, sw.topo, s)]
                  for s in short.values()} if qos.enabled else {}
    nft = sw.nft_counters() if hasattr(sw, "nft_counters") else NftCounters()
    qdiscs = sw.qdiscs() if hasattr(sw, "qdiscs") else {}
    return {p: combine(s, nft, parse_tc(qdiscs.get(linux_ifname(s), [])), qos.dscp_cos, thresholds.get(s))
            for p, s in short.items()}
