"""The report's seed sections (qoslab.report.seeds, seedmpj, trialresults): seed 003's MPJ per
operation from the trials' workload results (medians of p50/p99, slowdown, share won back, its
ping-pong ordering), which seed a campaign shows, and the counted trials' results read from a folder."""

from __future__ import annotations

import json
import sqlite3

import pytest
import yaml

from qoslab.report.seedmpj import SEED003_PINGPONG, latencies, mpj_intro, mpj_rows, mpj_table, pingpong_order, shown
from qoslab.report.seeds import sections
from qoslab.report.trialresults import counted_results
from qoslab.trials.store import SCHEMA

SIZES = [1, 512, 1024, 2048, 4096]


def _lat(p50_ms: float, p99_ms: float) -> dict:
    return {"n": 25, "min": p50_ms / 2000, "p50": p50_ms / 1000, "p90": p99_ms / 1000, "p99": p99_ms / 1000,
            "max": p99_ms / 1000, "mean": p50_ms / 1000}


def _result(scale: float, sock_ms: float = 0.1, mpj_ms: float = 0.5) -> dict:
    """An mpj workload result with every latency multiplied by ``scale`` (ms before scaling)."""
    return {"workload": "mpj", "ranks": 4, "valid": True, "elapsed_s": 20.0 * scale,
            "pingpong": [{"bytes": b, "latency_s": _lat(mpj_ms * scale, 2 * mpj_ms * scale)} for b in SIZES],
            "socket_pingpong": [{"bytes": b, "latency_s": _lat(sock_ms * scale, 2 * sock_ms * scale)} for b in SIZES],
            "barrier": _lat(1.0 * scale, 4.0 * scale),
            "bcast": [{"bytes": b, "latency_s": _lat(0.7 * scale, 3.0 * scale)} for b in SIZES],
            "allreduce": [{"doubles": d, "latency_s": _lat(0.6 * scale, 6.0 * scale)} for d in (1, 1024)]}


FACTORIAL = {"factors": {"flood": ["none", "flood"], "profile": ["fifo", "thesis"]}, "qos_factor": "profile",
             "recoveries": [{"levels": {"flood": "flood"}, "profile": "thesis", "reference_profile": "fifo",
                             "baseline": "none / fifo", "congested": "flood / fifo", "treated": "flood / thesis",
                             "ratio": 0.95, "ci95": [0.9, 1.0]}]}


def _results():
    return {"none / fifo": [_result(1.0), _result(1.2), _result(0.8)],
            "flood / fifo": [_result(10.0), _result(30.0), _result(20.0)],  # medians: 20x the baseline's
            "flood / thesis": [_result(2.9), _result(3.1)]}  # median 3.0: 17 of the 19 lost won back


def test_latencies_key_every_operation_by_label_and_size():
    lat = latencies(_result(1.0))
    assert lat[("ping-pong MPJ", 512)]["p50"] == pytest.approx(0.0005)
    assert lat[("ping-pong socket", 1)]["p99"] == pytest.approx(0.0002)
    assert lat[("barrier", None)]["p50"] == pytest.approx(0.001)
    assert set(k for k in lat if k[0] == "allreduce (doubles)") == {("allreduce (doubles)", 1),
                                                                     ("allreduce (doubles)", 1024)}
    assert latencies({"workload": "mpj", "valid": False}) == {}


def test_mpj_rows_take_medians_and_give_slowdown_and_share_won_back():
    rows = mpj_rows(_results(), FACTORIAL)
    pp = next(r for r in rows if (r["operation"], r["bytes"]) == ("ping-pong MPJ", 512))
    assert pp["base_p50"] == pytest.approx(0.5) and pp["cong_p50"] == pytest.approx(10.0)
    assert pp["treat_p50"] == pytest.approx(1.5) and pp["n"] == (3, 3, 2)
    assert pp["slowdown_p50"] == pytest.approx(20.0) and pp["slowdown_p99"] == pytest.approx(20.0)
    assert pp["won_p50"] == pytest.approx((20 - 3) / 19) and pp["seed003_ms"] == pytest.approx(26 / 25)
    sock = next(r for r in rows if (r["operation"], r["bytes"]) == ("ping-pong socket", 512))
    assert sock["seed003_ms"] == pytest.approx(8 / 25)
    barrier = next(r for r in rows if r["operation"] == "barrier")
    assert barrier["bytes"] is None and barrier["seed003_ms"] is None and barrier["base_p99"] == pytest.approx(4.0)
    # sizes: ping-pong at the smallest, the largest and seed 003's; bcast at the smallest, 1 KiB, the largest
    assert [r["bytes"] for r in rows if r["operation"] == "ping-pong MPJ"] == [1, 512, 1024, 2048, 4096]
    assert [r["bytes"] for r in rows if r["operation"] == "bcast"] == [1, 1024, 4096]
    assert shown([1, 2, 4, 512, 65536]) == {1, 512, 65536} and shown([]) == set()


def test_a_cell_without_trials_gives_dashes_not_numbers():
    res = _results()
    del res["flood / fifo"]  # every congested FIFO trial timed out: no latencies
    rows = mpj_rows(res, FACTORIAL)
    assert all(r["cong_p50"] is None and r["slowdown_p50"] is None and r["won_p50"] is None for r in rows)
    line = mpj_table(rows).iloc[0]
    assert line["congestion, fifo p50 / p99"] == "- / -" and line["won back p50 / p99"] == "- / -"
    assert line["trials"] == "3/0/2"
    assert mpj_rows(res, None) == [] and mpj_rows({}, FACTORIAL) == []


