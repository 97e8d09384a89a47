"""Writes report.ipynb (the campaign/thesis report notebook) from the cell sources below.
Run after editing: .venv/bin/python analysis/notebooks/build_report_notebook.py

Conventions of every figure: each condition keeps one colour and one position (baseline first:
no congestion before congestion, fifo before a QoS profile) with a legend; trial times span 1 s to
40 s, so they are drawn on log axes or in per-condition panels; bars always start at 0 on a linear
axis and carry their values.
"""

from pathlib import Path

import nbformat

PARAMS = '''# parameters (papermill)
stats_path = ""        # stats.json of a campaign, or of `qoslab-analysis thesis`
campaign_dir = ""      # the campaign folder ("" in thesis mode)
thesis_data = ""       # the thesis CSV folder (thesis mode)
thesis_stats_path = "" # campaign mode: the thesis's statistics, for Table 5 side by side
include_dropped_captures = False  # class figures also from captures that lost packets
out_dir = "."
title = "qoslab report"
'''

LOAD = '''import json, sqlite3, pathlib
import numpy as np
import pandas as pd
import yaml
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from IPython.display import display, HTML, Markdown, Image

out = pathlib.Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
stats = json.loads(pathlib.Path(stats_path).read_text())
thesis = "table5" in stats
main = stats["table5"] if thesis else stats
camp = pathlib.Path(campaign_dir) if campaign_dir else None
figures = []

def show(fig, name):
    path = out / name
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    figures.append(name)
    display(Image(filename=str(path)))

def fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else v

def pfmt(p):
    return "n/a" if p is None else (f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}")

def ci(v, f="{:.3f}"):
    return "n/a" if not v else f"{f.format(v[0])} - {f.format(v[1])}"

def table(df, **kw):
    display(HTML(df.to_html(index=False, escape=True, **kw)))

# one colour and one position per condition: (congestion, QoS) -> colour; order baseline first
PALETTE = {(False, False): "#4c72b0", (False, True): "#55a868", (True, False): "#c44e52", (True, True): "#dd8452"}
EXTRA = ["#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"]
if thesis:
    kinds = {n: (not n.startswith("no congestion"), not n.endswith("no QoS")) for n in main["conditions"]}
else:
    pb = yaml.safe_load((camp / "playbook.yaml").read_text())
    kinds = {c["name"]: (bool(c["congestion"]), c["profile"] != "fifo") for c in pb["conditions"]}
    profiles = {c["name"]: c["profile"] for c in pb["conditions"]}
ORDER = sorted(kinds, key=lambda n: (kinds[n][0], kinds[n][1], list(kinds).index(n)))
COLOR, used = {}, set()
for n in ORDER:
    c = PALETTE.get(kinds[n])
    COLOR[n] = c if c not in used else EXTRA[len(used) % len(EXTRA)]
    used.add(COLOR[n])

def plain_log(ax, axis="y"):
    """Log scale with plain-number tick labels (1, 2, 5, 10, 20 ...) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator
    a = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    a.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    a.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    a.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def ticks(ax, names):
    """Condition names under their positions, wrapped to short lines."""
    import textwrap
    ax.set_xticks(range(len(names)), ["\\n".join(textwrap.wrap(n, 16)) for n in names], fontsize=8)


def legend(ax, names=None, **kw):
    from matplotlib.patches import Patch
    names = names or ORDER
    ax.legend(handles=[Patch(color=COLOR[n], label=n) for n in names], fontsize=8, **kw)

display(Markdown(f"# {title}"))
if camp:
    prov = json.loads((camp / "provenance.json").read_text())
    display(Markdown(f"Campaign folder `{camp.name}`; seed {prov['seed']}; qoslab {prov['qoslab_commit'][:10]}; kernel {prov['kernel']}."))
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
'''

RAW = '''# raw trial times per condition (what the statistics used)
if thesis:
    d = pathlib.Path(thesis_data)
    t3 = pd.read_csv(d / "thesis-table3-scaling.csv").dropna(subset=["elapsed_s"])
    t5 = pd.read_csv(d / "thesis-table5-qos.csv").dropna(subset=["elapsed_s"])
    raw = {"no congestion, no QoS": t3[t3.machines == 4]}
    for (c, q), g in t5.groupby(["congestion", "qos"]):
        raw[f"{'congestion' if c == 'yes' else 'no congestion'}, {'QoS' if q == 'yes' else 'no QoS'}"] = g
    raw = {n: raw[n] for n in ORDER}
else:
    tc = pd.read_csv(camp / "trials.csv")
    raw = {n: tc[tc.condition == n] for n in ORDER}
'''

