"""Workload benchmark: sequential in-process rendering vs 1 RMI worker on loopback vs 2 workers,
both codecs, rows per call 1 vs all, sizes A and B (seconds of the render phase).

Targets (issue 3): 1 RMI worker within 1.10x of sequential; 2 workers at least 1.7x faster than 1.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

from qoslab.executors import LocalExecutor
from qoslab.workloads.pool import java_command
from qoslab.workloads.raytracer import WorkloadSettings, run_workload

LOOPBACK = {"w1": "127.0.0.2", "w2": "127.0.0.3"}


def _sequential(size: str, frames: int) -> dict:
    r = LocalExecutor().run(java_command("sequential", "--size", size, "--frames", str(frames)), timeout=600)
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench_workload(repeat: int) -> dict:
    """Median render seconds per configuration; ratios against the targets."""
    ex = LocalExecutor()
    out: dict = {"configs": {}}
    frames = {"A": 4, "B": 1}
    reps = max(1, min(repeat, 3))
    for size in ("A", "B"):
        f = frames[size]
        seq = [_sequential(size, f) for _ in range(reps)]
        assert all(s["valid"] for s in seq)
        out["configs"][f"{size}/sequential"] = statistics.median(s["elapsed_render_s"] for s in seq)
        for workers in (1, 2):
            for codec in ("serializable", "externalizable"):
                for rpc in (1, "all"):
                    times = []
                    for _ in range(reps):
                        hosts = list(LOOPBACK)[:workers]
                        s = WorkloadSettings(hosts=hosts, size=size, rows_per_call=rpc, codec=codec, frames=f)
                        with tempfile.TemporaryDirectory() as d:
                            run = run_workload(s, lambda h: ex, LOOPBACK.__getitem__, Path(d))
                        assert run.valid, run.result
                        times.append(run.result["elapsed_render_s"])
                    out["configs"][f"{size}/rmi-{workers}/{codec}/rows-{rpc}"] = statistics.median(times)
        c = out["configs"]
        one = c[f"{size}/rmi-1/serializable/rows-all"]
        two = c[f"{size}/rmi-2/serializable/rows-all"]
        out[f"{size}_one_worker_vs_sequential"] = {"ratio": one / c[f"{size}/sequential"], "target": 1.10,
                                                  "met": one / c[f"{size}/sequential"] <= 1.10}
        out[f"{size}_two_workers_speedup"] = {"ratio": one / two, "target": 1.7, "met": one / two >= 1.7}
    out["frames"] = frames
    out["repeats"] = reps
    return out
