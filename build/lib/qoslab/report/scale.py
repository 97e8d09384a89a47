"""The report's scale-model section (issue 32, docs/scale-model.md): the scale model's
dimensionless quantities measured in this campaign beside the thesis's, and the trial-time
distributions overlaid on the thesis's Appendix A, each normalised by its own world's
uncongested-fifo mean. It applies only to a RayTracer campaign timed in seconds whose matrix has
the thesis's four Table 5 conditions (:data:`qoslab.scale.overlay.CONDITIONS`). Pure: the
notebook reads the files (topology snapshot, a captured baseline trial, the thesis's CSVs) and
passes their contents; the computation is :mod:`qoslab.scale.measure` / :mod:`.overlay` /
:mod:`.model`, shared with ``scripts/scale_table.py`` and ``scripts/scale_overlay.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
# user text (a metric's unit, a condition's name) is drawn as written: "$x$" is no mathtext, and a
# lone "$" no five-line matplotlib exception (issue 50)
matplotlib.rcParams["text.parse_math"] = False
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from qoslab.scale.measure import testbed_world  # noqa: E402
from qoslab.scale.model import World, compare  # noqa: E402
from qoslab.scale.overlay import BASELINE, CONDITIONS, campaign_times, normalised, summary_rows, thesis_times  # noqa: E402
from qoslab.topology import Topology  # noqa: E402

from .context import ReportContext  # noqa: E402

#: Quantity -> (label, definition) as in docs/scale-model.md ("The quantities"), in its order.
QUANTITIES = {
    "network_share": ("network share", "wire time of a run's bytes on the head node's link / uncongested run"),
    "compute_to_comm": ("compute : communication", "(run - wire time) / wire time"),
    "calls_per_run": ("calls per run", "remote calls (thesis: unknown)"),
    "bytes_per_call": ("bytes per call", "wire bytes / calls"),
    "flood_load": ("flood load", "flood received by a port / link rate (thesis: offered, <= 1)"),
    "queue_s": ("queue depth (s)", "switch FIFO bytes x 8 / link rate (thesis: 128 KiB assumed)"),
    "queue_in_frames": ("queue depth (frames)", "FIFO bytes / 1514"),
    "queue_to_rtt": ("queue : RTT", "queue time / base RTT (thesis: 150 us assumed; campaign: baseline ping)"),
    "queue_to_rto_min": ("queue : minimum RTO", "queue time / rto_min"),
    "rto_min_to_run": ("minimum RTO : run", "rto_min / uncongested run"),
    "delack_to_run": ("delayed ACK : run", "delayed-ACK time / uncongested run (0: quickack)"),
    "rx_cpu_share": ("receive CPU share", "flood pps x CPU s per flood packet / a flooded node's cores"),
    "receiver_cores": ("a flooded node's cores", "thesis: one dual-core Opteron; testbed: its cpu: capacity (or 2/4)"),
    "rx_cost_us": ("CPU per flood packet (us)", "thesis: 1 Hz per bit/s (assumed); testbed: the receiver's, per trial"),
    "class_control_ack": ("class mix: control/ACK", "share of a run's packets"),
    "class_ssh": ("class mix: SSH", "share of a run's packets"),
    "class_short_frame": ("class mix: short frame", "share of a run's packets"),
    "class_data": ("class mix: data", "share of a run's packets"),
    "class_rmi": ("class mix: RMI", "share of a run's packets"),
}
INTRO = ("The testbed is a scale model of the thesis's cluster: it tells the truth only where the dimensionless "
         "quantities that decide the outcome have the thesis's values (docs/scale-model.md). Below: each quantity "
         "measured in this campaign (its topology snapshot, its trials, its first captured uncongested-fifo trial) "
         "beside the thesis's (qoslab.scale.model.THESIS; \"assumed\" values are not in the thesis); then the trial "
         "times of both worlds, each divided by its own world's uncongested-fifo mean (the thesis's: Table 3's "
         "4-machine trials, as in its Table 5; this campaign's: the trials its statistics count, trials.csv), over "
         "the thesis's Appendix A.")
THESIS_STYLE = {"color": "black", "linestyle": "-"}


def applies(ctx: ReportContext, conditions: Iterable[str], has_topology: bool) -> bool:
    """The section applies: the thesis's workload and metric (RayTracer, seconds), the four Table
    5 conditions in the matrix, and a topology snapshot to measure the testbed from."""
    return ctx.kind == "raytracer" and ctx.thesis_like and has_topology and set(CONDITIONS) <= set(conditions)


def baseline_captures(done: pd.DataFrame) -> list[str]:
    """The capture summaries (paths relative to the campaign) of the counted uncongested-fifo
    trials, in run order: the first that exists gives the run's bytes and packets per class."""
    if "capture_summary" not in done.columns:
        return []
    rows = done[done.condition == BASELINE].sort_values("idx")
    return [p for p in rows.capture_summary if isinstance(p, str) and p]