TABLES = '''def cond_table(s, names):
    rows = []
    for name in names:
        d = s["conditions"][name]
        r = {"condition": name, "n": d["n"], "mean s": d["mean"], "sd s": d["sd"], "95% CI of mean": ci(d["ci95"]),
             "median s": d["median"], "CV": f"{d['cv']:.1%}",
             "Shapiro-Wilk W (p)": "n/a" if d.get("shapiro_w") is None else f"{d['shapiro_w']:.3f} ({pfmt(d['shapiro_p'])})",
             "Tukey outliers low / high": f"{d['outliers_low']} / {d['outliers_high']}"}
        if "published_mean" in d:
            r["published mean"] = d["published_mean"]
            r["published sd"] = d["published_sd"]
            r["sd as published?"] = "yes" if d["sd_matches_published"] else "NO (raw data differ)"
        rows.append(r)
    return pd.DataFrame(rows)


def comparisons(s):
    tests, effects, tost = [], [], []
    for c in s["comparisons"]:
        same_uncongested = c["a"] in kinds and c["b"] in kinds and not kinds[c["a"]][0] and not kinds[c["b"]][0]
        name = f"{c['b']} vs {c['a']}"
        tests.append({"comparison": name, "difference s": f"{c['difference_s']:+.3f}",
                      "Welch t (df)": f"{c['welch_t']:.2f} ({c['welch_df']:.1f})",
                      "Welch p": pfmt(c["welch_t_p"]), "Welch p, Holm": pfmt(c["welch_t_p_holm"]),
                      "Mann-Whitney p": pfmt(c["mann_whitney_p"]), "MW p, Holm": pfmt(c["mann_whitney_p_holm"]),
                      "MW method": c["mann_whitney_method"]})
        effects.append({"comparison": name, "difference s [95% BCa]": f"{c['difference_s']:+.3f} [{ci(c['difference_ci95_s'])}]",
                        "ratio [95% BCa]": f"{c['ratio']:.3f} [{ci(c['ratio_ci95'])}]",
                        "Cohen's d": f"{c['cohens_d']:+.2f}", "Hedges' g": f"{c['hedges_g']:+.2f}",
                        "Hodges-Lehmann s [95%]": f"{c['hodges_lehmann_s']:+.3f} [{ci(c['hodges_lehmann_ci95_s'])}]",
                        "P(b > a)": f"{c['prob_superiority']:.2f}",
                        "MDE (80% power)": f"{c['mde_s']:.3f} s ({c['mde_rel']:.1%})"})
        t = c["tost"]
        if same_uncongested:  # "costs nothing": a profile against fifo without congestion (stats.json has every pair)
            tost.append({"comparison": name, "margin": f"+-{t['margin_s']:.3f} s ({t['margin_rel']:.0%} of {t['reference']})",
                         "90% CI of difference s": ci(t["ci90_s"]), "TOST p": pfmt(t["p"]),
                         "verdict": "equivalent" if t["equivalent"] else "not shown equivalent"})
    return pd.DataFrame(tests), pd.DataFrame(effects), pd.DataFrame(tost)


sections = {"Table 3: scaling": stats["table3"], "Table 5: congestion and QoS": stats["table5"]} if thesis else {"Trial times by condition": stats}
for head, s in sections.items():
    display(Markdown(f"## {head}"))
    names = [n for n in ORDER if n in s["conditions"]] or list(s["conditions"])
    table(cond_table(s, names), float_format=lambda v: f"{v:.3f}")
    if s.get("comparisons"):
        tests, effects, tost = comparisons(s)
        display(Markdown("**Tests** (two-sided; Holm across this table's comparisons)"))
        table(tests)
        display(Markdown("**Effect sizes and intervals** (b against a; d and g in pooled standard deviations)"))
        table(effects)
        if len(tost):
            display(Markdown("**Does the profile cost anything without congestion? (TOST equivalence)**: equivalent when "
                             "the 90 % Welch interval of the difference lies inside the margin"))
            table(tost)
    for r in s.get("recovery", []):
        ratio = r["ratio"]
        display(Markdown(f"**Recovery ratio of {r['treated']}**: " + (f"**{ratio:.1%}**" if ratio is not None else "n/a")
                         + (f" (95 % BCa {r['ci95'][0]:.1%} - {r['ci95'][1]:.1%})" if r.get("ci95") else "")
                         + f" of the slowdown from *{r['baseline']}* to *{r['congested']}* won back."))
'''

