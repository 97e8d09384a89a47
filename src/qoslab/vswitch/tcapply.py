"""Applying a compiled tc plan to the switch ports, and reading their per-queue counters back."""

from __future__ import annotations

import re
import subprocess

from ..errors import QoslabError
from ..tccompile import TcPlan


def queue_counters(ns: str, dev: str) -> tuple[list[int], list[int]]:
    """Packets sent and dropped per egress queue 1-4 of a switch port, from tc counters (QoS off:
    the single FIFO counts as queue 1... reported under queue 0 as IOS numbers them 0-3)."""
    out = subprocess.run(["tc", "-n", ns, "-s", "qdisc", "show", "dev", dev], capture_output=True, text=True).stdout
    enq, drop = [0] * 4, [0] * 4
    for m in re.finditer(r"qdisc bfifo (\d+): .*?\n\s*Sent \d+ bytes (\d+) pkt \(dropped (\d+)", out):
        handle = int(m.group(1))
        i = handle - 11 if 11 <= handle <= 14 else 0
        enq[i] += int(m.group(2))
        drop[i] += int(m.group(3))
    return enq, drop


def apply_plan(plan: TcPlan, ns: str, devs: list[str]) -> None:
    """Replace the qdiscs of ``devs`` in namespace ``ns`` by the plan's. Raises QoslabError naming
    the failing tc line."""
    reset = "".join(f"qdisc del dev {d} root\nqdisc del dev {d} clsact\n" for d in devs)
    subprocess.run(["tc", "-n", ns, "-force", "-batch", "-"], input=reset, capture_output=True, text=True)
    lines = [l for d in devs for l in plan.ports.get(d, [])]
    p = subprocess.run(["tc", "-n", ns, "-batch", "-"], input="\n".join(lines) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        m = re.search(r"Command failed -:(\d+)", p.stderr)
        bad = lines[int(m.group(1)) - 1] if m else "?"
        first = p.stderr.strip().splitlines()[0] if p.stderr.strip() else "no error output"
        raise QoslabError(f"tc in {ns} failed on `{bad}`: {first}")
