"""Sequential stopping on precision: the playbook's ``trials: {min, max, every, stop}``, the
stage-wise schedule, the rule, the runner's checks on the store (skipped trials), the statistics'
view of them, and the simulation showing that stopping on precision keeps a later test's type I
error and the intervals' coverage near nominal (seeded, seconds)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

import qoslab.campaign.attempts as attempts_mod
from conftest import ECENET, REPO, shared_or_copy
from qoslab.campaign import Runner, Store, create, load_playbook, schedule
from qoslab.campaign.trialenv import TrialEnv
from qoslab.errors import ConfigError, QoslabError
from qoslab.stats.seqsim import appendix_a, design, simulate, stop_on_significance, synthetic
from qoslab.stats.sequential import evaluate, mean_half_width, recovery_half_width, t_quantile, t_sf2, welch
from qoslab.stats.stopping import check, stopping_summary
from qoslab.trials.playbook import StopRule

SEQ = REPO / "playbooks" / "thesis-table5-sequential.yaml"
TABLE5_CSV = shared_or_copy("data/thesis-table5-qos.csv", "analysis/data/thesis-table5-qos.csv")
ROW = {"total_s": 1.2, "checksum": 1, "busy_max_s": None, "valid": 1, "flood_json": None,
       "capture_summary": None, "config_hash": "x", "phases_json": "{}"}


# -- the playbook and the schedule ------------------------------------------------------------

def test_sequential_playbook_loads_and_trials_n_stays_valid():
    pb = load_playbook(SEQ)
    seq = pb.sequential
    assert seq is not None and (seq.min, seq.max, seq.every) == (10, 50, 5)
    assert seq.stop == StopRule(rule="precision", metric="recovery", half_width=0.03)
    assert seq.checkpoints() == [10, 15, 20, 25, 30, 35, 40, 45, 50]
    assert (pb.min_trials, pb.max_trials) == (10, 50)
    fixed = load_playbook(REPO / "playbooks" / "thesis-table5.yaml")
    assert fixed.sequential is None and fixed.trials == fixed.max_trials == fixed.min_trials == 50


def test_bad_sequential_trials_name_file_and_line(tmp_path):
    data = yaml.safe_load(SEQ.read_text())
    p = tmp_path / "pb.yaml"
    for trials, match in (({"min": 20, "max": 10, "stop": {"half_width": 0.1}}, r"pb\.yaml:\d+: trials\.min: min 20"),
                          ({"min": 10, "max": 50, "stop": {"half_width": 0.1, "metric": "median"}}, "trials"),
                          ({"min": 10, "max": 50}, r"trials\.stop"), (1, "trials")):
        p.write_text(yaml.safe_dump({**data, "trials": trials}, sort_keys=False))
        with pytest.raises(ConfigError, match=match):
            load_playbook(p)
    # a recovery rule needs a recovery in the matrix
    p.write_text(yaml.safe_dump({**data, "conditions": data["conditions"][:1] + data["conditions"][2:3]},
                                sort_keys=False))
    with pytest.raises(ConfigError, match=r"pb\.yaml:\d+: trials\.stop\.metric: this matrix has no recovery"):
        load_playbook(p)


def test_fixed_schedule_unchanged_and_sequential_stages_balanced():
    fixed = load_playbook(REPO / "playbooks" / "quick.yaml")
    main = [(c.name, t, False) for c in fixed.conditions for t in range(1, fixed.trials + 1)]
    random.Random(11).shuffle(main)  # the order before sequential stages existed
    assert [(t.condition, t.trial, t.warmup) for t in schedule(fixed, 11) if not t.warmup] == main
    pb = load_playbook(SEQ)
    sched = [t for t in schedule(pb, 11) if not t.warmup]
    assert sched == [t for t in schedule(pb, 11) if not t.warmup] and len(sched) == 200
    for m in pb.sequential.checkpoints():
        first = sched[:m * 4]  # after m trials of every condition: each condition exactly m, trials 1..m
        assert sorted((t.condition, t.trial) for t in first) == sorted((c.name, i) for c in pb.conditions
                                                                        for i in range(1, m + 1))
    assert [t.condition for t in sched[:40]] != [t.condition for t in schedule(pb, 12) if not t.warmup][:40]


# -- the rule ---------------------------------------------------------------------------------

def test_t_distribution_matches_scipy():
    sst = pytest.importorskip("scipy.stats")
    for df in (1.0, 2.5, 9.0, 49.0, 97.3):
        assert t_quantile(0.975, df) == pytest.approx(sst.t.ppf(0.975, df), rel=1e-7)
        for t in (0.1, 1.0, 2.0, 5.0):
            assert t_sf2(t, df) == pytest.approx(2 * sst.t.sf(t, df), rel=1e-7, abs=1e-12)
    a, b = [1.0, 2.0, 3.0, 4.5], [2.0, 3.5, 4.0, 6.0, 7.0]
    d, hw, p = welch(a, b)
    r = sst.ttest_ind(b, a, equal_var=False)
    assert p == pytest.approx(r.pvalue, rel=1e-7) and d == pytest.approx(np.mean(b) - np.mean(a))
    ci = r.confidence_interval(0.95)
    assert hw == pytest.approx((ci.high - ci.low) / 2, rel=1e-7)


def test_rule_on_recovery_and_on_means():
    rng = np.random.default_rng(1)
    data = {"b": rng.normal(1.0, 0.1, 30), "c": rng.normal(20.0, 2.0, 30), "t": rng.normal(1.5, 0.2, 30)}
    hw = recovery_half_width(data["b"], data["c"], data["t"], seed=3)
    assert 0.001 < hw < 0.05 and hw == recovery_half_width(data["b"], data["c"], data["t"], seed=3)
    assert recovery_half_width(data["b"], data["b"] + 0.001, data["t"], seed=3) == math.inf  # no slowdown
    d = evaluate(StopRule(metric="recovery", half_width=0.05), data, [("b", "c", "t")], seed=1)
    assert d.stop and d.n == 30 and set(d.half_widths) == {"recovery of t"}
    assert not evaluate(StopRule(metric="recovery", half_width=hw / 2), data, [("b", "c", "t")], seed=1).stop
    assert not evaluate(StopRule(metric="recovery", half_width=1.0), data, [], seed=1).stop  # nothing to measure
    d = evaluate(StopRule(metric="mean", half_width=0.05), data, [], seed=1)
    assert d.half_widths["mean of c"] == pytest.approx(mean_half_width(data["c"]) / np.mean(data["c"]))
    assert d.stop == all(w <= 0.05 for w in d.half_widths.values())
    assert json.dumps(evaluate(StopRule(metric="recovery", half_width=0.05), {k: v[:1] for k, v in data.items()},
                               [("b", "c", "t")], seed=1).as_json())  # inf is written as null


# -- the runner and the statistics --------------------------------------------------------------

def _folder(tmp_path: Path, trials: dict) -> Path:
    topo = tmp_path / "topo.yaml"
    topo.write_text(ECENET.read_text())
    data = {**yaml.safe_load(SEQ.read_text()), "topology": str(topo), "trials": trials, "seed": 5, "warmup": 1,
            "capture": "off"}
    pfile = tmp_path / "pb.yaml"
    pfile.write_text(yaml.safe_dump(data))
    create(load_playbook(pfile), pfile, tmp_path / "c").close()
    return tmp_path / "c"


def _fake_trials(monkeypatch, means: dict[str, float], sd: float) -> list[int]:
    rng = np.random.default_rng(7)
    ran: list[int] = []

    def fake(env, cond, tdir, due):
        ran.append(int(tdir.name))
        return {**ROW, "elapsed_s": float(max(0.1, rng.normal(means[cond.name], sd * means[cond.name])))}

    monkeypatch.setattr(attempts_mod, "run_trial", fake)
    return ran


class _NoTimeWait:
    """A host's executor as the runner's TIME-WAIT check sees it: no socket in TIME-WAIT."""

    def run(self, argv, timeout=60.0, check=True):
        return SimpleNamespace(stdout="", returncode=0)


def _env(r: Runner) -> TrialEnv:
    return TrialEnv(pb=r.pb, topo=r.topo, out=r.out, testbed=None, executor_of=lambda h: _NoTimeWait(),
                    switch=None, flood=None, profiles=r.profiles)  # type: ignore[arg-type]


MEANS = {"no congestion fifo": 1.3, "congestion fifo": 20.0, "no congestion thesis": 1.3, "congestion thesis": 2.0}


def test_runner_stops_all_conditions_together_and_skips_the_rest(tmp_path, monkeypatch):
    folder = _folder(tmp_path, {"min": 6, "max": 20, "every": 3, "stop": {"metric": "recovery", "half_width": 0.05}})
    ran = _fake_trials(monkeypatch, MEANS, 0.15)
    skipped: list[int] = []
    r = Runner(folder, on_skip=skipped.extend, stop_check=check)
    r._loop(_env(r))
    with Store(folder / "trials.sqlite") as st:
        counts = st.counts()
        meta = st.meta("sequential")
        n = meta["stopped"]["n"]
        assert n in (6, 9, 12, 15, 18) and counts == {"done": 4 + 4 * n, "skipped": 4 * (20 - n)}
        assert sorted(skipped) == sorted(r.idx for r in st.trials(status="skipped")) and len(ran) == 4 + 4 * n
        assert {c: len(v) for c, v in st.done_times().items()} == {c: n for c in MEANS}  # balanced
        assert st.pending() == []  # a resume runs nothing
        assert [c["n"] for c in meta["checks"]][-1] == n and meta["checks"][-1]["stop"]
        assert all(not c["stop"] for c in meta["checks"][:-1])
        summary = stopping_summary(r.pb, st)
    assert summary["stopped"]["n"] == n
    for c in MEANS:
        assert summary["conditions"][c]["trials"] == n
        assert summary["conditions"][c]["stopped_by"].startswith("precision of the recovery")
    ran.clear()
    r2 = Runner(folder, stop_check=check)
    r2._loop(_env(r2))
    assert ran == []


def test_a_sequential_campaign_needs_the_statistics_stopping_check(tmp_path):
    """The runner owns the interface (StopCheck) and the caller hands it the statistics' check:
    without one a sequential campaign is refused before anything is written or started."""
    folder = _folder(tmp_path, {"min": 4, "max": 8, "every": 2, "stop": {"metric": "mean", "half_width": 0.1}})
    before = (folder / "trials.sqlite").read_bytes()
    with pytest.raises(QoslabError, match="is sequential: its runner needs the statistics' stopping check"):
        Runner(folder)
    assert (folder / "trials.sqlite").read_bytes() == before


def test_a_rule_that_never_holds_runs_to_max_and_says_so(tmp_path, monkeypatch):
    folder = _folder(tmp_path, {"min": 4, "max": 8, "every": 2, "stop": {"metric": "mean", "half_width": 0.0001}})
    _fake_trials(monkeypatch, MEANS, 0.2)
    r = Runner(folder, stop_check=check)
    r._loop(_env(r))
    with Store(folder / "trials.sqlite") as st:
        assert st.counts() == {"done": 4 + 4 * 8}
        assert [c["n"] for c in st.meta("sequential")["checks"]] == [4, 6]
        s = stopping_summary(r.pb, st)
    assert s["stopped"] is None and s["conditions"]["congestion fifo"]["stopped_by"].startswith("max: 8")


def test_statistics_treat_skipped_trials_as_absent(tmp_path, monkeypatch):
    import qoslab.stats.campaign as stats_mod
    from qoslab.stats import campaign_stats

    folder = _folder(tmp_path, {"min": 6, "max": 20, "every": 3, "stop": {"metric": "recovery", "half_width": 0.05}})
    _fake_trials(monkeypatch, MEANS, 0.15)
    r = Runner(folder, stop_check=check)
    r._loop(_env(r))
    monkeypatch.setattr(stats_mod, "run_stats", lambda pb, csv, out: (out.write_text("{}"), {})[1])
    monkeypatch.setattr(stats_mod, "censoring_stats", lambda pb, st, f, out=None: {})
    with Store(folder / "trials.sqlite") as st:
        stats = campaign_stats(r.pb, st, folder)
        n = st.meta("sequential")["stopped"]["n"]
    assert stats["stopping"]["stopped"]["n"] == n
    assert json.loads((folder / "stats.json").read_text())["stopping"]["conditions"]["congestion fifo"]["trials"] == n
    lines = (folder / "trials.csv").read_text().splitlines()
    assert len(lines) == 1 + 4 * n  # only done trials: the skipped ones are absent


# -- the simulation ---------------------------------------------------------------------------

SCENARIOS = [("synthetic", "recovery", 0.01), ("synthetic", "mean", 0.12), ("appendix", "recovery", 0.2),
             ("appendix", "mean", 0.08)]


@pytest.mark.parametrize("scenario, metric, half_width", SCENARIOS)
def test_precision_stopping_keeps_type1_error_and_coverage(scenario, metric, half_width):
    """1000 seeded campaigns per case; the half-widths make the rule stop anywhere from min to max."""
    sc = synthetic() if scenario == "synthetic" else appendix_a(TABLE5_CSV)
    res = simulate(sc, design(metric, half_width), campaigns=1000, seed=0, b=200)
    assert 0.3 < res.stopped_early < 1.0 and 10 < res.mean_trials < 50  # the rule did decide
    assert res.type1 <= 0.07, res
    assert res.coverage_null >= 0.93 and res.coverage_effect >= 0.92, res
    assert res.coverage_effect >= res.fixed_coverage_effect - 0.015, res  # as the fixed design, within noise


def test_the_simulation_sees_inflation_when_a_test_is_the_stopping_rule():
    res = simulate(appendix_a(TABLE5_CSV), design("mean", 0.08), campaigns=400, seed=0, stopper=stop_on_significance)
    assert res.type1 > 0.1 and res.fixed_type1 < 0.08, res
