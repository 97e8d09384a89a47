"""Workload-backend benchmark (issue 23): per mechanism and algorithm, the matmul workload's
overhead against an in-process run, on loopback (4 ``matmul-worker`` JVMs on 127.0.0.2-5, kept
warm by the backend's pool, as a campaign keeps them; one untimed warm-up run first).

Per configuration (medians over the repeats):

- ``total_s``: the distributed product (the trial's metric), ``comm_s`` its communication part;
- ``sequential_s``: the same product in the manager's JVM, in-process (no workers, no calls);
- ``overhead_x``: ``total_s / sequential_s``: what distributing over the mechanism costs;
- ``orchestration_s``: wall seconds of the backend's ``run`` (manager JVM start, pool check,
  result parsing) minus the manager's own ``connect_s + total_s``: qoslab's per-trial cost.

Also pingpong's per-transport sweep time (1 B .. 64 KiB, 10 reps) for the same warm pool.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from qoslab.executors import LocalExecutor
from qoslab.workloads import backend, settings_of
from qoslab.workloads.matmul import ALGORITHMS, MECHANISMS

LOOPBACK = {"w1": "127.0.0.2", "w2": "127.0.0.3", "w3": "127.0.0.4", "w4": "127.0.0.5"}
SIZE = 200


def _summary(rows: list[tuple[dict, float]]) -> dict:
    def med(k: str) -> float:
        return statistics.median(r[k] for r, _ in rows)

    return {"total_s": med("total_s"), "comm_s": med("comm_s"), "sequential_s": med("sequential_s"),
            "overhead_x": statistics.median(r["total_s"] / r["sequential_s"] for r, _ in rows),
            "orchestration_s": statistics.median(w - r["connect_s"] - r["total_s"] for r, w in rows),
            "calls": rows[0][0]["calls"]}


def bench_matmul(repeat: int) -> dict:
    ex = LocalExecutor()
    reps = max(1, min(repeat, 5))
    mm, pp = backend("matmul"), backend("pingpong")
    out: dict = {"size": SIZE, "workers": len(LOOPBACK), "repeats": reps, "configs": {}, "pingpong": {}}
    with tempfile.TemporaryDirectory() as d:
        pool = mm.open_pool(lambda h: ex, LOOPBACK.__getitem__, Path(d) / "workers", lifetime_s=1800)
        try:
            for mech in MECHANISMS:
                for alg in ALGORITHMS:
                    s = settings_of({"kind": "matmul", "hosts": list(LOOPBACK), "mechanism": mech,
                                     "algorithm": alg, "size": SIZE})
                    rows = []
                    for i in range(reps + 1):
                        t0 = time.monotonic()
                        run = mm.run(s, lambda h: ex, LOOPBACK.__getitem__, Path(d) / f"{mech}-{alg}-{i}", pool=pool)
                        wall = time.monotonic() - t0
                        assert run.valid, run.result
                        if i:  # the first run warms the workers' JIT for this configuration
                            rows.append((run.result, wall))
                    out["configs"][f"{mech}/{alg}"] = _summary(rows)
            for mech in ("socket", "rmi"):
                s = settings_of({"kind": "pingpong", "hosts": ["w1", "w2"], "mechanism": mech, "max_bytes": 65536,
                                 "reps": 10})
                times = [pp.run(s, lambda h: ex, LOOPBACK.__getitem__, Path(d) / f"pp-{mech}-{i}",
                                pool=pool).result["elapsed_s"] for i in range(reps)]
                out["pingpong"][mech] = {"sweep_s": statistics.median(times)}
        finally:
            pool.close()
    return out
