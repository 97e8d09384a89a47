"""Factorial playbooks (trials.factors): factors expanded into named conditions, per-condition
floods, old playbooks unchanged, comparisons and recoveries per level; the factorial block's
bootstrap of recovery differences (campaign.factorial), cross-checked with the Java tool."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import REPO
from qoslab.campaign import load_playbook
from qoslab.errors import ConfigError
from qoslab.stats.campaign import plan_comparisons, run_stats
from qoslab.stats.factorial import factorial_block, read_trials, recovery_difference
from qoslab.stats.jar import ANALYSIS_JAR
from qoslab.stats.recovery import bootstrap_means, percentile_interval, recovery_ratio, recovery_replicates
from qoslab.trials.playbook import Playbook, schedule

QUICK = REPO / "playbooks" / "factorial-quick.yaml"
WL = {"hosts": ["jp-1", "jp-2", "jp-3", "jp-4"], "size": "A", "frames": 1}


def pb_of(**extra) -> Playbook:
    return Playbook.model_validate({"name": "f", "workload": WL, **extra})


def test_the_quick_factorial_playbook_expands_into_six_named_conditions():
    pb = load_playbook(QUICK)
    assert [c.name for c in pb.conditions] == ["none / fifo", "none / thesis", "campaign-flood / fifo",
                                               "campaign-flood / thesis", "incast / fifo", "incast / thesis"]
    assert [pb.flood_of(c) for c in pb.conditions] == [None, None] + ["traffic-gen/campaign-flood.yaml"] * 2 + \
        ["traffic-gen/incast.yaml"] * 2
    assert [c.congestion for c in pb.conditions] == [False, False, True, True, True, True]
    assert pb.baseline_condition().name == "none / fifo"
    assert pb.floods() == ["traffic-gen/campaign-flood.yaml", "traffic-gen/incast.yaml"]
    assert pb.conditions[5].levels == {"flood": "incast", "profile": "thesis"}
    compare, recovery = plan_comparisons(pb)
    assert recovery == [("none / fifo", "campaign-flood / fifo", "campaign-flood / thesis"),
                        ("none / fifo", "incast / fifo", "incast / thesis")]
    assert ("none / thesis", "incast / thesis") in compare and ("incast / fifo", "incast / thesis") in compare
    # interleaving and seeds as before: every condition 4 times + 1 warm-up, shuffled with the seed
    sched = schedule(pb, 5)
    assert len(sched) == 6 * 5 and sched == schedule(pb, 5)


def test_workload_factors_include_subset_and_recoveries_per_level():
    pb = pb_of(factors={"flood": ["none", "thesis-flood"], "profile": ["fifo", "thesis"],
                        "workload.frames": [1, 2]}, baseline={"flood": "none", "profile": "fifo", "workload.frames": 1})
    assert len(pb.conditions) == 8 and pb.conditions[-1].name == "thesis-flood / thesis / frames 2"
    assert pb.workload_of(pb.conditions[-1]).frames == 2 and pb.baseline == "none / fifo / frames 1"
    _, recovery = plan_comparisons(pb)
    assert recovery == [("none / fifo / frames 1", "thesis-flood / fifo / frames 1", "thesis-flood / thesis / frames 1"),
                        ("none / fifo / frames 2", "thesis-flood / fifo / frames 2", "thesis-flood / thesis / frames 2")]
    sub = pb_of(factors={"flood": ["none", "incast"], "profile": ["fifo", "thesis"],
                         "include": [{"flood": "none", "profile": "fifo"}, {"flood": "incast", "profile": "thesis"}]})
    assert [c.name for c in sub.conditions] == ["none / fifo", "incast / thesis"]
    # a resolved playbook (a campaign folder's) holds both factors and their conditions: it loads again
    again = Playbook.model_validate(pb.model_dump(mode="json"))
    assert again.conditions == pb.conditions


def test_old_playbooks_keep_their_meaning():
    pb = load_playbook(REPO / "playbooks" / "quick.yaml")
    assert [pb.flood_of(c) for c in pb.conditions] == [None, "traffic-gen/quick-flood.yaml", None,
                                                      "traffic-gen/quick-flood.yaml"]
    assert plan_comparisons(pb)[1] == [("no congestion fifo", "congestion fifo", "congestion thesis")]
    mixed = pb_of(conditions=[{"name": "a", "flood": "none", "profile": "fifo"},
                              {"name": "b", "flood": "incast", "profile": "fifo"},
                              {"name": "c", "congestion": True, "profile": "fifo"}])
    assert [(c.congestion, mixed.flood_of(c)) for c in mixed.conditions] == [
        (False, None), (True, "traffic-gen/incast.yaml"), (True, "traffic-gen/thesis-flood.yaml")]


@pytest.mark.parametrize("extra,expect", [
    ({"factors": {"flood": ["none"], "colour": ["red"]}}, "factors.colour: a factor is flood, profile or a dotted"),
    ({"factors": {"profile": []}}, "factors.profile: a non-empty list of levels"),
    ({"factors": {"profile": ["fifo"]}, "conditions": [{"name": "x", "congestion": False, "profile": "fifo"}]},
     "conditions: give conditions or factors, not both"),
    ({"factors": {"profile": ["fifo", "thesis"]}, "baseline": {"profile": "qos"}}, "baseline.profile: 'qos' is not"),
    ({"factors": {"profile": ["fifo"], "include": [{"flood": "none"}]}}, "factors.include[0]: a cell names one level"),
    ({"conditions": [{"name": "x", "congestion": False, "flood": "incast", "profile": "fifo"}]},
     "congestion: False contradicts flood: incast"),
])
def test_bad_factors_name_the_field(write_yaml, extra, expect):
    p = write_yaml({"name": "f", "workload": WL, **extra}, "pb.yaml")
    with pytest.raises(ConfigError) as e:
        load_playbook(p)
    assert expect in str(e.value), str(e.value)


def test_an_unknown_flood_level_is_refused_with_the_factor_field(write_yaml):
    p = write_yaml({"name": "f", "workload": WL, "factors": {"flood": ["none", "no-such-flood"]}}, "pb.yaml")
    with pytest.raises(ConfigError, match="factors.flood: no flood file traffic-gen/no-such-flood.yaml"):
        load_playbook(p)


def test_an_unknown_profile_level_is_refused_at_the_factors_line(tmp_path):
    p = tmp_path / "pb.yaml"
    p.write_text("name: f\nworkload: {hosts: [jp-1, jp-2], size: A}\nfactors:\n  flood: [none]\n"
                 "  profile: [fifo, thesiss]\n")
    with pytest.raises(ConfigError, match=r"pb\.yaml:5: factors\.profile: no profile 'thesiss'"):
        load_playbook(p)


def _data(seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"B": rng.normal(10, 0.3, 12), "C1": rng.normal(20, 0.5, 12), "T1": rng.normal(11, 0.4, 12),
            "C2": rng.normal(16, 0.5, 12), "T2": rng.normal(15, 0.4, 12)}


def test_recovery_difference_bootstrap():
    d = _data()
    same = recovery_difference(d, ("B", "C1", "T1"), ("B", "C1", "T1"))
    assert same["difference"] == 0 and same["ci95"] == [0.0, 0.0] and same["excludes_zero"] is False
    diff = recovery_difference(d, ("B", "C1", "T1"), ("B", "C2", "T2"), seed=7)
    r1 = recovery_ratio(d["B"].mean(), d["C1"].mean(), d["T1"].mean())
    r2 = recovery_ratio(d["B"].mean(), d["C2"].mean(), d["T2"].mean())
    assert diff["difference"] == pytest.approx(r1 - r2) and r1 == pytest.approx(0.9, abs=0.05)
    assert diff["excludes_zero"] and diff["ci95"][0] < r1 - r2 < diff["ci95"][1]
    assert diff == recovery_difference(d, ("B", "C1", "T1"), ("B", "C2", "T2"), seed=7)  # seeded
    assert recovery_ratio(10, 9, 8) != recovery_ratio(10, 9, 8)  # NaN: no slowdown


@pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built")
def test_factorial_block_cross_checked_with_the_java_tool(tmp_path):
    """The Java tool's recovery ratios equal numpy's from the same trials.csv, its BCa intervals
    are close to numpy's percentile ones, and the block labels them with their levels."""
    pb = pb_of(factors={"flood": ["none", "thesis-flood", "incast"], "profile": ["fifo", "thesis"]}, seed=4)
    d = _data()
    cells = {"none / fifo": d["B"], "none / thesis": d["B"] + 0.1, "thesis-flood / fifo": d["C1"],
             "thesis-flood / thesis": d["T1"], "incast / fifo": d["C2"], "incast / thesis": d["T2"]}
    csv = tmp_path / "trials.csv"
    csv.write_text("condition,trial,elapsed_s\n" + "".join(f"{c},{i + 1},{float(x)!r}\n" for c, xs in cells.items()
                                                           for i, x in enumerate(xs)))
    stats = run_stats(pb, csv, tmp_path / "stats.json")
    assert stats["source"] == "trials.csv" and json.loads((tmp_path / "stats.json").read_text())["source"] == "trials.csv"
    block = factorial_block(pb, stats, csv)
    assert block is not None
    data = read_trials(csv)
    for rec in block["recoveries"]:
        t = (rec["baseline"], rec["congested"], rec["treated"])
        assert rec["ratio"] == pytest.approx(recovery_ratio(*(data[n].mean() for n in t)), rel=1e-9)
        pct = percentile_interval(recovery_replicates(bootstrap_means(data, sorted(set(t)), 10_000, 1), t))
        assert pct is not None and rec["ci95"][0] == pytest.approx(pct[0], abs=0.03)
        assert rec["ci95"][1] == pytest.approx(pct[1], abs=0.03)
    assert [r["levels"] for r in block["recoveries"]] == [{"flood": "thesis-flood"}, {"flood": "incast"}]
    (diff,) = block["differences"]
    assert diff["excludes_zero"] and diff["seed"] == 4
    json.dumps(block)  # plain data for stats.json


