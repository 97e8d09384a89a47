"""qoslab.report.lib, the report notebook's pure helpers, on small hand-made inputs; and the
notebook source (analysis/notebooks/report.py) as qoslab.report.notebook reads it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from qoslab.report import lib as rl
from qoslab.report import tables as rt

NC_FIFO, NC_QOS, C_FIFO, C_QOS = "no congestion, no QoS", "no congestion, QoS", "congestion, no QoS", "congestion, QoS"


# -- formatting ------------------------------------------------------------------------------

def test_pfmt():
    assert rl.pfmt(None) == "n/a"
    assert rl.pfmt(0.4812) == "0.48"
    assert rl.pfmt(1e-4) == "0.0001"
    assert rl.pfmt(9.9e-5) == "9.9e-05"
    assert rl.pfmt(2.04e-29) == "2.0e-29"


def test_ci():
    assert rl.ci(None) == "n/a" and rl.ci([]) == "n/a"
    assert rl.ci([1.23456, 2.5]) == "1.235 - 2.500"
    assert rl.ci((0.9321, 0.952), "{:.1%}") == "93.2% - 95.2%"


def test_recovery_texts():
    r = {"ratio": 0.944, "ci95": [0.932, 0.952]}
    assert rl.recovery_value(r) == "**94.4%** (95 % BCa 93.2% - 95.2%)"
    assert rl.recovery_cell(r) == "94.4% [93.2% - 95.2%]"
    assert rl.recovery_value({"ratio": None, "ci95": None}) == "n/a"
    assert rl.recovery_value({"ratio": 0.5, "ci95": None}) == "**50.0%**"
    assert rl.recovery_cell({"ratio": None, "ci95": None}) == "n/a"
    assert rl.recovery_cell({"ratio": 0.5, "ci95": None}) == "50.0% [n/a]"


def test_wrap_label_and_text_colour():
    assert rl.wrap_label("no congestion, thesis profile") == "no congestion,\nthesis profile"
    assert rl.wrap_label("fifo") == "fifo"
    assert rl.text_color_on("#4d4d4d") == "white"   # dark bar, light text
    assert rl.text_color_on("#e8e8e8") == "black"
    assert rl.text_color_on("#e6ab02") == "black"   # yellow is light


# -- conditions ------------------------------------------------------------------------------

def test_thesis_kinds():
    assert rl.thesis_kinds([NC_FIFO, NC_QOS, C_FIFO, C_QOS]) == {
        NC_FIFO: (False, False), NC_QOS: (False, True), C_FIFO: (True, False), C_QOS: (True, True)}


def test_playbook_kinds_order_and_colours():
    pb = {"conditions": [{"name": "c thesis", "congestion": "thesis-flood", "profile": "thesis"},
                         {"name": "nc thesis", "congestion": None, "profile": "thesis"},
                         {"name": "c fifo", "congestion": "thesis-flood", "profile": "fifo"},
                         {"name": "nc fifo", "congestion": None, "profile": "fifo"}]}
    kinds = rl.playbook_kinds(pb)
    assert kinds == {"c thesis": (True, True), "nc thesis": (False, True), "c fifo": (True, False),
                     "nc fifo": (False, False)}
    order = rl.condition_order(kinds)
    assert order == ["nc fifo", "nc thesis", "c fifo", "c thesis"]  # baseline first
    assert rl.condition_colors(order, kinds) == {"nc fifo": "#4c72b0", "nc thesis": "#55a868", "c fifo": "#c44e52",
                                                 "c thesis": "#dd8452"}


def test_conditions_of_one_kind_keep_their_order_and_get_distinct_colours():
    kinds = {"c strict": (True, True), "nc fifo": (False, False), "c thesis": (True, True), "c wtd": (True, True)}
    order = rl.condition_order(kinds)
    assert order == ["nc fifo", "c strict", "c thesis", "c wtd"]
    colors = rl.condition_colors(order, kinds)
    assert colors["nc fifo"] == rl.PALETTE[(False, False)] and colors["c strict"] == rl.PALETTE[(True, True)]
    assert colors["c thesis"] == rl.EXTRA[2] and colors["c wtd"] == rl.EXTRA[3]  # EXTRA by colours used so far
    assert len(set(colors.values())) == 4


def test_ordered():
    df = pd.DataFrame({"condition": ["b", "a", "b", "a"], "port": ["p2", "p1", "p1", "p2"], "x": [1, 2, 3, 4]})
    out = rl.ordered(df, ["b", "a"], ["port"])
    assert out.x.tolist() == [3, 1, 2, 4] and list(out.columns) == ["condition", "port", "x"]
    assert rl.ordered(df.iloc[:2], ["b", "a"]).condition.tolist() == ["b", "a"]


# -- statistics tables -----------------------------------------------------------------------

def _cond(mean, **kw):
    return {"n": 3, "mean": mean, "sd": 0.1, "ci95": [mean - 0.2, mean + 0.2], "median": mean, "cv": 0.05,
            "shapiro_w": 0.91, "shapiro_p": 0.0004, "outliers_low": 0, "outliers_high": 2, **kw}


def _comp(a, b, **kw):
    c = {"a": a, "b": b, "difference_s": 0.5, "welch_t": 3.14159, "welch_df": 17.26, "welch_t_p": 0.0123,
         "welch_t_p_holm": 0.0369, "mann_whitney_p": 2e-29, "mann_whitney_p_holm": 6e-29, "mann_whitney_method": "exact",
         "difference_ci95_s": [0.4, 0.6], "ratio": 1.5, "ratio_ci95": [1.4, 1.6], "cohens_d": 2.871, "hedges_g": 2.8,
         "hodges_lehmann_s": 0.49, "hodges_lehmann_ci95_s": [0.38, 0.61], "prob_superiority": 0.97, "mde_s": 0.061,
         "mde_rel": 0.057, "tost": {"margin_s": 0.021, "margin_rel": 0.02, "reference": a, "ci90_s": [-0.02, 0.051],
                                    "p": 0.39, "equivalent": False}}
    return {**c, **kw}


def test_cond_table():
    s = {"conditions": {"a": _cond(1.0), "b": _cond(2.0, shapiro_w=None, shapiro_p=None)}}
    t = rt.cond_table(s, ["b", "a"])
    assert t.condition.tolist() == ["b", "a"]
    assert list(t.columns) == ["condition", "n", "mean s", "sd s", "95% BCa CI of mean", "median s", "CV",
                               "Shapiro-Wilk W (p)", "Tukey outliers low / high"]
    a = t.iloc[1]
    assert a["mean s"] == 1.0 and a["95% BCa CI of mean"] == "0.800 - 1.200" and a["CV"] == "5.0%"
    assert a["Shapiro-Wilk W (p)"] == "0.910 (0.0004)" and a["Tukey outliers low / high"] == "0 / 2"
    assert t.iloc[0]["Shapiro-Wilk W (p)"] == "n/a"


def test_cond_table_with_published_values():
    s = {"conditions": {"a": _cond(1.0, published_mean=1.0, published_sd=0.1, sd_matches_published=True),
                        "b": _cond(2.0, published_mean=2.0, published_sd=0.3, sd_matches_published=False)}}
    t = rt.cond_table(s, ["a", "b"])
    assert t["published sd"].tolist() == [0.1, 0.3]
    assert t["sd as published?"].tolist() == ["yes", "NO (raw data differ)"]


def test_comparison_tables_tost_only_without_congestion():
    kinds = rl.thesis_kinds([NC_FIFO, NC_QOS, C_FIFO])
    s = {"comparisons": [_comp(NC_FIFO, C_FIFO), _comp(NC_FIFO, NC_QOS, tost={**_comp("x", "y")["tost"],
                                                                              "equivalent": True})]}
    tests, effects, tost = rt.comparison_tables(s, kinds)
    assert tests.comparison.tolist() == [f"{C_FIFO} vs {NC_FIFO}", f"{NC_QOS} vs {NC_FIFO}"]
    row = tests.iloc[0]
    assert row["difference s"] == "+0.500" and row["Welch t (df)"] == "3.14 (17.3)"
    assert row["Welch p"] == "0.012" and row["MW p, Holm"] == "6.0e-29" and row["MW method"] == "exact"
    e = effects.iloc[0]
    assert e["difference s [95% BCa]"] == "+0.500 [0.400 - 0.600]" and e["ratio [95% BCa]"] == "1.500 [1.400 - 1.600]"
    assert e["Cohen's d"] == "+2.87" and e["P(b > a)"] == "0.97" and e["MDE (80% power)"] == "0.061 s (5.7%)"
    assert tost.comparison.tolist() == [f"{NC_QOS} vs {NC_FIFO}"]  # the congested pair has no TOST row
    assert tost.iloc[0]["margin"] == "+-0.021 s (2% of x)" and tost.iloc[0]["verdict"] == "equivalent"


def test_comparison_tables_without_uncongested_pairs():
    _, _, tost = rt.comparison_tables({"comparisons": [_comp(NC_FIFO, C_FIFO)]}, rl.thesis_kinds([NC_FIFO, C_FIFO]))
    assert len(tost) == 0


def test_thesis_side_tables_match_conditions_by_kind():
    main = {"conditions": {"nc fifo": _cond(1.0), "c fifo": _cond(3.0), "c strict": _cond(1.5)},
            "comparisons": [_comp("nc fifo", "c fifo"), _comp("c fifo", "c strict")],
            "recovery": [{"treated": "c strict", "ratio": 0.75, "ci95": [0.7, 0.8]}]}
    th = {"conditions": {NC_FIFO: _cond(10.0), C_FIFO: _cond(25.0)},
          "comparisons": [_comp(NC_FIFO, C_FIFO, cohens_d=1.83, ratio=2.5, ratio_ci95=None, mde_s=5.2, mde_rel=0.136)],
          "recovery": [{"treated": C_QOS, "ratio": 0.699, "ci95": None}]}
    kinds = {"nc fifo": (False, False), "c fifo": (True, False), "c strict": (True, True)}
    side, comps = rt.thesis_side_tables(main, th, ["nc fifo", "c fifo", "c strict"], kinds)
    assert side.condition.tolist() == ["nc fifo", "c fifo", "c strict", "recovery of c strict [95% BCa]"]
    assert side["campaign x baseline"].tolist() == ["1.00", "3.00", "1.50", ""]
    assert side["thesis condition"].tolist() == [NC_FIFO, C_FIFO, "", f"recovery of {C_QOS}"]
    assert side["thesis x baseline"].tolist() == ["1.00", "2.50", "", ""]
    assert side["campaign mean s"].iloc[-1] == "75.0% [70.0% - 80.0%]" and side["thesis mean s"].iloc[-1] == "69.9% [n/a]"
    assert comps.iloc[0]["thesis Cohen's d"] == "+1.83" and comps.iloc[0]["thesis ratio [95% BCa]"] == "2.500 [n/a]"
    assert comps.iloc[0]["thesis MDE"] == "5.20 s (13.6%)"
    assert comps.iloc[1][["thesis Cohen's d", "thesis MDE"]].tolist() == ["", ""]  # no (True, True) in the thesis here


# -- trial times -----------------------------------------------------------------------------

def test_thesis_raw():
    t3 = pd.DataFrame({"machines": [4, 4, 8, 4], "trial": [1, 2, 1, 3], "elapsed_s": [10.0, 11.0, 6.0, np.nan]})
    t5 = pd.DataFrame({"congestion": ["yes", "yes", "no", "yes"], "qos": ["no", "yes", "yes", "yes"],
                       "trial": [1, 1, 1, 2], "elapsed_s": [30.0, 20.0, 12.0, 21.0]})
    order = [NC_FIFO, NC_QOS, C_FIFO, C_QOS]
    raw = rl.thesis_raw(t3, t5, order)
    assert list(raw) == order
    assert raw[NC_FIFO].elapsed_s.tolist() == [10.0, 11.0]  # 4 machines, the missing time dropped
    assert raw[C_QOS].elapsed_s.tolist() == [20.0, 21.0] and raw[NC_QOS].elapsed_s.tolist() == [12.0]


def test_campaign_raw():
    tc = pd.DataFrame({"condition": ["a", "b", "a"], "elapsed_s": [1.0, 2.0, 3.0]})
    raw = rl.campaign_raw(tc, ["b", "a"])
    assert list(raw) == ["b", "a"] and raw["a"].elapsed_s.tolist() == [1.0, 3.0]


def _trials():
    return pd.DataFrame({
        "idx": [0, 1, 2, 3, 4], "condition": ["a", "a", "b", "b", "a"], "trial": [0, 1, 1, 2, 2],
        "warmup": [1, 0, 0, 0, 0], "status": ["done", "done", "done", "failed", "done"], "attempts": [1, 1, 2, 3, 1],
        "elapsed_s": [5.0, 1.0, 2.0, None, 1.5], "error": [None, None, None, "boom", None],
        "started": [0.0, 10.0, 20.0, 30.0, 4000.0], "finished": [8.0, 18.0, 28.0, 38.0, 4008.0]})


def test_counted_and_resume_pauses():
    t = _trials()
    assert rl.counted(t).idx.tolist() == [1, 2, 4]
    gap, pause = rl.resume_pauses(t)
    assert gap.tolist()[1:] == [2.0, 2.0, 2.0, 3962.0]
    assert pause.tolist() == [False, False, False, False, True]  # > max(60 s, 20 x the median gap)


def test_issue_table():
    t = _trials()
    tab = rl.issue_table(t[t.status == "failed"], t[t.attempts > 1])
    assert list(tab.columns) == ["idx", "condition", "trial", "status", "attempts", "elapsed_s", "error"]
    assert tab.idx.tolist() == [3, 2, 3]
    assert tab.iloc[0]["elapsed_s"] == "" and tab.iloc[0]["error"] == "boom" and tab.iloc[1]["error"] == ""


# -- per-trial columns -----------------------------------------------------------------------

def test_compute_network_split_without_cpu_data():
    done = pd.DataFrame({"condition": ["a", "a", "b", "c"], "elapsed_s": [2.0, 4.0, 10.0, 1.0],
                         "busy_max_s": [1.0, 1.0, 4.0, None]})
    parts, tab = rl.compute_network_split(done, ["b", "a", "c"])
    assert tab is None
    assert parts == {"a": {"busiest worker computing": 1.0, "network wait": 2.0},
                     "b": {"busiest worker computing": 4.0, "network wait": 6.0}}  # c: no busy time


def test_compute_network_split_with_cpu_data():
    done = pd.DataFrame({"condition": ["a", "b"], "elapsed_s": [2.0, 10.0], "busy_max_s": [1.0, 4.0],
                         "cpu_busiest_worker_s": [0.8, 5.0]})  # b: CPU time above the busy time is clipped
    parts, tab = rl.compute_network_split(done, ["b", "a"])
    assert parts["a"] == pytest.approx({"busiest worker on CPU": 0.8, "busiest worker waiting for a core": 0.2,
                                        "network wait": 1.0})
    assert parts["b"] == {"busiest worker on CPU": 4.0, "busiest worker waiting for a core": 0.0, "network wait": 6.0}
    assert tab is not None and tab.condition.tolist() == ["b", "a"]
    assert tab["compute share"].tolist() == pytest.approx([0.4, 0.5])


def _cpu_trials():
    cpus = json.dumps({"cpus": {"cpu0": {}, "cpu1": {}, "cpu2": {}}})
    return pd.DataFrame({
        "condition": ["a", "a", "b"], "cpu_window_s": [2.0, 2.0, 4.0], "cpu_workers_s": [1.0, 1.0, 2.0],
        "cpu_flood_s": [0.0, 0.0, 2.0], "cpu_user_s": [1.5, 1.5, 3.0], "cpu_system_s": [0.3, 0.3, 1.0],
        "cpu_softirq_s": [0.2, 0.2, 2.0], "cpu_idle_s": [4.0, 4.0, 6.0], "cpu_steal_s": [0.0, 0.0, 0.4],
        "cpu_outside_s": [None, None, None], "cpu_json": [cpus, None, None], "elapsed_s": [1.0, 1.0, 1.0]})


def test_cpu_frame_means_and_core_shares():
    done = _cpu_trials()
    cpud = rl.cpu_frame(done, done)
    assert "cpu_json" not in cpud and "cpu_outside_s" not in cpud and "elapsed_s" not in cpud  # empty column dropped
    assert all(c in cpud.columns for c in rl.CPU_NEEDED)
    means = rl.cpu_means(cpud, ["b", "a", "z"])
    assert means.condition.tolist() == ["b", "a"] and means.cpu_window_s.tolist() == [4.0, 2.0]
    cores = rl.core_shares(cpud)
    assert list(cores.columns) == ["condition", "worker JVMs", "flood processes",
                                   "outside load (other users' processes)",
                                   "other busy (kernel, manager JVM, harness)", "idle", "steal (hypervisor)"]
    b = cores.iloc[2]
    assert b["worker JVMs"] == 0.5 and b["flood processes"] == 0.5 and b["outside load (other users' processes)"] == 0
    assert b["other busy (kernel, manager JVM, harness)"] == pytest.approx(0.5)  # (3 + 1 + 2) / 4 - 0.5 - 0.5
    assert b["idle"] == 1.5 and b["steal (hypervisor)"] == pytest.approx(0.1)
    assert cores.iloc[0]["other busy (kernel, manager JVM, harness)"] == pytest.approx(0.5)
    assert rl.softirq_cores(cpud, ["b", "a", "z"]) == {"b": 0.5, "a": 0.1}
    assert rl.cpu_count(done) == 3 and rl.cpu_count(done.assign(cpu_json=None)) is None


def test_core_shares_take_the_outside_load_out_of_other_busy():
    cpud = rl.cpu_frame(_cpu_trials(), _cpu_trials().assign(cpu_outside_s=[0.2, 0.2, 4.0]))
    cores = rl.core_shares(cpud)
    assert cores["outside load (other users' processes)"].tolist() == [0.1, 0.1, 1.0]
    assert cores["other busy (kernel, manager JVM, harness)"].tolist() == pytest.approx([0.4, 0.4, 0.0])  # clipped at 0


def test_switch_queues_and_table():
    ev = {"ports": {"Gi1/0/1": {"enqueued": [10, 900, 0, 0], "dropped": [0, 120, 0, 0], "policer_out": 7},
                    "Gi1/0/2": {"enqueued": [5, 0, 0, 0], "dropped": [0, 0, 0, 0], "policer_out": 0}}}
    ev2 = {"ports": {"Gi1/0/1": {"enqueued": [20, 700, 0, 0], "dropped": [0, 80, 0, 0], "policer_out": 1}}}
    done = pd.DataFrame({"condition": ["c", "c", "n"], "idx": [1, 2, 3],
                         "switch_json": [json.dumps(ev), json.dumps(ev2), None]})
    sq = rl.switch_queues(done)
    assert len(sq) == 12 and set(sq.queue) == {1, 2, 3, 4}
    assert sq[(sq.idx == 1) & (sq.port == "Gi1/0/1")]["policer out"].tolist() == [7, 0, 0, 0]
    tab = rl.switch_queue_table(sq, ["n", "c"])
    assert tab[["port", "queue"]].values.tolist() == [["Gi1/0/1", 1], ["Gi1/0/1", 2], ["Gi1/0/2", 1]]
    assert tab.dropped.tolist() == [0.0, 100.0, 0.0]
    assert tab.enqueued.tolist() == [15.0, 800.0, 5.0]  # a port's mean over the trials that report it
    assert len(rl.switch_queues(done.iloc[2:])) == 0


def test_flood_table():
    flows = [{"src": "h1", "dst": "h2", "received_wire_bps": 80e6, "loss_pct": 1.0, "delay_avg_s": 0.002},
             {"src": "h3", "dst": "h2", "received_wire_bps": 40e6, "loss_pct": 3.0, "delay_avg_s": 0.004}]
    done = pd.DataFrame({"condition": ["c1", "c1", "c0", "n"],
                         "flood_json": [json.dumps(flows), json.dumps(flows[:1]), json.dumps(flows[1:]), None]})
    tab = rl.flood_table(done, ["n", "c0", "c1"])
    assert tab is not None
    assert tab[["condition", "flow"]].values.tolist() == [["c0", "h3->h2"], ["c1", "h1->h2"], ["c1", "h3->h2"]]
    assert tab["received Mbit/s"].tolist() == [40.0, 80.0, 40.0] and tab["delay ms"].tolist() == [4.0, 2.0, 4.0]
    assert rl.flood_table(done.iloc[3:], ["n"]) is None


def test_capture_accounting():
    trials = pd.DataFrame({"idx": [0, 1, 2, 3, 4], "condition": ["a", "a", "b", "b", "b"],
                           "capture_drops": [None, None, 5.0, None, None],
                           "capture_drops_kernel": [None, None, 5.0, 2.0, None]})
    summaries = {0: {"drops": {"received": 1000, "dropped_total": 0}},
                 1: {"drops": {"pcap_received": 200, "pcap_dropped": 3, "pcap_dropped_by_interface": 1}},
                 2: {"drops": {"received": 500, "dropped_total": 0}}}
    cap = rl.capture_accounting(trials, summaries)
    assert cap.idx.tolist() == [0, 1, 2, 3]  # 4: no summary, no drops
    assert cap["dropped (pcap)"].tolist() == [0, 4, 0, 0]
    assert cap["received (pcap)"].tolist()[:3] == [1000, 200, 500] and pd.isna(cap["received (pcap)"].iloc[3])
    assert cap["dropped (stored columns)"].tolist() == [0, 0, 5.0, 2.0]  # the total, not total + parts
    assert cap.lost.tolist() == ["0.0%", "2.0%", "0.0%", ""]
    assert cap.flag.tolist() == ["ok", "LOST PACKETS", "LOST PACKETS", "LOST PACKETS"]
    assert cap.summary.iloc[3] is None
    assert len(rl.capture_accounting(trials.iloc[4:], {})) == 0


def test_captured_classes_and_class_mean():
    s1 = {"classes": {"rmi": {"packets": 10, "mean_frame_bytes": 100}, "udp": {"packets": 0}}}
    s2 = {"classes": {"rmi": {"packets": 30, "mean_frame_bytes": None}, "ssh": {"packets": 2}}}
    assert rl.captured_classes([s1, s2]) == ["rmi", "ssh"]  # CLASS_COLOR order, classes with packets
    assert rl.class_mean([s1, s2], "rmi", "packets") == 20.0
    assert rl.class_mean([s1, s2], "rmi", "mean_frame_bytes") == 50.0
    assert rl.class_mean([s1, s2], "data", "packets") == 0.0


def test_provenance_table():
    t = rl.provenance_table({"seed": 1, "kernel": "6.18"})
    assert t.values.tolist() == [["kernel", "6.18"], ["seed", 1]] and list(t.columns) == ["what", "value"]


# -- the notebook source ---------------------------------------------------------------------

def test_the_notebook_source_converts_with_its_parameters_cell():
    from qoslab.report.notebook import NOTEBOOK, _notebook

    assert NOTEBOOK.name == "report.py"
    nb = _notebook()
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    names = {line.split("=")[0].strip() for line in params[0].source.splitlines() if "=" in line}
    assert {"stats_path", "campaign_dir", "thesis_data", "thesis_stats_path", "include_dropped_captures", "out_dir",
            "title"} <= names
    assert [c.id for c in nb.cells] == [f"cell-{i}" for i in range(len(nb.cells))]
    code = "\n".join(c.source for c in nb.cells)
    assert "from qoslab.report import lib" in code and "sqlite3" not in code


# -- a workload-neutral report (issue 34) ------------------------------------------------------

NOTEBOOK = Path(__file__).resolve().parents[2] / "analysis" / "notebooks" / "report.py"


def test_the_notebook_stays_small():
    """The notebook reads inputs and decides what to show; its logic lives in qoslab.report."""
    assert len(NOTEBOOK.read_text().splitlines()) < 400


def test_context_of_the_raytracer_and_of_a_command_with_a_declared_metric():
    from qoslab.report import context as rctx

    rt_ctx = rctx.context({"conditions": {"a": {"mean": 38.1}}}, {"workload": {"size": "A"}})
    assert rt_ctx.thesis_like and rt_ctx.java and rt_ctx.places == 3 and rt_ctx.val(38.1) == "38.100 s"
    assert rt_ctx.axis == "elapsed s" and rt_ctx.generator == "D-ITG" and rt_ctx.workers == "worker JVMs"
    stats = {"metric": {"name": "p99_rtt_ms", "unit": "ms", "direction": "lower"},
             "conditions": {"a": {"mean": 1.02}, "b": {"mean": 2.5}}}
    c = rctx.context(stats, {"workload": {"kind": "command", "dscp": 46}, "generator": "iperf3"})
    assert not c.thesis_like and not c.java and c.unit == "ms" and c.val(1.0) == "1.00 ms"
    assert c.axis == "p99_rtt ms" and c.generator == "iperf3" and c.dscp == 46 and c.workers == "worker processes"
    # matmul in seconds: Java, but not the thesis's workload
    assert not rctx.context({"conditions": {}}, {"workload": {"kind": "matmul"}}).thesis_like


def test_the_marking_shown_is_the_profiles():
    from qoslab.report import context as rctx

    c = rctx.context({"conditions": {}}, {"workload": {"kind": "command", "dscp": 46}})
    thesis = {"name": "thesis", "mls_qos": True, "rules": [{"set_dscp": 40}], "egress": {"priority_queue_out": True}}
    ef = {"name": "ef", "mls_qos": True, "rules": [{"set_dscp": 46}], "egress": {"priority_queue_out": True}}
    trust = {"name": "trust", "mls_qos": True, "trust": {"workload": "dscp"}}
    mapped = {"name": "af", "mls_qos": True, "rules": [{"set_dscp": 26}], "dscp_output_map": {3: [26]}}
    assert rctx.marking_sentence([{"name": "fifo"}, thesis], c) == (
        "with the thesis profile queue 1 is the expedite queue of DSCP 40 (the workload) and the flood (DSCP 0) "
        "goes to queue 2.")
    assert "expedite queue of DSCP 46" in rctx.marking_sentence([ef], c)
    assert "DSCP 46 (the workload) goes to queue 1" in rctx.marking_sentence([trust], c)  # no priority queue
    assert "DSCP 26 (the workload) goes to queue 3" in rctx.marking_sentence([mapped], c)
    assert rctx.marking_sentence([{"name": "fifo", "mls_qos": False}], c) == ""
    assert rctx.stem("playbooks/examples/ef.yaml") == "ef" and rctx.stem("thesis") == "thesis" and rctx.stem(None) == ""


def test_tables_in_the_declared_unit_and_values_of_the_declared_metric():
    s = {"conditions": {"a": {"n": 5, "mean": 1.0234, "sd": 0.05, "ci95": [0.98, 1.07], "median": 1.02, "cv": 0.05,
                              "shapiro_w": None, "outliers_low": 0, "outliers_high": 0}}}
    t = rt.cond_table(s, ["a"], "ms", 2)
    assert list(t.columns[2:4]) == ["mean ms", "sd ms"] and t["95% BCa CI of mean"][0] == "0.98 - 1.07"
    assert "mean s" in rt.cond_table(s, ["a"]).columns  # the RayTracer's columns as before
    trials = pd.DataFrame({"elapsed_s": [3.0, 3.1], "metrics_json": [json.dumps({"values": {"p99": 1.5}}), None]})
    assert rl.with_values(trials, "p99").value.tolist()[0] == 1.5 and np.isnan(rl.with_values(trials, "p99").value[1])
    assert rl.with_values(trials).value.tolist() == [3.0, 3.1]
    assert rl.cpu_parts("worker processes")["worker JVMs"] == "worker processes"


def test_profiles_and_floods_by_their_stem_and_the_floods_own_generator():
    from qoslab.report import context as rctx
    from qoslab.report import factors as rf

    block = {"recoveries": [{"levels": {"flood": "traffic-gen/incast.yaml"}, "profile": "playbooks/examples/ef.yaml",
                             "reference_profile": "fifo", "ratio": 0.9, "ci95": [0.8, 1.0]}], "differences": []}
    assert rf.recovery_table(block).iloc[0].tolist() == ["flood incast", "ef vs fifo", "0.90", "[0.80, 1.00]"]
    assert rf.recovery_points(block)[0][0] == "flood incast\nef"
    c = rctx.context({"conditions": {}}, {"workload": {"kind": "command"}}, {"generator": "iperf3"})
    assert c.generator == "iperf3"
    assert rctx.context({"conditions": {}}, {"generator": "ditg"}, {"generator": "iperf3"}).generator == "D-ITG"


def test_recovery_caveat_flags_a_slowdown_of_noise_and_a_ratio_above_100_percent():
    """Issue 34: a recovery dividing by a non-significant slowdown, or above 100 %, says so."""
    rec = {"baseline": "b", "congested": "c", "treated": "t", "ratio": 1.028, "ci95": [0.7, 1.2]}
    noisy = {"comparisons": [{"a": "b", "b": "c", "welch_t_p": 0.19, "welch_t_p_holm": 0.37}]}
    clear = {"comparisons": [{"a": "b", "b": "c", "welch_t_p": 1e-8, "welch_t_p_holm": 4e-8}]}
    assert "not significant (Welch p, Holm = 0.37)" in rl.recovery_caveat(rec, noisy)
    assert rl.recovery_caveat(rec, clear) == ""  # 102.8 % but its interval holds 100 %
    above = {**rec, "ci95": [1.01, 1.2]}
    assert "Above 100 %: t under congestion beat the uncongested b" in rl.recovery_caveat(above, clear)
    assert "Above 100 %" in rl.recovery_caveat({**rec, "ci95": None}, clear)
    assert rl.recovery_caveat({**rec, "ratio": 0.95}, clear) == ""
    assert rl.recovery_caveat({**rec, "ratio": None}, noisy) == ""
    line = rl.recovery_sentence({**rec, "ratio": 0.95, "ci95": None}, clear)
    assert line == "**Recovery ratio of t**: **95.0%** of the slowdown from *b* to *c* won back."


def test_flood_heading_names_every_generator_the_floods_used():
    """Issue 34: an iperf3 incast beside the D-ITG campaign flood is not headed "D-ITG"."""
    from qoslab.report import context as rctx

    floods = [{"name": "campaign-flood"}, {"name": "incast", "generator": "iperf3"}]
    assert rctx.flood_generators(floods, {}) == ["D-ITG", "iperf3"]
    assert rctx.flood_heading(floods, None).endswith("by D-ITG (from ITGDec) and iperf3 (its JSON report)")
    assert rctx.flood_generators(floods, {"generator": "iperf3"}) == ["iperf3"]
    assert rctx.flood_generators([], None) == []


def test_recovery_value_without_a_ratio_shows_no_interval():
    assert rl.recovery_value({"ratio": None, "ci95": [-5115420259.0, 1.0], "method": "negated"}) == "n/a"
