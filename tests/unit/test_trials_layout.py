"""qoslab.trials.layout: the paths of a trial's files, against the committed campaign folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qoslab.stats.calls import manager_calls_path
from qoslab.trials.layout import trial_dir, workload_dir, workload_result
from qoslab.trials.store import Store

RESULTS = Path(__file__).parents[2] / "docs" / "results"


def test_paths_are_the_zero_padded_index():
    f = Path("/c")
    assert trial_dir(f, 7) == Path("/c/trials/0007") and trial_dir(f, 12345) == Path("/c/trials/12345")
    assert workload_dir(f, 7) == Path("/c/trials/0007/workload")
    assert workload_result(f, 7) == Path("/c/trials/0007/workload/workload-result.json")
    assert manager_calls_path(f, 7) == Path("/c/trials/0007/workload/workload-calls.jsonl")


def test_a_committed_campaigns_results_are_where_the_layout_says():
    camp = RESULTS / "thesis-faithful-cpu-onmachine-c1-share-20261129"
    with Store(camp / "trials.sqlite", readonly=True) as st:
        rows = st.trials(counted=True)
    kept = [r for r in rows if workload_result(camp, r.idx).exists()]
    assert kept, "the archive keeps some trials' workload folders"
    for r in kept:
        res = json.loads(workload_result(camp, r.idx).read_text())
        assert res["valid"] and res["rays"] == 2  # this campaign's workload (2 rays per pixel)
        assert r.elapsed_s == pytest.approx(res["elapsed_render_s"], abs=1e-3), r.idx  # that trial's own
