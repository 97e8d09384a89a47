#!/usr/bin/env python3
"""Idle-CPU wake-up latency on the testbed: the uncongested baseline of the sockperf and MPI
examples with and without a CPU-load floor (one SCHED_IDLE busy loop per core: it runs only when
a core would otherwise go idle, so no core sleeps and no wake-up latency is paid, while any other
task preempts it). Alternating runs; prints each run's metrics and the medians."""
import json, os, statistics, subprocess, sys, time
from pathlib import Path

OUT = Path("/tmp/wt-user-runs/wake")
Q = [".venv/bin/qoslab"]
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
books = {"sockperf": ("playbooks/examples/sockperf-pingpong.yaml", ["rtt_p50_ms", "rtt_p99_ms", "rtt_p999_ms"]),
         "mpi": ("playbooks/examples/mpi-allreduce.yaml", ["pingpong_p50_ms", "allreduce_p50_ms", "allreduce_p99_ms"])}


def floor_on():
    return [subprocess.Popen(["chrt", "-i", "0", "taskset", "-c", str(c), "sh", "-c", "while :; do :; done"])
            for c in range(os.cpu_count() or 1)]


def run(name, tag, i):
    d = OUT / f"{name}-{tag}-{i}"
    env = {**os.environ, "OMPI_MCA_mpi_yield_when_idle": "1"} if tag == "yield" else None
    r = subprocess.run([*Q, "workload", "run", "--playbook", books[name][0], "--out", str(d)], capture_output=True,
                       text=True, timeout=400, env=env)
    try:
        res = json.loads((d / "workload-result.json").read_text())
    except (OSError, ValueError):
        print(name, tag, i, "FAILED", r.stdout[-500:], r.stderr[-500:], flush=True)
        return None
    res = res.get("result", res)
    vals = {k: res.get(k) for k in books[name][1]}
    print(name, tag, i, json.dumps(vals), flush=True)
    return vals


summary = {}
for name in books:
    for i in range(RUNS):
        tags = ("idle", "floor") + (("yield",) if name == "mpi" else ())
        for tag in (tags if i % 2 == 0 else tags[::-1]):
            procs = floor_on() if tag == "floor" else []
            time.sleep(0.5 if procs else 0)
            try:
                v = run(name, tag, i)
            finally:
                for p in procs:
                    p.kill()
                    p.wait()
            if v:
                summary.setdefault((name, tag), []).append(v)
for (name, tag), vs in summary.items():
    med = {k: round(statistics.median([v[k] for v in vs if v.get(k) is not None]), 4) for k in books[name][1]}
    print("MEDIAN", name, tag, f"n={len(vs)}", json.dumps(med), flush=True)