SIDE = '''if camp and thesis_stats_path and pathlib.Path(thesis_stats_path).exists():
    th = json.loads(pathlib.Path(thesis_stats_path).read_text())["table5"]
    tnames = {(not n.startswith("no congestion"), not n.endswith("no QoS")): n for n in th["conditions"]}
    base_t, base_c = th["conditions"][tnames[(False, False)]]["mean"], main["conditions"][ORDER[0]]["mean"]
    rows = []
    for n in ORDER:
        tn = tnames.get(kinds[n])
        d = main["conditions"][n]
        r = {"condition": n, "campaign n": str(d["n"]), "campaign mean s": f"{d['mean']:.3f}", "campaign sd s": f"{d['sd']:.3f}",
             "campaign x baseline": f"{d['mean'] / base_c:.2f}"}
        if tn:
            t = th["conditions"][tn]
            r.update({"thesis condition": tn, "thesis n": str(t["n"]), "thesis mean s": f"{t['mean']:.2f}",
                      "thesis sd s": f"{t['sd']:.2f}", "thesis x baseline": f"{t['mean'] / base_t:.2f}"})
        rows.append(r)
    def rec_text(r):
        return "n/a" if r["ratio"] is None else f"{r['ratio']:.1%} [{ci(r['ci95'], '{:.1%}')}]"
    for rc in main.get("recovery", []):
        rt = th["recovery"][0]
        rows.append({"condition": f"recovery of {rc['treated']} [95% BCa]", "campaign mean s": rec_text(rc),
                     "thesis condition": f"recovery of {rt['treated']}", "thesis mean s": rec_text(rt)})
    display(Markdown("## Table 5 beside the thesis's"))
    display(Markdown("The thesis's raw Appendix A data (its no-congestion/no-QoS column is Table 3's 4 machines) "
                     "and this campaign, condition by condition; x baseline = mean / the uncongested fifo mean."))
    table(pd.DataFrame(rows).astype(object).fillna(""))
    drows = []
    for c in main["comparisons"]:
        tc = next((x for x in th["comparisons"] if tnames.get(kinds[c["a"]]) == x["a"] and tnames.get(kinds[c["b"]]) == x["b"]), None)
        drows.append({"comparison": f"{c['b']} vs {c['a']}", "campaign Cohen's d": f"{c['cohens_d']:+.2f}",
                      "campaign ratio [95% BCa]": f"{c['ratio']:.3f} [{ci(c['ratio_ci95'])}]",
                      "thesis Cohen's d": f"{tc['cohens_d']:+.2f}" if tc else "",
                      "thesis ratio [95% BCa]": f"{tc['ratio']:.3f} [{ci(tc['ratio_ci95'])}]" if tc else "",
                      "thesis MDE": f"{tc['mde_s']:.2f} s ({tc['mde_rel']:.1%})" if tc else ""})
    table(pd.DataFrame(drows))
'''

FIGS = '''names = ORDER
fig, ax = plt.subplots(figsize=(8, 3.6))
for i, n in enumerate(names):
    d = main["conditions"][n]
    ax.errorbar([i], [d["mean"]], yerr=[[d["mean"] - d["ci95"][0]], [d["ci95"][1] - d["mean"]]], fmt="o", ms=8,
                capsize=6, color=COLOR[n])
    ax.annotate(f"{d['mean']:.2f} s", (i, d["ci95"][1]), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
plain_log(ax); ticks(ax, names); ax.set_xlim(-0.5, len(names) - 0.5)
lo, hi = ax.get_ylim(); ax.set_ylim(lo, hi * 1.6)
ax.set_ylabel("elapsed s (log), mean and 95% CI"); legend(ax, loc="upper left")
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
plain_log(a1); ticks(a1, names); a1.set_ylabel("elapsed s (log)")
a1.set_title("Box plots (whiskers 1.5 IQR) with every trial")
plain_log(a2, "x"); a2.set_xlabel("elapsed s (log)"); a2.set_ylabel("fraction of trials <= x"); a2.grid(alpha=0.3)
a2.set_title("CDF of trial times"); legend(a2, loc="lower right")
show(fig, "fig-box.png")

if main["comparisons"]:
    comps = main["comparisons"]
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(comps) + 1.2))
    for i, c in enumerate(comps):
        lo, hi = c["ratio_ci95"] or (c["ratio"], c["ratio"])
        ax.errorbar([c["ratio"]], [i], xerr=[[c["ratio"] - lo], [hi - c["ratio"]]], fmt="o", capsize=5, color=COLOR[c["b"]])
        ax.annotate(f"x{c['ratio']:.3f} [{lo:.3f}-{hi:.3f}]  d = {c['cohens_d']:+.2f}, Holm p = {pfmt(c['welch_t_p_holm'])}",
                    (hi, i), textcoords="offset points", xytext=(8, -3), fontsize=8)
    ax.axvline(1, color="grey", lw=1, ls="--")
    ax.set_yticks(range(len(comps)), [f"{c['b']}\\nvs {c['a']}" for c in comps], fontsize=8)
    plain_log(ax, "x"); ax.set_xlabel("ratio of means b / a (log), 95% BCa bootstrap interval")
    ax.set_xlim(min(c["ratio_ci95"][0] if c["ratio_ci95"] else c["ratio"] for c in comps) / 1.5,
                max(c["ratio_ci95"][1] if c["ratio_ci95"] else c["ratio"] for c in comps) * 12)
    ax.invert_yaxis(); ax.set_title("Effect sizes: each comparison's ratio of means (colour = condition b)")
    show(fig, "fig-effects.png")
'''

