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
# report.html with the code hidden. This file reads the inputs and decides what to show; the
# helpers live in qoslab.report (lib: order, colours, frames; tables; figures; texts; context: the
# workload, its metric and which sections apply), tested in tests/unit/test_reportlib.py. Figure
# conventions: qoslab.report.figures. Linted and type-checked: `make lint`; under 400 lines.

import json
import pathlib
from typing import Any

import pandas as pd
import yaml
from IPython.display import HTML, Image, Markdown, display
from matplotlib.figure import Figure

from qoslab.report import calls as rc
from qoslab.report import context as rctx
from qoslab.report import factors as rf
from qoslab.report import fidelity as rfid
from qoslab.report import figures as fg
from qoslab.report import lib as rl
from qoslab.report import scale as rscale
from qoslab.report import seeds as rseeds
from qoslab.report import switchq as rsq
from qoslab.report import tables as rt
from qoslab.report import texts as tx
from qoslab.report import trialresults as rtr
from qoslab.scale.model import THESIS
from qoslab.topology import load_topology
from qoslab.trials.store import Store
from qoslab.workloads.metrics import Metric, decimals

# %% tags=["parameters"]
stats_path = ""  # stats.json of a campaign, or of `qoslab-analysis thesis`
campaign_dir = ""  # the campaign folder ("" in thesis mode)
stats_dir = ""  # the folder of the campaign statistics files, trials.csv and stats-NAME.json (empty: campaign_dir)
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
derived = pathlib.Path(stats_dir or campaign_dir or ".")  # the statistics' files (a report may recompute them)
figures: list[str] = []


def show(fig: Figure, name: str) -> None:
    """Save ``fig`` as out/name (listed in figures.json), close it and display the PNG."""
    path = out / name
    fig.savefig(path, dpi=100, bbox_inches="tight")
    fg.close(fig)
    figures.append(name)
    display(Image(filename=str(path)))


def table(df: pd.DataFrame, **kw: Any) -> None:
    display(HTML(df.to_html(index=False, escape=True, **kw)))


# one colour and one position per condition: (congestion, QoS) -> colour; order baseline first
playbook: dict[str, Any] | None = None
if thesis:
    kinds = rl.thesis_kinds(main["conditions"])
else:
    assert camp is not None, "a campaign report needs campaign_dir"
    playbook = yaml.safe_load((camp / "playbook.yaml").read_text())
    kinds = rl.playbook_kinds(playbook)
ORDER = rl.condition_order(kinds)
COLOR = rl.condition_colors(ORDER, kinds)
flood_file = camp / "inputs" / "flood.yaml" if camp else None
ctx = rctx.context(stats, playbook,  # the workload, its metric, which sections apply
                   yaml.safe_load(flood_file.read_text()) if flood_file and flood_file.exists() else None)

display(Markdown(f"# {title}"))
if fidelity_warning := rfid.top_warning(stats):
    display(Markdown(fidelity_warning))
if camp:
    prov = json.loads((camp / "provenance.json").read_text())
    display(Markdown(f"Campaign folder `{camp.name}`; seed {prov['seed']}; qoslab {prov['qoslab_commit'][:10]}; "
                     f"kernel {prov['kernel']}."))
else:
    display(Markdown("The thesis's Appendix A trial times, computed here, next to its published Tables 3 and 5."))
display(Markdown(tx.statistics_intro(main)))
secondary = stats.get("secondary") or {}
if tx.metric_intro(ctx, secondary):
    display(Markdown(tx.metric_intro(ctx, secondary)))


# %%
if thesis:
    data = pathlib.Path(thesis_data)
    raw = rl.thesis_raw(pd.read_csv(data / "thesis-table3-scaling.csv"), pd.read_csv(data / "thesis-table5-qos.csv"),
                        ORDER)
else:
    assert camp is not None
    raw = rl.campaign_raw(pd.read_csv(derived / "trials.csv"), ORDER)


# %%
sections = ({"Table 3: scaling": stats["table3"], "Table 5: congestion and QoS": stats["table5"]} if thesis
            else {"Trial times by condition" if ctx.times else f"{ctx.metric.name} by condition": stats})
