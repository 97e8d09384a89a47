"""MPI through Slurm on the embedded testbed's Slurm cluster (issue 51): the ``mpi`` workload
(examples/mpi-osu, Debian's Open MPI 4.1) on the ``slurm`` executor starts its ranks with
``srun --mpi=pmix`` (the cluster offers pmix, Open MPI has the PMIx client ext3x; the per-node
``TmpFS`` keeps the two nodes' step managers out of each other's PMIx folders) and, with
``launcher: mpirun``, with ``mpirun`` inside the allocation (orted through Slurm); ``sacct``
lists the ranks' step on the workload nodes; a campaign of it records the choice in its
provenance and every trial's ``mpi-launch.json``.

Concurrent lane (tests/integration/lanes.py, issue 53: 70 s of the serial lane before): the
launches and the campaign are uncongested, and the test asserts which launcher ran, where the
ranks ran and what Slurm's accounting lists, never a rate or a time."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from qoslab.executors.nodes import Nodes
from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed import slurm as tbslurm
from qoslab.topology import repo_root
from qoslab.workloads import backend, settings_of

from .campaign_helpers import smoke_run
from .slurm_helpers import client, module_cluster, sacct_rows

OSU = repo_root() / "examples" / "mpi-osu" / "build" / "osu-qoslab"
HOSTS = ["jp-1", "jp-2", "jp-3", "jp-4"]
pytestmark = [pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)"),
              pytest.mark.skipif(not tbslurm.SLURMCTLD.exists() or shutil.which("srun") is None,
                                 reason="slurm-wlm not installed (make setup)"),
              pytest.mark.skipif(not OSU.exists(), reason="examples/mpi-osu not built (make setup)")]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The module's testbed and Slurm cluster (time limit 20 minutes)."""
    yield from module_cluster(tmp_path_factory.mktemp("slurm"), "m", {"time_limit": "20"})