TRIALS = '''if camp:
    con = sqlite3.connect(camp / "trials.sqlite")
    trials = pd.read_sql("SELECT * FROM trials ORDER BY idx", con)
    con.close()
    done = trials[(trials.status == "done") & (trials.warmup == 0)]
    gap = trials.started - trials.finished.shift(1)
    pause = gap > max(60.0, 20 * float(gap.median()))
    fig, ax = plt.subplots(figsize=(11, 4))
    for n in ORDER:
        g = done[done.condition == n]
        ax.plot(g.idx, g.elapsed_s, "o", ms=4, color=COLOR[n], alpha=0.85)
    wu = trials[(trials.warmup == 1) & trials.elapsed_s.notna()]
    ax.plot(wu.idx, wu.elapsed_s, "o", ms=5, mfc="none", color="grey")
    retried = trials[trials.attempts > 1]
    ax.plot(retried.idx, retried.elapsed_s.fillna(trials.elapsed_s.max()), "s", ms=11, mfc="none", mec="black", mew=1.5)
    failed = trials[trials.status == "failed"]
    ymax = float(trials.elapsed_s.max())
    ax.plot(failed.idx, [ymax * 1.3] * len(failed), "X", ms=9, color="black")
    for i in trials.idx[pause]:
        ax.axvline(i - 0.5, color="black", ls="--", lw=1)
        ax.annotate(f"resumed after {gap[trials.idx == i].iloc[0] / 60:.0f} min", (i - 0.5, ymax), rotation=90,
                    fontsize=8, xytext=(3, 0), textcoords="offset points", va="top")
    plain_log(ax); ax.set_xlabel("trial in run order (idx)"); ax.set_ylabel("elapsed s (log)")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    h = [Patch(color=COLOR[n], label=n) for n in ORDER] + [
        Line2D([], [], marker="o", mfc="none", color="grey", ls="", label="warm-up"),
        Line2D([], [], marker="s", mfc="none", mec="black", ls="", ms=9, label="retried (attempts > 1)"),
        Line2D([], [], marker="X", color="black", ls="", label="failed"),
        Line2D([], [], color="black", ls="--", label="pause / resume")]
    ax.legend(handles=h, fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title("Every trial in run order (drift, resume gaps and retries would show here)")
    show(fig, "fig-runorder.png")
    warm = int((trials.warmup == 1).sum())
    display(Markdown(f"{len(done)} trials counted, {warm} warm-up, {len(failed)} failed, {len(retried)} retried "
                     f"(a retried trial is counted once, with its last attempt), {int(pause.sum())} pause(s) "
                     "longer than a minute between trials (an interrupted campaign resumed)."))
    if len(failed) or len(retried):
        table(pd.concat([failed, retried])[["idx", "condition", "trial", "status", "attempts", "elapsed_s", "error"]].astype(object).fillna(""))
elif thesis_data:
    fig, ax = plt.subplots(figsize=(11, 3.8))
    for n in ORDER:
        ax.plot(raw[n].trial, raw[n].elapsed_s, "o-", ms=3, lw=0.8, color=COLOR[n], alpha=0.85)
    plain_log(ax); ax.set_xlabel("trial"); ax.set_ylabel("elapsed s (log)"); legend(ax, loc="upper left", ncol=2)
    ax.set_title("Appendix A trials in order")
    show(fig, "fig-runorder.png")
'''