fmt = f"{{:.{ctx.places}f}}".format
for head, s in sections.items():
    display(Markdown(f"## {head}"))
    names = [n for n in ORDER if n in s["conditions"]] or list(s["conditions"])
    table(rt.cond_table(s, names, ctx.unit, ctx.places), float_format=fmt)
    if s.get("comparisons"):
        tests, effects, tost = rt.comparison_tables(s, kinds, ctx.unit, ctx.places)
        display(Markdown("**Tests** (two-sided; Holm across this table's comparisons)"))
        table(tests)
        display(Markdown("**Effect sizes and intervals** (b against a; d and g in pooled standard deviations)"))
        table(effects)
        if len(tost):
            display(Markdown("**Does the profile cost anything without congestion? (TOST equivalence)**: equivalent "
                             "when the 90 % Welch interval of the difference lies inside the margin"))
            table(tost)
    for rec in s.get("recovery", []):
        display(Markdown(rl.recovery_sentence(rec, s)))
for name, sec in secondary.items():  # each secondary metric its own statistics (stats-metric-NAME.json)
    display(Markdown(f"### Secondary metric: {name} ({sec['unit']}, {sec['direction']} is better)"))
    if camp is None or not sec.get("stats"):
        display(Markdown(f"No statistics: {sec.get('skipped', 'none computed')}."))
        continue
    s2 = json.loads((derived / sec["stats"]).read_text())
    m2 = Metric.from_dict({"name": name, **sec})
    p2 = decimals(m2, [c["mean"] for c in s2["conditions"].values()])
    table(rt.cond_table(s2, [n for n in ORDER if n in s2["conditions"]], sec["unit"], p2),
          float_format=f"{{:.{p2}f}}".format)
    if s2.get("comparisons"):
        table(rt.comparison_tables(s2, kinds, sec["unit"], p2)[1])
    for rec in s2.get("recovery", []):
        display(Markdown(f"**Recovery of {name} by {rec['treated']}**: " + rl.recovery_value(rec)
                         + (f"; {rec['method']}." if rec.get("method") else ".") + rl.recovery_caveat(rec, s2)))


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
        show(fg.factorial_recovery(pts), "factorial-recovery.png")
# the seed's question under congestion (qoslab.report.seeds): its published ordering beside the measured one
for head, intro, frame in rseeds.sections(main, playbook, rtr.counted_results(camp, stats) if camp else {}):
    display(Markdown(f"## {head}"))
    display(Markdown(intro))
    table(frame)
# emulation fidelity (qoslab.meters.fidelity): verdicts per condition, trials left out
if camp and stats.get("fidelity"):
    fb = stats["fidelity"]
    display(Markdown("## Emulation fidelity"))
    display(Markdown(tx.fidelity_intro(fb)))
    table(pd.DataFrame(rfid.counts_rows(fb, ORDER)))
    if fb["excluded"]:
        display(Markdown("**Trials judged invalid**"))
        table(pd.DataFrame(rfid.excluded_rows(fb)))


# %%
if camp and ctx.thesis_like and thesis_stats_path and pathlib.Path(thesis_stats_path).exists():
    th = json.loads(pathlib.Path(thesis_stats_path).read_text())["table5"]
    side, side_comparisons = rt.thesis_side_tables(main, th, ORDER, kinds)
    display(Markdown("## Table 5 beside the thesis's"))
    display(Markdown("The thesis's raw Appendix A data (its no-congestion/no-QoS column is Table 3's 4 machines) "
                     "and this campaign, condition by condition; x baseline = mean / the uncongested fifo mean."))
    table(side)
    table(side_comparisons)


# %%
show(fg.means(main, ORDER, COLOR, ctx), "fig-means.png")
show(fg.box_cdf(raw, ORDER, COLOR, ctx), "fig-box.png")
if main["comparisons"]:
    show(fg.effects(main["comparisons"], COLOR, rl.pfmt), "fig-effects.png")


