"""A congested MPI campaign through Slurm (issue 51's open finding): examples/mpi-osu on the
``slurm`` executor, its ranks started with ``srun --mpi=pmix``, one trial without congestion and
one under the campaign flood with each profile (``ef-mpi``: the condition a rank on jp-3 died in;
``fifo``: Slurm's own traffic and the ranks' share one full queue).

The finding (examples/mpi-osu/README.md has the backtrace and the sources read): under the flood
a rank died of SIGSEGV "Failing at address: (nil)" in MPI_Init now and then (2 of 40 direct
launches beside the flood; 2 of 3 attempts of one campaign run). A peer, released early from
MPI_Init's barrier by a PMIx fence error that Open MPI 4.1 ignores (open-mpi/ompi#5086; Slurm's
PMIx collectives give up a fence whose send between the nodes' step managers failed), sent its
first message to a rank still waiting in MPI_Init's first fence, whose TCP BTL called ob1's
MATCH callback before ob1 had registered it (NULL). qoslab now starts srun-launched ranks with ``pmix_base_async_modex 1`` and
``pmix_base_collect_data 0`` (workloads/mpi.py ``SRUN_MCA``): one fence, after the callbacks;
measured 0 deaths in 30 direct launches beside the flood. This test passed 4 runs of 4 with it
(30.5-33.9 s each, every trial in its first attempt); its two congested launches a run guard the
path, they are too few to show a race this rare by themselves.

Serial lane (not in lanes.CONCURRENT): the flood and the fidelity monitor's port readings want
the machine to themselves. Slurm's own control traffic (step launches, PMIx messages between
the nodes' step managers) crosses the flooded ports too: about one launch in four failed under
the flood in the reproduction (srun's launch RPC to a node's slurmd timed out), which the
campaign records as a failed attempt and runs again (``retries: 5`` here). The test asserts that
every trial ended done and valid through ``srun --mpi=pmix``, that no attempt's rank died of a
signal, that the flooded trials were congested (the fidelity monitor saw the ranks' ports full)
and that nothing is left in Slurm's queue."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed import slurm as tbslurm
from qoslab.topology import repo_root

from .campaign_helpers import smoke_run, trial_states
from .slurm_helpers import client, module_cluster, sacct_rows

OSU = repo_root() / "examples" / "mpi-osu" / "build" / "osu-qoslab"
pytestmark = [pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)"),
              pytest.mark.skipif(not tbslurm.SLURMCTLD.exists() or shutil.which("srun") is None,
                                 reason="slurm-wlm not installed (make setup)"),
              pytest.mark.skipif(not OSU.exists(), reason="examples/mpi-osu not built (make setup)")]

#: What Open MPI's signal handler prints for a rank that died (SIGSEGV and its kin).
DIED = ("Process received signal", "Failing at address", "Segmentation fault")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The module's testbed and Slurm cluster (time limit 20 minutes); serial lane: nothing beside it."""
    yield from module_cluster(tmp_path_factory.mktemp("slurm"), "f", {"time_limit": "20"}, machine_wide=True)


def test_a_congested_mpi_campaign_through_srun_pmix_loses_no_rank(tmp_path, cluster):
    pb = yaml.safe_load((repo_root() / "playbooks" / "examples" / "mpi-allreduce.yaml").read_text())
    pb.update(topology=str(cluster.file), executor="slurm", capture="off", retries=5,
              fidelity={"max_outside_cores": 64, "retry_invalid": False},
              conditions=[{"name": "no congestion fifo", "congestion": False, "profile": "fifo"},
                          {"name": "flood ef", "congestion": True, "profile": "ef-mpi"},
                          {"name": "flood fifo", "congestion": True, "profile": "fifo"}])
    pb["workload"]["args"] = "--iters 50 --warmup 5 --bytes 8 --primary allreduce_p99_ms"
    pfile = tmp_path / "mpi-slurm-flood.yaml"
    pfile.write_text(yaml.safe_dump(pb))
    folder = tmp_path / "campaign"
    smoke_run(pfile, folder, 3)  # every trial done and valid, whatever attempts it took
    seg = json.loads((folder / "provenance.json").read_text())["segments"][-1]
    assert seg["slurm"]["mpi"]["launch"] == "srun --mpi=pmix", seg["slurm"]
    logs = sorted(folder.glob("trials/*/workload/workload-manager.log"))
    died = {str(p.relative_to(folder)): [ln for ln in p.read_text(errors="replace").splitlines()
                                         if any(d in ln for d in DIED)] for p in logs}
    assert not any(died.values()), died
    launches = [json.loads(p.read_text())["launch"] for p in folder.glob("trials/*/workload/mpi-launch.json")]
    assert launches and set(launches) == {"srun --mpi=pmix"}, launches
    # congested: the fidelity monitor saw the ranks' ports full (utilisation, samples with a backlog)
    flooded = [row for row in trial_states(folder, "condition, attempts, fidelity_port_util, fidelity_backlogged")
               if row[0].startswith("flood")]
    assert len(flooded) == 2 and all(util >= 0.9 and backlog > 0 for _, _, util, backlog in flooded), flooded
    assert client(cluster.tb, "squeue", "-h") == ""
    rows = sacct_rows(cluster.tb, seg["slurm"]["job_id"])
    ranks = [r for r in rows if r[1] == "jp-[1-4]" and r[0] != seg["slurm"]["job_id"]]
    assert ranks and ranks[-1][2] == "COMPLETED", rows  # the last rank step of the campaign ended well
