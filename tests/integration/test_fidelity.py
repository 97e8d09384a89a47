"""The fidelity monitor on real trials (issue 25): a congested trial while an outside CPU hog takes
both cores is judged invalid with the reason, the same trial without it ok; a trial at a link rate
this machine cannot forward (200 Mbit/s floods) is flagged by the ports' departure rate or the
flood's achieved rate. Each case is a short campaign on its own testbed (built and removed by the
runner), one congested-fifo condition, two trials."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from qoslab.campaign import Runner, Store, load_playbook
from qoslab.campaign.folder import create
from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed.procs import cmdline

from .conftest import netns_snapshot

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")
REPO = Path(__file__).resolve().parents[2]


def _campaign(tmp_path: Path, topo: Path, name: str, flood: Path = REPO / "traffic-gen" / "campaign-flood.yaml") -> list[dict]:
    pb_file = tmp_path / f"{name}.yaml"
    pb_file.write_text(yaml.safe_dump({
        "name": name, "topology": str(topo), "device": "virtual",
        "workload": {"hosts": ["jp-1", "jp-2", "jp-3", "jp-4"], "size": "A", "frames": 1, "rows_per_call": 5},
        "flood": str(flood),
        "conditions": [{"name": "congestion fifo", "congestion": True, "profile": "fifo"}],
        "trials": 2, "warmup": 0, "capture": "off", "retries": 1, "trial_timeout_s": 120, "seed": 1}))
    folder = tmp_path / name
    create(load_playbook(pb_file), pb_file, folder).close()
    Runner(folder).run().close()
    with Store(folder / "trials.sqlite", readonly=True) as st:
        rows = st.trials()
    return [{"status": r.status, "fidelity": r.get("fidelity"), "reasons": json.loads(r.get("fidelity_reasons") or "[]"),
             **{k: r.get(k) for k in ("fidelity_outside_cores", "fidelity_port_util", "fidelity_flood_ratio",
                                      "fidelity_samples", "fidelity_idle_median")}} for r in rows]


def _outside_hog() -> int:
    """A busy loop that is not this process's descendant (the monitor counts this process's own
    children as the campaign's, not as outside load): started through a shell that exits, so it
    is re-parented; returns its PID."""
    out = subprocess.run(["sh", "-c", f"{sys.executable} -c 'while True: pass' qoslab-test-hog >/dev/null 2>&1 & "
                                      "echo $!"], capture_output=True, text=True, check=True).stdout
    return int(out.strip())


def _checks(row: dict) -> set[str]:
    return {r["check"] for r in row["reasons"]}


def test_a_cpu_hog_makes_the_trial_invalid_and_without_it_the_trial_is_not(tmp_path, topo_file):
    before = netns_snapshot()
    topo = topo_file("f")
    clean = _campaign(tmp_path, topo, "clean")
    hogs = [_outside_hog() for _ in range(2)]  # both cores
    try:
        hogged = _campaign(tmp_path, topo, "hogged")
    finally:
        for pid in hogs:  # by PID, never by name
            if "qoslab-test-hog" in " ".join(cmdline(pid)):
                os.kill(pid, signal.SIGKILL)
    print("clean", clean, "\nhogged", hogged)
    assert all(r["status"] == "done" for r in clean + hogged)
    for r in hogged:
        assert r["fidelity"] == "invalid" and "outside_cores" in _checks(r), r
        assert r["fidelity_outside_cores"] > 0.25
        assert any("processes outside the testbed took CPU" in x["text"] for x in r["reasons"])
    others = [r for r in clean if r["fidelity"] != "ok"]
    if others and all(_checks(r) == {"outside_cores"} for r in others):
        pytest.skip(f"someone else's load on this shared machine made a clean trial invalid: {others}")
    # what the hog changes is the outside-load check: without it no clean trial is invalid or names
    # outside load. A clean trial may still be 'degraded' by the sender's pacing on this noisy shared
    # machine (CI of 2026-11-27: pacing_error 0.1022 against the 0.1 threshold, outside cores 0.0)
    for r in clean:
        assert r["fidelity"] in ("ok", "degraded") and "outside_cores" not in _checks(r), clean
    assert any(r["fidelity"] == "ok" for r in clean) or all(_checks(r) == {"pacing_error"} for r in clean), clean
    assert netns_snapshot() == before


def test_a_rate_this_machine_cannot_forward_is_flagged(tmp_path, topo_file):
    topo = topo_file("r", link={"rate": "200Mbit", "burst_ms": 2.5, "offloads": False})
    # busy-waiting -poll senders (kernel pacing, the default, may well forward 200 Mbit/s here)
    flood = yaml.safe_load((REPO / "traffic-gen" / "campaign-flood.yaml").read_text())
    (tmp_path / "poll-flood.yaml").write_text(yaml.safe_dump({**flood, "pacing": "poll"}))
    rows = _campaign(tmp_path, topo, "fast", tmp_path / "poll-flood.yaml")
    print(rows)
    assert rows and all(r["status"] == "done" for r in rows)
    for r in rows:
        assert r["fidelity"] == "invalid", r
        assert _checks(r) & {"port_utilisation", "flood_ratio"}, r