# %%
if camp:
    with Store(camp / "trials.sqlite", readonly=True) as store:
        trials = pd.DataFrame(store.rows())
    trials = rl.with_values(trials, ctx.metric.name)
    done = rl.counted(trials)
    gap, pause = rl.resume_pauses(trials)
    show(fg.run_order(trials, done, ORDER, COLOR, ctx, gap, pause), "fig-runorder.png")
    failed, retried = trials[trials.status == "failed"], trials[trials.attempts > 1]
    warm = int((trials.warmup == 1).sum())
    display(Markdown(f"{len(done)} trials counted, {warm} warm-up, {len(failed)} failed, {len(retried)} retried "
                     f"(a retried trial is counted once, with its last attempt), {int(pause.sum())} pause(s) "
                     "longer than a minute between trials (an interrupted campaign resumed)."))
    if len(failed) or len(retried):
        table(rl.issue_table(failed, retried))
elif thesis_data:
    show(fg.thesis_run_order(raw, ORDER, COLOR), "fig-runorder.png")


# %%
if camp and thesis_data and rscale.applies(ctx, ORDER, (camp / "inputs" / "topology.yaml").exists()):
    display(Markdown("## The scale model beside the thesis's cluster\n\n" + rscale.INTRO))
    caps = [camp / p for p in rscale.baseline_captures(done) if (camp / p).exists()]
    if caps:
        tb = rscale.campaign_world(load_topology(camp / "inputs" / "topology.yaml"), done, json.loads(
            caps[0].read_text()), json.loads((caps[0].parents[1] / "workload" / "workload-result.json").read_text()))
        table(rscale.quantities_table(THESIS, tb))
    else:
        display(Markdown("No captured uncongested-fifo trial: the quantities need its bytes per class."))
    tdir = pathlib.Path(thesis_data)
    worlds = rscale.normalised_worlds(pd.read_csv(tdir / "thesis-table5-qos.csv"),
                                      pd.read_csv(tdir / "thesis-table3-scaling.csv"),
                                      pd.read_csv(derived / "trials.csv"))
    display(Markdown(rscale.overlay_sentence(worlds)))
    show(rscale.overlay_figure(worlds, COLOR), "fig-scale-overlay.png")
    table(rscale.overlay_table(worlds), float_format=lambda v: f"{v:.2f}")


# %%
def per_condition_stack(parts: dict[str, dict[str, float]], colors: dict[str, str], title: str, ylabel: str,
                        name: str) -> None:
    """Per-condition panels of stacked parts (qoslab.report.figures.stack), saved as ``name``."""
    show(fg.stack(parts, ORDER, COLOR, colors, title, ylabel), name)


