"""Censored attempts: which failed attempts have a right-censored render time (a call timeout),
their lower bounds, and the statistics with them (stats-censored.json) from a campaign folder
(no testbed: trial rows and attempt folders are written as a run leaves them)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import ECENET, REPO
from qoslab.campaign import Store, create, load_campaign_playbook, load_playbook
from qoslab.errors import QoslabError
from qoslab.stats import ANALYSIS_JAR, campaign_stats
from qoslab.stats.censoring import censored_attempts, censoring_bound

OLD_READ_TIMEOUT = "worker jp-3 (198.18.0.3): render failed: SocketTimeoutException: Read timed out"


@pytest.mark.parametrize("result, bound", [
    # managers that print call_timeout decide themselves; the bound is the larger of timeout and elapsed
    ({"valid": False, "error": "x", "call_timeout": True, "elapsed_render_s": 151.5, "call_timeout_s": 120}, 151.5),
    ({"valid": False, "error": "x", "call_timeout": True, "elapsed_render_s": 12.0}, 120.0),
    ({"valid": False, "error": "x", "call_timeout": True, "failed_after_s": 131.0}, 131.0),  # matmul head
    ({"valid": False, "error": OLD_READ_TIMEOUT, "call_timeout": False, "elapsed_render_s": 30.0}, None),
    # older managers: the error text (as in docs/results/thesis-table5-20261123's attempt folders)
    ({"mode": "rmi", "valid": False, "error": OLD_READ_TIMEOUT}, 120.0),
    ({"valid": False, "error": "worker jp-2 (198.18.0.2): render did not finish within 480.0 s"}, 480.0),
    ({"valid": False, "error": "worker jp-2 (198.18.0.2): lookup/prepare at registry port 1099 did not finish "
                               "within 120.0 s"}, None),
    ({"valid": False, "error": "worker jp-2 (198.18.0.2): render failed: SocketTimeoutException: connect timed out"},
     None),
    ({"valid": False, "error": "worker jp-4 (198.18.0.4): render failed: ConnectException: Connection refused"}, None),
    ({"valid": False, "checksum": 5}, None),
    ({"valid": True, "elapsed_render_s": 200.0}, None),
    ({"valid": None, "error": OLD_READ_TIMEOUT}, None),
])
def test_censoring_bound(result, bound):
    assert censoring_bound(result, 120.0) == bound


def _campaign(tmp_path: Path, **extra) -> Path:
    """A 2-condition x 3-trial campaign (plus one warm-up trial) with every trial done."""
    topo = tmp_path / "topo.yaml"
    topo.write_text(ECENET.read_text())
    prof = tmp_path / "fifo.yaml"
    prof.write_text((REPO / "qos-profiles" / "fifo.yaml").read_text())
    data = {"name": "t", "topology": str(topo), "warmup": 1,
            "workload": {"hosts": ["jp-1", "jp-2"], "size": "A", "timeout_s": 100},
            "conditions": [{"name": "base", "congestion": False, "profile": str(prof)},
                           {"name": "slow", "congestion": True, "profile": str(prof)}],
            "trials": 3, "seed": 3, **extra}
    pfile = tmp_path / "pb.yaml"
    pfile.write_text(yaml.safe_dump(data))
    create(load_playbook(pfile), pfile, tmp_path / "c").close()
    folder = tmp_path / "c"
    st = Store(folder / "trials.sqlite")
    for row in st.trials():
        idx, cond = row.idx, row.condition
        st.record(idx, status="done", valid=1, elapsed_s=(50.0 + idx if cond == "slow" else 1.0 + idx / 10),
                  attempts=1)
    st.close()
    return folder


def _attempt(folder: Path, name: str, result: dict | None) -> None:
    d = folder / "trials" / name / "workload"
    d.mkdir(parents=True)
    if result is not None:
        (d / "workload-result.json").write_text(json.dumps(result))


def _idx(folder: Path, condition: str, warmup: int = 0) -> list[int]:
    st = Store(folder / "trials.sqlite")
    out = [r.idx for r in st.trials(condition=condition, warmup=bool(warmup))]
    st.close()
    return out


def test_censored_attempts_come_from_the_attempt_folders(tmp_path):
    folder = _campaign(tmp_path)
    slow, base = _idx(folder, "slow"), _idx(folder, "base")
    warm = (_idx(folder, "slow", 1) + _idx(folder, "base", 1))[0]
    _attempt(folder, f"{slow[0]:04d}.attempt-1", {"valid": False, "error": OLD_READ_TIMEOUT})
    _attempt(folder, f"{slow[0]:04d}.attempt-2", {"valid": False, "error": "x", "call_timeout": True,
                                                  "elapsed_render_s": 130.25})
    _attempt(folder, f"{slow[1]:04d}.attempt-1", None)  # killed with its run: no result, not censored
    _attempt(folder, f"{base[0]:04d}.attempt-1", {"valid": False, "error": "render failed: ConnectException: x"})
    _attempt(folder, f"{warm:04d}.attempt-1", {"valid": False, "error": OLD_READ_TIMEOUT})  # warm-up: not counted
    _attempt(folder, f"{slow[2]:04d}.attempt-1", {"valid": False, "error": OLD_READ_TIMEOUT})
    (folder / "trials" / f"{slow[2]:04d}.attempt-1" / "workload" / "workload-result.json").write_text("{garbage")
    pb = load_campaign_playbook(folder)
    st = Store(folder / "trials.sqlite")
    got = censored_attempts(pb, st, folder)
    st.close()
    assert [(a.idx, a.condition, a.attempt, a.bound_s) for a in got] == [
        (slow[0], "slow", 1, 100.0), (slow[0], "slow", 2, 130.25)]


@pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")
def test_stats_with_censored_attempts_at_their_bounds(tmp_path):
    folder = _campaign(tmp_path)
    slow = _idx(folder, "slow")
    (folder / "stats-censored.json").write_text("stale")
    pb = load_campaign_playbook(folder)
    st = Store(folder / "trials.sqlite")
    campaign_stats(pb, st, folder)  # nothing censored yet: a record of none, no sensitivity, stale file removed
    cens = json.loads((folder / "censoring.json").read_text())
    assert cens["conditions"]["slow"] == {"successful": 3, "censored": 0, "call_timeout_s": 100.0,
                                          "bound_min_s": None, "bound_max_s": None}
    assert not (folder / "stats-censored.json").exists()

    _attempt(folder, f"{slow[1]:04d}.attempt-1", {"valid": False, "error": OLD_READ_TIMEOUT})
    _attempt(folder, f"{slow[1]:04d}.attempt-2", {"valid": False, "error": "x", "call_timeout": True,
                                                  "elapsed_render_s": 140.5})
    stats = campaign_stats(pb, st, folder)
    st.close()
    cens = json.loads((folder / "censoring.json").read_text())
    assert cens["conditions"]["slow"]["censored"] == 2 and cens["conditions"]["base"]["censored"] == 0
    assert (cens["conditions"]["slow"]["bound_min_s"], cens["conditions"]["slow"]["bound_max_s"]) == (100.0, 140.5)
    plain = pd.read_csv(folder / "trials.csv")
    with_c = pd.read_csv(folder / "trials-censored.csv")
    assert len(with_c) == len(plain) + 2
    sc = json.loads((folder / "stats-censored.json").read_text())
    want = [*plain[plain.condition == "slow"].elapsed_s, 100.0, 140.5]
    assert sc["conditions"]["slow"]["n"] == 5 and sc["conditions"]["slow"]["mean"] == pytest.approx(sum(want) / 5)
    assert sc["conditions"]["base"] == stats["conditions"]["base"]
    assert stats["conditions"]["slow"]["n"] == 3  # the design's n stays in stats.json


def test_campaign_eta_weighs_each_condition_by_its_own_trial_time():
    from qoslab.cli.campaign import eta_s

    assert eta_s(["a", "b"], {}, {"a": [1.0]}) is None  # nothing measured in this run yet
    wall = {"fast": [1.5, 2.5], "slow": [90.0]}
    # 3 slow trials at 90 s and 10 fast ones at 2 s: 290 s (one mean over all would say 13 x 31.3 s = 407 s)
    assert eta_s(["slow"] * 3 + ["fast"] * 10, wall, {}) == pytest.approx(290.0)
    # a condition not yet run in this run: its earlier render times plus this run's overhead
    assert eta_s(["new"], wall, {"new": [10.0, 20.0]}, overhead_s=1.5) == pytest.approx(16.5)
    # nothing known about it: this run's mean wall time
    assert eta_s(["other"], wall, {}) == pytest.approx(94.0 / 3)


@pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")
@pytest.mark.parametrize("censor", [True, False])
def test_censor_timeouts_counts_a_timed_out_trial_at_its_bound(tmp_path, censor):
    folder = _campaign(tmp_path, retries=0, censor_timeouts=censor)
    slow = _idx(folder, "slow")
    st = Store(folder / "trials.sqlite")
    st.record(slow[1], status="failed", valid=0, elapsed_s=None, attempts=1)
    _attempt(folder, f"{slow[1]:04d}", {"valid": False, "error": "x", "call_timeout": True, "failed_after_s": 100.2})
    pb = load_campaign_playbook(folder)
    if not censor:  # as before: a failed trial leaves the campaign incomplete
        with pytest.raises(QoslabError, match="campaign incomplete"):
            campaign_stats(pb, st, folder)
        st.close()
        return
    stats = campaign_stats(pb, st, folder)
    assert stats["censored"]["trials"] == 1 and stats["censored"]["conditions"] == {"slow": {"n": 1, "bounds_s": [100.2]}}
    assert stats["source"].endswith("trials-censored.csv") and stats["conditions"]["slow"]["n"] == 3
    done = [50.0 + i for i in (slow[0], slow[2])]
    assert stats["conditions"]["slow"]["mean"] == pytest.approx((sum(done) + 100.2) / 3)
    st.record(slow[2], status="failed", valid=0, elapsed_s=None, attempts=1)  # failed without a timeout
    _attempt(folder, f"{slow[2]:04d}", {"valid": False, "error": "render failed: ConnectException: x"})
    with pytest.raises(QoslabError, match="campaign incomplete"):
        campaign_stats(pb, st, folder)
    st.close()
