# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %%
# The campaign/thesis report notebook (jupytext percent format). qoslab.report.notebook converts it to a
# notebook with jupytext, papermill executes it (the parameters below) and nbconvert exports
# report.html with the code hidden. The pure helpers (formatting, the conditions' order and
# colours, the tables' frames) live in qoslab.report.lib, tested in tests/unit/test_reportlib.py;
# this file reads the inputs and draws. Linted and type-checked: `make lint`.
#
# Conventions of every figure: each condition keeps one colour and one position (baseline first:
# no congestion before congestion, fifo before a QoS profile) with a legend; trial times span 1 s to
# 40 s, so they are drawn on log axes or in per-condition panels; bars always start at 0 on a linear
# axis and carry their values.

import json
import pathlib
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
import yaml
from IPython.display import HTML, Image, Markdown, display
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator

from qoslab.campaign.store import Store
from qoslab.report import calls as rc
from qoslab.report import factors as rf
from qoslab.report import fidelity as rfid
from qoslab.report import lib as rl
from qoslab.report import mechanisms as rmech

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen before pyplot is imported)

# %% tags=["parameters"]
# parameters (papermill)
stats_path = ""  # stats.json of a campaign, or of `qoslab-analysis thesis`
campaign_dir = ""  # the campaign folder ("" in thesis mode)
thesis_data = ""  # the thesis CSV folder (thesis mode)
thesis_stats_path = ""  # campaign mode: the thesis's statistics, for Table 5 side by side
include_dropped_captures = False  # class figures also from captures that lost packets
out_dir = "."
title = "qoslab report"


# %%
out = pathlib.Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
stats = json.loads(pathlib.Path(stats_path).read_text())
thesis = "table5" in stats
main = stats["table5"] if thesis else stats
camp = pathlib.Path(campaign_dir) if campaign_dir else None
figures: list[str] = []


def show(fig: Figure, name: str) -> None:
    """Save ``fig`` as out/name (listed in figures.json), close it and display the PNG."""
    path = out / name
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    figures.append(name)
    display(Image(filename=str(path)))


def table(df: pd.DataFrame, **kw: Any) -> None:
    display(HTML(df.to_html(index=False, escape=True, **kw)))


# one colour and one position per condition: (congestion, QoS) -> colour; order baseline first
if thesis:
    kinds = rl.thesis_kinds(main["conditions"])
else:
    assert camp is not None, "a campaign report needs campaign_dir"
    kinds = rl.playbook_kinds(yaml.safe_load((camp / "playbook.yaml").read_text()))
ORDER = rl.condition_order(kinds)
COLOR = rl.condition_colors(ORDER, kinds)


def plain_log(ax: Axes, axis: str = "y") -> None:
    """Log scale with plain-number tick labels (1, 2, 5, 10, 20 ...) instead of powers of ten."""
    a = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    a.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    a.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    a.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def ticks(ax: Axes, names: list[str]) -> None:
    """Condition names under their positions, wrapped to short lines."""
    ax.set_xticks(range(len(names)), [rl.wrap_label(n) for n in names], fontsize=8)


def legend(ax: Axes, names: list[str] | None = None, **kw: Any) -> None:
    """A legend of the conditions ``names`` (default: all) in their colours."""
    names = names or ORDER
    ax.legend(handles=[Patch(color=COLOR[n], label=n) for n in names], fontsize=8, **kw)


display(Markdown(f"# {title}"))
fidelity_warning = rfid.top_warning(stats)
if fidelity_warning:
    display(Markdown(fidelity_warning))
if camp:
    prov = json.loads((camp / "provenance.json").read_text())
    display(Markdown(f"Campaign folder `{camp.name}`; seed {prov['seed']}; qoslab {prov['qoslab_commit'][:10]}; "
                     f"kernel {prov['kernel']}."))
else:
    display(Markdown("The thesis's Appendix A trial times, computed here, next to its published Tables 3 and 5."))
