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


def machine_facts() -> dict:
    """CPU model, core count, memory, kernel, tool versions, git commit."""
    def first(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return None

    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor())
    mem_kb = int(next(l.split()[1] for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal")))
    return {
        "cpu": cpu, "cores": os.cpu_count(), "mem_gib": round(mem_kb / 2**20, 1), "kernel": platform.release(),
        "python": platform.python_version(), "iproute2": first(["ip", "-V"]), "iperf3": first(["iperf3", "--version"]),
        "java": first(["java", "-version"]) or subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0],
        "commit": first(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
