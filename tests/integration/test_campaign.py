"""A real (tiny) campaign on its own testbed: killed with SIGKILL at random points and resumed, it
ends with every trial done exactly once; then trials.csv and stats.json exist."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import yaml

from qoslab.campaign import ANALYSIS_JAR
from qoslab.testbed import Testbed, list_namespaces
from qoslab.topology import load_topology

from .conftest import free_port, unique_name

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")


def _rows(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT idx, status, finished, attempts FROM trials ORDER BY idx").fetchall()
    except sqlite3.OperationalError:  # the campaign is being made
        return []
    finally:
        con.close()


def test_kill_9_at_random_points_then_resume_runs_each_trial_once(tmp_path, ecenet_data):
    name = unique_name("q")
    topo = {**ecenet_data, "name": name}
    topo["switch"]["management"]["port"] = free_port()
    tfile = tmp_path / "topo.yaml"
    tfile.write_text(yaml.safe_dump(topo))
    pb = {"name": "tiny", "topology": str(tfile), "device": "testbed",
          "workload": {"hosts": ["jp-1", "jp-2"], "size": "A", "frames": 1},
          "conditions": [{"name": "fifo", "congestion": False, "profile": "fifo"},
                         {"name": "thesis", "congestion": False, "profile": "thesis"}],
          "trials": 3, "order": "interleaved", "seed": 7, "capture": "first"}
    pfile = tmp_path / "tiny.yaml"
    pfile.write_text(yaml.safe_dump(pb))
    folder = tmp_path / "campaign"
    db = folder / "trials.sqlite"
    rng = random.Random(1)
    finished_before: dict[int, float] = {}
    try:
        args = [sys.executable, "-m", "qoslab", "campaign", "run", str(pfile), "--out", str(folder)]
        for _kill in range(3):
            p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # let it get some way: 0-2 trials done, then SIGKILL at a random moment
            target = len([r for r in (_rows(db) if db.exists() else []) if r[1] == "done"]) + rng.randint(0, 1)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and p.poll() is None:
                if db.exists() and len([r for r in _rows(db) if r[1] == "done"]) >= target:
                    time.sleep(rng.uniform(0.0, 2.5))
                    break
                time.sleep(0.1)
            p.send_signal(signal.SIGKILL)
            p.wait()
            for idx, status, fin, *_ in _rows(db):
                if status == "done":
                    assert finished_before.setdefault(idx, fin) == fin  # a finished trial is never re-run
            args = [sys.executable, "-m", "qoslab", "campaign", "run", "--resume", str(folder)]
        r = subprocess.run(args, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        rows = _rows(db)
        assert len(rows) == 6 and all(r[1] == "done" for r in rows)
        for idx, fin in finished_before.items():
            assert dict((r[0], r[2]) for r in rows)[idx] == fin
        # capture "first": one captured trial per condition, however often the campaign was resumed
        con = sqlite3.connect(db)
        captured = [c for (c,) in con.execute("SELECT condition FROM trials WHERE capture_summary IS NOT NULL")]
        con.close()
        assert sorted(captured) == ["fifo", "thesis"], captured
        # switch evidence: per-port deltas of the workload's ports; thesis sends the pairs as DSCP 40
        con = sqlite3.connect(db)
        ev = [(c, json.loads(j)) for c, j in con.execute("SELECT condition, switch_json FROM trials")]
        con.close()
        assert all(set(e["ports"]) | set(e["reset"]) == {"Gi1/0/1", "Gi1/0/2"} for _, e in ev), ev
        for c, e in ev:
            out = {d for p in e["ports"].values() for d in p["dscp_out"]}
            assert out == ({"40"} if c == "thesis" else {"0"}), (c, e)
        csv = (folder / "trials.csv").read_text().splitlines()
        assert csv[0] == "condition,trial,elapsed_s" and len(csv) == 7
        stats = json.loads((folder / "stats.json").read_text())
        assert set(stats["conditions"]) == {"fifo", "thesis"} and stats["conditions"]["fifo"]["n"] == 3
        assert stats["comparisons"][0]["a"] == "fifo"
        assert json.loads((folder / "provenance.json").read_text())["seed"] == 7
        figs = json.loads((folder / "figures.json").read_text())  # the report found the captures
        assert {"fig-classes.png", "fig-bitrate-thesis.png"} <= set(figs), figs
    finally:
        Testbed(load_topology(tfile)).down()
    assert not [n for n in list_namespaces() if n.startswith(f"qsl-{name}")]
