"""Writes report.ipynb (the campaign/thesis report notebook) from the cell sources below.
Run after editing: python analysis/notebooks/build_report_notebook.py"""

from pathlib import Path

import nbformat

PARAMS = '''# parameters (papermill)
stats_path = ""       # stats.json of a campaign, or of `qoslab-analysis thesis`
campaign_dir = ""     # the campaign folder ("" in thesis mode)
thesis_data = ""      # the thesis CSV folder (thesis mode)
out_dir = "."
title = "qoslab report"
'''

LOAD = '''import json, sqlite3, pathlib
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from IPython.display import display, HTML, Markdown, Image

out = pathlib.Path(out_dir)
out.mkdir(parents=True, exist_ok=True)
stats = json.loads(pathlib.Path(stats_path).read_text())
thesis = "table5" in stats
camp = pathlib.Path(campaign_dir) if campaign_dir else None
figures = []

def show(fig, name):
    path = out / name
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    figures.append(name)
    display(Image(filename=str(path)))

def fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else v

display(Markdown(f"# {title}"))
if camp:
    prov = json.loads((camp / "provenance.json").read_text())
    display(Markdown(f"Campaign folder `{camp}`; seed {prov['seed']}; qoslab {prov['qoslab_commit'][:10]}; kernel {prov['kernel']}."))
else:
    display(Markdown("The thesis's Appendix A trial times, computed here, next to its published Tables 3 and 5."))
'''

TABLES = '''def cond_table(s):
    rows = []
    for name, d in s["conditions"].items():
        r = {"condition": name, "n": d["n"], "mean s": d["mean"], "sd s": d["sd"],
             "95% CI of mean": f"{d['ci95'][0]:.3f} - {d['ci95'][1]:.3f}", "median s": d["median"], "CV": f"{d['cv']:.1%}"}
        if "published_mean" in d:
            r["published mean"] = d["published_mean"]
            r["published sd"] = d["published_sd"]
            r["sd as published?"] = "yes" if d["sd_matches_published"] else "NO (raw data differ)"
        rows.append(r)
    return pd.DataFrame(rows)


sections = {"Table 3: scaling": stats["table3"], "Table 5: congestion and QoS": stats["table5"]} if thesis else {"Trial times by condition": stats}
for head, s in sections.items():
    display(Markdown(f"## {head}"))
    display(HTML(cond_table(s).to_html(index=False, float_format=lambda v: f"{v:.3f}")))
    if s.get("comparisons"):
        c = pd.DataFrame(s["comparisons"]).rename(columns={"a": "against", "b": "condition", "difference_s": "difference s",
                                                           "welch_t_p": "Welch t p", "mann_whitney_p": "Mann-Whitney U p"})
        display(Markdown("Each condition against another: difference of means, ratio, two-sided p-values."))
        display(HTML(c.to_html(index=False, formatters={k: fmt for k in c.columns})))
    for r in s.get("recovery", []):
        ratio = r["ratio"]
        display(Markdown(f"**Recovery ratio of {r['treated']}**: " + (f"**{ratio:.1%}**" if ratio is not None else "n/a")
                         + f" of the slowdown from *{r['baseline']}* to *{r['congested']}* won back."))
'''

MEANS = '''main = stats["table5"] if thesis else stats
names = list(main["conditions"])
means = [main["conditions"][n]["mean"] for n in names]
errs = [main["conditions"][n]["mean"] - main["conditions"][n]["ci95"][0] for n in names]
colors = ["#4c72b0" if "no congestion" in n else "#c44e52" for n in names]
fig, ax = plt.subplots(figsize=(7.5, 4))
ax.bar(range(len(names)), means, yerr=errs, capsize=6, color=colors)
ax.set_xticks(range(len(names)), names, rotation=12)
ax.set_ylabel("RayTracer elapsed time (s), mean with 95% CI")
ax.set_title("Figure 22 style: time lost to congestion and won back by QoS")
show(fig, "fig-means.png")
'''

TRIALS = '''if camp:
    con = sqlite3.connect(camp / "trials.sqlite")
    trials = pd.read_sql("SELECT idx, condition, trial, warmup, status, attempts, elapsed_s, total_s, busy_max_s, flood_json, "
                         "capture_summary, phases_json, error FROM trials ORDER BY idx", con)
    con.close()
    done = trials[(trials.status == "done") & (trials.warmup == 0)]
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for name, g in done.groupby("condition"):
        ax.plot(g.idx, g.elapsed_s, "o", label=name, alpha=0.8)
    ax.set_xlabel("trial in run order"); ax.set_ylabel("elapsed (s)"); ax.legend(fontsize=8)
    ax.set_title("Every trial in run order (drift would show here)")
    show(fig, "fig-runorder.png")
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    names = [n for n, _ in done.groupby("condition")]
    ax.boxplot([g.elapsed_s.values for _, g in done.groupby("condition")])
    ax.set_xticks(range(1, len(names) + 1), names)
    ax.set_ylabel("elapsed (s)"); ax.set_title("Distribution per condition")
    plt.setp(ax.get_xticklabels(), rotation=12)
    show(fig, "fig-box.png")
    failed = trials[trials.status == "failed"]
    display(Markdown(f"{len(done)} trials counted, {int((trials.warmup == 1).sum())} warm-up, {len(failed)} failed."))
    if len(failed):
        display(HTML(failed[["idx", "condition", "error"]].to_html(index=False)))
elif thesis_data:
    t5 = pd.read_csv(pathlib.Path(thesis_data) / "thesis-table5-qos.csv")
    fig, ax = plt.subplots(figsize=(8, 3.8))
    for (c, q), g in t5.groupby(["congestion", "qos"]):
        ax.plot(g.trial, g.elapsed_s, "o-", label=f"congestion {c}, QoS {q}", alpha=0.7)
    ax.set_xlabel("trial"); ax.set_ylabel("elapsed (s)"); ax.legend(fontsize=8)
    ax.set_title("Appendix A.2 trials in order")
    show(fig, "fig-runorder.png")
'''

