"""The report's mechanisms table (qoslab.report.mechanisms): ranks against seed 000's and seed 002's orders, slowdowns
with and without the timed-out attempts, recoveries, the section only for mechanism factorials."""

from __future__ import annotations

import pytest

from qoslab.report.mechanisms import (
    SEED000_ORDER,
    SEED002_FIG2,
    applies,
    measured_orders,
    mechanism_rows,
    mechanism_table,
    ordering_agrees,
    seed002_order,
    seed_order,
)
from qoslab.report.texts import mechanisms_intro

MECHS = list(SEED000_ORDER)


def _block(algs=("spa", "mca")):
    recs = []
    for alg in algs:
        for m in MECHS:
            lv = {"workload.mechanism": m, "workload.algorithm": alg}
            recs.append({"levels": lv, "profile": "thesis", "reference_profile": "fifo",
                         "baseline": f"{m}/{alg}/none/fifo", "congested": f"{m}/{alg}/flood/fifo",
                         "treated": f"{m}/{alg}/flood/thesis", "ratio": 0.9, "ci95": [0.8, 0.95]})
    return {"factors": {"workload.mechanism": MECHS, "workload.algorithm": list(algs),
                        "flood": ["none", "flood"], "profile": ["fifo", "thesis"]}, "recoveries": recs}


def _conds(base: dict[str, float], cong: float = 2.0, n=3):
    out = {}
    for alg in ("spa", "mca"):
        for m, t in base.items():
            out[f"{m}/{alg}/none/fifo"] = {"n": n, "mean": t}
            out[f"{m}/{alg}/flood/fifo"] = {"n": n, "mean": t * cong}
            out[f"{m}/{alg}/flood/thesis"] = {"n": n, "mean": t * 1.1}
    return out


def _comps(conds):
    """stats.json's comparisons of every uncongested FIFO cell with its congested one (the Java
    tool's ratio of means)."""
    return [{"a": a, "b": a.replace("/none/", "/flood/"), "ratio": conds[a.replace("/none/", "/flood/")]["mean"]
             / conds[a]["mean"]} for a in conds if "/none/" in a]


def test_seed_order_gives_ranks_one_to_four_and_agreement():
    conds = _conds({"socket": 0.1, "rmi-externalizable": 0.2, "rmi-serializable": 0.3, "datagram": 0.4})
    rows = mechanism_rows(conds, _block(), None, _comps(conds))
    assert [r["mechanism"] for r in rows[:4]] == MECHS and {r["algorithm"] for r in rows} == {"spa", "mca"}
    assert all(r["rank"] == r["published_rank"] for r in rows)
    assert ordering_agrees(rows) == {"mca": True, "spa": True}
    assert rows[0]["slowdown"] == pytest.approx(2.0) and rows[0]["n_timed_out"] == 0


def test_a_different_order_is_reported_as_such():
    conds = _conds({"socket": 0.3, "rmi-externalizable": 0.2, "rmi-serializable": 0.1, "datagram": 0.4})
    rows = mechanism_rows(conds, _block(), None, _comps(conds))
    ranks = {(r["algorithm"], r["mechanism"]): r["rank"] for r in rows}
    assert ranks[("spa", "socket")] == 3 and ranks[("spa", "rmi-serializable")] == 1
    assert ordering_agrees(rows) == {"mca": False, "spa": False}


def test_timed_out_trials_make_the_slowdown_and_recovery_lower_bounds():
    conds = _conds({m: 0.5 for m in MECHS})
    conds["datagram/mca/flood/fifo"] = {"n": 3, "mean": 60.0}  # all three counted at their 60 s bound
    censored = {"trials": 3, "conditions": {"datagram/mca/flood/fifo": {"n": 3, "bounds_s": [60.0] * 3}}}
    rows = mechanism_rows(conds, _block(), censored, _comps(conds))
    dg = next(r for r in rows if r["mechanism"] == "datagram" and r["algorithm"] == "mca")
    assert dg["n_timed_out"] == 3 and dg["slowdown"] == pytest.approx(120.0) and not dg["censored_other"]
    table = mechanism_table(rows)
    line = table[(table["mechanism"] == "datagram") & (table["algorithm"] == "mca")].iloc[0]
    assert line["slowdown"] == ">= 120.0x" and line["congestion, fifo (s)"] == ">= 60.000 (n 3, 3 timed out)"
    assert line["won back"] == ">= 90.0% [80.0%, 95.0%]"
    sock = table[(table["mechanism"] == "socket") & (table["algorithm"] == "mca")].iloc[0]
    assert sock["slowdown"] == "2.0x" and sock["won back"] == "90.0% [80.0%, 95.0%]"
    conds["datagram/mca/flood/thesis"] = {"n": 3, "mean": 0.4}  # faster than the baseline: recovery > 100 %
    table = mechanism_table(mechanism_rows(conds, _block(), censored, _comps(conds)))
    line = table[(table["mechanism"] == "datagram") & (table["algorithm"] == "mca")].iloc[0]
    assert line["won back"] == "100% to 90.0% [80.0%, 95.0%]"


