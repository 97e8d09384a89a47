"""The base RTT of a trial's path: ICMP echo from the workload's first host (the manager) to its
second, before the capture and the flood start (meter ``rtt``, columns ``base_rtt_*``).

The scale model (docs/scale-model.md, :mod:`qoslab.scale.model`) compares the switch queue's
depth in time with the path's base RTT (``queue_to_rtt``): a queue that holds many RTTs of data
turns congestion into long standing delays, one that holds a fraction of an RTT into loss. The
thesis gives no RTT (the model assumes 150 us for a 2006 gigabit LAN); here it is measured in the
trials of the playbook's baseline condition (:func:`due`), with its profile pushed and before the
capture starts: the scale model takes the median over the baseline's trials
(:func:`qoslab.scale.measure.base_rtt_s`) and no other condition's value is used. Pinging in every
trial cost each one 0.32-0.37 s of harness time (``bench/results/overhead-before-e1def78.json``:
the quick campaign's median overhead was 0.77 s; 20 requests 10 ms apart take 0.31-0.33 s on this
HZ=250 kernel before the command's own start), so the other conditions' trials do not ping and
their columns stay NULL (issue 42). The interval stays 10 ms: at 1-2 ms the same path measured
0.015-0.05 ms instead of 0.08-0.10 ms (the CPUs do not fall idle between requests), a different
quantity from the one earlier campaigns stored. Issue 48 halved the count instead (20 -> 10): a
10 ms interval takes ~16 ms here, and 20 requests were the baseline trials' largest harness cost
(0.33 s of their 0.41 s median overhead in the quick campaign); ten requests at the same interval
sample the same RTT, and the scale model takes the median over all baseline trials (6-50 of
them), not one trial's.

What is measured: :data:`COUNT` echo requests of the ``ping`` default size (56 bytes of data, 98
bytes on the wire), :data:`INTERVAL_S` apart, from ``hosts[0]`` to ``hosts[1]`` of the workload
through the host's executor (``ip netns exec`` on the testbed, ssh on a cluster); the median and
the minimum of the replies' round-trip times (milliseconds), and how many replies came. A workload
on one host has no path: the columns stay NULL.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from typing import Any, ClassVar

from .base import BaseMeter, TrialContext

#: Echo requests per baseline trial (10 at 10 ms; 20 took 0.31-0.33 s here: see the module doc).
COUNT = 10
#: Seconds between echo requests (ping's ``-i``; below 0.2 s needs root, which the testbed is).
INTERVAL_S = 0.01
#: Seconds ping waits at most for the last reply (``-W``) and the run as a whole may take.
WAIT_S = 1.0
RUN_TIMEOUT_S = 10.0

_TIME = re.compile(r"\bicmp_seq=\d+ .*?\btime[=<]\s*([0-9.]+)\s*ms")


def parse_ping(text: str) -> dict[str, float | int | None]:
    """Round-trip times from ``ping``'s output (iputils, one ``... icmp_seq=N ttl=T time=X ms`` line
    per reply; duplicates ``(DUP!)`` are not counted). Returns ``{"replies": n, "median_ms": ...,
    "min_ms": ...}`` (times None without a reply). Pure."""
    times = [float(m.group(1)) for line in text.splitlines() if "(DUP!)" not in line
             for m in [_TIME.search(line)] if m]
    if not times:
        return {"replies": 0, "median_ms": None, "min_ms": None}
    return {"replies": len(times), "median_ms": statistics.median(times), "min_ms": min(times)}


def ping_argv(dst_ip: str, count: int = COUNT, interval_s: float = INTERVAL_S) -> list[str]:
    """``ping`` argv for ``count`` echo requests to ``dst_ip`` (numeric output, no DNS)."""
    return ["ping", "-n", "-c", str(count), "-i", f"{interval_s:g}", "-W", f"{WAIT_S:g}", dst_ip]


def due(ctx: TrialContext) -> bool:
    """Whether the trial of ``ctx`` pings: a trial of the playbook's baseline condition
    (``Playbook.baseline_condition()``: ``baseline``, else the first uncongested condition); every
    trial when the context has no playbook (a meter used outside a campaign)."""
    baseline = getattr(ctx.playbook, "baseline_condition", None)
    return baseline is None or ctx.condition == baseline().name


class RttMeter(BaseMeter):
    """Base RTT from the workload's first host to its second (see the module doc); needs the
    trial's plan and executors in the context (``ctx.plan``, ``ctx.executor_of``)."""

    COLUMNS: ClassVar[Mapping[str, str]] = {"base_rtt_ms": "REAL", "base_rtt_min_ms": "REAL",
                                            "base_rtt_replies": "INTEGER"}

    def __init__(self, ctx: TrialContext) -> None:
        super().__init__(ctx)
        self.measured: dict[str, float | int | None] = {}

    def begin(self, ctx: TrialContext) -> None:
        """Ping once the profile is pushed, before the capture starts, in a baseline trial
        (:func:`due`; raises what the executor raises when ping cannot start: MeterSet then leaves
        the columns NULL)."""
        hosts = list(getattr(getattr(ctx.plan, "workload", None), "hosts", []) or [])
        if len(hosts) < 2 or ctx.executor_of is None or ctx.topology is None or not due(ctx):
            return
        res = ctx.executor_of(hosts[0]).run(ping_argv(ctx.topology.host(hosts[1]).ip),
                                            timeout=RUN_TIMEOUT_S, check=False)
        self.measured = parse_ping(res.stdout)

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        """``base_rtt_ms`` (median), ``base_rtt_min_ms`` and ``base_rtt_replies`` (None: not measured)."""
        m = self.measured
        return {"base_rtt_ms": m.get("median_ms"), "base_rtt_min_ms": m.get("min_ms"),
                "base_rtt_replies": m.get("replies")}