def condition_rows(done: pd.DataFrame, condition: str) -> list[dict[str, Any]]:
    """The counted trials of ``condition`` as mappings (qoslab.scale.measure's rows)."""
    return [dict(r) for r in done[done.condition == condition].to_dict("records")]


def campaign_world(topo: Topology, done: pd.DataFrame, summary: Mapping[str, Any],
                   result: Mapping[str, Any]) -> World:
    """The testbed's :class:`World` of this campaign (:func:`qoslab.scale.measure.testbed_world`)
    from its counted trials and one captured baseline trial; the base RTT is the median of the
    baseline trials' pinged RTTs (:mod:`qoslab.meters.rtt`; unknown for campaigns run before it)."""
    return testbed_world(topo, condition_rows(done, BASELINE), condition_rows(done, "congestion fifo"), summary,
                         result, name="this campaign")


def normalised_worlds(thesis5: pd.DataFrame, thesis3: pd.DataFrame, trials: pd.DataFrame,
                      campaign: str = "this campaign") -> dict[str, dict[str, list[float]]]:
    """World name -> condition -> sorted trial times / that world's uncongested-fifo mean: the
    thesis's (Table 5 CSV, Table 3's 4 machines) and the campaign's (``trials``: trials.csv)."""
    return {"thesis": normalised(thesis_times(thesis5.to_dict("records"), thesis3.to_dict("records"))),
            campaign: normalised(campaign_times(trials.to_dict("records")))}


def _fmt(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.3g}" if abs(v) < 1e3 else f"{v:,.0f}"


def quantities_table(thesis: World, testbed: World) -> pd.DataFrame:
    """Quantity, definition, the thesis's value, this campaign's and their ratio (campaign /
    thesis), three significant digits; "-" where a value is unknown."""
    rows = []
    for key, va, vb, ratio in compare(thesis, testbed):
        label, definition = QUANTITIES.get(key, (key, ""))
        if key == "queue_s":
            va, vb = (None if v is None else v * 1000 for v in (va, vb))
            label = "queue depth (ms)"
        rows.append({"quantity": label, "definition": definition, "thesis": _fmt(va),
                     "this campaign": _fmt(vb), "campaign / thesis": _fmt(ratio)})
    return pd.DataFrame(rows)


def overlay_table(worlds: Mapping[str, Mapping[str, list[float]]]) -> pd.DataFrame:
    """Normalised trial times per condition and world: n, p10, median, p90, max, mean."""
    return pd.DataFrame(summary_rows(worlds))


def overlay_sentence(worlds: Mapping[str, Mapping[str, list[float]]]) -> str:
    """One sentence per congested condition: its mean as a multiple of the baseline, campaign
    against thesis."""
    parts = []
    for c in CONDITIONS:
        if c == BASELINE:
            continue
        vals = [(w, sum(d[c]) / len(d[c])) for w, d in worlds.items() if d.get(c)]
        if vals:
            parts.append(f"*{c}* " + ", ".join(f"{w} {m:.2f}x" for w, m in vals))
    return "Mean time as a multiple of the own world's uncongested-fifo mean: " + "; ".join(parts) + "."


def overlay_figure(worlds: Mapping[str, Mapping[str, list[float]]], color: Mapping[str, str],
                   campaign: str = "this campaign", thesis: str = "thesis") -> Figure:
    """One panel per condition (:data:`CONDITIONS`): the empirical CDF of each world's normalised
    times, the thesis's black and solid, the campaign's dashed in the condition's colour."""
    fig = Figure(figsize=(16, 3.8))
    axes = fig.subplots(1, len(CONDITIONS), sharey=True, sharex=True)
    values = [t for d in worlds.values() for v in d.values() for t in v if t > 0]
    if values and max(values) / min(values) > 20:  # spanning decades: log axis (report.figures' convention)
        axes[0].set_xscale("log")
    for ax, c in zip(axes, CONDITIONS, strict=True):
        for w, style in ((thesis, THESIS_STYLE), (campaign, {"color": color.get(c, "C0"), "linestyle": "--"})):
            v: Sequence[float] = worlds.get(w, {}).get(c, [])
            if v:
                ax.step(v, [(i + 1) / len(v) for i in range(len(v))], where="post", label=f"{w} (n={len(v)})",
                        **style)
        ax.axvline(1.0, color="#999999", linewidth=0.8)
        ax.set_title(c, color=color.get(c, "black"))
        ax.set_xlabel("trial time / own uncongested-fifo mean")
        ax.set_ylim(0, 1.02)
        ax.legend(loc="best", fontsize=8)
    axes[0].set_ylabel("share of trials (CDF)")
    fig.suptitle("Trial times normalised by each world's uncongested-fifo mean: campaign over the thesis's Appendix A")
    fig.tight_layout()
    return fig
