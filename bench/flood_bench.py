"""Flood benchmark: CPU cost of the thesis flood (4 flows, 1.5x the link rate) at 20, 50 and
100 Mbit/s links, as percent of both cores: the whole machine (/proc/stat) and the D-ITG
processes alone, with the delivered rate and loss (from ITGDec) to show the flood did its job."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from qoslab.testbed import Testbed
from qoslab.testbed.procs import tree_cpu_ticks
from qoslab.topology import load_topology
from qoslab.trafficgen import calibrate, load_flood
from qoslab.trafficgen.ditg import DitgGenerator as FloodRun

ROOT = Path(__file__).resolve().parents[1]
HZ = os.sysconf("SC_CLK_TCK")


def _machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs from /proc/stat."""
    f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = f[3] + f[4]
    return sum(f) - idle, sum(f)


def bench_flood(repeat: int, seconds: float = 10.0) -> dict:
    out = {}
    defn = load_flood(ROOT / "traffic-gen" / "thesis-flood.yaml")
    for mbit in (20, 50, 100):
        base = load_topology(None)
        topo = load_topology(None, name="bflood", link={**base.link.model_dump(), "rate": mbit * 1_000_000})
        tb = Testbed(topo)
        tb.down()
        tb.up()
        try:
            with tempfile.TemporaryDirectory() as d:
                cal = calibrate(topo, tb.executor, [(f.src, f.dst) for f in defn.flows], Path(d) / "cal",
                                max_multiple=1.8, probe_s=1.5)
                with FloodRun(defn, topo, tb.executor, Path(d) / "run", duration_s=seconds, calibration=cal) as fr:
                    fr.start()
                    procs = list(fr.senders.values()) + list(fr.receivers.values())
                    first = {p.pid: tree_cpu_ticks(p.pid) for p in procs}
                    last = dict(first)
                    b0, t0 = _machine_ticks()
                    w0 = time.monotonic()
                    while any(tb.executor(p.node).poll(p) is None for p in fr.senders.values()):
                        for p in procs:
                            last[p.pid] = max(last[p.pid], tree_cpu_ticks(p.pid))
                        time.sleep(0.1)
                    b1, t1 = _machine_ticks()
                    wall = time.monotonic() - w0
                    res = fr.stop()
            ditg_s = sum(last[k] - first[k] for k in first) / HZ
            cores = os.cpu_count() or 1
            out[f"{mbit}Mbit"] = {
                "machine_busy_pct_of_all_cores": 100.0 * (b1 - b0) / max(1, t1 - t0),
                "ditg_pct_of_all_cores": 100.0 * ditg_s / (wall * cores),
                "itgsend_rate_C": res.flows[0].itg_rate,
                "sent_pps_per_flow": [round(f.sent_pps) for f in res.flows],
                "received_share_of_link": [round(f.received_wire_bps / topo.link.rate, 3) for f in res.flows],
                "loss_pct": [round(f.loss_pct, 1) for f in res.flows],
                "errors": res.errors,
            }
        finally:
            tb.down()
    return out
