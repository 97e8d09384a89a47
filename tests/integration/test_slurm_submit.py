"""``executor: slurm`` campaigns that wait on Slurm rather than measure, on the embedded testbed's
Slurm cluster (one for the module: tests/integration/slurm_helpers.py): a runner killed with
SIGKILL leaves no step and its allocation is found again by the resume; ``qoslab campaign
submit`` runs a campaign longer than its job's time limit to its end in follow-up jobs.

Concurrent lane (tests/integration/lanes.py): nothing here runs a flood or the RayTracer, and
nothing asserts a rate or a time. The submitted campaign's workload is a 5 s wait (a ``command``
workload) in two uncongested conditions: what the test proves is Slurm's time limit, the
follow-up jobs and the resume, which a wait exercises as well as a render under the flood did
(issue 53: it was the quick-slurm playbook's RayTracer with an 8 s settle per congested trial,
210 s of the serial lane)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys

import pytest

from qoslab.executors.nodes import Nodes
from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed import slurm as tbslurm
from qoslab.topology import load_topology

from .campaign_helpers import qoslab_ok, shipped_playbook, trial_states
from .slurm_helpers import client, left_in_hosts, module_cluster, queue_empty

pytestmark = [pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)"),
              pytest.mark.skipif(not tbslurm.SLURMCTLD.exists() or shutil.which("srun") is None,
                                 reason="slurm-wlm not installed (make setup)")]

#: The submitted campaign's trial: wait 5 s, then the result line of the command contract
#: (src/qoslab/README.md, "Your own workload"). No braces: they would be template fields.
WAIT_5_S = ("python3 -c \"import json, time; time.sleep(5); "
            "print(json.dumps(dict(elapsed_s=5.0, valid=True)))\"")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One testbed and Slurm cluster for the module; after it none of its daemons, its folder
    (key, database) nor a namespace is left."""
    yield from module_cluster(tmp_path_factory.mktemp("slurm"), "u")


def test_kill_9_of_a_runner_leaves_no_step(tmp_path, cluster):
    """The srun clients die with the runner (parent-death signal) and srun ends its step; the
    taken allocation stays for a resume, found again by its name, and is released at its end."""
    tb = cluster.tb
    tfile = cluster.topology(tmp_path / "topo.yaml")
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
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        job = p.stdout.readline().strip()
        assert job.isdigit()
        assert len(client(tb, "squeue", "-h", "-s", "-j", job).splitlines()) == 2
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert queue_empty(tb, "-s", "-j", job, wait_s=20)
    assert "sleep" not in left_in_hosts(tb)
    # the resume finds the allocation by the run's name and releases it when it is done
    nodes = Nodes("slurm", load_topology(tfile), testbed=tb, local_root=tmp_path / "out", run_id="killed")
    ex = nodes.executor_of("jp-3")
    assert (ex.alloc.job_id, ex.alloc.how) == (job, "found")
    assert ex.run(["hostname"]).stdout.strip() == "jp-3"
    assert ex.end_leftovers() == []
    nodes.close()
    assert queue_empty(tb)


def test_campaign_submit_longer_than_its_time_limit_finishes_in_its_follow_ups(tmp_path, cluster):
    """``qoslab campaign submit``: job 1 (time limit 1 minute, Slurm's least) ends at its limit
    mid-campaign (TIMEOUT; the trial it cut is a failed attempt); the follow-up jobs (afterany)
    resume the folder, each in its own allocation, until it is complete; the job that completes
    it cancels the follow-ups after it and, its run ended, ends COMPLETED (the batch step's
    manager survives the campaign's clean-up of the hosts: before, every job stayed RUNNING
    until its limit). ``campaign status`` shows the jobs' states."""
    tb = cluster.tb
    tfile = cluster.topology(tmp_path / "topo.yaml", slurm={"time_limit": "1"})
    # longer than the limit on any machine: 16 trials of a 5 s wait and about 1.5 s of the
    # runner's own work each, over 100 s, where slurmctld ends a job 60-90 s after its start (it
    # checks the limits every 30 s); the fidelity monitor's outside-load check is off (the other
    # workers of make test's pool load the cores: not what this test is about) so that no trial
    # runs again
    pb = shipped_playbook(tmp_path, "quick-slurm", tfile, name="submitted", trials=8, warmup=0, capture="off",
                          workload={"kind": "command", "hosts": ["jp-1"], "head": WAIT_5_S, "timeout_s": 60},
                          conditions=[{"name": "no congestion thesis", "congestion": False, "profile": "thesis"},
                                      {"name": "no congestion fifo", "congestion": False, "profile": "fifo"}],
                          baseline="no congestion fifo", fidelity={"max_outside_cores": 64, "retry_invalid": False})
    folder = tmp_path / "campaign"
    # --no-report: the job that completes the campaign leaves the notebook (10-20 s of its minute)
    # to `qoslab report` afterwards
    r = qoslab_ok("campaign", "submit", str(pb), "--out", str(folder), "--follow-ups", "8", "--no-report",
                  timeout=120)
    jobs = re.search(r"jobs ([\d, ]+) \(", r.stdout)
    assert jobs, r.stdout
    ids = jobs.group(1).split(", ")
    assert len(ids) == 9
    assert queue_empty(tb, wait_s=1200)
    comp = (tbslurm.slurm_dir(tb.topo.name) / "jobcomp.txt").read_text()
    states = {j: s for j, s in re.findall(r"JobId=(\d+) .*?JobState=(\S+)", comp) if j in ids}  # (the module's
    # other jobs are in the log too)
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
    rows = trial_states(folder)
    assert len(rows) == 16 and all(s == "done" and v == 1 for _, s, v in rows), rows
    segs = json.loads((folder / "provenance.json").read_text())["segments"]
    assert segs[0]["slurm"]["job_id"] == ids[0] and len(segs) >= 2
    assert all(s["slurm"]["allocation"] == "given" and s["slurm"]["job_id"] in ids for s in segs)
    assert (folder / "stats.json").exists() and not (folder / "report.html").exists()
    assert "report: not rendered (--no-report)" in outs[ran[-1]] or states[ran[-1]] == "TIMEOUT", \
        outs[ran[-1]][-2000:]
    # a job its time limit ended recorded the trial it cut as a failed attempt, run again after
    # (a limit may also fall between two trials: then that job cut nothing, so a cut is not required;
    # one recorded is the limit's, of a job that ended TIMEOUT)
    cut = [j for j in ran if f"cut by the time limit of Slurm job {j} (TIMEOUT)" in outs[j]]
    assert all(states[j] == "TIMEOUT" for j in cut), (cut, comp)
    st = qoslab_ok("campaign", "status", str(folder), timeout=120)
    line = next(ln for ln in st.stdout.splitlines() if ln.startswith("slurm jobs: "))
    assert line.startswith(f"slurm jobs: {ids[0]} TIMEOUT") and f"{ran[-1]} {states[ran[-1]]}" in line, line
    assert left_in_hosts(tb) == []
