"""The scale model's quantities of a finished campaign beside the thesis's (issue 32), as the
markdown table of docs/scale-model.md.

    .venv/bin/python scripts/scale_table.py CAMPAIGN_DIR --rtt-us 77

The testbed's facts come from the campaign folder: its topology snapshot (link rate, switch
queue, rto_min, quickack), the baseline condition's mean render time, the baseline's captured
trial (capture/summary.json on the head node's SPAN port: bytes and packets per traffic class;
workload-result.json: remote calls), the congested trials' flood (flood_json: received wire
bits/s per flow) and CPU (cpu_flood_s + the softirq above the baseline's, per flood packet).
``--rtt-us`` is the measured base RTT (``qoslab testbed exec jp-2 -- ping -q -c 30 198.18.0.1``).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from qoslab.scale.knobs import LINUX_DELACK_MIN_MS, LINUX_RTO_MIN_MS  # noqa: E402
from qoslab.scale.model import THESIS, World, compare  # noqa: E402
from qoslab.topology import load_topology  # noqa: E402

#: Capture classes (qoslab names) -> the thesis's Figure 9 names.
CLASSES = {"control/ack": "control_ack", "ssh": "ssh", "short-frame": "short_frame", "data": "data", "rmi": "rmi"}


def _rows(db: Path, sql: str, *args: object) -> list[sqlite3.Row]:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return list(con.execute(sql, args))
    finally:
        con.close()


def _flood(folder: Path, congested: str) -> tuple[float, float]:
    """(mean received wire bits/s per flow, CPU seconds per flood packet) of the congested trials."""
    db = folder / "trials.sqlite"
    base = _rows(db, "SELECT cpu_softirq_s, cpu_window_s FROM trials WHERE status='done' AND warmup=0 AND condition=?",
                 "no congestion fifo")
    soft0 = statistics.mean(r["cpu_softirq_s"] / r["cpu_window_s"] for r in base)
    bps, cost = [], []
    for r in _rows(db, "SELECT * FROM trials WHERE status='done' AND warmup=0 AND condition=?", congested):
        flows = json.loads(r["flood_json"] or "[]")
        rx = [f["received_wire_bps"] for f in flows]
        pps = [f["sent_pps"] * (1 - f["loss_pct"] / 100) for f in flows]
        if rx and sum(pps) > 0:
            bps.append(statistics.mean(rx))
            extra = r["cpu_flood_s"] + r["cpu_softirq_s"] - soft0 * r["cpu_window_s"]
            cost.append(extra / (sum(pps) * r["cpu_window_s"]))
    return (statistics.mean(bps) if bps else float("nan")), (statistics.median(cost) if cost else float("nan"))


def testbed_world(folder: Path, rtt_us: float) -> World:
    """The testbed's :class:`World` measured in campaign ``folder``."""
    topo = load_topology(folder / "inputs" / "topology.yaml")
    db = folder / "trials.sqlite"
    base = _rows(db, "SELECT idx, elapsed_s FROM trials WHERE status='done' AND warmup=0 AND condition=? "
                     "ORDER BY idx", "no congestion fifo")
    captured = next(folder / "trials" / f"{r['idx']:04d}" for r in base
                    if (folder / "trials" / f"{r['idx']:04d}" / "capture" / "summary.json").exists())
    summary = json.loads((captured / "capture" / "summary.json").read_text())
    result = json.loads((captured / "workload" / "workload-result.json").read_text())
    classes = summary["classes"]
    wire = sum(c["bytes"] for name, c in classes.items() if name != "udp")
    bps, cost = _flood(folder, "congestion fifo")
    knobs = topo.scale
    return World(
        name=f"testbed ({folder.name})", link_rate_bps=topo.link.rate,
        switch_queue_bytes=topo.buffers.switch_port_bytes, base_rtt_s=rtt_us / 1e6,
        rto_min_s=(knobs.rto_min_ms if knobs and knobs.rto_min_ms else LINUX_RTO_MIN_MS) / 1000,
        delack_s=0.0 if knobs and knobs.quickack else LINUX_DELACK_MIN_MS / 1000,
        uncongested_s=statistics.mean(r["elapsed_s"] for r in base), wire_bytes_per_run=wire,
        calls_per_run=result.get("rmi_calls"), flood_offered_bps=bps,
        receiver_cores=2 / 4,  # this machine's 2 cores shared by the 4 flooded workload nodes
        rx_cost_s=cost, class_counts={CLASSES[k]: classes[k]["packets"] for k in CLASSES if k in classes},
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("campaign", type=Path)
    ap.add_argument("--rtt-us", type=float, required=True, help="measured base RTT, microseconds")
    a = ap.parse_args()
    tb = testbed_world(a.campaign, a.rtt_us)
    print("| quantity | thesis | testbed | testbed / thesis |\n| --- | --- | --- | --- |")
    for name, va, vb, ratio in compare(THESIS, tb):
        print(f"| {name} | {_fmt(va)} | {_fmt(vb)} | {_fmt(ratio)} |")


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}"


if __name__ == "__main__":
    main()
