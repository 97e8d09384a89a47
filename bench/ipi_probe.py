"""Cross-CPU wake-ups on this machine: how much of the woken core's time no task is charged for
(issue 42, bench/README.md "CPU budgets").

A busy loop and a sleeper run on CPU 0; this probe, on CPU 1, writes one byte into the sleeper's
pipe ``RATE`` times a second (0: as fast as it can) for 4 s. On bare metal the loop's and the
sleeper's run times (/proc/PID/schedstat, the scheduler's clock) add up to CPU 0's whole time; on
a virtual machine each wake-up's inter-processor interrupt can cost CPU 0 time that neither is
charged for: ``unaccounted`` = 1 - (loop + sleeper) cores.

    python3 bench/ipi_probe.py 2500
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def _runtime(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def main(rate: int, seconds: float = 4.0) -> dict[str, float]:
    """Run the probe at ``rate`` wake-ups/s (0: unpaced); returns cores of the loop, the sleeper,
    and the share of CPU 0 no task was charged for."""
    loop = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"])
    r, w = os.pipe()
    sleeper = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c",
                                "import os, sys\nfd = int(sys.argv[1])\nwhile os.read(fd, 1): pass", str(r)],
                               pass_fds=(r,))
    try:
        os.sched_setaffinity(0, {1})
        time.sleep(0.5)
        a_l, a_s, t0 = _runtime(loop.pid), _runtime(sleeper.pid), time.monotonic()
        n, end = 0, t0 + seconds
        while time.monotonic() < end:
            os.write(w, b"x")
            n += 1
            if rate:
                nxt = time.monotonic() + 1.0 / rate
                while time.monotonic() < nxt:
                    pass
        b_l, b_s, t1 = _runtime(loop.pid), _runtime(sleeper.pid), time.monotonic()
    finally:
        for p in (loop, sleeper):
            p.kill()
            p.wait()
        os.close(w)
        os.close(r)
    span = t1 - t0
    lc, sc = (b_l - a_l) / 1e9 / span, (b_s - a_s) / 1e9 / span
    return {"wakeups_per_s": round(n / span), "loop_cores": round(lc, 3), "sleeper_cores": round(sc, 3),
            "unaccounted": round(1 - lc - sc, 3)}


if __name__ == "__main__":
    print(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2500))
