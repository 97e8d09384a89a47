"""Campaigns with ``executor: slurm`` on the embedded testbed's real Slurm cluster (slurmctld on the
head node jp-1, a slurmd in every host namespace, munge, slurmdbd with a private MariaDB; Debian's
slurm-wlm 22.05): the quick campaign's smoke runs as job steps of one allocation qoslab takes
(``sacct`` lists its steps on the right nodes, as the controller's log does; the trials are
valid; no job and no step is left), a ``slurm:`` block the cluster cannot serve is refused
before anything is submitted, and ``testbed down`` leaves no daemon, key, database or namespace."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qoslab.executors.nodes import Nodes
from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed import Testbed
from qoslab.testbed import slurm as tbslurm
from qoslab.testbed.procs import namespace_pids, pid_alive
from qoslab.topology import load_topology

from .campaign_helpers import campaign_topology, shipped_playbook

pytestmark = [pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)"),
              pytest.mark.skipif(not tbslurm.SLURMCTLD.exists() or shutil.which("srun") is None,
                                 reason="slurm-wlm not installed (make setup)")]


def _client(tb: Testbed, *argv: str) -> str:
    prefix, env = tb.slurm_client()
    r = subprocess.run([*prefix, *argv], capture_output=True, text=True, env={**os.environ, **env}, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _queue_empty(tb: Testbed, *argv: str, wait_s: float = 15.0) -> bool:
    """True once ``squeue -h ARGV`` lists nothing (a cancelled job is COMPLETING for a moment)."""
    deadline = time.monotonic() + wait_s
    while _client(tb, "squeue", "-h", *argv).strip():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _steps_by_node(tb: Testbed, job: str) -> dict[str, int]:
    """Node -> steps of ``job`` from the controller's log (``DebugFlags=Steps``)."""
    log = (tbslurm.slurm_dir(tb.topo.name) / "slurmctld.log").read_text()
    counts: dict[str, int] = {}
    for node in re.findall(rf"_slurm_rpc_job_step_create: JobId={job} StepId=\d+ (\S+) usec", log):
        counts[node] = counts.get(node, 0) + 1
    return counts


def _sacct_steps_by_node(tb: Testbed, job: str, wait_s: float = 30.0) -> dict[str, int]:
    """Node -> steps of ``job`` from Slurm's accounting (``sacct -j JOB --format=JobID,NodeList,State
    -P -n``), once the job's own record has ended (slurmctld sends its records to slurmdbd as it goes)."""
    deadline = time.monotonic() + wait_s
    while True:
        rows = [ln.split("|") for ln in _client(tb, "sacct", "-j", job, "--format=JobID,NodeList,State", "-P",
                                                "-n").splitlines() if ln.strip()]
        top = [r for r in rows if r[0] == job]
        if top and top[0][2] not in ("RUNNING", "PENDING", "REQUEUED"):
            break
        assert time.monotonic() < deadline, rows
        time.sleep(0.5)
    counts: dict[str, int] = {}
    for jobid, nodes, _state in rows:
        if re.fullmatch(rf"{job}\.\d+", jobid):
            counts[nodes] = counts.get(nodes, 0) + 1
    return counts