NETWORK = '''def per_condition_stack(parts, colors, title, ylabel, name):
    """Per-condition panels (each its own linear axis from 0): a stacked bar of parts[cond] = {label: value};
    values under 4 % of a bar are drawn but not labelled, the legend lists the parts that occur."""
    conds = [n for n in ORDER if n in parts]
    fig, axes = plt.subplots(1, len(conds), figsize=(2.6 * len(conds) + 1, 3.4), squeeze=False)
    used = []
    for ax, n in zip(axes[0], conds):
        bottom, whole = 0.0, sum(v for v in parts[n].values() if v > 0)
        for label, v in parts[n].items():
            if not v > 0:
                continue  # nothing to draw (e.g. no flood processes without congestion)
            used += [label] if label not in used else []
            ax.bar([0], [v], bottom=bottom, color=colors[label], width=0.6, edgecolor=COLOR[n], lw=2)
            r, g_, b_ = matplotlib.colors.to_rgb(colors[label])
            if v >= 0.04 * whole:
                ax.annotate(f"{v:.3g}", (0, bottom + v / 2), ha="center", va="center", fontsize=8,
                            color="white" if 0.3 * r + 0.59 * g_ + 0.11 * b_ < 0.5 else "black")
            bottom += v
        ax.set_xticks([]); ax.set_xlim(-0.6, 0.6); ax.set_ylim(0, bottom * 1.15 or 1)
        ax.set_title(n, fontsize=9, color=COLOR[n])
    axes[0][0].set_ylabel(ylabel)
    from matplotlib.patches import Patch
    axes[0][-1].legend(handles=[Patch(color=colors[l], label=l) for l in colors if l in used], fontsize=8,
                       loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(title, y=1.06)
    show(fig, name)


if camp and (camp / "stats-network.json").exists():
    net = json.loads((camp / "stats-network.json").read_text())
    display(Markdown("## Where the time goes: compute vs network wait"))
    display(Markdown("Network wait = render time minus the busiest worker's own render time: what the critical "
                     "worker spent not computing (waiting for requests, results, retransmissions). A switch profile "
                     "can only change this part; the compute part also grows under a flood when the flood's packet "
                     "processing shares the cores (the embedded testbed's one emulation artefact)."))
    table(cond_table(net, [n for n in ORDER if n in net["conditions"]]), float_format=lambda v: f"{v:.3f}")
    for r in net.get("recovery", []):
        ratio = r["ratio"]
        display(Markdown(f"**Recovery of the network wait by {r['treated']}**: " + (f"**{ratio:.1%}**" if ratio is not None else "n/a")
                         + (f" (95 % BCa {r['ci95'][0]:.1%} - {r['ci95'][1]:.1%})" if r.get("ci95") else "")))
    cpu_bw = pd.to_numeric(done.get("cpu_busiest_worker_s", pd.Series(np.nan, index=done.index)), errors="coerce")
    split = done.assign(on_cpu=cpu_bw.clip(upper=done.busy_max_s), cpu_wait=(done.busy_max_s - cpu_bw).clip(lower=0),
                        net=done.elapsed_s - done.busy_max_s)
    parts, rows = {}, []
    for n, g in split.groupby("condition"):
        if not g.busy_max_s.notna().all():
            continue
        if g.on_cpu.notna().all():  # CPU data (campaign/cpu.py): compute = on CPU + waiting for a core
            parts[n] = {"busiest worker on CPU": g.on_cpu.mean(), "busiest worker waiting for a core": g.cpu_wait.mean(),
                        "network wait": g.net.mean()}
            rows.append({"condition": n, "render s": g.elapsed_s.mean(), "on CPU s": g.on_cpu.mean(),
                         "waiting for a core s": g.cpu_wait.mean(), "network wait s": g.net.mean(),
                         "compute share": (g.on_cpu.mean() + g.cpu_wait.mean()) / g.elapsed_s.mean()})
        else:
            parts[n] = {"busiest worker computing": g.busy_max_s.mean(), "network wait": g.net.mean()}
    if rows:
        display(Markdown("The busiest worker's busy time splits into its JVM's CPU time (utime+stime of all its threads "
                         "over the workload window, from /proc) and the rest of its busy time, spent runnable but "
                         "waiting for one of the machine's cores (held by the other JVMs, the flood's processes and the "
                         "kernel forwarding the flood). Means per condition:"))
        split_df = pd.DataFrame(rows)
        split_df["o"] = split_df.condition.map(ORDER.index)
        table(split_df.sort_values("o").drop(columns="o"), float_format=lambda v: f"{v:.3f}")
    per_condition_stack(parts, {"busiest worker on CPU": "#b0b0b0", "busiest worker waiting for a core": "#e6ab02",
                                "busiest worker computing": "#b0b0b0", "network wait": "#4d4d4d"},
                        "Compute vs network wait per condition (mean s; panel border = condition)", "seconds (mean)",
                        "fig-compute-network.png")
'''