def test_the_table_in_milliseconds():
    table = mpj_table(mpj_rows(_results(), FACTORIAL))
    line = table[(table["operation"] == "ping-pong MPJ") & (table["size"] == "512")].iloc[0]
    assert line["seed 003 (ms)"] == "1.04" and line["no congestion p50 / p99 (ms)"] == "0.500 / 1.000"
    assert line["slowdown p50 / p99"] == "20.0x / 20.0x" and line["won back p50 / p99"] == "89% / 89%"
    assert line["congestion, thesis p50 / p99"] == "1.500 / 3.000"


def test_seed_003s_ping_pong_ordering_against_the_measured_one():
    # measured: the socket 5x faster at every size; seed 003: socket faster at 512 B and 1 KiB, equal at 2-4 KiB
    order = pingpong_order(mpj_rows(_results(), FACTORIAL))
    assert order == [(512, "socket", "socket"), (1024, "socket", "socket"), (2048, "equal", "socket"),
                     (4096, "equal", "socket")]
    assert SEED003_PINGPONG[8192] == (11, 10)  # MPJ faster there, in the seed's table
    intro = mpj_intro(mpj_rows(_results(), FACTORIAL))
    assert "at 2 of 4 of its sizes (512 B, 1,024 B)" in intro


def test_sections_pick_the_seed_by_workload():
    stats = {"conditions": {}, "factorial": FACTORIAL}
    (title, intro, table), = sections(stats, {"workload": {"kind": "mpj"}}, _results())
    assert "seed 003" in title and len(table) == len(mpj_rows(_results(), FACTORIAL))
    assert sections(stats, {"workload": {"kind": "echo"}}, _results()) == []
    assert sections({"conditions": {}}, {"workload": {"kind": "sort"}}, {}) == []  # no factorial block
    assert sections(stats, None, {}) == []


def _folder(tmp_path, rows, excluded=()):
    """A campaign folder with trials.sqlite (the columns counted_results reads) and result files."""
    db = sqlite3.connect(tmp_path / "trials.sqlite")
    db.executescript(SCHEMA)  # a qoslab store's tables (a reader refuses any other database)
    for idx, cond, warm, status, valid, res in rows:
        db.execute("INSERT INTO trials (idx, condition, trial, warmup, status, valid) VALUES (?, ?, 1, ?, ?, ?)",
                   (idx, cond, warm, status, valid))
        if res is not None:
            d = tmp_path / "trials" / f"{idx:04d}" / "workload"
            d.mkdir(parents=True)
            (d / "workload-result.json").write_text(json.dumps(res) if isinstance(res, dict) else res)
    db.commit()
    db.close()
    return {"fidelity": {"excluded_applied": True, "excluded": [{"idx": i} for i in excluded]}}


def test_counted_results_reads_done_valid_trials_less_those_left_out(tmp_path):
    stats = _folder(tmp_path, [(0, "a", 0, "done", 1, {"x": 0}), (1, "a", 1, "done", 1, {"x": 1}),  # warm-up
                               (2, "b", 0, "failed", None, {"x": 2}), (3, "b", 0, "done", 1, {"x": 3}),
                               (4, "b", 0, "done", 1, {"x": 4}), (5, "b", 0, "done", 1, None),  # no file
                               (6, "a", 0, "done", 1, "{not json"), (7, "a", 0, "done", 0, {"x": 7})],
                    excluded=[4])
    assert counted_results(tmp_path, stats) == {"a": [{"x": 0}], "b": [{"x": 3}]}
    stats["fidelity"]["excluded_applied"] = False  # the statistics kept the invalid trials: so does the table
    assert counted_results(tmp_path, stats) == {"a": [{"x": 0}], "b": [{"x": 3}, {"x": 4}]}
    assert counted_results(None, stats) == {} and counted_results(tmp_path / "nowhere", stats) == {}


def _committed(name):
    from conftest import REPO
    camp = REPO / "docs" / "results" / name
    stats = json.loads((camp / "stats.json").read_text())
    return sections(stats, yaml.safe_load((camp / "playbook.yaml").read_text()), counted_results(camp, stats))


def test_the_committed_sort_campaign_is_shown_against_seed_002():
    (title, intro, table), = _committed("mechanisms-sort-20261125")
    assert "seed 002" in title and list(table["mechanism"]) == ["corba", "rmi", "socket"]
    assert list(table["seed 002 (ms)"]) == ["6379", "8101", "12284"] and list(table["measured rank"]) == ["3", "1", "2"]
    assert "*rmi, socket, corba*, not the same; corba is the slowest, as the summary says" in intro


def test_the_committed_mpj_campaign_is_shown_per_operation_from_its_trials():
    (title, intro, table), = _committed("mechanisms-mpj-20261125")
    assert "seed 003" in title
    ops = set(table["operation"])
    assert ops == {"ping-pong MPJ", "ping-pong socket", "barrier", "bcast", "allreduce (doubles)"}
    pp = table[table["operation"] == "ping-pong MPJ"]
    assert list(pp["size"]) == ["512", "1,024", "2,048", "4,096", "8,192", "16,384", "32,768", "65,536"]
    assert set(table["trials"]) == {"3/0/3"}  # no congested FIFO trial finished (each counted at its bound)
    assert set(table["congestion, fifo p50 / p99"]) == {"- / -"}
    assert "of 8 of its sizes" in intro
