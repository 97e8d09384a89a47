"""Seed-workload benchmark (issue 37): reference 002's sort per mechanism and server count, and
the MPJ benchmark, against in-process baselines, on loopback (``sort-worker`` JVMs on
127.0.0.2-5 kept warm by the backend's pool, as a campaign keeps them; one untimed warm-up run
per configuration first).

Per sort configuration (medians over the repeats):

- ``total_s`` (the trial's metric) and its phases ``distribute_s``, ``sort_s``, ``collect_s``,
  ``merge_s``;
- ``sequential_s``: ``Arrays.sort`` of the same integers in the client's JVM, in-process;
- ``overhead_x``: ``total_s / sequential_s``: what distributing over the mechanism costs;
- ``orchestration_s``: wall seconds of the backend's ``run`` minus the client's own
  ``connect_s + total_s`` (client JVM start, pool check, result parsing).

MPJ (3 ranks): the benchmark's wall time, and per message size the MPJ ping-pong's median round
trip beside the plain-socket one between the same two JVMs (what MPJ Express adds to a socket).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from qoslab.executors import LocalExecutor
from qoslab.workloads import backend, settings_of
from qoslab.workloads.sort import MECHANISMS

HOSTS = {"c": "127.0.0.1", "w1": "127.0.0.2", "w2": "127.0.0.3", "w3": "127.0.0.4", "w4": "127.0.0.5"}
SIZE = 100_000
PHASES = ("total_s", "distribute_s", "sort_s", "collect_s", "merge_s", "sequential_s")


def _summary(rows: list[tuple[dict, float]]) -> dict:
    out = {k: statistics.median(r[k] for r, _ in rows) for k in PHASES}
    out["overhead_x"] = statistics.median(r["total_s"] / r["sequential_s"] for r, _ in rows)
    out["orchestration_s"] = statistics.median(w - r["connect_s"] - r["total_s"] for r, w in rows)
    return out


def _mpj(ex: LocalExecutor, d: Path, reps: int) -> dict:
    mpj = backend("mpj")
    s = settings_of({"kind": "mpj", "hosts": ["c", "w1", "w2"], "max_bytes": 65536, "reps": 20, "port": 14500})
    runs = []
    for i in range(reps):
        t0 = time.monotonic()
        run = mpj.run(s, lambda h: ex, HOSTS.__getitem__, d / f"mpj-{i}")
        assert run.valid, run.result
        runs.append((run.result, time.monotonic() - t0))
    r = runs[-1][0]
    sizes = {z["bytes"]: z["latency_s"]["p50"] for z in r["pingpong"]}
    sock = {z["bytes"]: z["latency_s"]["p50"] for z in r["socket_pingpong"]}
    return {"ranks": 3, "wall_s": statistics.median(w for _, w in runs),
            "elapsed_s": statistics.median(x["elapsed_s"] for x, _ in runs),
            "rtt_p50_s": {str(b): {"mpj": sizes[b], "socket": sock[b], "mpj_over_socket_x": sizes[b] / sock[b]}
                          for b in sorted(sizes) if b in (1, 1024, 65536)},
            "barrier_p50_s": r["barrier"]["p50"]}


def bench_sort(repeat: int) -> dict:
    ex = LocalExecutor()
    reps = max(1, min(repeat, 5))
    so = backend("sort")
    out: dict = {"size": SIZE, "repeats": reps, "configs": {}}
    with tempfile.TemporaryDirectory() as d:
        pool = so.open_pool(lambda h: ex, HOSTS.__getitem__, Path(d) / "workers", lifetime_s=1800)
        try:
            for servers in (2, 4):
                for mech in MECHANISMS:
                    s = settings_of({"kind": "sort", "hosts": list(HOSTS), "servers": servers, "mechanism": mech,
                                     "size": SIZE, "port": 14300})
                    rows = []
                    for i in range(reps + 1):
                        t0 = time.monotonic()
                        run = so.run(s, lambda h: ex, HOSTS.__getitem__, Path(d) / f"{mech}-{servers}-{i}", pool=pool)
                        wall = time.monotonic() - t0
                        assert run.valid, run.result
                        if i:  # the first run warms the servers' JIT for this configuration
                            rows.append((run.result, wall))
                    out["configs"][f"{mech}/{servers}"] = _summary(rows)
        finally:
            pool.close()
        out["mpj"] = _mpj(ex, Path(d), reps)
    return out