CPU = '''CPU_PARTS = {"worker JVMs": "#1f78b4", "flood processes": "#d95f02", "other busy (kernel, manager JVM, harness)": "#999999",
             "outside load (other users' processes)": "#b15928", "idle": "#e8e8e8", "steal (hypervisor)": "#6a3d9a"}
if camp:
    cpu_cols = [c for c in trials.columns if c.startswith("cpu_") and c != "cpu_json"]
    cpud = done[cpu_cols].apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all").assign(condition=done.condition)
    num = [c for c in cpud.columns if c != "condition"]
    if num:
        display(Markdown("## CPU time per trial (from /proc)"))
        display(Markdown("Seconds over the workload window (`cpu_window_s`: workers listening until the manager JVM "
                         "exited; it holds the render phase and the manager's start): CPU time of the flood's processes "
                         "(`cpu_flood_s`), of the worker JVMs (`cpu_workers_s`, the busiest one `cpu_busiest_worker_s`) "
                         "and this machine's /proc/stat totals over all cores (`cpu_user_s`, `cpu_system_s`, "
                         "`cpu_softirq_s` where the namespaces forward packets, `cpu_idle_s`, `cpu_steal_s`); "
                         "`cpu_outside_s` is what other users' processes on this machine used meanwhile (a lower bound). "
                         "Process times overlap the softirq column (tick accounting charges a softirq tick to the task "
                         "it interrupted as well). Means per condition:"))
        means = cpud.groupby("condition")[num].mean()
        table(means.reindex([n for n in ORDER if n in means.index]).reset_index(), float_format=lambda v: f"{v:.3f}")
        need = ["cpu_window_s", "cpu_workers_s", "cpu_flood_s", "cpu_user_s", "cpu_system_s", "cpu_softirq_s",
                "cpu_idle_s", "cpu_steal_s"]
        if all(c in num for c in need):
            w = cpud.cpu_window_s
            busy = (cpud.cpu_user_s + cpud.cpu_system_s + cpud.cpu_softirq_s) / w
            cores = pd.DataFrame({"condition": cpud.condition, "worker JVMs": cpud.cpu_workers_s / w,
                                  "flood processes": cpud.cpu_flood_s / w})
            outside = cpud.cpu_outside_s / w if "cpu_outside_s" in num else 0.0
            cores["outside load (other users' processes)"] = outside
            cores["other busy (kernel, manager JVM, harness)"] = (busy - cores["worker JVMs"] - cores["flood processes"]
                                                                  - outside).clip(lower=0)
            cores["idle"] = cpud.cpu_idle_s / w
            cores["steal (hypervisor)"] = cpud.cpu_steal_s / w
            cm = cores.groupby("condition").mean()
            ncpu = len(json.loads(done.cpu_json.dropna().iloc[0])["cpus"]) if done.cpu_json.notna().any() else None
            per_condition_stack({n: {k: float(cm.loc[n, k]) for k in CPU_PARTS} for n in cm.index}, CPU_PARTS,
                                "Where the machine's cores went during the workload (mean cores over the window)",
                                f"cores (of {ncpu})" if ncpu else "cores", "fig-cpu.png")
            fl = cores[cores["flood processes"] > 0].groupby("condition")["flood processes"].mean()
            if len(fl):
                display(Markdown("Flood processes under congestion: " + ", ".join(
                    f"*{n}* {fl[n]:.2f} cores" for n in ORDER if n in fl.index) + f"; softirq (packet forwarding) "
                    + ", ".join(f"*{n}* {float((cpud[cpud.condition == n].cpu_softirq_s / cpud[cpud.condition == n].cpu_window_s).mean()):.2f}"
                                for n in ORDER if n in set(cpud.condition)) + " cores."))
'''

