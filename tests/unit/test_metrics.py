"""Metrics as data (issue 34): a workload's declaration (qoslab.workloads.metrics), the command
contract reading it from the head's JSON, the store keeping it per trial, and the campaign's
statistics made of the declared primary metric with one statistics file per secondary metric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from qoslab.errors import QoslabError
from qoslab.stats.campaign import campaign_stats, export_csv
from qoslab.stats.metrics import declared_metrics
from qoslab.trials.playbook import Playbook, ScheduledTrial
from qoslab.trials.store import Store
from qoslab.workloads.command import Command, check_result
from qoslab.workloads.metrics import DEFAULT, Metric, MetricSet, decimals, fmt, parse_declaration, primary_value

HEAD = {"elapsed_s": 4.2, "p99_rtt_ms": 1.02, "p50_rtt_ms": 0.61, "ops_s": 8123.0,
        "metrics": {"p50_rtt_ms": {"unit": "ms"}, "p99_rtt_ms": {"unit": "ms", "primary": True},
                    "ops_s": {"unit": "ops/s", "direction": "higher"}}}


def test_a_declaration_gives_primary_secondary_units_and_values():
    ms, values = parse_declaration(HEAD)  # type: ignore[misc]
    assert ms.primary == Metric("p99_rtt_ms", "ms", "lower")
    assert [m.name for m in ms.secondary] == ["p50_rtt_ms", "ops_s"] and ms.secondary[1].direction == "higher"
    assert values == {"p99_rtt_ms": 1.02, "p50_rtt_ms": 0.61, "ops_s": 8123.0}
    assert MetricSet.from_dict(ms.as_dict()) == ms
    first, _ = parse_declaration({"a": 1, "b": 2, "metrics": {"b": {"unit": "us"}, "a": None}})  # type: ignore[misc]
    assert first.primary.name == "b" and first.secondary[0] == Metric("a", "s", "lower")
    inline, v = parse_declaration({"metrics": {"x": {"value": 3, "unit": "MB/s"}}})  # type: ignore[misc]
    assert v == {"x": 3.0} and parse_declaration({"elapsed_s": 1}) is None


@pytest.mark.parametrize("metrics, msg", [
    ({"p99": {"unit": "ms"}}, "metrics.p99: the result line has no finite number"),
    ({"x": {"unit": "ms", "direction": "up"}}, "metrics.x.direction: 'lower' or 'higher'"),
    ({"x": {"unit": ""}}, "metrics.x.unit"),
    ({"x": {"units": "ms"}}, "metrics.x: unknown key 'units'"),
    ({"x": {}, "y": {}, "z": 1}, "metrics.z: expected a mapping"),
    ({"../x": {}}, "a metric name is"),
    ({}, "non-empty mapping"),
    ({"x": {"primary": True}, "y": {"primary": True}}, "more than one primary"),
])
def test_a_malformed_declaration_is_one_line_naming_the_field(metrics, msg):
    with pytest.raises(QoslabError, match=msg.replace("(", r"\(").replace(".", r"\.")) as e:
        parse_declaration({"x": 1.0, "y": 2.0, "z": 3.0, "metrics": metrics})
    assert "\n" not in str(e.value)


def test_the_command_contract_reads_and_stores_the_declaration():
    r = check_result({**HEAD, "exit_code": 0})
    assert r["valid"] is True and r["metrics_declared"]["values"]["p99_rtt_ms"] == 1.02
    row = Command().row(r)
    assert row["elapsed_s"] == 4.2  # the run's seconds stay (ETA, overhead); the metric is declared beside
    m, v = primary_value(row["metrics_json"], row["elapsed_s"])
    assert (m.name, m.unit, v) == ("p99_rtt_ms", "ms", 1.02)
    assert Command().row(check_result({"elapsed_s": 2.0}))["metrics_json"] is None
    assert primary_value(None, 2.0) == (DEFAULT.primary, 2.0)
    with pytest.raises(QoslabError, match="metrics.p99_rtt_ms"):
        check_result({"elapsed_s": 1.0, "metrics": {"p99_rtt_ms": {"unit": "ms"}}})
    # an invalid run's declaration is not judged (the trial fails for its own reason)
    assert check_result({"elapsed_s": 1.0, "valid": False, "metrics": {"p": {}}})["valid"] is False


def test_sensible_precision():
    assert decimals(DEFAULT.primary, [0.0012, 38.1]) == 3  # the RayTracer's three decimals, whatever the data
    ms = Metric("p99", "ms")
    assert decimals(ms, [1.02, 2.5]) == 2 and fmt(1.0, decimals(ms, [1.0]), "ms") == "1.00 ms"
    assert decimals(ms, [0.0123]) == 4 and decimals(ms, [261.0, 6.1]) == 2 and decimals(ms, [8123.0]) == 0
    assert decimals(ms, [None, 0.0]) == 3 and fmt(None, 2) == "n/a"


def _store(tmp_path: Path, declare: bool = True) -> Store:
    st = Store(tmp_path / "trials.sqlite")
    conds = {"no congestion fifo": 1.0, "congestion fifo": 30.0, "no congestion thesis": 1.1, "congestion thesis": 2.0}
    sched = [(c, t) for t in range(1, 6) for c in conds]
    st.init([ScheduledTrial(k, c, t, False) for k, (c, t) in enumerate(sched)], {})
    for k, (c, t) in enumerate(sched):
        p99 = conds[c] * (1 + 0.05 * t)
        head = {"elapsed_s": 3.0 + 0.01 * k, "p99_rtt_ms": p99, "ops_s": 1000 / p99,
                "metrics": {"p99_rtt_ms": {"unit": "ms"}, "ops_s": {"unit": "ops/s", "direction": "higher"}}}
        if not declare:
            head.pop("metrics")
        row = Command().row(check_result(head))
        st.record(k, status="done", valid=1, **row)
    return st


def _pb() -> Playbook:
    data = yaml.safe_load((REPO / "playbooks" / "command-example.yaml").read_text())
    return Playbook.model_validate({**data, "name": "metrics-test"})


def test_campaign_statistics_are_of_the_declared_metric_with_secondary_files(tmp_path):
    st = _store(tmp_path)
    ms = declared_metrics(st)
    assert ms is not None and ms.primary.name == "p99_rtt_ms" and ms.secondary[0].name == "ops_s"
    stats = campaign_stats(_pb(), st, tmp_path)
    assert stats["metric"] == {"name": "p99_rtt_ms", "unit": "ms", "direction": "lower"}
    mean = stats["conditions"]["congestion fifo"]["mean"]
    assert mean == pytest.approx(30.0 * 1.15)  # milliseconds of p99, not the run's 3 s
    assert stats["secondary"]["ops_s"] == {"unit": "ops/s", "direction": "higher", "stats": "stats-metric-ops_s.json"}
    sec = json.loads((tmp_path / "stats-metric-ops_s.json").read_text())
    assert sec["conditions"]["no congestion fifo"]["mean"] == pytest.approx(
        sum(1000 / (1.0 * (1 + 0.05 * t)) for t in range(1, 6)) / 5)
    rec = {r["treated"]: r["ratio"] for r in stats["recovery"]}
    assert rec["congestion thesis"] == pytest.approx((34.5 - 2.3) / (34.5 - 1.15), rel=1e-6)
    # the secondary metric's recovery is the same formula: a higher-is-better metric recovers too
    ops = {c: sum(1000 / (f * (1 + 0.05 * t)) for t in range(1, 6)) / 5
           for c, f in (("b", 1.0), ("c", 30.0), ("t", 2.0))}
    r = sec["recovery"][0]
    assert r["ratio"] == pytest.approx((ops["c"] - ops["t"]) / (ops["c"] - ops["b"])) and "higher" in r["method"]
    assert r["ci95"][0] < r["ratio"] < r["ci95"][1]
    assert not (tmp_path / "stats-network.json").exists()
    st.close()


def test_without_a_declaration_the_statistics_are_elapsed_s_as_ever(tmp_path):
    st = _store(tmp_path, declare=False)
    assert declared_metrics(st) is None
    stats = campaign_stats(_pb(), st, tmp_path)
    assert "metric" not in stats and "secondary" not in stats
    assert stats["conditions"]["no congestion fifo"]["mean"] == pytest.approx(3.0 + 0.01 * 8)
    with pytest.raises(QoslabError, match="unknown metric 'p99_rtt_ms'"):
        export_csv(st, tmp_path / "x.csv", "p99_rtt_ms")
    st.record(0, metrics_json=json.dumps({"set": MetricSet(Metric("p", "ms")).as_dict(), "values": {"p": 1}}))
    with pytest.raises(QoslabError, match="trial 1 declares no metrics but trial 0 does"):
        declared_metrics(st)
    st.close()