def _accounting_daemons() -> list[str]:
    """mariadbd and slurmdbd processes on this machine (``comm``), whoever started them; a zombie
    (ended, waiting for this machine's PID 1 to reap it) is not one."""
    names = []
    for e in os.scandir("/proc"):
        if e.name.isdigit():
            try:
                comm = Path(e.path, "comm").read_text().strip()
                state = Path(e.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if comm in ("mariadbd", "slurmdbd") and state != "Z":
                names.append(f"{comm} {e.name}")
    return names


def _left_in_hosts(tb: Testbed) -> list[str]:
    keep = tbslurm.keep_pids(tb.topo)
    names = []
    for pids in namespace_pids(tb.host_namespaces()).values():
        for p in pids:
            if p not in keep:
                try:
                    names.append(Path(f"/proc/{p}/comm").read_text().strip())
                except OSError:
                    pass
    return names


def test_quick_campaign_smoke_through_slurm(tmp_path, ecenet_data):
    tfile = campaign_topology(tmp_path, ecenet_data, "q", slurm={"time_limit": "20"})
    tb = Testbed(load_topology(tfile))
    tb.up()  # the topology's slurm: block starts the cluster with the testbed
    daemons = tbslurm.daemon_pids(tb.topo)
    key = tbslurm.slurm_dir(tb.topo.name) / "munge.key"
    folder = tmp_path / "campaign"
    dbconf = tbslurm.slurm_dir(tb.topo.name) / "slurmdbd.conf"
    try:
        assert set(daemons) == {"munged", "mariadbd", "slurmdbd", "slurmctld",
                                *(f"slurmd-{h}" for h in tb.topo.host_names)}
        assert key.stat().st_mode & 0o777 == 0o400
        assert dbconf.stat().st_mode & 0o777 == 0o600  # it holds the testbed's database password
        # the cluster, the account and root registered before slurmctld started
        assocs = _client(tb, "sacctmgr", "-n", "-P", "list", "associations", "format=Cluster,Account,User")
        assert f"{tbslurm.cluster_name(tb.topo.name)}|qoslab|root" in assocs.splitlines(), assocs
        assert _client(tb, "sinfo", "-h", "-o", "%D %T").split() == ["8", "idle"]
        _client(tb, "scontrol", "setdebug", "debug")  # the step lines of DebugFlags=Steps

        # hostile: a partition the cluster does not have -> one line naming the topology's line, no job
        bad = campaign_topology(tmp_path, ecenet_data, "b", name=tb.topo.name, slurm={"partition": "gpu"})
        refused = shipped_playbook(tmp_path, "quick-slurm", bad)
        r = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "run", str(refused),
                            "--out", str(tmp_path / "refused"), "--smoke"], capture_output=True, text=True, timeout=300)
        assert r.returncode != 0
        lines = [ln for ln in r.stdout.splitlines() + r.stderr.splitlines() if "error" in ln.lower()]
        assert any(re.search(r"topology\.yaml:\d+: slurm\.partition: no partition 'gpu' on this cluster \(qoslab\)", ln)
                   for ln in lines), r.stdout[-2000:] + r.stderr[-2000:]
        assert "Traceback" not in r.stderr
        assert _client(tb, "squeue", "-h") == ""  # nothing submitted

        pb = shipped_playbook(tmp_path, "quick-slurm", tfile)
        r = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "run", str(pb), "--out", str(folder),
                            "--smoke"], capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        con = sqlite3.connect(folder / "trials.sqlite")
        rows = con.execute("SELECT condition, status, valid FROM trials").fetchall()
        con.close()
        assert len(rows) == 4 and all(row[1] == "done" and row[2] == 1 for row in rows), rows
        seg = json.loads((folder / "provenance.json").read_text())["segments"][-1]
        facts = seg["slurm"]
        assert facts["allocation"] == "taken" and facts["binding"] == {h: h for h in tb.topo.host_names}
        assert facts["nodes"]["jp-5"]["NodeAddr"] == "198.18.0.5" and int(facts["nodes"]["jp-5"]["CPUTot"]) >= 1
        # Slurm's accounting: steps of the campaign's job on every host's node (workload jp-1..4,
        # flood senders and receivers jp-1..8), none on a node outside the topology; the same
        # steps as the controller's log names
        steps = _sacct_steps_by_node(tb, facts["job_id"])
        assert set(steps) == set(tb.topo.host_names), steps
        assert steps == _steps_by_node(tb, facts["job_id"]), (steps, _steps_by_node(tb, facts["job_id"]))
        flood = json.loads(next(folder.glob("trials/*/flood/flood-result.json")).read_text())
        assert all(f["sent_pps"] > 0 for f in flood["flows"])
        # nothing left: the job released, no step, no process of the run in the hosts
        assert _queue_empty(tb) and _queue_empty(tb, "-s")
        assert _left_in_hosts(tb) == []
    finally:
        tb.down()
    assert not any(pid_alive(p) for p in daemons.values())
    assert _accounting_daemons() == []  # no mariadbd, no slurmdbd left (ours or anyone's)
    assert not tbslurm.slurm_dir(tb.topo.name).exists() and not key.exists() and not dbconf.exists()
    assert tb.existing() == []


