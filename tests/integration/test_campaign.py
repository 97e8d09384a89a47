"""The chaos test (issue 14): a real campaign with congestion on its own testbed is SIGKILLed at 10
seeded random moments (during a switch push, the flood's start, the workload, the capture, and
between a trial's end and its commit) and resumed each time. After every kill no D-ITG, JVM or
capture process is left in the testbed's hosts (the parent-death signal) and none is older than
its bounded lifetime; at the end there are exactly N valid trials per condition, none run twice,
killed attempts counted as no failure, one provenance segment per run; ``testbed up`` ends
processes a run left behind; after ``testbed down`` nothing is left."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qoslab.campaign.trialplan import LIFETIME_MARGIN_S
from qoslab.executors.local import NETNS_MARKER
from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed import Testbed, list_namespaces
from qoslab.testbed.procs import cmdline, pid_alive
from qoslab.testbedplan import span_namespace, vswitch_dir
from qoslab.topology import load_topology

from .campaign_helpers import TIMEOUT_S, N, chaos_files, kill_run, trial_procs, trial_rows
from .conftest import counted_n, netns_snapshot, unique_name

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")

KILLS = 10
PHASES = ["push", "flood", "workload", "capture", "commit"]


def test_sigkill_at_random_moments_then_resume_gives_exactly_n_trials(tmp_path):
    t_start = time.monotonic()
    name = unique_name("c")
    before_ns, before_links = netns_snapshot()
    # a trial the fidelity monitor judges invalid is not run again (issue 53): on this 2-core
    # machine the poll-paced 1.1x flood offers 0.95 of the link where the monitor wants 0.99: a run
    # here finished no trial between its 10 kills (every kill landed in a rerun of trial 0) and ran
    # 5 of the final resume's 6 trials 3 times (retry_invalid, within retries: 2). What this test
    # proves is kill and resume (now trials finish between kills, so "none run twice" is checked),
    # and the statistics' count of what the monitor left out (counted_n) stays checked. Measured:
    # 62.1 s in the serial lane (93 s in a clean clone's make test before)
    tfile, pfile = chaos_files(tmp_path, name, fidelity={"retry_invalid": False})
    tb = Testbed(load_topology(tfile))
    folder = tmp_path / "campaign"
    db = folder / "trials.sqlite"
    rng = random.Random(14)
    plan = PHASES * 2
    rng.shuffle(plan)
    bound = TIMEOUT_S + LIFETIME_MARGIN_S
    done_at: dict[int, float] = {}
    leftovers_seen = []
    try:
        args = ["campaign", "run", str(pfile), "--out", str(folder)]
        for k, phase in enumerate(plan):
            # some progress between kills: three kills wait for the phase's second arrival (every
            # trial floods, captures, runs the workload and commits; the first trial of a run pushes)
            occurrence = 2 if k in (2, 5, 8) and phase != "push" else 1
            r = kill_run(args, phase, occurrence, seed=100 + k)
            assert r.returncode == -9, f"kill {k} ({phase}) did not happen: {r.stdout[-1500:]} {r.stderr[-1500:]}"
            # nothing a trial started outlives the runner (parent-death signal), let alone its lifetime
            deadline = time.monotonic() + 10
            while (left := trial_procs(tb)) and time.monotonic() < deadline:
                assert all(age is None or age < bound for _, age in left.values()), left
                time.sleep(0.2)
            leftovers_seen.append((phase, trial_procs(tb)))
            assert not trial_procs(tb), f"after the kill during {phase}: {trial_procs(tb)}"
            for idx, _c, _t, status, fin, *_ in trial_rows(db):
                if status == "done":
                    assert done_at.setdefault(idx, fin) == fin, f"trial {idx} ran again after it was done"
            args = ["campaign", "run", "--resume", str(folder)]
        # processes a run left behind (here: started by hand with the marker the hosts' executors
        # give theirs, no parent-death signal) are ended by the next `testbed up` when no campaign
        # holds the testbed; the operator's own process there (no marker) is not
        strays = [subprocess.Popen(["ip", "netns", "exec", ns, "sleep", "600"], start_new_session=True,
                                   env={**os.environ, NETNS_MARKER: ns})
                  for ns in (tb.namespace("jp-2"), span_namespace(name))]
        operators = subprocess.Popen(["ip", "netns", "exec", tb.namespace("jp-2"), "sleep", "600"],
                                     start_new_session=True)
        time.sleep(0.3)
        up = subprocess.run([sys.executable, "-m", "qoslab", "testbed", "up", "-t", str(tfile)], capture_output=True,
                            text=True, timeout=60)
        assert up.returncode == 0 and "ended 2 processes" in up.stdout, up.stdout + up.stderr
        for s in strays:
            s.wait(5)
        assert operators.poll() is None, "`testbed up` ended a process qoslab did not start"
        operators.kill()
        operators.wait()
        switch_pid = json.loads(tb.state_file.read_text())["switch_pid"]  # the campaign built the testbed:
        # its last run takes it down again
        # the final, undisturbed resume finishes the campaign, given as a folder relative to the
        # working directory as `make run` gives it (results/campaigns/...)
        r = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "run", "--resume", folder.name],
                           capture_output=True, text=True, timeout=600, cwd=folder.parent)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        rows = trial_rows(db)
        assert len(rows) == 2 * N and all(row[3] == "done" and row[7] == 1 for row in rows), rows
        for idx, fin in done_at.items():
            assert dict((row[0], row[4]) for row in rows)[idx] == fin
        per = {}
        for _idx, cond, trial, *_ in rows:
            per.setdefault(cond, []).append(trial)
        assert {c: sorted(t) for c, t in per.items()} == {"congestion fifo": [1, 2, 3], "congestion thesis": [1, 2, 3]}
        assert sum(row[6] for row in rows) == 0, "a killed attempt was counted as a failure"
        # switch evidence: per-port deltas of the workload and flood ports; thesis sends the pairs as DSCP 40
        con = sqlite3.connect(db)
        ev = [(c, json.loads(j)) for c, j in con.execute("SELECT condition, switch_json FROM trials")]
        con.close()
        assert all(set(e["ports"]) | set(e["reset"]) == {"Gi1/0/1", "Gi1/0/2", "Gi1/0/3"} for _, e in ev), ev
        for c, e in ev:
            out = {d for p in e["ports"].values() for d in p["dscp_out"]}
            assert ("40" in out) if c == "congestion thesis" else (out == {"0"}), (c, e)
        stats = json.loads((folder / "stats.json").read_text())
        want = counted_n(stats, N)  # N per condition, less the trials the fidelity monitor left out
        assert set(want) == {"congestion fifo", "congestion thesis"}
        assert {c: d["n"] for c, d in stats["conditions"].items()} == want
        csv = (folder / "trials.csv").read_text().splitlines()
        assert csv[0] == "condition,trial,elapsed_s" and len(csv) == 1 + sum(want.values())
        assert len({tuple(l.split(",")[:2]) for l in csv[1:]}) == len(csv) - 1  # no duplicated trial
        if sum(want.values()) < 2 * N:  # the excluded ones are in the second set: every trial, once
            every = (folder / "trials-all.csv").read_text().splitlines()
            assert len(every) == 1 + 2 * N and len({tuple(l.split(",")[:2]) for l in every[1:]}) == 2 * N
        prov = json.loads((folder / "provenance.json").read_text())
        assert len(prov["segments"]) == KILLS + 1 and all(s["qoslab_commit"] for s in prov["segments"])
        assert any(s["interrupted"] for s in prov["segments"])
        shield = Path(f"/sys/fs/cgroup/cpu/qoslab-shield-{tb.topo.name}")  # every run, killed ones too
        if Path("/sys/fs/cgroup/cpu/cpu.shares").exists():
            assert all(s.get("cpu_shield") == str(shield) for s in prov["segments"]), prov["segments"]
        assert list((folder / "trials").glob("*.attempt-*")), "killed attempts keep their own folders"
        assert json.loads((folder / "inputs" / "manifest.json").read_text())["flood"]["ref"] == str(tmp_path / "flood.yaml")
        assert json.loads((folder / "provenance.json").read_text())["seed"] == 7
        figs = json.loads((folder / "figures.json").read_text())  # the report found the captures
        assert "fig-classes.png" in figs, figs
    finally:
        down = subprocess.run([sys.executable, "-m", "qoslab", "testbed", "down", "-t", str(tfile)],
                              capture_output=True, text=True, timeout=60)
    assert down.returncode == 0, down.stderr
    assert not Path(f"/sys/fs/cgroup/cpu/qoslab-shield-{tb.topo.name}").exists()  # the kill -9s left it removable
    assert not [n for n in list_namespaces() if n.startswith(f"qsl-{name}")]
    assert not pid_alive(switch_pid) or "serve" not in cmdline(switch_pid)
    assert not vswitch_dir(name).exists() and not tb.state_file.exists()
    after_ns, after_links = netns_snapshot()
    assert after_ns == before_ns and after_links == before_links
    print(f"chaos test: {KILLS} kills ({', '.join(plan)}), {time.monotonic() - t_start:.0f} s")