st = main["settings"]
display(Markdown(
    f"Statistics: means with Student-t 95 % intervals; differences, ratios and the recovery ratio with "
    f"{st['bootstrap_method']} bootstrap 95 % intervals ({st['bootstrap_resamples']} resamples, seed "
    f"{st['bootstrap_seed']}); Welch t and Mann-Whitney U (exact without ties) two-sided p-values, Holm-adjusted "
    f"across the {len(main['comparisons'])} comparisons; TOST equivalence within +-{st['tost_margin_rel']:.0%} of "
    f"the mean of *{st['baseline'] or 'each comparison reference'}*; MDE = the smallest difference a two-sided Welch "
    f"test (alpha {st['alpha']}) detects with {st['power']:.0%} power at these n and sd. Outliers (Tukey 1.5 IQR "
    "fences) are counted, never removed. Schema and definitions: analysis/README.md."))


# %%
# raw trial times per condition (what the statistics used)
if thesis:
    data = pathlib.Path(thesis_data)
    raw = rl.thesis_raw(pd.read_csv(data / "thesis-table3-scaling.csv"), pd.read_csv(data / "thesis-table5-qos.csv"),
                        ORDER)
else:
    assert camp is not None
    raw = rl.campaign_raw(pd.read_csv(camp / "trials.csv"), ORDER)


# %%
sections = ({"Table 3: scaling": stats["table3"], "Table 5: congestion and QoS": stats["table5"]} if thesis
            else {"Trial times by condition": stats})
for head, s in sections.items():
    display(Markdown(f"## {head}"))
    names = [n for n in ORDER if n in s["conditions"]] or list(s["conditions"])
    table(rl.cond_table(s, names), float_format=lambda v: f"{v:.3f}")
    if s.get("comparisons"):
        tests, effects, tost = rl.comparison_tables(s, kinds)
        display(Markdown("**Tests** (two-sided; Holm across this table's comparisons)"))
        table(tests)
        display(Markdown("**Effect sizes and intervals** (b against a; d and g in pooled standard deviations)"))
        table(effects)
        if len(tost):
            display(Markdown("**Does the profile cost anything without congestion? (TOST equivalence)**: equivalent "
                             "when the 90 % Welch interval of the difference lies inside the margin"))
            table(tost)
    for rec in s.get("recovery", []):
        display(Markdown(f"**Recovery ratio of {rec['treated']}**: " + rl.recovery_value(rec)
                         + f" of the slowdown from *{rec['baseline']}* to *{rec['congested']}* won back."))


# %%
# a factorial campaign: the QoS factor's recovery at every level of the other factors
if main.get("factorial"):
    fac = main["factorial"]
    display(Markdown(f"## Recovery by factor level ({', '.join(k for k in fac['factors'] if k != fac['qos_factor'])})"))
    table(rf.recovery_table(fac))
    if fac["differences"]:
        display(Markdown("**Do the recoveries differ between levels?** (" + fac["method"] + ")"))
        table(rf.difference_table(fac))
    pts = rf.recovery_points(fac)
    if pts:
        fig, ax = plt.subplots(figsize=(1.2 + 1.3 * len(pts), 2.8))
        xs = np.arange(len(pts))
        vals = np.array([p[1] for p in pts])
        ax.errorbar(xs, vals, yerr=[vals - [p[2] for p in pts], [p[3] for p in pts] - vals], fmt="o", capsize=4)
        ax.axhline(0, color="0.7", lw=0.8)
        ax.axhline(1, color="0.7", lw=0.8, ls="--")
        ax.set_xticks(xs, [p[0] for p in pts], fontsize=8)
        ax.set_ylabel("recovery (BCa 95 %)")
        show(fig, "factorial-recovery.png")
# seed 000's question under congestion (qoslab.report.mechanisms): a factorial over the matmul mechanisms
if main.get("factorial") and rmech.applies(main["factorial"]):
    mrows = rmech.mechanism_rows(main["conditions"], main["factorial"], main.get("censored"),
                                 main.get("comparisons", []))
    agree = rmech.ordering_agrees(mrows)
    display(Markdown("## The Java mechanisms under congestion (seed 000's Table 4.1, asked again)"))
    display(Markdown("Seed 000 ranks the mechanisms, fastest first, *" + ", ".join(rmech.SEED000_ORDER)
                     + "* for both algorithms (section 4, Table 4.1). Measured order without congestion "
                     + "; ".join(f"{a}: {'the same' if ok else 'different'}" for a, ok in agree.items())
                     + ". Slowdown = congested FIFO mean / uncongested FIFO mean; *won back* = the share of "
                     "that slowdown the QoS profile recovers (BCa 95 %); >= marks lower bounds from trials "
                     "that timed out and count at their bound."))
    table(rmech.mechanism_table(mrows))