def test_kill_9_of_a_runner_leaves_no_step(tmp_path, ecenet_data):
    """The srun clients die with the runner (parent-death signal) and srun ends its step; the
    taken allocation stays for a resume, found again by its name, and is released at its end."""
    tfile = campaign_topology(tmp_path, ecenet_data, "k")
    topo = load_topology(tfile)
    tb = Testbed(topo)
    tb.up()
    tb.slurm_up()
    script = tmp_path / "runner.py"
    script.write_text(f"""
import sys, time
from pathlib import Path
from qoslab.testbed import Testbed
from qoslab.topology import load_topology
from qoslab.executors.nodes import Nodes
tb = Testbed(load_topology({str(tfile)!r}))
nodes = Nodes("slurm", tb.topo, testbed=tb, local_root=Path({str(tmp_path / 'out')!r}), run_id="killed")
for h in ("jp-2", "jp-6"):
    nodes.executor_of(h).start(["sleep", "300"])
print(nodes.executor_of("jp-2").alloc.job_id, flush=True)
time.sleep(300)
""")
    try:
        p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
        job = p.stdout.readline().strip()
        assert job.isdigit()
        assert len(_client(tb, "squeue", "-h", "-s", "-j", job).splitlines()) == 2
        p.send_signal(signal.SIGKILL)
        p.wait()
        assert _queue_empty(tb, "-s", "-j", job, wait_s=20)
        assert "sleep" not in _left_in_hosts(tb)
        # the resume finds the allocation by the run's name and releases it when it is done
        nodes = Nodes("slurm", topo, testbed=tb, local_root=tmp_path / "out", run_id="killed")
        ex = nodes.executor_of("jp-3")
        assert (ex.alloc.job_id, ex.alloc.how) == (job, "found")
        assert ex.run(["hostname"]).stdout.strip() == "jp-3"
        assert ex.end_leftovers() == []
        nodes.close()
        assert _queue_empty(tb)
    finally:
        tb.down()


def _running_in_hosts(tb: Testbed) -> list[str]:
    return [n for n in _left_in_hosts(tb) if n in ("ITGSend", "ITGRecv", "java")]


def test_kill_9_mid_trial_then_resume_in_the_same_allocation(tmp_path, ecenet_data):
    tfile = campaign_topology(tmp_path, ecenet_data, "r", slurm={"time_limit": "20"})
    tb = Testbed(load_topology(tfile))
    tb.up()
    # the thesis profile under the flood: a short trial (the RMI class is served first), so the
    # test does not hang on how long congestion fifo takes on a loaded machine
    pb = shipped_playbook(tmp_path, "quick-slurm", tfile, name="killed", trials=2, warmup=0, capture="off",
                          order="blocked",
                          conditions=[{"name": "congestion thesis", "congestion": True, "profile": "thesis"},
                                      {"name": "no congestion fifo", "congestion": False, "profile": "fifo"}])
    folder = tmp_path / "campaign"
    try:
        log = open(tmp_path / "runner.log", "w")
        p = subprocess.Popen([sys.executable, "-m", "qoslab", "campaign", "run", str(pb), "--out", str(folder)],
                             stdout=log, stderr=log)
        deadline = time.monotonic() + 300
        while not {"ITGSend", "java"} <= set(_running_in_hosts(tb)) and p.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)  # the workload runs under the flood now
        job = _client(tb, "squeue", "-h", "-o", "%i").strip()
        assert job.isdigit() and _client(tb, "squeue", "-h", "-s", "-j", job).strip(), \
            (tmp_path / "runner.log").read_text()[-3000:]
        p.send_signal(signal.SIGKILL)
        p.wait()
        log.close()
        # the srun clients died with the runner and ended their steps: no step, no flood, no JVM
        assert _queue_empty(tb, "-s", "-j", job, wait_s=20)
        deadline = time.monotonic() + 10
        while _running_in_hosts(tb) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _running_in_hosts(tb) == []
        assert _client(tb, "squeue", "-h", "-o", "%i").strip() == job  # the allocation waits for the resume
        r = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "run", "--resume", str(folder)],
                           capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        con = sqlite3.connect(folder / "trials.sqlite")
        rows = con.execute("SELECT condition, status, valid FROM trials").fetchall()
        con.close()
        assert sorted(c for c, s, v in rows if s == "done" and v == 1) == ["congestion thesis"] * 2 + \
            ["no congestion fifo"] * 2, rows
        segs = json.loads((folder / "provenance.json").read_text())["segments"]
        assert [s["slurm"]["job_id"] for s in segs] == [job, job]
        assert [s["slurm"]["allocation"] for s in segs] == ["taken", "found"]
        assert _queue_empty(tb) and _running_in_hosts(tb) == []
    finally:
        tb.down()


