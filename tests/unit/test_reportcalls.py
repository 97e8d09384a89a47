"""The report's call-latency helpers (src/qoslab/report/calls.py) on hand-made calls-stats.json data."""

from __future__ import annotations

import numpy as np
import pandas as pd

from qoslab.report import calls as rc

CS = {"settings": {"bootstrap_resamples": 10000},
      "conditions": {"congestion fifo": {"trials": 2, "calls": 4, "p50": 12.0, "p90": 80.0, "p99": 250.0,
                                         "p99_9": 260.0, "max": 261.0, "mean": 60.0,
                                         "ci95": {"p50": [10.0, 14.0], "p99": [200.0, 261.0]}},
                     "no congestion fifo": {"trials": 2, "calls": 4, "p50": 2.0, "p90": 3.0, "p99": 4.0,
                                            "p99_9": 4.1, "max": 4.2, "mean": 2.5, "ci95": {}}},
      "comparisons": [{"a": "no congestion fifo", "b": "congestion fifo", "statistic": "p99", "a_value": 4.0,
                       "b_value": 250.0, "difference": 246.0, "difference_ci95": [190.0, 257.0], "ratio": 62.5,
                       "ratio_ci95": [40.0, 80.0]}],
      "recovery": [{"baseline": "b", "congested": "c", "treated": "t", "statistic": "p99", "ratio": 0.9,
                    "ci95": [0.8, 0.95], "bootstrap_undefined": 0},
                   {"baseline": "b", "congested": "c", "treated": "t", "statistic": "p50", "ratio": None,
                    "ci95": None, "bootstrap_undefined": 10}]}


def test_tail_table_follows_the_order_and_formats_intervals():
    t = rc.tail_table(CS, ["no congestion fifo", "congestion fifo"])
    assert list(t.condition) == ["no congestion fifo", "congestion fifo"]
    row = t.iloc[1]
    assert row["p99"] == "250 [200 - 261]" and row["p50"] == "12 [10 - 14]" and row["p90"] == "80"
    assert row["max"] == "261" and t.iloc[0]["p99.9"] == "4.1"


def test_comparison_and_recovery_tables():
    c = rc.comparison_table(CS).iloc[0]
    assert c["statistic"] == "p99" and c["b - a ms"] == "246 [190 - 257]" and c["b / a"] == "62.5 [40 - 80]"
    r = rc.recovery_table(CS)
    assert list(r.recovery) == ["90.0% [80.0% - 95.0%]", "n/a"] and list(r["undefined resamples"]) == [0, 10]


def test_ecdf_and_latencies():
    x, y = rc.ecdf([3.0, 1.0, 2.0])
    assert list(x) == [1.0, 2.0, 3.0] and np.allclose(y, [1 / 3, 2 / 3, 1])
    lat = rc.latencies([{"condition": "b", "latency_ms": 2.0}, {"condition": "a", "latency_ms": 1.0},
                        {"condition": "a", "latency_ms": None}, {"condition": "a", "latency_ms": 5.0,
                                                                 "method": "lookup"}], ["a", "b"])
    assert list(lat) == ["a", "b"] and list(lat["a"]) == [1.0]


def test_trial_calls_orders_and_skips():
    trials = pd.DataFrame([
        {"idx": 0, "condition": "c", "trial": 1, "status": "done", "warmup": 0, "calls_n": 60, "calls_rto": 2,
         "calls_wire_n": 46},
        {"idx": 1, "condition": "b", "trial": 1, "status": "done", "warmup": 0, "calls_n": 60, "calls_rto": None,
         "calls_wire_n": None},
        {"idx": 2, "condition": "b", "trial": 0, "status": "done", "warmup": 1, "calls_n": 60, "calls_rto": None,
         "calls_wire_n": None},
        {"idx": 3, "condition": "b", "trial": 2, "status": "done", "warmup": 0, "calls_n": None, "calls_rto": None,
         "calls_wire_n": None}])
    t = rc.trial_calls(trials, ["b", "c"])
    assert t is not None and list(t.idx) == [1, 0] and list(t["calls with an RTO"].fillna(-1)) == [-1, 2]
    assert rc.trial_calls(trials.drop(columns=["calls_n"]), ["b"]) is None