if camp and (derived / "stats-network.json").exists():
    net = json.loads((derived / "stats-network.json").read_text())
    display(Markdown("## Where the time goes: compute vs network wait"))
    display(Markdown(tx.NETWORK_WAIT))
    table(rt.cond_table(net, [n for n in ORDER if n in net["conditions"]]), float_format=lambda v: f"{v:.3f}")
    for rec in net.get("recovery", []):
        display(Markdown(f"**Recovery of the network wait by {rec['treated']}**: " + rl.recovery_value(rec)))
    parts, split_table = rl.compute_network_split(done, ORDER)
    if split_table is not None:
        display(Markdown(tx.cpu_split_intro(ctx)))
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
        display(Markdown(tx.cpu_intro(ctx)))
        table(rl.cpu_means(cpud, ORDER), float_format=lambda v: f"{v:.3f}")
        if all(c in cpud.columns for c in rl.CPU_NEEDED):
            cores = rl.core_shares(cpud)
            cm = cores.groupby("condition").mean()
            ncpu = rl.cpu_count(done)
            labels = rl.cpu_parts(ctx.workers)
            per_condition_stack({n: {labels[k]: float(cm.loc[n, k]) for k in rl.CPU_PARTS} for n in cm.index},
                                {labels[k]: c for k, c in rl.CPU_PARTS.items()},
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
if rsq.applies(stats.get("switch_queues")):  # a 9300's egress classes (show policy-map interface)
    display(Markdown(rsq.title(stats["switch_queues"])))
    table(rsq.queue_table(stats["switch_queues"], ORDER), float_format=lambda v: f"{v:.1f}")
if camp and "switch_json" in trials.columns:
    sq = rl.switch_queues(done)
    missing = int(done.switch_json.isna().sum())
    if len(sq):
        display(Markdown("## Switch evidence: egress queue drops per condition (`show mls qos interface X "
                         "statistics`, per-trial deltas)"))
        manifest = camp / "inputs" / "manifest.json"  # a campaign folder made by hand may have no snapshot
        profiles = [yaml.safe_load((camp / p["file"]).read_text()) for p in
                    json.loads(manifest.read_text()).get("profiles", {}).values()] if manifest.exists() else []
        display(Markdown(tx.switch_intro(rctx.marking_sentence(profiles, ctx), missing)))
        per = sq.groupby(["condition", "idx", "queue"]).dropped.sum().groupby(["condition", "queue"]).mean()
        conds = [n for n in ORDER if n in set(sq.condition)]
        show(fg.bars_per_panel(per.to_dict(), conds, [1, 2, 3, 4], COLOR, [f"queue {q}" for q in range(1, 5)],
                               "packets dropped per trial (mean)"), "fig-switch-drops.png")
        table(rl.switch_queue_table(sq, ORDER), float_format=lambda v: f"{v:.1f}")
        pol = sq.groupby(["condition", "idx"])["policer out"].sum()
        if pol.sum() > 0:
            display(Markdown("Policer out-of-profile packets per trial (mean): " + ", ".join(
                f"*{n}* {pol[n].mean():.0f}" for n in conds if n in pol.index.get_level_values(0))))


# %%
if camp:
    flood = rl.flood_table(done, ORDER)
    if flood is not None:
        fls = [camp / "inputs" / "flood.yaml", *sorted((camp / "inputs" / "floods").glob("*.yaml"))]
        display(Markdown(rctx.flood_heading([yaml.safe_load(f.read_text()) for f in fls if f.is_file()], playbook)))
        table(flood, float_format=lambda v: f"{v:.2f}")


# %%
calls_stats = derived / "calls-stats.json" if camp else None
if camp and calls_stats is not None and calls_stats.exists() and (derived / "calls.jsonl").exists():
    cs = json.loads(calls_stats.read_text())
    lat = rc.latencies((json.loads(line) for line in (derived / "calls.jsonl").read_text().splitlines() if line),
                       ORDER)
    display(Markdown("## Call latency: what the network does to each RMI call"))
    display(Markdown(tx.calls_intro(cs["settings"]["bootstrap_resamples"])))
    show(fg.call_latency(lat, COLOR), "fig-call-latency-cdf.png")
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
            show(fg.rto_bars(wired, ORDER, COLOR), "fig-call-rto.png")


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
            display(Markdown(tx.capture_lost(len(bad), idx_list, include_dropped_captures)))
        use = cap if include_dropped_captures else cap[cap.flag == "ok"]
        use = use[use.summary.notna()]
        left_out = [n for n in ORDER if n in set(cap.condition) and n not in set(use.condition)]
        if left_out:
            display(Markdown("No clean capture for: " + ", ".join(f"*{n}*" for n in left_out) + "."))
        if len(use):
            display(Markdown("## Traffic classes on the SPAN port"
                             + (" (Figures 9-10 style)" if ctx.thesis_like else "")))
            classes = rl.captured_classes(use.summary)
            conds = [n for n in ORDER if n in set(use.condition)]
            ntr = use.groupby("condition").size()
            display(Markdown("Packets and mean frame length per class, mean over the clean captured trials ("
                             + ", ".join(f"{ntr[n]} of *{n}*" for n in conds)
                             + "); each panel has its own linear axis from 0."))
            show(fg.classes(use, classes, conds, COLOR, rl.class_mean), "fig-classes.png")
            for n in conds:
                first = use[use.condition == n].iloc[0]
                summary_path = camp / trials.loc[trials.idx == first.idx, "capture_summary"].iloc[0]
                ts = pd.read_csv(summary_path.parent / "timeseries.csv")
                style = " (Figures 11-18 style)" if ctx.thesis_like else ""
                fig = fg.bitrate(ts, rl.CLASS_COLOR, f"{n} (trial {first.idx}): bit rate per class on "
                                 f"{first.summary['host']}'s port{style}", COLOR[n])
                show(fig, f"fig-bitrate-{n.replace(' ', '-')}.png")


# %%
if camp:
    display(Markdown("## Provenance"))
    table(rl.provenance_table(prov))
_ = (out / "figures.json").write_text(json.dumps(figures))