def test_campaign_submit_longer_than_its_time_limit_finishes_in_its_follow_ups(tmp_path, ecenet_data):
    """``qoslab campaign submit``: job 1 (time limit 1 minute, Slurm's least) ends at its limit
    mid-campaign (TIMEOUT; the trial it cut is a failed attempt); the follow-up jobs (afterany)
    resume the folder, each in its own allocation, until it is complete; the job that completes
    it cancels the follow-ups after it and, its run ended, ends COMPLETED (the batch step's
    manager survives the campaign's clean-up of the hosts: before, every job stayed RUNNING
    until its limit). ``campaign status`` shows the jobs' states."""
    tfile = campaign_topology(tmp_path, ecenet_data, "s", slurm={"time_limit": "1"})
    tb = Testbed(load_topology(tfile))
    tb.up()
    # longer than the 1-minute limit on any machine: each congested trial waits 8 s for its flood
    # (settle: fixed), 64 s in all; a quiet machine ran all 16 trials without it in job 1 (under 60 s)
    pb = shipped_playbook(tmp_path, "quick-slurm", tfile, name="submitted", trials=8, warmup=0, capture="off",
                          settle="fixed", settle_s=8,
                          conditions=[{"name": "congestion thesis", "congestion": True, "profile": "thesis"},
                                      {"name": "no congestion fifo", "congestion": False, "profile": "fifo"}],
                          baseline="no congestion fifo")
    folder = tmp_path / "campaign"
    try:
        r = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "submit", str(pb), "--out", str(folder),
                            "--follow-ups", "8"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        jobs = re.search(r"jobs ([\d, ]+) \(", r.stdout)
        assert jobs, r.stdout
        ids = jobs.group(1).split(", ")
        assert len(ids) == 9
        assert _queue_empty(tb, wait_s=1200)
        comp = (tbslurm.slurm_dir(tb.topo.name) / "jobcomp.txt").read_text()
        states = dict(re.findall(r"JobId=(\d+) .*?JobState=(\S+)", comp))
        # job 1 ends at its limit; the follow-ups run in turn until the campaign is complete; the job
        # that completes it cancels the ones after it (they would find nothing to run)
        assert set(states) == set(ids) and states[ids[0]] == "TIMEOUT", comp
        ran = [j for j in ids if states[j] != "CANCELLED"]
        assert len(ran) >= 2 and ran == ids[:len(ran)], comp
        outs = {j: (folder / "slurm" / f"job-{j}.out").read_text() for j in ran}
        if len(ran) < len(ids):
            assert f"follow-up job(s) {', '.join(ids[len(ran):])} cancelled" in outs[ran[-1]], outs[ran[-1]][-2000:]
        # a job whose campaign run ended before the limit ends COMPLETED (it stayed RUNNING until its
        # limit while the batch step's manager was ended by the campaign's clean-up of the hosts)
        assert states[ran[-1]] in ("COMPLETED", "TIMEOUT"), comp
        if "report: " in outs[ran[-1]]:
            assert states[ran[-1]] == "COMPLETED", comp
        con = sqlite3.connect(folder / "trials.sqlite")
        rows = con.execute("SELECT condition, status, valid FROM trials").fetchall()
        con.close()
        assert len(rows) == 16 and all(s == "done" and v == 1 for _, s, v in rows), rows
        segs = json.loads((folder / "provenance.json").read_text())["segments"]
        assert segs[0]["slurm"]["job_id"] == ids[0] and len(segs) >= 2
        assert all(s["slurm"]["allocation"] == "given" and s["slurm"]["job_id"] in ids for s in segs)
        assert (folder / "stats.json").exists()
        # a job its time limit ended recorded the trial it cut as a failed attempt, run again after
        # (a limit may also fall between two trials: then that job cut nothing, so a cut is not required;
        # one recorded is the limit's, of a job that ended TIMEOUT)
        cut = [j for j in ran if f"cut by the time limit of Slurm job {j} (TIMEOUT)" in outs[j]]
        assert all(states[j] == "TIMEOUT" for j in cut), (cut, comp)
        st = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "status", str(folder)], capture_output=True,
                            text=True, timeout=120)
        assert st.returncode == 0, st.stdout + st.stderr
        line = next(ln for ln in st.stdout.splitlines() if ln.startswith("slurm jobs: "))
        assert line.startswith(f"slurm jobs: {ids[0]} TIMEOUT") and f"{ran[-1]} {states[ran[-1]]}" in line, line
        assert _left_in_hosts(tb) == []
    finally:
        tb.down()
