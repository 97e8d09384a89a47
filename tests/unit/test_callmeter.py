"""The ``calls`` meter (meters/calls.py) and the call-latency export (stats/calls.py)
on hand-made records: matching a manager call to the wire call inside it, the agreement of the
two views, the trial's columns, and the pooled calls.jsonl the statistics read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from qoslab.meters.base import TrialContext, meter_columns
from qoslab.meters.calls import (
    COLUMNS,
    CallMeter,
    agreement,
    match_calls,
    quantile7,
    read_jsonl,
    trial_columns,
)
from qoslab.registry import meters
from qoslab.stats.calls import calls_argv, export_calls, pooled_records, stats_block
from qoslab.trials.playbook import ScheduledTrial
from qoslab.trials.store import Store

T0 = 1_795_472_524_000_000_000  # ns since the epoch
MS = 1_000_000


def mgr(worker: str, addr: str, method: str, index: int, start_ms: float, end_ms: float, ok: bool = True) -> dict:
    return {"worker": worker, "address": addr, "method": method, "frame": None if method != "render" else 0,
            "index": index, "rows": 5 if method == "render" else None, "start_ns_wall": T0 + int(start_ms * MS),
            "end_ns_wall": T0 + int(end_ms * MS), "latency_ms": end_ms - start_ms, "ok": ok,
            "error": None if ok else "boom", "anchor_uncertainty_ns": 200}


def wire(server: str, start_ms: float, end_ms: float | None, rto: bool = False, retx: int = 0,
         complete: bool = True, client: str = "198.18.0.1:40000") -> dict:
    return {"client": client, "server": server, "index": 1, "start_ns": T0 + int(start_ms * MS),
            "end_ns": None if end_ms is None else T0 + int(end_ms * MS),
            "latency_ms": None if end_ms is None else end_ms - start_ms, "retransmitted": retx, "rto": rto,
            "complete": complete}


# worker b at .2 (on the wire), worker a at .1 (the head node's own worker: never on the wire)
MANAGER = [
    mgr("b", "198.18.0.2", "lookup", 0, 0.0, 40.0),
    mgr("a", "198.18.0.1", "lookup", 0, 0.5, 30.0),
    mgr("b", "198.18.0.2", "prepare", 1, 41.0, 50.0),
    mgr("b", "198.18.0.2", "render", 2, 60.0, 80.0),
    mgr("b", "198.18.0.2", "render", 3, 81.0, 401.0),   # an RTO in it
    mgr("b", "198.18.0.2", "render", 4, 402.0, 412.0),
    mgr("a", "198.18.0.1", "render", 2, 60.0, 90.0),
    mgr("b", "198.18.0.2", "render", 5, 413.0, 420.0, ok=False),
]
WIRE = [
    wire("198.18.0.2:1099", 2.0, 30.0),            # lookup's registry call
    wire("198.18.0.2:1100", 31.0, 38.0),           # the DGC dirty call inside lookup: export port
    wire("198.18.0.2:1100", 41.4, 49.5),           # prepare
    wire("198.18.0.2:1100", 60.3, 79.5),           # render 2: |20.0 - 19.2| = 0.8
    wire("198.18.0.2:1100", 81.2, 400.8, rto=True, retx=2),  # render 3: |320 - 319.6| = 0.4
    wire("198.18.0.2:1100", 402.1, 411.9),         # render 4: |10 - 9.8| = 0.2
    wire("198.18.0.2:1100", 413.1, None, complete=False),   # cut by the capture's end
    wire("198.18.0.3:1100", 60.5, 70.0),           # another worker: no manager call names .3
]


def test_quantile7_is_numpys_linear():
    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 100):
        x = list(rng.lognormal(size=n))
        for q in (0, 0.5, 0.9, 0.99, 0.999, 1):
            assert quantile7(x, q) == pytest.approx(float(np.quantile(x, q)), rel=1e-12)


def test_a_manager_call_matches_the_wire_call_inside_it_on_its_port():
    pairs = match_calls(MANAGER, WIRE)
    got = [(m["method"], m["index"], w["start_ns"]) for m, w in pairs]
    assert got == [("lookup", 0, T0 + 2 * MS), ("prepare", 1, T0 + int(41.4 * MS)),
                   ("render", 2, T0 + int(60.3 * MS)), ("render", 3, T0 + int(81.2 * MS)),
                   ("render", 4, T0 + int(402.1 * MS))]
    # ports decide: with the registry on 2000, the lookup's wire call (on 1099) is not its own
    assert "lookup" not in [m["method"] for m, _ in match_calls(MANAGER, WIRE, {"registry": 2000, "export": 1100})]


def test_containment_is_strict_and_a_wire_call_is_matched_once():
    late = [wire("198.18.0.2:1100", 60.3, 80.5)]          # ends after the manager call: not inside
    assert match_calls([mgr("b", "198.18.0.2", "render", 2, 60.0, 80.0)], late) == []
    twice = [mgr("b", "198.18.0.2", "render", 2, 60.0, 80.0), mgr("b", "198.18.0.2", "render", 2, 60.0, 80.0)]
    assert len(match_calls(twice, [wire("198.18.0.2:1100", 61.0, 79.0)])) == 1
    # two wire calls inside one manager call: the longest is its match
    two = [wire("198.18.0.2:1100", 61.0, 62.0), wire("198.18.0.2:1100", 63.0, 79.0)]
    [(_, w)] = match_calls([mgr("b", "198.18.0.2", "render", 2, 60.0, 80.0)], two)
    assert w["start_ns"] == T0 + 63 * MS


def test_agreement_of_the_matched_render_calls():
    a = agreement([(m, w) for m, w in match_calls(MANAGER, WIRE) if m["method"] == "render"])
    assert a is not None and a["n"] == 3
    assert a["median_ms"] == pytest.approx(0.4, abs=1e-6) and a["max_ms"] == pytest.approx(0.8, abs=1e-6)
    assert a["signed_median_ms"] == pytest.approx(0.4, abs=1e-6)
    assert a["start_offset_median_ms"] == pytest.approx(0.2, abs=1e-6)
    assert agreement([]) is None


def test_trial_columns_from_both_views():
    c = trial_columns(MANAGER, WIRE)
    assert set(c) == set(COLUMNS)
    render = [20.0, 320.0, 10.0, 30.0]  # ok render calls, the head node's own included
    assert c["calls_n"] == 4
    assert c["calls_p50_ms"] == pytest.approx(np.quantile(render, 0.5), abs=1e-4)
    assert c["calls_p99_ms"] == pytest.approx(np.quantile(render, 0.99), abs=1e-4)
    assert c["calls_max_ms"] == pytest.approx(320.0)
    assert (c["calls_rto"], c["calls_retransmitted"], c["calls_wire_n"]) == (1, 2, 8)
    assert c["calls_agree_median_ms"] == pytest.approx(0.4, abs=1e-4)
    assert c["calls_agree_max_ms"] == pytest.approx(0.8, abs=1e-4)
    info = json.loads(c["calls_json"])
    assert info["methods"] == {"lookup": 2, "prepare": 1, "render": 5} and info["failed"] == 1
    assert info["wire"] == {"calls": 8, "complete": 7, "matched": {"lookup": 1, "prepare": 1, "render": 3}}


def test_trial_columns_without_a_capture_or_without_call_times():
    c = trial_columns(MANAGER, None)
    assert c["calls_n"] == 4 and c["calls_wire_n"] is None and c["calls_rto"] is None
    assert c["calls_agree_median_ms"] is None
    c = trial_columns(None, WIRE)
    assert c["calls_n"] is None and c["calls_rto"] == 1 and c["calls_agree_max_ms"] is None
    assert set(trial_columns(None, None).values()) == {None}


def _write(path: Path, recs: list[dict], tail: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs) + tail)


def test_the_registered_meter_reads_the_trials_files(tmp_path):
    assert "calls" in meters.names_in_order() and meter_columns()["calls_json"] == "TEXT"
    _write(tmp_path / "workload" / "workload-calls.jsonl", MANAGER)
    _write(tmp_path / "capture" / "calls.jsonl", WIRE, tail='{"client": "cut')  # a cut last line
    log: list[str] = []
    ctx = TrialContext(condition="c", congestion=False, trial_dir=tmp_path, local=True, switch=None, ports=[],
                       log=log.append)
    ctx.result = {"calls_file": "workload-calls.jsonl", "rmi_ports": {"registry": 1099, "export": 1100}}
    ctx.capture_summary = {"calls_file": None, "calls": {"calls": 8}}
    c = meters.get("calls")(ctx).columns(ctx)
    assert c["calls_wire_n"] == 8 and c["calls_agree_max_ms"] == pytest.approx(0.8, abs=1e-4)
    assert any("1 unreadable line" in line for line in log)
    ctx.capture_summary = None  # an uncaptured trial: the manager's view only
    c = CallMeter(ctx).columns(ctx)
    assert c["calls_n"] == 4 and c["calls_wire_n"] is None


def test_read_jsonl_counts_bad_lines(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n\n[1]\nnot json\n{"b": 2}\n')
    assert read_jsonl(p) == ([{"a": 1}, {"b": 2}], 2)


def test_export_pools_the_counted_trials_render_calls(tmp_path):
    with Store(tmp_path / "trials.sqlite") as st:
        st.init([ScheduledTrial(0, "A", 1, True), ScheduledTrial(1, "A", 1, False), ScheduledTrial(2, "B", 1, False),
                 ScheduledTrial(3, "B", 2, False), ScheduledTrial(4, "A", 2, False)], {})
        for idx in range(5):
            st.record(idx, status="done", valid=1)
            _write(tmp_path / "trials" / f"{idx:04d}" / "workload" / "workload-calls.jsonl", MANAGER)
        st.record(3, status="failed", valid=None)
        counts, invalid = export_calls(st, tmp_path, tmp_path / "calls.jsonl")
        assert counts == {"A": 8, "B": 4} and invalid == 0  # warm-up 0 and failed 3 left out; 4 render calls a trial
        st.record(4, fidelity="invalid")  # the fidelity monitor's verdict: left out as in every other block
        counts, invalid = export_calls(st, tmp_path, tmp_path / "calls.jsonl")
    assert counts == {"A": 4, "B": 4} and invalid == 1
    recs = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert {(r["condition"], r["trial"]) for r in recs} == {("A", 1), ("B", 1)}
    assert all(r["method"] == "render" for r in recs) and recs[0]["latency_ms"] == pytest.approx(20.0)


def test_pooled_records_and_argv_and_stats_block():
    recs = pooled_records([("A", 3, MANAGER)])
    assert len(recs) == 4 and set(recs[0]) == {"condition", "trial", "worker", "method", "frame", "index", "rows",
                                               "latency_ms", "request_bytes", "reply_bytes"}
    argv = calls_argv(Path("c.jsonl"), Path("o.json"), [("A", "B"), ("A", "C")], [("A", "B", "C"), ("A", "B", "D")],
                      ["A", "B", "D"])
    assert argv[argv.index("--compare") + 1] == "A|B" and argv.count("--compare") == 1
    assert argv[argv.index("--recovery") + 1] == "A|B|D" and argv.count("--recovery") == 1
    assert argv[argv.index("--where") + 1] == "method=render"
    cs = {"settings": {"seed": 1}, "conditions": {"A": {"trials": 2, "p99": 5.0, "ci95": {"p99": [4, 6]},
                                                        "per_trial": [{}]}},
          "comparisons": [], "recovery": [{"statistic": "p99", "ratio": 0.9}]}
    b = stats_block(cs)
    assert b["file"] == "calls-stats.json" and "per_trial" not in b["conditions"]["A"]
    assert b["conditions"]["A"]["ci95"] == {"p99": [4, 6]} and b["recovery"][0]["ratio"] == 0.9
