"""The quick factorial playbook (playbooks/factorial-quick.yaml: flood {none, campaign-flood,
incast} x profile {fifo, thesis}) validates, expands into six named conditions and runs on its
own testbed (2 trials per condition, no capture), ending in stats.json with the factorial block:
the thesis profile's recovery under each flood (BCa) and the interval of their difference."""

from __future__ import annotations

import json

import pytest

from qoslab.stats import ANALYSIS_JAR
from qoslab.trafficgen.calibration import Calibration

from .campaign_helpers import shipped_playbook, topology_copy
from .conftest import qoslab, unique_name

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")


def test_factorial_quick_playbook_runs_to_the_factorial_block(tmp_path):
    name = unique_name("f")
    shipped_playbook(tmp_path, "factorial-quick", topology_copy(tmp_path, name), trials=2, warmup=0, seed=11,
                     capture="off", trial_timeout_s=120)
    folder = tmp_path / "campaign"
    try:
        r = qoslab("campaign", "run", str(tmp_path / "pb.yaml"), "--out", str(folder), "--no-report", timeout=900)
        print(r.stdout[-3000:], r.stderr[-3000:])
        assert r.returncode == 0, r.stderr[-2000:] + r.stdout[-2000:]
    finally:
        Calibration.path(name).unlink(missing_ok=True)
    # --no-report: the statistics and results, no notebook (its 10-20 s; test_report renders reports)
    assert not (folder / "report.html").exists() and f"qoslab report {folder}" in " ".join(r.stdout.split())
    stats = json.loads((folder / "stats.json").read_text())
    names = {"none / fifo", "none / thesis", "campaign-flood / fifo", "campaign-flood / thesis", "incast / fifo",
             "incast / thesis"}
    assert {c["name"] for c in stats["conditions"]} == names if isinstance(stats["conditions"], list) \
        else set(stats["conditions"]) == names
    fac = stats["factorial"]
    assert [rec["levels"] for rec in fac["recoveries"]] == [{"flood": "campaign-flood"}, {"flood": "incast"}]
    assert all(rec["profile"] == "thesis" and rec["reference_profile"] == "fifo" for rec in fac["recoveries"])
    (d,) = fac["differences"]
    assert d["a"] == {"flood": "campaign-flood"} and d["b"] == {"flood": "incast"} and d["seed"] == 11
    manifest = json.loads((folder / "inputs" / "manifest.json").read_text())
    assert set(manifest["floods"]) == {"traffic-gen/campaign-flood.yaml", "traffic-gen/incast.yaml"}
    print(json.dumps(fac, indent=1))
