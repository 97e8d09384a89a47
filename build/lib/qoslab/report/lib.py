"""The report notebook's pure helpers (``analysis/notebooks/report.py``): number formatting, the
conditions' order and colours, and the frames of its tables. No I/O: every function works on what
it is given (stats.json dicts as :mod:`json` loads them, trial frames as
``pd.DataFrame(Store.rows())`` gives them, parsed JSON of the per-trial columns).

Units: ``*_s`` and "s" columns are seconds, "cores" are CPU cores (CPU seconds / window seconds),
"Mbit/s" megabits per second, "ms" milliseconds; p-values, ratios, d and g are dimensionless.

A condition's *kind* is ``(congested, qos)``: whether it floods the network and whether it
applies a QoS profile (anything but fifo). Every figure keeps one colour and one position per
condition, baseline first: no congestion before congestion, fifo before a profile.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.colors import to_rgb

Kind = tuple[bool, bool]
"""(congested, qos) of a condition."""

#: One colour per kind (the first condition of a kind takes it), then EXTRA for the others.
PALETTE: dict[Kind, str] = {(False, False): "#4c72b0", (False, True): "#55a868", (True, False): "#c44e52",
                            (True, True): "#dd8452"}
EXTRA = ["#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd"]
#: The parts of the machine's cores in the CPU figure, with their colours (figure order).
CPU_PARTS = {"worker JVMs": "#1f78b4", "flood processes": "#d95f02",
             "other busy (kernel, manager JVM, harness)": "#999999", "outside load (other users' processes)": "#b15928",
             "idle": "#e8e8e8", "steal (hypervisor)": "#6a3d9a"}
#: The per-trial CPU columns the core shares need (seconds over the workload window).
CPU_NEEDED = ["cpu_window_s", "cpu_workers_s", "cpu_flood_s", "cpu_user_s", "cpu_system_s", "cpu_softirq_s",
              "cpu_idle_s", "cpu_steal_s"]
#: The traffic classes of a capture summary (capture/README.md), with their colours (figure order).
CLASS_COLOR = {"rmi": "#1b9e77", "control/ack": "#7570b3", "data": "#e7298a", "udp": "#d95f02", "ssh": "#66a61e",
               "short-frame": "#e6ab02", "other": "#666666"}


# -- formatting ------------------------------------------------------------------------------

def pfmt(p: float | None) -> str:
    """A p-value: two significant digits down to 1e-4, then scientific ("n/a" for None)."""
    return "n/a" if p is None else (f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}")


def ci(v: Sequence[float] | None, f: str = "{:.3f}") -> str:
    """An interval [lo, hi] as "lo - hi", each end formatted with ``f`` ("n/a" for None or [])."""
    return "n/a" if not v else f"{f.format(v[0])} - {f.format(v[1])}"


def recovery_value(r: Mapping[str, Any]) -> str:
    """A recovery entry of stats.json (``ratio``, ``ci95``) as Markdown: bold percentage and its
    BCa interval (percentile with a ``method``: a higher-is-better metric's), "n/a" (and no
    interval: its replicates divide by noise) when congestion slowed nothing."""
    ratio, kind = r["ratio"], "percentile" if r.get("method") else "BCa"  # method: a higher-is-better metric's
    return ((f"**{ratio:.1%}**" if ratio is not None else "n/a")
            + (f" (95 % {kind} {r['ci95'][0]:.1%} - {r['ci95'][1]:.1%})" if r.get("ci95") and ratio is not None
               else ""))


def recovery_caveat(r: Mapping[str, Any], stats: Mapping[str, Any], alpha: float = 0.05) -> str:
    """What a reader must know about a recovery entry ``r`` of ``stats`` (a stats.json), as one
    Markdown sentence with a leading space, or "": the slowdown it divides by (``congested``
    against ``baseline``) is not significant (Welch p, Holm-adjusted, >= ``alpha``), so the ratio
    divides by noise; or the ratio is above 100 % (its whole interval, when it has one), i.e. the
    treated condition beat the uncongested baseline (issue 34: sockperf and MPI on the testbed;
    see their examples' README)."""
    comp = next((c for c in stats.get("comparisons") or [] if c.get("a") == r["baseline"]
                 and c.get("b") == r["congested"]), None)
    p = None if comp is None else comp.get("welch_t_p_holm", comp.get("welch_t_p"))
    if r.get("ratio") is not None and p is not None and p >= alpha:
        return (f" *Read with care*: the slowdown it divides by ({r['congested']} against {r['baseline']}) is not "
                f"significant (Welch p, Holm = {p:.2g}), so this ratio divides by noise.")
    low = r["ci95"][0] if r.get("ci95") and r["ci95"][0] is not None else r.get("ratio")
    if low is not None and r.get("ratio") is not None and low > 1:
        return (f" Above 100 %: {r['treated']} under congestion beat the uncongested {r['baseline']} "
                "(the profile does more than undo the congestion, or the baseline pays a cost the congested "
                "runs do not).")
    return ""


def recovery_sentence(r: Mapping[str, Any], stats: Mapping[str, Any]) -> str:
    """The report's Markdown line of a primary-metric recovery entry: ratio, interval, the
    conditions it compares and :func:`recovery_caveat`."""
    return (f"**Recovery ratio of {r['treated']}**: " + recovery_value(r) + f" of the slowdown from *{r['baseline']}* "
            f"to *{r['congested']}* won back." + recovery_caveat(r, stats))


def recovery_cell(r: Mapping[str, Any]) -> str:
    """A recovery entry as a table cell: "ratio [lo - hi]" in percent, "n/a" without a ratio."""
    return "n/a" if r["ratio"] is None else f"{r['ratio']:.1%} [{ci(r['ci95'], '{:.1%}')}]"


def wrap_label(name: str, width: int = 16) -> str:
    """A condition name wrapped to lines of at most ``width`` characters (tick labels)."""
    return "\n".join(textwrap.wrap(name, width))


def text_color_on(color: str) -> str:
    """"white" or "black", whichever reads on a bar of ``color`` (any matplotlib colour)."""
    r, g, b = to_rgb(color)
    return "white" if 0.3 * r + 0.59 * g + 0.11 * b < 0.5 else "black"


# -- conditions: kind, order, colour ---------------------------------------------------------

def thesis_kind(name: str) -> Kind:
    """The kind of a thesis condition named "[no ]congestion, [no ]QoS"."""
    return not name.startswith("no congestion"), not name.endswith("no QoS")


def thesis_kinds(names: Iterable[str]) -> dict[str, Kind]:
    """Thesis condition name -> kind, in the given order."""
    return {n: thesis_kind(n) for n in names}


def playbook_kinds(playbook: Mapping[str, Any]) -> dict[str, Kind]:
    """Campaign condition name -> kind from a parsed playbook (``conditions``: name, congestion,
    profile), in playbook order."""
    return {c["name"]: (bool(c["congestion"]), c["profile"] != "fifo") for c in playbook["conditions"]}


def condition_order(kinds: Mapping[str, Kind]) -> list[str]:
    """The conditions baseline first: uncongested before congested, fifo before a profile, ties in
    the given order."""
    names = list(kinds)
    return sorted(kinds, key=lambda n: (kinds[n][0], kinds[n][1], names.index(n)))


def condition_colors(order: Sequence[str], kinds: Mapping[str, Kind]) -> dict[str, str]:
    """Condition -> colour: its kind's PALETTE colour, or an EXTRA one when that is taken."""
    colors: dict[str, str] = {}
    used: set[str] = set()
    for n in order:
        c = PALETTE[kinds[n]]
        colors[n] = c if c not in used else EXTRA[len(used) % len(EXTRA)]
        used.add(colors[n])
    return colors


def ordered(df: pd.DataFrame, order: Sequence[str], then: Sequence[str] = ()) -> pd.DataFrame:
    """``df`` sorted by its ``condition`` column in ``order``, then by the columns ``then``."""
    by: str | list[str] = ["o", *then] if then else "o"
    return df.assign(o=df.condition.map(list(order).index)).sort_values(by).drop(columns="o")


# -- trial times -----------------------------------------------------------------------------

def thesis_raw(t3: pd.DataFrame, t5: pd.DataFrame, order: Sequence[str]) -> dict[str, pd.DataFrame]:
    """The thesis's Appendix A trials per condition (of ``order``): Table 3's 4 machines as
    "no congestion, no QoS", Table 5's (congestion, qos) groups ("yes"/"no") as the others.
    ``t3``/``t5``: the CSVs as read (``elapsed_s`` in s; rows without one are dropped)."""
    t3 = t3.dropna(subset=["elapsed_s"])
    t5 = t5.dropna(subset=["elapsed_s"])
    raw = {"no congestion, no QoS": t3[t3.machines == 4]}
    for (c, q), g in t5.groupby(["congestion", "qos"]):
        raw[f"{'congestion' if c == 'yes' else 'no congestion'}, {'QoS' if q == 'yes' else 'no QoS'}"] = g
    return {n: raw[n] for n in order}


def campaign_raw(trials_csv: pd.DataFrame, order: Sequence[str]) -> dict[str, pd.DataFrame]:
    """A campaign's trials.csv rows per condition of ``order``."""
    return {n: trials_csv[trials_csv.condition == n] for n in order}


def counted(trials: pd.DataFrame) -> pd.DataFrame:
    """The done, non-warm-up rows of the trials frame (one row per trial, columns of the store)."""
    return trials[(trials.status == "done") & (trials.warmup == 0)]


def resume_pauses(trials: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(gap, pause) per trial row in run order: the gap (s) from the previous trial's end to this
    one's start, and whether it exceeds max(60 s, 20 x the median gap) (an interrupted campaign
    resumed)."""
    gap = trials.started - trials.finished.shift(1)
    return gap, gap > max(60.0, 20 * float(gap.median()))


def issue_table(failed: pd.DataFrame, retried: pd.DataFrame) -> pd.DataFrame:
    """The failed and retried trials (idx, condition, trial, status, attempts, elapsed_s, error),
    blanks for missing values."""
    cols = ["idx", "condition", "trial", "status", "attempts", "elapsed_s", "error"]
    return pd.concat([failed, retried])[cols].astype(object).fillna("")


# -- per-trial columns of the store ----------------------------------------------------------

def compute_network_split(done: pd.DataFrame, order: Sequence[str]
                          ) -> tuple[dict[str, dict[str, float]], pd.DataFrame | None]:
    """Where a condition's render time goes (means over its counted trials, s): the busiest
    worker's busy time (``busy_max_s``) and the network wait (``elapsed_s`` - ``busy_max_s``); with
    CPU data (``cpu_busiest_worker_s``) the busy time splits into on CPU and waiting for a core.
    Returns (condition -> {part: mean s} for the stacked figure, the CPU split table in ``order``
    with the compute share, or None without CPU data). Conditions missing a busy time are left out."""
    cpu_bw = pd.to_numeric(done.get("cpu_busiest_worker_s", pd.Series(np.nan, index=done.index)), errors="coerce")
    split = done.assign(on_cpu=cpu_bw.clip(upper=done.busy_max_s), cpu_wait=(done.busy_max_s - cpu_bw).clip(lower=0),
                        net=done.elapsed_s - done.busy_max_s)
    parts: dict[str, dict[str, float]] = {}
    rows = []
    for n, g in split.groupby("condition"):
        if not g.busy_max_s.notna().all():
            continue
        if g.on_cpu.notna().all():  # CPU data (the cpu meter): compute = on CPU + waiting for a core
            parts[n] = {"busiest worker on CPU": g.on_cpu.mean(),
                        "busiest worker waiting for a core": g.cpu_wait.mean(), "network wait": g.net.mean()}
            rows.append({"condition": n, "render s": g.elapsed_s.mean(), "on CPU s": g.on_cpu.mean(),
                         "waiting for a core s": g.cpu_wait.mean(), "network wait s": g.net.mean(),
                         "compute share": (g.on_cpu.mean() + g.cpu_wait.mean()) / g.elapsed_s.mean()})
        else:
            parts[n] = {"busiest worker computing": g.busy_max_s.mean(), "network wait": g.net.mean()}
    return parts, (ordered(pd.DataFrame(rows), order) if rows else None)


def cpu_frame(trials: pd.DataFrame, done: pd.DataFrame) -> pd.DataFrame:
    """The numeric ``cpu_*`` columns of the counted trials ``done`` (s; columns without any value
    dropped; ``cpu_json`` left out) and their ``condition``."""
    cpu_cols = [c for c in trials.columns if c.startswith("cpu_") and c != "cpu_json"]
    return done[cpu_cols].apply(pd.to_numeric, errors="coerce").dropna(axis=1, how="all").assign(
        condition=done.condition)


def cpu_means(cpud: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Mean of every column of :func:`cpu_frame`'s frame per condition (rows in ``order``, s)."""
    num = [c for c in cpud.columns if c != "condition"]
    means = cpud.groupby("condition")[num].mean()
    return means.reindex([n for n in order if n in means.index]).reset_index()


def core_shares(cpud: pd.DataFrame) -> pd.DataFrame:
    """Per counted trial, the machine's cores over the workload window split into CPU_PARTS
    (cores = CPU seconds / ``cpu_window_s``); needs the CPU_NEEDED columns, ``cpu_outside_s`` is
    optional. "other busy" is user + system + softirq less the JVMs, the flood and the outside
    load (at least 0). Columns: condition and CPU_PARTS' names."""
    w = cpud.cpu_window_s
    busy = (cpud.cpu_user_s + cpud.cpu_system_s + cpud.cpu_softirq_s) / w
    cores = pd.DataFrame({"condition": cpud.condition, "worker JVMs": cpud.cpu_workers_s / w,
                          "flood processes": cpud.cpu_flood_s / w})
    outside = cpud.cpu_outside_s / w if "cpu_outside_s" in cpud.columns else 0.0
    cores["outside load (other users' processes)"] = outside
    cores["other busy (kernel, manager JVM, harness)"] = (busy - cores["worker JVMs"] - cores["flood processes"]
                                                          - outside).clip(lower=0)
    cores["idle"] = cpud.cpu_idle_s / w
    cores["steal (hypervisor)"] = cpud.cpu_steal_s / w
    return cores


def softirq_cores(cpud: pd.DataFrame, order: Sequence[str]) -> dict[str, float]:
    """Mean cores spent in softirq (packet forwarding) per condition of ``order`` present."""
    present = set(cpud.condition)
    return {n: float((cpud[cpud.condition == n].cpu_softirq_s / cpud[cpud.condition == n].cpu_window_s).mean())
            for n in order if n in present}


def cpu_count(done: pd.DataFrame) -> int | None:
    """The machine's CPUs from the first ``cpu_json`` (its ``cpus``), None without one."""
    return len(json.loads(done.cpu_json.dropna().iloc[0])["cpus"]) if done.cpu_json.notna().any() else None


def switch_queues(done: pd.DataFrame) -> pd.DataFrame:
    """One row per counted trial, switch port and egress queue (1-4) from ``switch_json``
    (per-trial counter deltas): condition, idx, port, queue, dropped, enqueued (packets) and
    "policer out" (packets, on queue 1's row). Empty without switch evidence."""
    rows = []
    for _, t in done.iterrows():
        if isinstance(t.switch_json, str):
            for port, p in json.loads(t.switch_json)["ports"].items():
                for q in range(4):
                    rows.append({"condition": t.condition, "idx": t.idx, "port": port, "queue": q + 1,
                                 "dropped": p["dropped"][q], "enqueued": p["enqueued"][q],
                                 "policer out": p["policer_out"] if q == 0 else 0})
    return pd.DataFrame(rows)


def switch_queue_table(sq: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Mean enqueued and dropped packets per trial for each condition, port and queue that saw
    any (rows of :func:`switch_queues`), in ``order``, port, queue."""
    tab = sq.groupby(["condition", "port", "queue"])[["enqueued", "dropped"]].mean().reset_index()
    tab = tab[(tab.enqueued > 0) | (tab.dropped > 0)]
    return ordered(tab, order, ["port", "queue"])


def flood_table(done: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame | None:
    """The flood's achieved rates (``flood_json``, ITGDec per flow) as means per condition and
    flow "src->dst": received Mbit/s, loss %, delay ms; in ``order``. None without flood data."""
    rows = []
    for _, t in done.iterrows():
        if isinstance(t.flood_json, str):
            for f in json.loads(t.flood_json):
                rows.append({"condition": t.condition, "flow": f"{f['src']}->{f['dst']}",
                             "received Mbit/s": f["received_wire_bps"] / 1e6, "loss %": f["loss_pct"],
                             "delay ms": f["delay_avg_s"] * 1000})
    if not rows:
        return None
    return ordered(pd.DataFrame(rows).groupby(["condition", "flow"]).mean().reset_index(), order, ["flow"])


def capture_accounting(trials: pd.DataFrame, summaries: Mapping[Any, Mapping[str, Any]]) -> pd.DataFrame:
    """One row per trial with a capture summary (``summaries``: idx -> the parsed summary.json) or
    capture-drop columns: idx, condition, summary (or None), received (pcap) and dropped (pcap)
    packets, dropped (stored columns) (the ``capture_drops`` total when stored, else the sum of
    its parts), lost (share, text) and flag ("LOST PACKETS" on any drop, else "ok")."""
    caps = []
    drop_cols = [c for c in trials.columns if c.startswith("capture_drops")]
    for _, t in trials.iterrows():
        s = summaries.get(t.idx)
        # capture_drops is the total (meters/drops.py) when stored; its parts are not added to it again
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
    return pd.DataFrame(caps)


def captured_classes(summaries: Iterable[Mapping[str, Any]]) -> list[str]:
    """The classes of CLASS_COLOR (in its order) with packets in any of the capture summaries."""
    summaries = list(summaries)
    return [k for k in CLASS_COLOR if any(s["classes"].get(k, {}).get("packets") for s in summaries)]


def class_mean(summaries: Iterable[Mapping[str, Any]], cls: str, key: str) -> float:
    """Mean of a class's ``key`` ("packets" or "mean_frame_bytes") over capture summaries (0 where
    a summary lacks the class)."""
    return float(np.mean([s["classes"].get(cls, {}).get(key) or 0 for s in summaries]))


def provenance_table(prov: Mapping[str, Any]) -> pd.DataFrame:
    """provenance.json as (what, value) rows sorted by key."""
    return pd.DataFrame(sorted(prov.items()), columns=["what", "value"])


def with_values(trials: pd.DataFrame, metric: str = "elapsed_s") -> pd.DataFrame:
    """The trials frame with a ``value`` column: the primary metric of each trial (``elapsed_s``,
    or the declared metric ``metric`` from the store's ``metrics_json``; NaN where missing)."""
    if metric == "elapsed_s" or "metrics_json" not in trials.columns:
        return trials.assign(value=pd.to_numeric(trials.elapsed_s, errors="coerce"))
    vals = [json.loads(j)["values"].get(metric) if isinstance(j, str) else None for j in trials.metrics_json]
    return trials.assign(value=pd.to_numeric(pd.Series(vals, index=trials.index, dtype=object), errors="coerce"))


def cpu_parts(workers: str = "worker JVMs") -> dict[str, str]:
    """CPU_PARTS key -> the label shown: the workers' part named ``workers`` ("worker JVMs" for
    the Java workloads, "worker processes" for the others), the rest as they are."""
    return {k: (workers if k == "worker JVMs" else k) for k in CPU_PARTS}