SWITCH = '''if camp and "switch_json" in trials.columns:
    rows = []
    for _, t in done.iterrows():
        if isinstance(t.switch_json, str):
            for port, p in json.loads(t.switch_json)["ports"].items():
                for q in range(4):
                    rows.append({"condition": t.condition, "idx": t.idx, "port": port, "queue": q + 1,
                                 "dropped": p["dropped"][q], "enqueued": p["enqueued"][q],
                                 "policer out": p["policer_out"] if q == 0 else 0})
    missing = int(done.switch_json.isna().sum())
    if rows:
        sq = pd.DataFrame(rows)
        display(Markdown("## Switch evidence: egress queue drops per condition (`show mls qos interface X statistics`, "
                         "per-trial deltas)"))
        display(Markdown("Packets dropped per egress queue (1-4; IOS prints them as queue 0-3), summed over the trial's ports, "
                         "mean per trial; each panel one queue, its own linear axis from 0. With `mls qos` off (fifo) a port has one "
                         "FIFO, counted as queue 1; with the thesis profile queue 1 is the expedite queue of DSCP 40 (the "
                         "workload) and the flood (DSCP 0) goes to queue 2. "
                         + (f"{missing} trial(s) have no switch evidence." if missing else "")))
        per = sq.groupby(["condition", "idx", "queue"]).dropped.sum().groupby(["condition", "queue"]).mean()
        conds = [n for n in ORDER if n in set(sq.condition)]
        fig, axes = plt.subplots(1, 4, figsize=(12, 3), squeeze=False)
        fig.subplots_adjust(wspace=0.45)
        for q in range(1, 5):
            ax = axes[0][q - 1]
            for i, n in enumerate(conds):
                v = float(per.get((n, q), 0.0))
                ax.bar([i], [v], color=COLOR[n], width=0.75)
                ax.annotate(f"{v:.0f}", (i, v), ha="center", va="bottom", fontsize=7)
            ax.set_ylim(0, max(ax.get_ylim()[1], 1) * 1.15); ax.set_xticks([]); ax.set_title(f"queue {q}", fontsize=10)
            if q == 1:
                ax.set_ylabel("packets dropped per trial (mean)")
        legend(axes[0][-1], conds, loc="center left", bbox_to_anchor=(1.02, 0.5))
        show(fig, "fig-switch-drops.png")
        tab = sq.groupby(["condition", "port", "queue"])[["enqueued", "dropped"]].mean().reset_index()
        tab = tab[(tab.enqueued > 0) | (tab.dropped > 0)]
        tab["o"] = tab.condition.map(ORDER.index)
        table(tab.sort_values(["o", "port", "queue"]).drop(columns="o"), float_format=lambda v: f"{v:.1f}")
        pol = sq.groupby(["condition", "idx"])["policer out"].sum()
        if pol.sum() > 0:
            display(Markdown("Policer out-of-profile packets per trial (mean): " + ", ".join(
                f"*{n}* {pol[n].mean():.0f}" for n in conds if n in pol.index.get_level_values(0))))
'''

FLOOD = '''if camp:
    rows = []
    for _, t in done.iterrows():
        if isinstance(t.flood_json, str):
            for f in json.loads(t.flood_json):
                rows.append({"condition": t.condition, "flow": f"{f['src']}->{f['dst']}",
                             "received Mbit/s": f["received_wire_bps"] / 1e6, "loss %": f["loss_pct"],
                             "delay ms": f["delay_avg_s"] * 1000})
    if rows:
        display(Markdown("## The congestion: D-ITG achieved rates (from ITGDec, mean per flow)"))
        fl = pd.DataFrame(rows).groupby(["condition", "flow"]).mean().reset_index()
        fl["o"] = fl.condition.map(ORDER.index)
        table(fl.sort_values(["o", "flow"]).drop(columns="o"), float_format=lambda v: f"{v:.2f}")
'''

