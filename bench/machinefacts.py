"""What every benchmark result records beside its numbers: the machine's facts
(:func:`machine_facts`) and where results go (``RESULTS``). Imported by run_benchmarks.py and by
the benchmarks that also run on their own (overhead_bench.py); imports no qoslab code, so a
benchmark of an older source tree (``--src``) can use it."""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def cpu_probe_s() -> float:
    """Seconds one core takes for a fixed pure-Python loop (2 million additions; the best of
    three): two machines that report the same CPU name differ here when their cores do (the
    hypervisor's host, its clock). On 2026-12-01 this project's machine changed under it: make
    run's uncongested trial 0.70 -> 0.35 s with the same CPU name."""
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        x = 0
        for i in range(2_000_000):
            x += i
        best = min(best, time.perf_counter() - t0)
    return round(best, 4)


def machine_facts() -> dict:
    """CPU model (name, family/model/stepping, :func:`cpu_probe_s`), core count, memory, kernel,
    tool versions, git commit."""
    def first(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return None

    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor())
    info = Path("/proc/cpuinfo").read_text().splitlines()
    ident = {k: next((l.split(":", 1)[1].strip() for l in info if l.split(":", 1)[0].strip() == k), None)
             for k in ("cpu family", "model", "stepping")}
    mem_kb = int(next(l.split()[1] for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal")))
    return {
        "cpu": cpu, "cpu_id": "family {cpu family} model {model} stepping {stepping}".format(**ident),
        "cpu_probe_s": cpu_probe_s(), "cores": os.cpu_count(), "mem_gib": round(mem_kb / 2**20, 1), "kernel": platform.release(),
        "python": platform.python_version(), "iproute2": first(["ip", "-V"]), "iperf3": first(["iperf3", "--version"]),
        "java": first(["java", "-version"]) or subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0],
        "commit": first(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