# emulation fidelity (qoslab.meters.fidelity): verdicts per condition, trials left out
if camp and stats.get("fidelity"):
    fb = stats["fidelity"]
    display(Markdown("## Emulation fidelity"))
    display(Markdown("Every trial is judged by the fidelity monitor (10 Hz samples of /proc and the switch ports' "
                     "tc statistics over the workload window; checks and thresholds in "
                     "`qoslab.meters.fidelityjudge`): *invalid* trials are "
                     + ("left out of the statistics above" if fb["excluded_applied"] or not fb["excluded"] else
                        "**not** left out here (see the warning at the top)")
                     + f" (all trials: `trials-all.csv` / `stats-all.json`); {fb['invalid_share']:.0%} of the "
                     "trials are invalid."))
    table(pd.DataFrame(rfid.counts_rows(fb, ORDER)))
    if fb["excluded"]:
        display(Markdown("**Trials judged invalid**"))
        table(pd.DataFrame(rfid.excluded_rows(fb)))


# %%
if camp and thesis_stats_path and pathlib.Path(thesis_stats_path).exists():
    th = json.loads(pathlib.Path(thesis_stats_path).read_text())["table5"]
    side, side_comparisons = rl.thesis_side_tables(main, th, ORDER, kinds)
    display(Markdown("## Table 5 beside the thesis's"))
    display(Markdown("The thesis's raw Appendix A data (its no-congestion/no-QoS column is Table 3's 4 machines) "
                     "and this campaign, condition by condition; x baseline = mean / the uncongested fifo mean."))
    table(side)
    table(side_comparisons)


# %%
names = ORDER
fig, ax = plt.subplots(figsize=(8, 3.6))
for i, n in enumerate(names):
    d = main["conditions"][n]
    ax.errorbar([i], [d["mean"]], yerr=[[d["mean"] - d["ci95"][0]], [d["ci95"][1] - d["mean"]]], fmt="o", ms=8,
                capsize=6, color=COLOR[n])
    ax.annotate(f"{d['mean']:.2f} s", (i, d["ci95"][1]), textcoords="offset points", xytext=(0, 6), ha="center",
                fontsize=8)
plain_log(ax)
ticks(ax, names)
ax.set_xlim(-0.5, len(names) - 0.5)
lo, hi = ax.get_ylim()
ax.set_ylim(lo, hi * 1.6)
ax.set_ylabel("elapsed s (log), mean and 95% CI")
legend(ax, loc="upper left")
ax.set_title("Figure 22 style: time lost to congestion and won back by QoS")
show(fig, "fig-means.png")

fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [1, 1.2]})
rng = np.random.default_rng(0)
for i, n in enumerate(names):
    v = raw[n].elapsed_s.to_numpy()
    a1.boxplot([v], positions=[i], widths=0.55, showfliers=False, medianprops={"color": "black"},
               boxprops={"color": COLOR[n]}, whiskerprops={"color": COLOR[n]}, capprops={"color": COLOR[n]})
    a1.plot(i + rng.uniform(-0.18, 0.18, len(v)), v, "o", ms=3, alpha=0.6, color=COLOR[n])
    x = np.sort(v)
    a2.step(x, np.arange(1, len(x) + 1) / len(x), where="post", color=COLOR[n], lw=1.8)
plain_log(a1)
ticks(a1, names)
a1.set_ylabel("elapsed s (log)")
a1.set_title("Box plots (whiskers 1.5 IQR) with every trial")
plain_log(a2, "x")
a2.set_xlabel("elapsed s (log)")
a2.set_ylabel("fraction of trials <= x")
a2.grid(alpha=0.3)
a2.set_title("CDF of trial times")
legend(a2, loc="lower right")
show(fig, "fig-box.png")