def test_section_only_for_mechanism_factorials():
    assert not applies(None) and not applies({"factors": {"flood": ["a"]}, "recoveries": []})
    assert mechanism_rows({}, {"factors": {"flood": ["a"]}, "recoveries": []}) == []


def test_the_slowdown_is_the_java_tools_ratio_not_recomputed():
    conds = _conds({m: 0.5 for m in MECHS})
    comps = _comps(conds)
    comps[0] = {**comps[0], "ratio": 7.0}
    rows = mechanism_rows(conds, _block(), None, comps)
    mech, alg = comps[0]["a"].split("/")[:2]
    assert next(r for r in rows if (r["mechanism"], r["algorithm"]) == (mech, alg))["slowdown"] == 7.0
    assert all(r["slowdown"] is None for r in mechanism_rows(conds, _block()))


def test_seed002_order_is_figure_2s_cell_else_the_mean_of_what_fits():
    cell = seed002_order(4, 100000)  # the sort campaign's cell: CORBA fastest there
    assert cell.order == ("corba", "rmi", "socket") and dict(cell.published) == {"socket": 12284, "rmi": 8101,
                                                                                 "corba": 6379}
    assert cell.source == "Figure 2, 4 servers, 100,000 integers" and cell.slowest == "corba"
    col = seed002_order(8, 123)  # a size the table lacks: the mean over 8 servers' seven sizes
    assert col.published["socket"] == pytest.approx(sum(v[0] for v in SEED002_FIG2[8].values()) / 7)
    assert col.order == ("socket", "rmi", "corba") and "mean of 7 cells" in col.source
    every = seed002_order(3, None)
    assert "all server counts" in every.source and "mean of 21 cells" in every.source
    assert seed_order("sort", {"servers": 2, "size": 20000}).order == ("rmi", "corba", "socket")
    assert seed_order("matmul").order == SEED000_ORDER and seed_order("mpj") is None


def _sort_block():
    mechs = ("socket", "rmi", "corba")
    recs = [{"levels": {"workload.mechanism": m, "flood": "flood"}, "profile": "thesis", "reference_profile": "fifo",
             "baseline": f"{m}/none/fifo", "congested": f"{m}/flood/fifo", "treated": f"{m}/flood/thesis",
             "ratio": 0.99, "ci95": [0.98, 1.0]} for m in mechs]
    return {"factors": {"workload.mechanism": list(mechs), "flood": ["none", "flood"], "profile": ["fifo", "thesis"]},
            "recoveries": recs}


def test_a_sort_campaign_is_ranked_against_seed_002_with_its_numbers_and_no_algorithm_column():
    seed = seed002_order(4, 100000)
    conds = {}
    for m, t in {"socket": 0.533, "rmi": 0.516, "corba": 0.559}.items():
        conds.update({f"{m}/none/fifo": {"n": 3, "mean": t}, f"{m}/flood/fifo": {"n": 3, "mean": t * 70},
                      f"{m}/flood/thesis": {"n": 3, "mean": t * 1.01}})
    rows = mechanism_rows(conds, _sort_block(), None, [], seed)
    assert [r["mechanism"] for r in rows] == ["corba", "rmi", "socket"]  # the seed's order
    assert [(r["published_rank"], r["rank"]) for r in rows] == [(1, 3), (2, 1), (3, 2)]
    assert measured_orders(rows) == {"-": ["rmi", "socket", "corba"]} and ordering_agrees(rows, seed) == {"-": False}
    table = mechanism_table(rows, seed)
    assert "algorithm" not in table.columns and list(table["seed 002 (ms)"]) == ["6379", "8101", "12284"]
    assert list(table["seed 002 rank"]) == ["1", "2", "3"] and list(table["measured rank"]) == ["3", "1", "2"]
    intro = mechanisms_intro(seed, measured_orders(rows))
    assert "*corba, rmi, socket* (Figure 2, 4 servers, 100,000 integers)" in intro
    assert "*rmi, socket, corba*, not the same; corba is the slowest, as the summary says" in intro
    conds["corba/none/fifo"]["mean"] = 0.4  # CORBA now fastest: the cell's order, the summary's slowest wrong
    rows = mechanism_rows(conds, _sort_block(), None, [], seed)
    assert ordering_agrees(rows, seed) == {"-": True}
    assert "corba is not the slowest" in mechanisms_intro(seed, measured_orders(rows))