NETWORK = '''if camp and (camp / "stats-network.json").exists():
    net = json.loads((camp / "stats-network.json").read_text())
    display(Markdown("## Where the time goes: compute vs network wait"))
    display(Markdown("Network wait = render time minus the busiest worker's own render time: what the critical "
                     "worker spent not computing (waiting for requests, results, retransmissions). A switch profile "
                     "can only change this part; the compute part also grows under a flood when the flood's packet "
                     "processing shares the cores (the embedded testbed's one emulation artefact)."))
    display(HTML(cond_table(net).to_html(index=False, float_format=lambda v: f"{v:.3f}")))
    for r in net.get("recovery", []):
        ratio = r["ratio"]
        display(Markdown(f"**Recovery of the network wait by {r['treated']}**: " + (f"**{ratio:.1%}**" if ratio is not None else "n/a")))
    g = done.groupby("condition")
    names = list(g.groups)
    comp = [g.get_group(n).busy_max_s.mean() for n in names]
    wait = [(g.get_group(n).elapsed_s - g.get_group(n).busy_max_s).mean() for n in names]
    fig, ax = plt.subplots(figsize=(7.5, 3.8))
    ax.bar(range(len(names)), comp, label="busiest worker computing", color="#8c8c8c")
    ax.bar(range(len(names)), wait, bottom=comp, label="network wait", color="#dd8452")
    ax.set_xticks(range(len(names)), names, rotation=12)
    ax.set_ylabel("seconds (mean)"); ax.legend(fontsize=8); ax.set_title("Compute vs network wait per condition")
    show(fig, "fig-compute-network.png")
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
        display(Markdown("## The congestion: D-ITG achieved rates (from ITGDec)"))
        fl = pd.DataFrame(rows).groupby(["condition", "flow"]).mean().reset_index()
        display(HTML(fl.to_html(index=False, float_format=lambda v: f"{v:.2f}")))
'''

CAPTURE = '''if camp:
    caps = {}  # the first captured trial of each condition; paths are relative to the campaign folder
    for _, t in trials.iterrows():
        if isinstance(t.capture_summary, str) and (camp / t.capture_summary).exists():
            caps.setdefault(t.condition, camp / t.capture_summary)
    caps = list(caps.items())
    if caps:
        display(Markdown("## Traffic classes on the SPAN port (Figures 9-10 style)"))
        for cond, p in caps:
            s = json.loads(p.read_text())
            cl = {k: v for k, v in s["classes"].items() if v["packets"]}
            fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.4))
            a1.bar(list(cl), [v["packets"] for v in cl.values()]); a1.set_yscale("log"); a1.set_title(f"{cond}: packets per class (log)")
            a2.bar(list(cl), [v["mean_frame_bytes"] for v in cl.values()]); a2.set_title("mean frame length (bytes)")
            for a in (a1, a2):
                plt.setp(a.get_xticklabels(), rotation=20)
            show(fig, f"fig-classes-{cond.replace(' ', '-')}.png")
            ts = pd.read_csv(p.parent / "timeseries.csv")
            fig, ax = plt.subplots(figsize=(8, 3.2))
            for c in ("rmi", "control/ack", "udp", "data"):
                col = f"{c}_avg_bps"
                if col in ts and ts[col].max() > 0:
                    ax.plot(ts.time_s, ts[col] / 1e6, label=c)
            ax.set_yscale("log")  # the flood (tens of Mbit/s) and RMI (tens of kbit/s) on one plot
            ax.set_xlabel("s"); ax.set_ylabel("Mbit/s (running average, log)"); ax.legend(fontsize=8)
            ax.set_title(f"{cond}: bit rate per class on {s['host']}'s port (Figures 11-18 style)")
            show(fig, f"fig-bitrate-{cond.replace(' ', '-')}.png")
'''

PROV = '''if camp:
    display(Markdown("## Provenance"))
    display(HTML(pd.DataFrame(sorted(prov.items()), columns=["what", "value"]).to_html(index=False)))
_ = (out / "figures.json").write_text(json.dumps(figures))
'''

nb = nbformat.v4.new_notebook()
cells = [PARAMS, LOAD, TABLES, MEANS, TRIALS, NETWORK, FLOOD, CAPTURE, PROV]
nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
nb.cells[0].metadata["tags"] = ["parameters"]
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nbformat.write(nb, Path(__file__).with_name("report.ipynb"))
