"""The report's figures (helpers of ``analysis/notebooks/report.py``): each function draws one
figure from data it is given and returns the matplotlib Figure (the notebook saves and shows it).
No file is read or written here.

Conventions of every figure: each condition keeps one colour (``color``: condition -> colour) and
one position (``order``: baseline first) with a legend; trial values spanning decades are drawn
on log axes or in per-condition panels; bars start at 0 on a linear axis and carry their values.
``ctx`` (:class:`.context.ReportContext`) gives the metric's axis label, unit and decimals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
# user text (a metric's unit, a condition's name) is drawn as written: "$x$" is no mathtext, and a
# lone "$" no five-line matplotlib exception (issue 50)
matplotlib.rcParams["text.parse_math"] = False
import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen before pyplot is imported)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator  # noqa: E402

from . import calls as rc  # noqa: E402
from .context import ReportContext  # noqa: E402
from .lib import wrap_label  # noqa: E402

Colors = Mapping[str, str]


def close(fig: Figure) -> None:
    """Release a figure drawn here (after the notebook saved it)."""
    plt.close(fig)


def plain_log(ax: Axes, axis: str = "y") -> None:
    """Log scale with plain-number tick labels (1, 2, 5, 10, 20 ...) instead of powers of ten."""
    a = ax.yaxis if axis == "y" else ax.xaxis
    (ax.set_yscale if axis == "y" else ax.set_xscale)("log")
    a.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    a.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    a.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def ticks(ax: Axes, names: Sequence[str]) -> None:
    """Condition names under their positions, wrapped to short lines."""
    ax.set_xticks(range(len(names)), [wrap_label(n) for n in names], fontsize=8)


def legend(ax: Axes, names: Sequence[str], color: Colors, **kw: Any) -> None:
    """A legend of the conditions ``names`` in their colours."""
    ax.legend(handles=[Patch(color=color[n], label=n) for n in names], fontsize=8, **kw)


def means(main: Mapping[str, Any], order: Sequence[str], color: Colors, ctx: ReportContext) -> Figure:
    """Mean and 95 % BCa CI per condition on a log axis (the thesis's Figure 22 for the RayTracer)."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    for i, n in enumerate(order):
        d = main["conditions"][n]
        ax.errorbar([i], [d["mean"]], yerr=[[d["mean"] - d["ci95"][0]], [d["ci95"][1] - d["mean"]]], fmt="o", ms=8,
                    capsize=6, color=color[n])
        ax.annotate(f"{d['mean']:.{2 if ctx.thesis_like else ctx.places}f} {ctx.unit}",
                    (i, d["ci95"][1]), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    plain_log(ax)
    ticks(ax, order)
    ax.set_xlim(-0.5, len(order) - 0.5)
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 1.6)
    ax.set_ylabel(f"{ctx.axis} (log), mean and 95% BCa CI")
    legend(ax, order, color, loc="upper left")
    ax.set_title("Figure 22 style: time lost to congestion and won back by QoS" if ctx.thesis_like else
                  f"{ctx.metric.name}: lost to congestion and won back by QoS ({ctx.metric.direction} is better)")
    return fig


def box_cdf(raw: Mapping[str, pd.DataFrame], order: Sequence[str], color: Colors, ctx: ReportContext) -> Figure:
    """Box plots with every trial, and the CDF of the trial values (``elapsed_s`` column of the
    statistics' input: the primary metric)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [1, 1.2]})
    rng = np.random.default_rng(0)
    for i, n in enumerate(order):
        v = raw[n].elapsed_s.to_numpy()
        a1.boxplot([v], positions=[i], widths=0.55, showfliers=False, medianprops={"color": "black"},
                   boxprops={"color": color[n]}, whiskerprops={"color": color[n]}, capprops={"color": color[n]})
        a1.plot(i + rng.uniform(-0.18, 0.18, len(v)), v, "o", ms=3, alpha=0.6, color=color[n])
        x = np.sort(v)
        a2.step(x, np.arange(1, len(x) + 1) / len(x), where="post", color=color[n], lw=1.8)
    plain_log(a1)
    ticks(a1, order)
    a1.set_ylabel(f"{ctx.axis} (log)")
    a1.set_title("Box plots (whiskers 1.5 IQR) with every trial")
    plain_log(a2, "x")
    a2.set_xlabel(f"{ctx.axis} (log)")
    a2.set_ylabel("fraction of trials <= x")
    a2.grid(alpha=0.3)
    a2.set_title("CDF of trial times" if ctx.times else f"CDF of {ctx.metric.name}")
    legend(a2, order, color, loc="lower right")
    return fig


def effects(comps: Sequence[Mapping[str, Any]], color: Colors, pfmt: Any) -> Figure:
    """Each comparison's ratio of means b / a with its BCa interval, Cohen's d and Holm p."""
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(comps) + 1.2))
    for i, c in enumerate(comps):
        lo, hi = c["ratio_ci95"] or (c["ratio"], c["ratio"])
        ax.errorbar([c["ratio"]], [i], xerr=[[c["ratio"] - lo], [hi - c["ratio"]]], fmt="o", capsize=5,
                    color=color[c["b"]])
        d = "not computable (no spread)" if c["cohens_d"] is None else f"{c['cohens_d']:+.2f}"
        ax.annotate(f"x{c['ratio']:.3f} [{lo:.3f}-{hi:.3f}]  d = {d}, "
                    f"Holm p = {pfmt(c['welch_t_p_holm'])}", (hi, i), textcoords="offset points", xytext=(8, -3),
                    fontsize=8)
    ax.axvline(1, color="grey", lw=1, ls="--")
    ax.set_yticks(range(len(comps)), [f"{c['b']}\nvs {c['a']}" for c in comps], fontsize=8)
    plain_log(ax, "x")
    ax.set_xlabel("ratio of means b / a (log), 95% BCa bootstrap interval")
    ax.set_xlim(min(c["ratio_ci95"][0] if c["ratio_ci95"] else c["ratio"] for c in comps) / 1.5,
                max(c["ratio_ci95"][1] if c["ratio_ci95"] else c["ratio"] for c in comps) * 12)
    ax.invert_yaxis()
    ax.set_title("Effect sizes: each comparison's ratio of means (colour = condition b)")
    return fig


def run_order(trials: pd.DataFrame, done: pd.DataFrame, order: Sequence[str], color: Colors, ctx: ReportContext,
              gap: pd.Series, pause: pd.Series) -> Figure:
    """Every trial's value (``value`` column) in run order: warm-ups, retries, failures and the
    pauses of a resumed campaign marked."""
    fig, ax = plt.subplots(figsize=(11, 4))
    for n in order:
        g = done[done.condition == n]
        ax.plot(g.idx, g.value, "o", ms=4, color=color[n], alpha=0.85)
    wu = trials[(trials.warmup == 1) & trials.value.notna()]
    ax.plot(wu.idx, wu.value, "o", ms=5, mfc="none", color="grey")
    retried = trials[trials.attempts > 1]
    ax.plot(retried.idx, retried.value.fillna(trials.value.max()), "s", ms=11, mfc="none", mec="black", mew=1.5)
    failed = trials[trials.status == "failed"]
    ymax = float(trials.value.max())
    ax.plot(failed.idx, [ymax * 1.3] * len(failed), "X", ms=9, color="black")
    for i in trials.idx[pause]:
        ax.axvline(i - 0.5, color="black", ls="--", lw=1)
        ax.annotate(f"resumed after {gap[trials.idx == i].iloc[0] / 60:.0f} min", (i - 0.5, ymax), rotation=90,
                    fontsize=8, xytext=(3, 0), textcoords="offset points", va="top")
    plain_log(ax)
    ax.set_xlabel("trial in run order (idx)")
    ax.set_ylabel(f"{ctx.axis} (log)")
    handles = [Patch(color=color[n], label=n) for n in order] + [
        Line2D([], [], marker="o", mfc="none", color="grey", ls="", label="warm-up"),
        Line2D([], [], marker="s", mfc="none", mec="black", ls="", ms=9, label="retried (attempts > 1)"),
        Line2D([], [], marker="X", color="black", ls="", label="failed"),
        Line2D([], [], color="black", ls="--", label="pause / resume")]
    ax.legend(handles=handles, fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title("Every trial in run order (drift, resume gaps and retries would show here)")
    return fig


def thesis_run_order(raw: Mapping[str, pd.DataFrame], order: Sequence[str], color: Colors) -> Figure:
    """The thesis's Appendix A trials in order."""
    fig, ax = plt.subplots(figsize=(11, 3.8))
    for n in order:
        ax.plot(raw[n].trial, raw[n].elapsed_s, "o-", ms=3, lw=0.8, color=color[n], alpha=0.85)
    plain_log(ax)
    ax.set_xlabel("trial")
    ax.set_ylabel("elapsed s (log)")
    legend(ax, order, color, loc="upper left", ncol=2)
    ax.set_title("Appendix A trials in order")
    return fig


def factorial_recovery(pts: Sequence[tuple[str, float, float, float]]) -> Figure:
    """Each factor level's recovery with its BCa interval ((label, ratio, lo, hi) points)."""
    fig, ax = plt.subplots(figsize=(1.2 + 1.3 * len(pts), 2.8))
    xs = np.arange(len(pts))
    vals = np.array([p[1] for p in pts])
    ax.errorbar(xs, vals, yerr=[vals - [p[2] for p in pts], [p[3] for p in pts] - vals], fmt="o", capsize=4)
    ax.axhline(0, color="0.7", lw=0.8)
    ax.axhline(1, color="0.7", lw=0.8, ls="--")
    ax.set_xticks(xs, [p[0] for p in pts], fontsize=8)
    ax.set_ylabel("recovery (BCa 95 %)")
    return fig


def stack(parts: Mapping[str, Mapping[str, float]], order: Sequence[str], color: Colors, colors: Colors,
          title: str, ylabel: str) -> Figure:
    """Per-condition panels (each its own linear axis from 0): a stacked bar of parts[cond] =
    {label: value}; values under 4 % of a bar are drawn but not labelled, the legend lists the
    parts that occur."""
    from .lib import text_color_on

    conds = [n for n in order if n in parts]
    fig, axes = plt.subplots(1, len(conds), figsize=(2.6 * len(conds) + 1, 3.4), squeeze=False)
    used: list[str] = []
    for ax, n in zip(axes[0], conds, strict=True):
        bottom, whole = 0.0, sum(v for v in parts[n].values() if v > 0)
        for label, v in parts[n].items():
            if not v > 0:
                continue  # nothing to draw (e.g. no flood processes without congestion)
            used += [label] if label not in used else []
            ax.bar([0], [v], bottom=bottom, color=colors[label], width=0.6, edgecolor=color[n], lw=2)
            if v >= 0.04 * whole:
                ax.annotate(f"{v:.3g}", (0, bottom + v / 2), ha="center", va="center", fontsize=8,
                            color=text_color_on(colors[label]))
            bottom += v
        ax.set_xticks([])
        ax.set_xlim(-0.6, 0.6)
        ax.set_ylim(0, bottom * 1.15 or 1)
        ax.set_title(n, fontsize=9, color=color[n])
    axes[0][0].set_ylabel(ylabel)
    axes[0][-1].legend(handles=[Patch(color=colors[label], label=label) for label in colors if label in used],
                       fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.suptitle(title, y=1.06)
    return fig


def bars_per_panel(per: Mapping[tuple[str, Any], float], conds: Sequence[str], panels: Sequence[Any],
                   color: Colors, titles: Sequence[str], ylabel: str, fmt: str = "{:.0f}") -> Figure:
    """One panel per ``panels`` key (its own linear axis from 0), one bar per condition of its
    ``per[(condition, key)]`` value (0 when missing)."""
    fig, axes = plt.subplots(1, len(panels), figsize=(3 * len(panels), 3), squeeze=False)
    fig.subplots_adjust(wspace=0.45)
    for j, key in enumerate(panels):
        ax = axes[0][j]
        for i, n in enumerate(conds):
            v = float(per.get((n, key), 0.0))
            ax.bar([i], [v], color=color[n], width=0.75)
            ax.annotate(fmt.format(v), (i, v), ha="center", va="bottom", fontsize=7)
        ax.set_ylim(0, max(ax.get_ylim()[1], 1) * 1.15)
        ax.set_xticks([])
        ax.set_title(titles[j], fontsize=10)
        if j == 0:
            ax.set_ylabel(ylabel)
    legend(axes[0][-1], conds, color, loc="center left", bbox_to_anchor=(1.02, 0.5))
    return fig


def call_latency(lat: Mapping[str, Any], color: Colors) -> Figure:
    """The render calls' latency CDF and its tail (complementary CDF), log axes."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.6))
    for n, x in lat.items():
        xs, ys = rc.ecdf(x)
        ax1.step(xs, ys, where="post", color=color.get(n, "#333333"), label=n)
        ax2.step(xs, 1 - ys + 1 / len(xs), where="post", color=color.get(n, "#333333"))
    plain_log(ax1, "x")
    plain_log(ax2, "x")
    ax2.set_yscale("log")
    ax1.set_xlabel("render-call latency, ms (log)")
    ax1.set_ylabel("fraction of calls")
    ax2.set_xlabel("render-call latency, ms (log)")
    ax2.set_ylabel("fraction of calls >= x (log)")
    ax2.set_title("the tail", fontsize=9)
    legend(ax1, list(lat), color, loc="lower right")
    return fig


def rto_bars(wired: pd.DataFrame, order: Sequence[str], color: Colors) -> Figure:
    """Calls with an RTO per captured trial."""
    fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(wired) + 2), 3))
    vals = wired["calls with an RTO"].fillna(0).astype(float)
    ax.bar(range(len(wired)), vals, color=[color.get(n, "#333333") for n in wired.condition])
    for i, v in enumerate(vals):
        ax.annotate(f"{v:.0f}", (i, v), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(wired)), [str(i) for i in wired.idx], fontsize=8)
    ax.set_xlabel("captured trial (idx)")
    ax.set_ylabel("calls with an RTO")
    ax.set_ylim(0, max(1.0, float(vals.max())) * 1.2)
    legend(ax, [n for n in order if n in set(wired.condition)], color, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def classes(use: pd.DataFrame, kinds: Sequence[str], conds: Sequence[str], color: Colors,
            class_mean: Any) -> Figure:
    """Packets and mean frame length per traffic class (columns) and condition (bars)."""
    fig, axes = plt.subplots(2, len(kinds), figsize=(2.4 * len(kinds) + 1.5, 5.6), squeeze=False)
    fig.subplots_adjust(wspace=0.5)
    for j, k in enumerate(kinds):
        for row, (key, label) in enumerate((("packets", "packets per trial"),
                                            ("mean_frame_bytes", "mean frame bytes"))):
            ax = axes[row][j]
            for i, n in enumerate(conds):
                mean = class_mean(use[use.condition == n].summary, k, key)
                ax.bar([i], [mean], color=color[n], width=0.75)
                ax.annotate(f"{mean:.0f}", (i, mean), ha="center", va="bottom", fontsize=7)
            ax.set_ylim(0, ax.get_ylim()[1] * 1.15)
            ax.set_xticks([])
            if row == 0:
                ax.set_title(k, fontsize=10)
            if j == 0:
                ax.set_ylabel(label)
    legend(axes[0][-1], list(conds), color, loc="center left", bbox_to_anchor=(1.02, 0.0))
    return fig


def bitrate(ts: pd.DataFrame, class_color: Colors, title: str, title_color: str) -> Figure:
    """Bit rate per traffic class over one captured trial (running average, log axis)."""
    fig, ax = plt.subplots(figsize=(9, 3))
    for cls, col in class_color.items():
        k = f"{cls}_avg_bps"
        if k in ts and ts[k].max() > 0:
            ax.plot(ts.time_s, ts[k] / 1e6, "o-" if len(ts) < 10 else "-", ms=3, label=cls, color=col)
    ax.set_yscale("log")  # the flood (tens of Mbit/s) and RMI (tens of kbit/s) on one plot
    ax.set_xlabel("s")
    ax.set_ylabel("Mbit/s (running average, log)")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(title, fontsize=9, color=title_color)
    return fig
