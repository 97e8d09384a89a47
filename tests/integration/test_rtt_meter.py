"""The rtt meter on real trials: every trial of a short campaign's baseline condition pings its path
(the manager's host to the first worker's) with all replies; the congested trials do not ping (their
columns stay NULL: the scale model reads the baseline's RTT only, and the pings cost each trial
about 0.3 s)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from qoslab.campaign import Runner, Store, load_playbook
from qoslab.campaign.folder import create
from qoslab.meters.rtt import COUNT
from qoslab.stats import ANALYSIS_JAR

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")
REPO = Path(__file__).resolve().parents[2]


def test_the_baseline_trials_measure_the_paths_rtt(tmp_path, topo_file):
    pb_file = tmp_path / "rtt.yaml"
    pb_file.write_text(yaml.safe_dump({
        "name": "rtt", "topology": str(topo_file("r")), "device": "virtual",
        "workload": {"hosts": ["jp-1", "jp-2", "jp-3", "jp-4"], "size": "A", "frames": 1, "rows_per_call": 5},
        "flood": str(REPO / "traffic-gen" / "campaign-flood.yaml"),
        "conditions": [{"name": "no congestion fifo", "congestion": False, "profile": "fifo"},
                       {"name": "congestion fifo", "congestion": True, "profile": "fifo"}],
        "trials": 2, "warmup": 0, "capture": "off", "retries": 1, "trial_timeout_s": 120, "seed": 1}))
    folder = tmp_path / "rtt"
    create(load_playbook(pb_file), pb_file, folder).close()
    Runner(folder).run().close()
    with Store(folder / "trials.sqlite", readonly=True) as st:
        rows = [r for r in st.trials() if r.status == "done"]
    assert len(rows) == 4
    for r in rows:
        print(r.condition, r.get("base_rtt_ms"), r.get("base_rtt_min_ms"), r.get("base_rtt_replies"))
        if r.condition == "no congestion fifo":  # the baseline (the first condition without congestion)
            assert r.get("base_rtt_replies") == COUNT
            assert 0 < r.get("base_rtt_min_ms") <= r.get("base_rtt_ms") < 20.0
        else:
            assert r.get("base_rtt_replies") is None and r.get("base_rtt_ms") is None
