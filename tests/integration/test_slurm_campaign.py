"""Campaigns with ``executor: slurm`` on the embedded testbed's real Slurm cluster (slurmctld on the
head node jp-1, a slurmd in every host namespace, munge, slurmdbd with a private MariaDB; Debian's
slurm-wlm 22.05): the quick campaign's smoke (but congestion fifo) runs as job steps of one
allocation qoslab takes (``sacct`` lists its steps on the right nodes, as the controller's log
does; the trials are valid; no job and no step is left), a ``slurm:`` block the cluster cannot
serve is refused before anything is submitted, a campaign killed with SIGKILL mid-trial resumes
in the same allocation, and ``testbed down`` leaves no daemon, key, database or namespace.

Serial lane (tests/integration/lanes.py): both campaigns run the RayTracer under the flood.
Issue 53: ``campaign submit`` and the kill of a bare runner, which wait rather than measure, are
in test_slurm_submit (concurrent lane); the smoke and the kill share the module's testbed and
cluster. They stay two campaigns: one campaign killed in its congested trial took 172.7 s (its
resume waited out TIME-WAIT on the workload's ports, 63 s, then congestion fifo ran 81.5 s)
against 32-114 s and 36-38 s for the two."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
import yaml

from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed import Testbed
from qoslab.testbed import slurm as tbslurm

from .campaign_helpers import PLAYBOOKS, qoslab_ok, shipped_playbook, smoke_run, trial_states
from .slurm_helpers import client, left_in_hosts, module_cluster, queue_empty, sacct_rows, steps_by_node

pytestmark = [pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)"),
              pytest.mark.skipif(not tbslurm.SLURMCTLD.exists() or shutil.which("srun") is None,
                                 reason="slurm-wlm not installed (make setup)")]


def _steps_by_node(tb: Testbed, job: str) -> dict[str, int]:
    """Node -> steps of ``job`` from the controller's log (``DebugFlags=Steps``)."""
    log = (tbslurm.slurm_dir(tb.topo.name) / "slurmctld.log").read_text()
    counts: dict[str, int] = {}
    for node in re.findall(rf"_slurm_rpc_job_step_create: JobId={job} StepId=\d+ (\S+) usec", log):
        counts[node] = counts.get(node, 0) + 1
    return counts


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One testbed and Slurm cluster for the module (time limit 20 minutes); after it nothing of
    the cluster is left on the machine: no daemon, key, database, namespace, nor any mariadbd or
    slurmdbd (this lane runs nothing beside it). Shared, the second campaign may wait for ports
    its hosts still hold in TIME-WAIT from the first (campaign/portwait.py): after the smoke the
    kill test took 31.4 s in make test's serial lane and 69.7 s in a run of this module alone,
    36-38 s on a testbed of its own before. A cluster per test (``@pytest.fixture`` without the
    module scope), measured in the serial lane's conditions: the module took 106.8 s (smoke 19.6
    s, kill 67.9 s, set-ups 4.9 and 8.6 s) against 91.3 s shared (smoke 32.9 s, kill 51.4 s): the
    kill test's own resume waits out its killed workers' TIME-WAIT either way, so the module
    keeps one cluster. (Those waits are gone: the RayTracer's servers bind with SO_REUSEADDR and
    the runner no longer waits for its ports, campaign/attempts.py; the kill test's resume had
    waited 58 s of its 84 s in make test's CI of 2026-11-30.)"""
    yield from module_cluster(tmp_path_factory.mktemp("slurm"), "q", {"time_limit": "20"}, machine_wide=True)


def test_quick_campaign_smoke_through_slurm(tmp_path, cluster):
    tb = cluster.tb
    daemons = tbslurm.daemon_pids(tb.topo)
    folder = tmp_path / "campaign"
    assert set(daemons) == {"munged", "mariadbd", "slurmdbd", "slurmctld", *(f"slurmd-{h}" for h in tb.topo.host_names)}
    assert (tbslurm.slurm_dir(tb.topo.name) / "munge.key").stat().st_mode & 0o777 == 0o400
    # slurmdbd.conf holds the testbed's database password
    assert (tbslurm.slurm_dir(tb.topo.name) / "slurmdbd.conf").stat().st_mode & 0o777 == 0o600
    # the cluster, the account and root registered before slurmctld started
    assocs = client(tb, "sacctmgr", "-n", "-P", "list", "associations", "format=Cluster,Account,User")
    assert f"{tbslurm.cluster_name(tb.topo.name)}|qoslab|root" in assocs.splitlines(), assocs
    assert client(tb, "sinfo", "-h", "-o", "%D %T").split() == ["8", "idle"]
    client(tb, "scontrol", "setdebug", "debug")  # the step lines of DebugFlags=Steps

    # hostile: a partition the cluster does not have -> one line naming the topology's line, no job
    bad = cluster.topology(tmp_path / "topo-b.yaml", slurm={"partition": "gpu"})
    refused = shipped_playbook(tmp_path, "quick-slurm", bad)
    r = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "run", str(refused),
                        "--out", str(tmp_path / "refused"), "--smoke"], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    lines = [ln for ln in r.stdout.splitlines() + r.stderr.splitlines() if "error" in ln.lower()]
    assert any(re.search(r"topology\.yaml:\d+: slurm\.partition: no partition 'gpu' on this cluster \(qoslab\)", ln)
               for ln in lines), r.stdout[-2000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert client(tb, "squeue", "-h") == ""  # nothing submitted

    # the quick campaign's conditions but congestion fifo: its trial's length is TCP's retransmission
    # timeouts under the flood (81.5 s in one run here, 32-114 s for this test before issue 53); the
    # flood and the workload run as steps in congestion thesis, the fifo profile in no congestion fifo
    quick = yaml.safe_load((PLAYBOOKS / "quick-slurm.yaml").read_text())
    smoke_run(shipped_playbook(tmp_path, "quick-slurm", cluster.file,
                               conditions=[c for c in quick["conditions"] if c["name"] != "congestion fifo"]),
              folder, 3)
    seg = json.loads((folder / "provenance.json").read_text())["segments"][-1]
    facts = seg["slurm"]
    assert facts["allocation"] == "taken" and facts["binding"] == {h: h for h in tb.topo.host_names}
    assert facts["nodes"]["jp-5"]["NodeAddr"] == "198.18.0.5" and int(facts["nodes"]["jp-5"]["CPUTot"]) >= 1
    # Slurm's accounting: steps of the campaign's job on every host's node (workload jp-1..4,
    # flood senders and receivers jp-1..8), none on a node outside the topology; the same
    # steps as the controller's log names
    rows = sacct_rows(tb, facts["job_id"])
    steps = steps_by_node(rows, facts["job_id"])
    assert set(steps) == set(tb.topo.host_names), rows
    assert steps == _steps_by_node(tb, facts["job_id"]), (steps, _steps_by_node(tb, facts["job_id"]))
    flood = json.loads(next(folder.glob("trials/*/flood/flood-result.json")).read_text())
    assert all(f["sent_pps"] > 0 for f in flood["flows"])
    # nothing left: the job released, no step, no process of the run in the hosts
    assert queue_empty(tb) and queue_empty(tb, "-s")
    assert left_in_hosts(tb) == []


def _running_in_hosts(tb: Testbed) -> list[str]:
    return [n for n in left_in_hosts(tb) if n in ("ITGSend", "ITGRecv", "java")]


def test_kill_9_mid_trial_then_resume_in_the_same_allocation(tmp_path, cluster):
    tb = cluster.tb
    # the thesis profile under the flood: a short trial (the RMI class is served first), so the
    # test does not hang on how long congestion fifo takes on a loaded machine
    pb = shipped_playbook(tmp_path, "quick-slurm", cluster.file, name="killed", trials=2, warmup=0, capture="off",
                          order="blocked",
                          conditions=[{"name": "congestion thesis", "congestion": True, "profile": "thesis"},
                                      {"name": "no congestion fifo", "congestion": False, "profile": "fifo"}])
    folder = tmp_path / "campaign"
    with open(tmp_path / "runner.log", "w") as log:
        p = subprocess.Popen([sys.executable, "-m", "qoslab", "campaign", "run", str(pb), "--out", str(folder)],
                             stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 300
            while not {"ITGSend", "java"} <= set(_running_in_hosts(tb)) and p.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(0.2)  # the workload runs under the flood now
            job = client(tb, "squeue", "-h", "-o", "%i").strip()
            assert job.isdigit() and client(tb, "squeue", "-h", "-s", "-j", job).strip(), \
                (tmp_path / "runner.log").read_text()[-3000:]
        finally:
            p.send_signal(signal.SIGKILL)  # (on a failure too: no runner outlives the test)
            p.wait()
    # the srun clients died with the runner and ended their steps: no step, no flood, no JVM
    assert queue_empty(tb, "-s", "-j", job, wait_s=20)
    deadline = time.monotonic() + 10
    while _running_in_hosts(tb) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _running_in_hosts(tb) == []
    assert client(tb, "squeue", "-h", "-o", "%i").strip() == job  # the allocation waits for the resume
    qoslab_ok("campaign", "run", "--resume", str(folder), "--no-report")
    rows = trial_states(folder)
    assert sorted(c for c, s, v in rows if s == "done" and v == 1) == ["congestion thesis"] * 2 + \
        ["no congestion fifo"] * 2, rows
    segs = json.loads((folder / "provenance.json").read_text())["segments"]
    assert [s["slurm"]["job_id"] for s in segs] == [job, job]
    assert [s["slurm"]["allocation"] for s in segs] == ["taken", "found"]
    assert queue_empty(tb) and _running_in_hosts(tb) == []