CAPTURE = '''CLASS_COLOR = {"rmi": "#1b9e77", "control/ack": "#7570b3", "data": "#e7298a", "udp": "#d95f02", "ssh": "#66a61e",
               "short-frame": "#e6ab02", "other": "#666666"}
if camp:
    caps = []
    drop_cols = [c for c in trials.columns if c.startswith("capture_drops")]
    for _, t in trials.iterrows():
        s = None
        if isinstance(t.capture_summary, str) and (camp / t.capture_summary).exists():
            s = json.loads((camp / t.capture_summary).read_text())
        # capture_drops is the total (campaign/drops.py) when stored; its parts are not added to it again
        use_cols = ["capture_drops"] if "capture_drops" in drop_cols and pd.notna(t.capture_drops) else drop_cols
        col_drops = sum(float(t[c]) for c in use_cols if pd.notna(t[c]) and pd.api.types.is_number(t[c]))
        if s is None and not col_drops:
            continue
        d = (s or {}).get("drops") or {}
        # the accounted capture's drops block (capture/README.md), or the older pcap4j one
        dropped = int(d["dropped_total"]) if d.get("dropped_total") is not None else \
            int(d.get("pcap_dropped") or 0) + int(d.get("pcap_dropped_by_interface") or 0)
        recv = d.get("received", d.get("pcap_received"))
        caps.append({"idx": t.idx, "condition": t.condition, "summary": s, "received (pcap)": recv,
                     "dropped (pcap)": dropped, "dropped (stored columns)": col_drops,
                     "lost": f"{dropped / recv:.1%}" if recv else "",
                     "flag": "LOST PACKETS" if dropped or col_drops else "ok"})
    if caps:
        display(Markdown("## Capture accounting"))
        cap = pd.DataFrame(caps)
        shown = ["idx", "condition", "received (pcap)", "dropped (pcap)", "lost", "flag"] + (["dropped (stored columns)"] if drop_cols else [])
        table(cap[shown])
        bad = cap[cap.flag != "ok"]
        if len(bad):
            display(Markdown(f"**{len(bad)} captured trial(s) lost packets** (idx {', '.join(str(i) for i in bad.idx)}): their "
                             "class counts are incomplete and biased towards what the capture kept. "
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
            classes = [k for k in CLASS_COLOR if any(s["classes"].get(k, {}).get("packets") for s in use.summary)]
            conds = [n for n in ORDER if n in set(use.condition)]
            fig, axes = plt.subplots(2, len(classes), figsize=(2.4 * len(classes) + 1.5, 5.6), squeeze=False)
            fig.subplots_adjust(wspace=0.5)
            for j, k in enumerate(classes):
                for row, (key, label) in enumerate((("packets", "packets per trial"), ("mean_frame_bytes", "mean frame bytes"))):
                    ax = axes[row][j]
                    for i, n in enumerate(conds):
                        vals = [s["classes"].get(k, {}).get(key) or 0 for s in use[use.condition == n].summary]
                        v = float(np.mean(vals))
                        ax.bar([i], [v], color=COLOR[n], width=0.75)
                        ax.annotate(f"{v:.0f}", (i, v), ha="center", va="bottom", fontsize=7)
                    ax.set_ylim(0, ax.get_ylim()[1] * 1.15); ax.set_xticks([])
                    if row == 0:
                        ax.set_title(k, fontsize=10)
                    if j == 0:
                        ax.set_ylabel(label)
            ntr = use.groupby("condition").size()
            legend(axes[0][-1], [n for n in conds], loc="center left", bbox_to_anchor=(1.02, 0.0))
            display(Markdown("Packets and mean frame length per class, mean over the clean captured trials ("
                             + ", ".join(f"{ntr[n]} of *{n}*" for n in conds) + "); each panel has its own linear axis from 0."))
            show(fig, "fig-classes.png")
            for n in conds:
                first = use[use.condition == n].iloc[0]
                ts = pd.read_csv((camp / trials.loc[trials.idx == first.idx, "capture_summary"].iloc[0]).parent / "timeseries.csv")
                fig, ax = plt.subplots(figsize=(9, 3))
                for c, col in CLASS_COLOR.items():
                    k = f"{c}_avg_bps"
                    if k in ts and ts[k].max() > 0:
                        ax.plot(ts.time_s, ts[k] / 1e6, "o-" if len(ts) < 10 else "-", ms=3, label=c, color=col)
                ax.set_yscale("log")  # the flood (tens of Mbit/s) and RMI (tens of kbit/s) on one plot
                ax.set_xlabel("s"); ax.set_ylabel("Mbit/s (running average, log)"); ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
                ax.set_title(f"{n} (trial {first.idx}): bit rate per class on {first.summary['host']}'s port (Figures 11-18 style)",
                             fontsize=9, color=COLOR[n])
                show(fig, f"fig-bitrate-{n.replace(' ', '-')}.png")
'''

PROV = '''if camp:
    display(Markdown("## Provenance"))
    table(pd.DataFrame(sorted(prov.items()), columns=["what", "value"]))
_ = (out / "figures.json").write_text(json.dumps(figures))
'''

nb = nbformat.v4.new_notebook()
cells = [PARAMS, LOAD, RAW, TABLES, SIDE, FIGS, TRIALS, NETWORK, CPU, SWITCH, FLOOD, CAPTURE, PROV]
nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
nb.cells[0].metadata["tags"] = ["parameters"]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbformat.write(nb, Path(__file__).with_name("report.ipynb"))
