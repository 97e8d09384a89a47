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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from qoslab.scale.measure import testbed_world as measured_world  # noqa: E402
from qoslab.scale.model import THESIS, World, compare  # noqa: E402
from qoslab.topology import load_topology  # noqa: E402
from qoslab.trials.storeschema import connect_ro  # noqa: E402


def _rows(db: Path, sql: str, *args: object) -> list[sqlite3.Row]:
    con = connect_ro(db)  # a committed campaign's store: nothing written beside it (no -wal, -shm)
    con.row_factory = sqlite3.Row
    try:
        return list(con.execute(sql, args))
    finally:
        con.close()


def testbed_world(folder: Path, rtt_us: float) -> World:
    """The testbed's :class:`World` measured in campaign ``folder`` (qoslab.scale.measure)."""
    db = folder / "trials.sqlite"
    sql = "SELECT * FROM trials WHERE status='done' AND warmup=0 AND condition=? ORDER BY idx"
    base = [dict(r) for r in _rows(db, sql, "no congestion fifo")]
    congested = [dict(r) for r in _rows(db, sql, "congestion fifo")]
    captured = next((folder / "trials" / f"{r['idx']:04d}" for r in base
                     if (folder / "trials" / f"{r['idx']:04d}" / "capture" / "summary.json").exists()), None)
    if captured is None:
        raise SystemExit(f"error: {folder}: no baseline trial with trials/NNNN/capture/summary.json (the scale "
                         "model reads the first captured 'no congestion fifo' trial; a slim results folder keeps it)")
    summary = json.loads((captured / "capture" / "summary.json").read_text())
    result = json.loads((captured / "workload" / "workload-result.json").read_text())
    return measured_world(load_topology(folder / "inputs" / "topology.yaml"), base, congested, summary, result,
                          rtt_us / 1e6, f"testbed ({folder.name})")


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