if main["comparisons"]:
    comps = main["comparisons"]
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(comps) + 1.2))
    for i, c in enumerate(comps):
        lo, hi = c["ratio_ci95"] or (c["ratio"], c["ratio"])
        ax.errorbar([c["ratio"]], [i], xerr=[[c["ratio"] - lo], [hi - c["ratio"]]], fmt="o", capsize=5,
                    color=COLOR[c["b"]])
        ax.annotate(f"x{c['ratio']:.3f} [{lo:.3f}-{hi:.3f}]  d = {c['cohens_d']:+.2f}, "
                    f"Holm p = {rl.pfmt(c['welch_t_p_holm'])}",
                    (hi, i), textcoords="offset points", xytext=(8, -3), fontsize=8)
    ax.axvline(1, color="grey", lw=1, ls="--")
    ax.set_yticks(range(len(comps)), [f"{c['b']}\nvs {c['a']}" for c in comps], fontsize=8)
    plain_log(ax, "x")
    ax.set_xlabel("ratio of means b / a (log), 95% BCa bootstrap interval")
    ax.set_xlim(min(c["ratio_ci95"][0] if c["ratio_ci95"] else c["ratio"] for c in comps) / 1.5,
                max(c["ratio_ci95"][1] if c["ratio_ci95"] else c["ratio"] for c in comps) * 12)
    ax.invert_yaxis()
    ax.set_title("Effect sizes: each comparison's ratio of means (colour = condition b)")
    show(fig, "fig-effects.png")


