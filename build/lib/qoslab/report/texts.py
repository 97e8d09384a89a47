"""The report's longer paragraphs (pure, helpers of ``analysis/notebooks/report.py``): Markdown
built from stats.json blocks and the :class:`.context.ReportContext`, so the wording follows the
workload (JVMs only for the Java workloads, the flood's own generator, the profile's marking)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .context import ReportContext
from .mechanisms import SeedOrder


def statistics_intro(main: Mapping[str, Any]) -> str:
    """How the statistics were made (stats.json's ``settings`` and comparisons)."""
    st = main["settings"]
    return (f"Statistics: means with Student-t 95 % intervals; differences, ratios and the recovery ratio with "
            f"{st['bootstrap_method']} bootstrap 95 % intervals ({st['bootstrap_resamples']} resamples, seed "
            f"{st['bootstrap_seed']}); Welch t and Mann-Whitney U (exact without ties) two-sided p-values, "
            f"Holm-adjusted across the {len(main['comparisons'])} comparisons; TOST equivalence within "
            f"+-{st['tost_margin_rel']:.0%} of the mean of *{st['baseline'] or 'each comparison reference'}*; "
            f"MDE = the smallest difference a two-sided Welch test (alpha {st['alpha']}) detects with "
            f"{st['power']:.0%} power at these n and sd. "
            "Outliers (Tukey 1.5 IQR fences) are counted, never removed. Schema and definitions: analysis/README.md.")


def metric_intro(ctx: ReportContext, secondary: Mapping[str, Any]) -> str:
    """What the trials measured, for a declared metric ("" for elapsed_s in seconds)."""
    if ctx.metric.name == "elapsed_s" and ctx.unit == "s":
        return ""
    text = (f"The workload ({ctx.kind}) declares its primary metric **{ctx.metric.name}** in **{ctx.unit}** "
            f"({ctx.metric.direction} is better): every table and figure below is of it unless it says otherwise "
            "(differences and margins in the same unit).")
    if secondary:
        text += " Secondary metrics, each with its own statistics at the end of this section: " + ", ".join(
            f"{n} ({s['unit']}, {s['direction']} is better)" for n, s in secondary.items()) + "."
    return text


def fidelity_intro(fb: Mapping[str, Any]) -> str:
    """The fidelity section's explanation (stats.json's ``fidelity`` block)."""
    return ("Every trial is judged by the fidelity monitor (10 Hz samples of /proc and the switch ports' tc "
            "statistics over the workload window; checks and thresholds in `qoslab.meters.fidelityjudge`): "
            "*invalid* trials are "
            + ("left out of the statistics above" if fb["excluded_applied"] or not fb["excluded"] else
               "**not** left out here (see the warning at the top)")
            + f" (all trials: `trials-all.csv` / `stats-all.json`); {fb['invalid_share']:.0%} of the trials are "
            "invalid.")


def mechanisms_intro(seed: SeedOrder, measured: Mapping[str, list[str]]) -> str:
    """The mechanisms section's explanation: the seed's published order (its source, its summary
    when that differs) and, per algorithm ("-": the only one), the measured uncongested order
    (fastest first) and whether it is the seed's; whether the summary's slowest is measured slowest."""
    note = f" ({seed.note})" if seed.note else ""

    def verdict(m: list[str]) -> str:
        same = m == [x for x in seed.order if x in m]
        last = (f"; {seed.slowest} {'is' if m and m[-1] == seed.slowest else 'is not'} the slowest, as the "
                "summary says") if seed.slowest and seed.slowest in m else ""
        return f"*{', '.join(m)}*, {'the same' if same else 'not the same'}{last}"
    return (f"Seed {seed.seed} ranks the mechanisms, fastest first, *" + ", ".join(seed.order)
            + f"* ({seed.source}){note}. Measured order without congestion: "
            + "; ".join(f"{a + ': ' if a != '-' else ''}{verdict(m)}" for a, m in measured.items())
            + ". Slowdown = congested FIFO mean / uncongested FIFO mean; *won back* = the share of that slowdown "
            "the QoS profile recovers (BCa 95 %); >= marks lower bounds from trials that timed out and count at "
            "their bound.")


NETWORK_WAIT = ("Network wait = render time minus the busiest worker's own render time: what the critical worker "
                "spent not computing (waiting for requests, results, retransmissions). A switch profile can only "
                "change this part; the compute part also grows under a flood when the flood's packet processing "
                "shares the cores (the embedded testbed's one emulation artefact).")


def cpu_split_intro(ctx: ReportContext) -> str:
    """The compute split's explanation."""
    proc = "its JVM's CPU time" if ctx.java else "its process's CPU time"
    return (f"The busiest worker's busy time splits into {proc} (utime+stime of all its threads over the workload "
            f"window, from /proc) and the rest of its busy time, spent runnable but waiting for one of the machine's "
            f"cores (held by the other {'JVMs' if ctx.java else 'worker processes'}, the flood's processes and the "
            "kernel forwarding the flood). Means per condition:")


def cpu_intro(ctx: ReportContext) -> str:
    """The CPU section's explanation (column names of the cpu meter)."""
    head = ("the manager JVM exited; it holds the render phase and the manager's start" if ctx.java else
            "the head command exited; it holds the workload's run and the head's start")
    return (f"Seconds over the workload window (`cpu_window_s`: workers listening until {head}): CPU time of "
            f"the flood's processes (`cpu_flood_s`), of the {ctx.workers} (`cpu_workers_s`, the busiest one "
            "`cpu_busiest_worker_s`) and this machine's /proc/stat totals over all cores (`cpu_user_s`, "
            "`cpu_system_s`, `cpu_softirq_s` where the namespaces forward packets, `cpu_idle_s`, `cpu_steal_s`); "
            "`cpu_outside_s` is what other users' processes on this machine used meanwhile (a lower bound). "
            "Process times overlap the softirq column (tick accounting charges a softirq tick to the task it "
            "interrupted as well). Means per condition:")


def switch_intro(marking: str, missing: int) -> str:
    """The switch evidence section's explanation; ``marking``: :func:`.context.marking_sentence`."""
    return ("Packets dropped per egress queue (1-4; IOS prints them as queue 0-3), summed over the trial's ports, "
            "mean per trial; each panel one queue, its own linear axis from 0. With `mls qos` off (fifo) a port has "
            "one FIFO, counted as queue 1" + (f"; {marking} " if marking else ". ")
            + (f"{missing} trial(s) have no switch evidence." if missing else ""))


def calls_intro(resamples: int) -> str:
    """The call latency section's explanation."""
    return ("Every render call as the manager timed it (`workload-calls.jsonl`), pooled over each condition's "
            "counted trials; quantiles of type 7; 95 % percentile bootstrap intervals resampling **trials** (the "
            f"calls of one trial share its network state), {resamples} resamples. Recovery as for the means, on the "
            "quantile: (congested - treated) / (congested - baseline). analysis/README.md, Call latency.")


def capture_lost(n: int, idx_list: str, include: bool) -> str:
    """The warning for captured trials that lost packets."""
    return (f"**{n} captured trial(s) lost packets** (idx {idx_list}): their class counts are incomplete and "
            "biased towards what the capture kept. "
            + ("They are still in the class figures (include_dropped_captures=True)." if include else
               "They are left out of the class figures below (report parameter include_dropped_captures=True puts "
               "them back)."))
