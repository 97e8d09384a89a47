"""The testbed's :class:`~.model.World` measured in a finished campaign (issue 32), from facts the
caller has already read: the topology snapshot (link rate, switch queue, ``scale:`` knobs), the
baseline condition's trials (mean render time), the congested trials (flood rate and CPU), and the
baseline's captured trial (capture/summary.json: bytes and packets per class on the head node's
SPAN port; workload-result.json: remote calls). Pure: rows are mappings of trials.sqlite's
columns; nothing here reads a file. Used by ``scripts/scale_table.py`` and the report's scale
section (:mod:`qoslab.report.scale`).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from .knobs import LINUX_DELACK_MIN_MS, LINUX_RTO_MIN_MS
from .model import World

#: Capture classes (qoslab names) -> the thesis's Figure 9 names.
CLASSES = {"control/ack": "control_ack", "ssh": "ssh", "short-frame": "short_frame", "data": "data", "rmi": "rmi"}
#: This machine's 2 cores shared by the 4 flooded workload nodes (a topology without a cpu: block;
#: with one, a flooded host's capacity, and the receive cost its budget paid, ``rx_cost_us``).
RECEIVER_CORES = 2 / 4

Row = Mapping[str, Any]


def flood_facts(base: Sequence[Row], congested: Sequence[Row]) -> tuple[float, float]:
    """(mean received wire bits/s per flow, median CPU seconds per flood packet) of the congested
    trials: the flood processes' CPU plus the softirq above the baseline trials' share, per packet
    received. NaN when no congested trial has a flood record."""
    soft0 = statistics.mean(r["cpu_softirq_s"] / r["cpu_window_s"] for r in base) if base else 0.0
    bps, cost = [], []
    for r in congested:
        raw = r.get("flood_json")
        flows = json.loads(raw) if isinstance(raw, str) and raw else []
        rx = [f["received_wire_bps"] for f in flows]
        pps = [f["sent_pps"] * (1 - f["loss_pct"] / 100) for f in flows]
        if rx and sum(pps) > 0:
            bps.append(statistics.mean(rx))
            extra = r["cpu_flood_s"] + r["cpu_softirq_s"] - soft0 * r["cpu_window_s"]
            cost.append(extra / (sum(pps) * r["cpu_window_s"]))
    return (statistics.mean(bps) if bps else math.nan), (statistics.median(cost) if cost else math.nan)


def base_rtt_s(rows: Sequence[Row]) -> float:
    """Median base RTT (seconds) of ``rows`` (trial rows with the ``rtt`` meter's ``base_rtt_ms``,
    :mod:`qoslab.meters.rtt`); NaN when no row has one (a campaign before that meter, one host)."""
    vals = [float(v) for r in rows for v in [r.get("base_rtt_ms")]
            if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return statistics.median(vals) / 1000 if vals else math.nan


def testbed_world(topo: Any, base: Sequence[Row], congested: Sequence[Row], summary: Mapping[str, Any],
                  result: Mapping[str, Any], rtt_s: float = math.nan, name: str = "testbed") -> World:
    """The testbed's :class:`World` of ``topo`` (a :class:`qoslab.topology.Topology`, read for its link,
    buffers, cpu: and scale: blocks): ``base``/``congested`` are the counted trials of the
    uncongested-fifo and congested-fifo conditions, ``summary``/``result`` one captured baseline
    trial's capture summary and workload result; ``rtt_s`` the base RTT (seconds; NaN: the median
    of ``base``'s pinged RTTs, :func:`base_rtt_s`, and NaN quantities when there are none)."""
    classes = summary["classes"]
    wire = sum(c["bytes"] for cname, c in classes.items() if cname != "udp")
    bps, cost = flood_facts(base, congested)
    cores = RECEIVER_CORES
    if topo.cpu is not None:  # a host's capacity and what its budget paid per flood packet (issue 42)
        flooded = {f["dst"] for r in congested for f in json.loads(r.get("flood_json") or "[]")}
        caps = [topo.host(h).cpu or topo.cpu.host_cores for h in sorted(flooded)] or [topo.cpu.host_cores]
        cores = statistics.mean(caps)
        paid = [float(v) for r in congested for v in [r.get("rx_cost_us")] if v is not None and not math.isnan(v)]
        cost = statistics.median(paid) / 1e6 if paid else math.nan
    knobs = topo.scale
    return World(
        name=name, link_rate_bps=topo.link.rate, switch_queue_bytes=topo.buffers.switch_port_bytes,
        base_rtt_s=base_rtt_s(base) if math.isnan(rtt_s) else rtt_s,
        rto_min_s=(knobs.rto_min_ms if knobs and knobs.rto_min_ms else LINUX_RTO_MIN_MS) / 1000,
        delack_s=0.0 if knobs and knobs.quickack else LINUX_DELACK_MIN_MS / 1000,
        uncongested_s=statistics.mean(r["elapsed_s"] for r in base), wire_bytes_per_run=wire,
        calls_per_run=result.get("rmi_calls"), flood_offered_bps=bps, receiver_cores=cores,
        rx_cost_s=None if math.isnan(cost) else cost,
        class_counts={CLASSES[k]: classes[k]["packets"] for k in CLASSES if k in classes},
    )