# %%
if camp:
    with Store(camp / "trials.sqlite", readonly=True) as store:
        trials = pd.DataFrame(store.rows())
    done = rl.counted(trials)
    gap, pause = rl.resume_pauses(trials)
    fig, ax = plt.subplots(figsize=(11, 4))
    for n in ORDER:
        g = done[done.condition == n]
        ax.plot(g.idx, g.elapsed_s, "o", ms=4, color=COLOR[n], alpha=0.85)
    wu = trials[(trials.warmup == 1) & trials.elapsed_s.notna()]
    ax.plot(wu.idx, wu.elapsed_s, "o", ms=5, mfc="none", color="grey")
    retried = trials[trials.attempts > 1]
    ax.plot(retried.idx, retried.elapsed_s.fillna(trials.elapsed_s.max()), "s", ms=11, mfc="none", mec="black",
            mew=1.5)
    failed = trials[trials.status == "failed"]
    ymax = float(trials.elapsed_s.max())
    ax.plot(failed.idx, [ymax * 1.3] * len(failed), "X", ms=9, color="black")
    for i in trials.idx[pause]:
        ax.axvline(i - 0.5, color="black", ls="--", lw=1)
        ax.annotate(f"resumed after {gap[trials.idx == i].iloc[0] / 60:.0f} min", (i - 0.5, ymax), rotation=90,
                    fontsize=8, xytext=(3, 0), textcoords="offset points", va="top")
    plain_log(ax)
    ax.set_xlabel("trial in run order (idx)")
    ax.set_ylabel("elapsed s (log)")
    handles = [Patch(color=COLOR[n], label=n) for n in ORDER] + [
        Line2D([], [], marker="o", mfc="none", color="grey", ls="", label="warm-up"),
        Line2D([], [], marker="s", mfc="none", mec="black", ls="", ms=9, label="retried (attempts > 1)"),
        Line2D([], [], marker="X", color="black", ls="", label="failed"),
        Line2D([], [], color="black", ls="--", label="pause / resume")]
    ax.legend(handles=handles, fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title("Every trial in run order (drift, resume gaps and retries would show here)")
    show(fig, "fig-runorder.png")
    warm = int((trials.warmup == 1).sum())
    display(Markdown(f"{len(done)} trials counted, {warm} warm-up, {len(failed)} failed, {len(retried)} retried "
                     f"(a retried trial is counted once, with its last attempt), {int(pause.sum())} pause(s) "
                     "longer than a minute between trials (an interrupted campaign resumed)."))
    if len(failed) or len(retried):
        table(rl.issue_table(failed, retried))
elif thesis_data:
    fig, ax = plt.subplots(figsize=(11, 3.8))
    for n in ORDER:
        ax.plot(raw[n].trial, raw[n].elapsed_s, "o-", ms=3, lw=0.8, color=COLOR[n], alpha=0.85)
    plain_log(ax)
    ax.set_xlabel("trial")
    ax.set_ylabel("elapsed s (log)")
    legend(ax, loc="upper left", ncol=2)
    ax.set_title("Appendix A trials in order")
    show(fig, "fig-runorder.png")


# %%
def per_condition_stack(parts: dict[str, dict[str, float]], colors: dict[str, str], title: str, ylabel: str,
                        name: str) -> None:
    """Per-condition panels (each its own linear axis from 0): a stacked bar of parts[cond] = {label: value};
    values under 4 % of a bar are drawn but not labelled, the legend lists the parts that occur."""
    conds = [n for n in ORDER if n in parts]
    fig, axes = plt.subplots(1, len(conds), figsize=(2.6 * len(conds) + 1, 3.4), squeeze=False)
    used: list[str] = []
    for ax, n in zip(axes[0], conds, strict=True):
        bottom, whole = 0.0, sum(v for v in parts[n].values() if v > 0)
        for label, v in parts[n].items():
            if not v > 0:
                continue  # nothing to draw (e.g. no flood processes without congestion)
            used += [label] if label not in used else []
            ax.bar([0], [v], bottom=bottom, color=colors[label], width=0.6, edgecolor=COLOR[n], lw=2)
            if v >= 0.04 * whole:
                ax.annotate(f"{v:.3g}", (0, bottom + v / 2), ha="center", va="center", fontsize=8,
                            color=rl.text_color_on(colors[label]))
            bottom += v
        ax.set_xticks([])
        ax.set_xlim(-0.6, 0.6)
        ax.set_ylim(0, bottom * 1.15 or 1)
        ax.set_title(n, fontsize=9, color=COLOR[n])
    axes[0][0].set_ylabel(ylabel)
    axes[0][-1].legend(handles=[Patch(color=colors[label], label=label) for label in colors if label in used],
                       fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(title, y=1.06)
    show(fig, name)


if camp and (camp / "stats-network.json").exists():
    net = json.loads((camp / "stats-network.json").read_text())
    display(Markdown("## Where the time goes: compute vs network wait"))
    display(Markdown("Network wait = render time minus the busiest worker's own render time: what the critical "
                     "worker spent not computing (waiting for requests, results, retransmissions). A switch profile "
                     "can only change this part; the compute part also grows under a flood when the flood's packet "
                     "processing shares the cores (the embedded testbed's one emulation artefact)."))
    table(rl.cond_table(net, [n for n in ORDER if n in net["conditions"]]), float_format=lambda v: f"{v:.3f}")
    for rec in net.get("recovery", []):
        display(Markdown(f"**Recovery of the network wait by {rec['treated']}**: " + rl.recovery_value(rec)))
    parts, split_table = rl.compute_network_split(done, ORDER)
    if split_table is not None:
        display(Markdown("The busiest worker's busy time splits into its JVM's CPU time (utime+stime of all its "
                         "threads over the workload window, from /proc) and the rest of its busy time, spent runnable "
                         "but waiting for one of the machine's cores (held by the other JVMs, the flood's processes "
                         "and the kernel forwarding the flood). Means per condition:"))
        table(split_table, float_format=lambda v: f"{v:.3f}")
    per_condition_stack(parts, {"busiest worker on CPU": "#b0b0b0", "busiest worker waiting for a core": "#e6ab02",
                                "busiest worker computing": "#b0b0b0", "network wait": "#4d4d4d"},
                        "Compute vs network wait per condition (mean s; panel border = condition)", "seconds (mean)",
                        "fig-compute-network.png")


# %%
if camp:
    cpud = rl.cpu_frame(trials, done)
    if [c for c in cpud.columns if c != "condition"]:
        display(Markdown("## CPU time per trial (from /proc)"))
        display(Markdown("Seconds over the workload window (`cpu_window_s`: workers listening until the manager JVM "
                         "exited; it holds the render phase and the manager's start): CPU time of the flood's "
                         "processes (`cpu_flood_s`), of the worker JVMs (`cpu_workers_s`, the busiest one "
                         "`cpu_busiest_worker_s`) and this machine's /proc/stat totals over all cores (`cpu_user_s`, "
                         "`cpu_system_s`, `cpu_softirq_s` where the namespaces forward packets, `cpu_idle_s`, "
                         "`cpu_steal_s`); `cpu_outside_s` is what other users' processes on this machine used "
                         "meanwhile (a lower bound). Process times overlap the softirq column (tick accounting "
                         "charges a softirq tick to the task it interrupted as well). Means per condition:"))
        table(rl.cpu_means(cpud, ORDER), float_format=lambda v: f"{v:.3f}")
        if all(c in cpud.columns for c in rl.CPU_NEEDED):
            cores = rl.core_shares(cpud)
            cm = cores.groupby("condition").mean()
            ncpu = rl.cpu_count(done)
            per_condition_stack({n: {k: float(cm.loc[n, k]) for k in rl.CPU_PARTS} for n in cm.index}, rl.CPU_PARTS,
                                "Where the machine's cores went during the workload (mean cores over the window)",
                                f"cores (of {ncpu})" if ncpu else "cores", "fig-cpu.png")
            flood_cores = cores[cores["flood processes"] > 0].groupby("condition")["flood processes"].mean()
            if len(flood_cores):
                softirq = rl.softirq_cores(cpud, ORDER)
                display(Markdown("Flood processes under congestion: " + ", ".join(
                    f"*{n}* {flood_cores[n]:.2f} cores" for n in ORDER if n in flood_cores.index)
                    + "; softirq (packet forwarding) " + ", ".join(f"*{n}* {v:.2f}" for n, v in softirq.items())
                    + " cores."))


# %%
if camp and "switch_json" in trials.columns:
    sq = rl.switch_queues(done)
    missing = int(done.switch_json.isna().sum())
    if len(sq):
        display(Markdown("## Switch evidence: egress queue drops per condition (`show mls qos interface X "
                         "statistics`, per-trial deltas)"))
        display(Markdown("Packets dropped per egress queue (1-4; IOS prints them as queue 0-3), summed over the "
                         "trial's ports, mean per trial; each panel one queue, its own linear axis from 0. With "
                         "`mls qos` off (fifo) a port has one FIFO, counted as queue 1; with the thesis profile queue "
                         "1 is the expedite queue of DSCP 40 (the workload) and the flood (DSCP 0) goes to queue 2. "
                         + (f"{missing} trial(s) have no switch evidence." if missing else "")))
        per = sq.groupby(["condition", "idx", "queue"]).dropped.sum().groupby(["condition", "queue"]).mean()
        conds = [n for n in ORDER if n in set(sq.condition)]
        fig, axes = plt.subplots(1, 4, figsize=(12, 3), squeeze=False)
        fig.subplots_adjust(wspace=0.45)
        for q in range(1, 5):
            ax = axes[0][q - 1]
            for i, n in enumerate(conds):
                dropped = float(per.get((n, q), 0.0))
                ax.bar([i], [dropped], color=COLOR[n], width=0.75)
                ax.annotate(f"{dropped:.0f}", (i, dropped), ha="center", va="bottom", fontsize=7)
            ax.set_ylim(0, max(ax.get_ylim()[1], 1) * 1.15)
            ax.set_xticks([])
            ax.set_title(f"queue {q}", fontsize=10)
            if q == 1:
                ax.set_ylabel("packets dropped per trial (mean)")
        legend(axes[0][-1], conds, loc="center left", bbox_to_anchor=(1.02, 0.5))
        show(fig, "fig-switch-drops.png")
        table(rl.switch_queue_table(sq, ORDER), float_format=lambda v: f"{v:.1f}")
        pol = sq.groupby(["condition", "idx"])["policer out"].sum()
        if pol.sum() > 0:
            display(Markdown("Policer out-of-profile packets per trial (mean): " + ", ".join(
                f"*{n}* {pol[n].mean():.0f}" for n in conds if n in pol.index.get_level_values(0))))


# %%
if camp:
    flood = rl.flood_table(done, ORDER)
    if flood is not None:
        display(Markdown("## The congestion: D-ITG achieved rates (from ITGDec, mean per flow)"))
        table(flood, float_format=lambda v: f"{v:.2f}")


# %%
calls_stats = camp / "calls-stats.json" if camp else None
if camp and calls_stats is not None and calls_stats.exists() and (camp / "calls.jsonl").exists():
    cs = json.loads(calls_stats.read_text())
    lat = rc.latencies((json.loads(line) for line in (camp / "calls.jsonl").read_text().splitlines() if line),
                       ORDER)
    display(Markdown("## Call latency: what the network does to each RMI call"))
    display(Markdown(
        "Every render call as the manager timed it (`workload-calls.jsonl`), pooled over each condition's counted "
        "trials; quantiles of type 7; 95 % percentile bootstrap intervals resampling **trials** (the calls of one "
        f"trial share its network state), {cs['settings']['bootstrap_resamples']} resamples. Recovery as for the "
        "means, on the quantile: (congested - treated) / (congested - baseline). analysis/README.md, Call latency."))
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
    for n, x in lat.items():
        xs, ys = rc.ecdf(x)
        ax1.step(xs, ys, where="post", color=COLOR.get(n, "#333333"), label=n)
        ax2.step(xs, 1 - ys + 1 / len(xs), where="post", color=COLOR.get(n, "#333333"))
    plain_log(ax1, "x")
    plain_log(ax2, "x")
    ax2.set_yscale("log")
    ax1.set_xlabel("render-call latency, ms (log)")
    ax1.set_ylabel("fraction of calls")
    ax2.set_xlabel("render-call latency, ms (log)")
    ax2.set_ylabel("fraction of calls >= x (log)")
    ax2.set_title("the tail", fontsize=9)
    legend(ax1, list(lat), loc="lower right")
    show(fig, "fig-call-latency-cdf.png")
    table(rc.tail_table(cs, ORDER))
    if cs.get("comparisons"):
        display(Markdown("**Tail comparisons** (b against a; intervals from the two conditions' resamples)"))
        table(rc.comparison_table(cs))
    if cs.get("recovery"):
        display(Markdown("**Recovery on the quantiles** (beside the mean recovery above)"))
        table(rc.recovery_table(cs))
    per = rc.trial_calls(trials, ORDER)
    if per is not None:
        display(Markdown("**Per trial**: the manager's render calls; on captured trials also the wire's view "
                         "(capture `calls.jsonl`): calls with an RTO (a silence >= 200 ms inside the call), "
                         "retransmitted segments, and how far the manager's and the wire's latency of the same "
                         "call differ"))
        table(per, float_format=lambda v: f"{v:.3g}")
        wired = per[per["wire calls"].notna()] if "wire calls" in per else per.iloc[0:0]
        if len(wired):
            fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(wired) + 2), 3))
            vals = wired["calls with an RTO"].fillna(0).astype(float)
            ax.bar(range(len(wired)), vals, color=[COLOR.get(n, "#333333") for n in wired.condition])
            for i, v in enumerate(vals):
                ax.annotate(f"{v:.0f}", (i, v), ha="center", va="bottom", fontsize=8)
            ax.set_xticks(range(len(wired)), [str(i) for i in wired.idx], fontsize=8)
            ax.set_xlabel("captured trial (idx)")
            ax.set_ylabel("calls with an RTO")
            ax.set_ylim(0, max(1.0, float(vals.max())) * 1.2)
            legend(ax, [n for n in ORDER if n in set(wired.condition)], loc="upper left",
                   bbox_to_anchor=(1.01, 1.0))
            show(fig, "fig-call-rto.png")