def test_report_tables_of_the_factorial_block():
    from qoslab.report.factors import difference_table, recovery_points, recovery_table

    block = {"recoveries": [
        {"levels": {"flood": "incast"}, "profile": "thesis", "reference_profile": "fifo", "ratio": 0.8,
         "ci95": [0.6, 0.95]},
        {"levels": {"flood": "campaign-flood", "workload.frames": 2}, "profile": "thesis",
         "reference_profile": "fifo", "ratio": None, "ci95": None}],
        "differences": [{"a": {"flood": "incast"}, "b": {"flood": "campaign-flood"}, "profile": "thesis",
                         "difference": 0.3, "ci95": [0.1, 0.5], "excludes_zero": True}]}
    rec = recovery_table(block)
    assert rec.to_dict("records")[0] == {"level": "flood incast", "profile": "thesis vs fifo", "recovery": "0.80",
                                         "BCa 95 %": "[0.60, 0.95]"}
    assert rec.iloc[1]["level"] == "flood campaign-flood, frames 2" and rec.iloc[1]["recovery"] == "-"
    assert difference_table(block).iloc[0]["verdict"] == "differ"
    assert recovery_points(block) == [("flood incast\nthesis", 0.8, 0.6, 0.95)]


def test_a_factorial_campaign_folder_snapshots_every_flood_and_the_runner_reads_them_back(tmp_path):
    from qoslab.campaign import create
    from qoslab.campaign.runner import Runner

    pb = load_playbook(QUICK)
    store = create(pb, QUICK, tmp_path / "c", trials=2)
    assert len(store.pending()) == 6 + 6 * 2
    manifest = json.loads((tmp_path / "c" / "inputs" / "manifest.json").read_text())
    assert manifest["floods"]["traffic-gen/incast.yaml"]["file"] == "inputs/floods/01-incast.yaml"
    assert manifest["floods"]["traffic-gen/campaign-flood.yaml"]["file"] == "inputs/floods/00-campaign-flood.yaml"
    assert "flood" not in manifest  # the playbook's own `flood:` (thesis-flood) is used by no condition
    runner = Runner(tmp_path / "c")
    assert set(runner.floods) == {"traffic-gen/campaign-flood.yaml", "traffic-gen/incast.yaml"}
    incast = runner.floods["traffic-gen/incast.yaml"]
    assert incast.pattern is None and [(f.src, f.dst) for f in incast.flows] == [("jp-5", "jp-1"), ("jp-6", "jp-1"),
                                                                               ("jp-7", "jp-1")]
    assert runner.pb.conditions == pb.conditions  # the folder's resolved playbook (factors + conditions) reloads