def test_mpi_through_srun_pmix_and_mpirun_inside_the_allocation(tmp_path, cluster):
    tb, tfile = cluster.tb, cluster.file
    # -- an MPI campaign through srun --mpi=pmix ---------------------------------------------
    # First, on hosts no MPI run has used yet: the runner waits until no socket in TIME-WAIT
    # holds a workload port (the BTL's 7400-7431) before a run's first workers start
    # (campaign/portwait.py); after the direct runs below that took 58 s of this test's 66 s
    # (issue 53). Open MPI's TCP BTL takes the next port of its range when one is held: the
    # direct runs after the campaign need no such wait (the mpirun run has always come right
    # after the srun one).
    # Uncongested conditions only (a congested MPI campaign through Slurm is
    # test_slurm_mpi_flood.py, in the serial lane). A rank SIGSEGV (address nil: a message
    # before ob1's callback was registered, in MPI_Init's first PMIx fence) failed attempts
    # under the flood and once an uncongested attempt in make test's pool; srun-launched ranks
    # now fence once (workloads/mpi.py SRUN_MCA, examples/mpi-osu/README.md). A failed attempt is
    # retried after its ports leave TIME-WAIT, so the test counts launches and steps per
    # attempt, not per trial. The fidelity monitor's outside-load check is off: in make test's
    # pool the other workers load the cores (not what this test is about).
    pb = yaml.safe_load((repo_root() / "playbooks" / "examples" / "mpi-allreduce.yaml").read_text())
    pb.update(topology=str(tfile), executor="slurm", capture="off",
              fidelity={"max_outside_cores": 64, "retry_invalid": False},
              conditions=[{"name": "no congestion fifo", "congestion": False, "profile": "fifo"},
                          {"name": "no congestion ef", "congestion": False, "profile": "ef-mpi"}])
    pb["workload"]["args"] = "--iters 50 --warmup 5 --bytes 8 --primary allreduce_p99_ms"
    pfile = tmp_path / "mpi-slurm.yaml"
    pfile.write_text(yaml.safe_dump(pb))
    folder = tmp_path / "campaign"
    run = smoke_run(pfile, folder, 2)  # 2 trials, each done and valid (a retried one too)
    print(run.stdout[-3000:], run.stderr[-3000:])
    seg = json.loads((folder / "provenance.json").read_text())["segments"][-1]
    assert seg["slurm"]["mpi"]["launch"] == "srun --mpi=pmix", seg["slurm"]
    # every attempt launched through srun --mpi=pmix, a failed one (kept as trials/NNNN.attempt-K,
    # retried by the runner) too; each launch is one step of the ranks over jp-[1-4], in launch
    # order: a counted trial's (its last attempt, trials/NNNN) COMPLETED
    tried = sorted(folder.glob("trials/*/workload/mpi-launch.json"), key=lambda p: p.stat().st_mtime)
    launches = [(p.parent.parent.name, json.loads(p.read_text())["launch"]) for p in tried]
    why = _failed_attempts(run.stdout + run.stderr, folder)
    assert [launch for _, launch in launches] == ["srun --mpi=pmix"] * len(launches), (launches, why)
    assert sorted(t for t, _ in launches if "." not in t) == ["0000", "0001"], (launches, why)
    steps = sacct_rows(tb, seg["slurm"]["job_id"])
    ranks = sorted((row for row in steps if row[1] == "jp-[1-4]" and row[0] != seg["slurm"]["job_id"]),
                   key=lambda row: int(row[0].split(".")[1]))
    assert len(ranks) == len(launches), (steps, launches, why)  # one step per attempt
    counted = [row[2] for row, (t, _) in zip(ranks, launches, strict=True) if "." not in t]
    assert counted == ["COMPLETED"] * 2, (steps, launches, why)

    # -- the workload on its own, both launchers, in one allocation --------------------------
    nodes = Nodes("slurm", tb.topo, testbed=tb, local_root=tmp_path / "direct", run_id="mpi-direct")
    ip = {h.name: h.ip for h in tb.topo.hosts}
    runs = {}
    try:
        for launcher in ("auto", "mpirun"):
            s = settings_of({"kind": "mpi", "hosts": HOSTS, "launcher": launcher, "timeout_s": 60,
                             "args": "--iters 50 --warmup 5 --bytes 8"})
            out = tmp_path / "direct" / launcher
            direct = backend("mpi").run(s, nodes.executor_of, ip.__getitem__, out)
            runs[launcher] = (direct.result, json.loads((out / "mpi-launch.json").read_text()))
        job = nodes.executor_of("jp-1").alloc.job_id  # type: ignore[attr-defined]
    finally:
        nodes.close()
    result, chosen = runs["auto"]
    assert chosen["launch"] == "srun --mpi=pmix" and "ext3x" in chosen["why"], chosen
    assert "pmix" in chosen["srun_types"] and "s2" not in chosen["open_mpi_pmix"], chosen
    assert result["launch"] == "srun --mpi=pmix" and result["valid"] is True, result
    assert result["nodes"] == HOSTS and result["ranks"] == 4, result  # rank i on host i
    result, chosen = runs["mpirun"]
    assert chosen["launch"] == "mpirun" and result["launch"] == "mpirun", chosen
    assert result["valid"] is True and sorted(result["nodes"]) == HOSTS, result
    # Slurm's accounting: the srun launch is one step over the four workload nodes; mpirun's
    # orted came as a step over the three others
    rows = sacct_rows(tb, job)
    multi = sorted(nodes_ for jobid, nodes_, state in rows if jobid.startswith(f"{job}.") and "[" in nodes_)
    assert multi == ["jp-[1-4]", "jp-[2-4]"], rows
    assert client(tb, "squeue", "-h") == ""


def _failed_attempts(output: str, folder) -> list[str]:
    """What the failed attempts of a campaign left: the runner's "attempt N failed" lines and the
    tail of each kept attempt folder's workload-manager.log (shown when an assertion fails)."""
    out = [ln for ln in output.splitlines() if " failed: " in ln and "attempt" in ln]
    for log in sorted(folder.glob("trials/*.attempt-*/workload/workload-manager.log")):
        out.append(f"{log.parent.parent.name}: " + " | ".join(log.read_text(errors="replace").splitlines()[-8:]))
    return out