# %%
if camp:
    summaries = {t.idx: json.loads((camp / t.capture_summary).read_text()) for _, t in trials.iterrows()
                 if isinstance(t.capture_summary, str) and (camp / t.capture_summary).exists()}
    cap = rl.capture_accounting(trials, summaries)
    if len(cap):
        display(Markdown("## Capture accounting"))
        has_drop_cols = any(c.startswith("capture_drops") for c in trials.columns)
        shown = (["idx", "condition", "received (pcap)", "dropped (pcap)", "lost", "flag"]
                 + (["dropped (stored columns)"] if has_drop_cols else []))
        table(cap[shown])
        bad = cap[cap.flag != "ok"]
        if len(bad):
            idx_list = ", ".join(str(i) for i in bad.idx)
            display(Markdown(f"**{len(bad)} captured trial(s) lost packets** (idx {idx_list}): "
                             "their class counts are incomplete and biased towards what the capture kept. "
                             + ("They are still in the class figures (include_dropped_captures=True)."
                                if include_dropped_captures else "They are left out of the class figures below "
                                "(report parameter include_dropped_captures=True puts them back).")))
        use = cap if include_dropped_captures else cap[cap.flag == "ok"]
        use = use[use.summary.notna()]
        left_out = [n for n in ORDER if n in set(cap.condition) and n not in set(use.condition)]
        if left_out:
            display(Markdown("No clean capture for: " + ", ".join(f"*{n}*" for n in left_out) + "."))
        if len(use):
            display(Markdown("## Traffic classes on the SPAN port (Figures 9-10 style)"))
            classes = rl.captured_classes(use.summary)
            conds = [n for n in ORDER if n in set(use.condition)]
            fig, axes = plt.subplots(2, len(classes), figsize=(2.4 * len(classes) + 1.5, 5.6), squeeze=False)
            fig.subplots_adjust(wspace=0.5)
            for j, k in enumerate(classes):
                for row, (key, label) in enumerate((("packets", "packets per trial"),
                                                    ("mean_frame_bytes", "mean frame bytes"))):
                    ax = axes[row][j]
                    for i, n in enumerate(conds):
                        mean = rl.class_mean(use[use.condition == n].summary, k, key)
                        ax.bar([i], [mean], color=COLOR[n], width=0.75)
                        ax.annotate(f"{mean:.0f}", (i, mean), ha="center", va="bottom", fontsize=7)
                    ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
                    ax.set_xticks([])
                    if row == 0:
                        ax.set_title(k, fontsize=10)
                    if j == 0:
                        ax.set_ylabel(label)
            ntr = use.groupby("condition").size()
            legend(axes[0][-1], [n for n in conds], loc="center left", bbox_to_anchor=(1.02, 0.0))
            display(Markdown("Packets and mean frame length per class, mean over the clean captured trials ("
                             + ", ".join(f"{ntr[n]} of *{n}*" for n in conds)
                             + "); each panel has its own linear axis from 0."))
            show(fig, "fig-classes.png")
            for n in conds:
                first = use[use.condition == n].iloc[0]
                summary_path = camp / trials.loc[trials.idx == first.idx, "capture_summary"].iloc[0]
                ts = pd.read_csv(summary_path.parent / "timeseries.csv")
                fig, ax = plt.subplots(figsize=(9, 3))
                for cls, col in rl.CLASS_COLOR.items():
                    k = f"{cls}_avg_bps"
                    if k in ts and ts[k].max() > 0:
                        ax.plot(ts.time_s, ts[k] / 1e6, "o-" if len(ts) < 10 else "-", ms=3, label=cls, color=col)
                ax.set_yscale("log")  # the flood (tens of Mbit/s) and RMI (tens of kbit/s) on one plot
                ax.set_xlabel("s")
                ax.set_ylabel("Mbit/s (running average, log)")
                ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
                ax.set_title(f"{n} (trial {first.idx}): bit rate per class on {first.summary['host']}'s port "
                             "(Figures 11-18 style)", fontsize=9, color=COLOR[n])
                show(fig, f"fig-bitrate-{n.replace(' ', '-')}.png")


# %%
if camp:
    display(Markdown("## Provenance"))
    table(rl.provenance_table(prov))
_ = (out / "figures.json").write_text(json.dumps(figures))
