"""``qoslab campaign submit``: a whole campaign as Slurm batch jobs.

The campaign folder is made here (every reference checked first), then one ``sbatch`` script,
``FOLDER/slurm/campaign.sbatch``, is submitted ``1 + follow_ups`` times: the first job runs the
campaign, each follow-up (``--dependency=afterany:PREVIOUS``) resumes the folder, so a campaign
longer than its time limit (Slurm sends SIGTERM at the limit: the running trial is pending again,
as after Ctrl-C) finishes in the next job; a follow-up of a finished campaign finds nothing to
run. Inside a job the ``slurm`` executor uses that job's allocation (``SLURM_JOB_ID``).

On the embedded testbed the batch script runs on the head node's namespace, whose loopback is
not this machine's: the runner goes back to this machine's network namespace (``nsenter --net=``
the handle :func:`qoslab.testbed.slurm.root_netns`), where the virtual switch's management endpoint listens, as a login
node reaches a real switch's management address.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import QoslabError
from ..executors.slurmalloc import SlurmClient
from ..topology import repo_root


def client_for(pb: Any, path: Path) -> tuple[Any, SlurmClient, Path | None]:
    """(topology, Slurm client, handle on this machine's network namespace or None) of an
    ``executor: slurm`` playbook read from ``path``: on the embedded testbed its Slurm cluster
    (the testbed must be up; the cluster is started if not), else the Slurm commands on PATH.
    Raises QoslabError for another executor or a testbed that is down."""
    from ..testbed import Testbed
    from ..topology import load_topology
    from ..trials.playbook import resolve_path

    if pb.executor != "slurm":
        raise QoslabError(f"{path}: campaign submit runs `executor: slurm` playbooks (this one: {pb.executor})")
    topo = load_topology(resolve_path(pb.topology))
    if topo.environment != "embedded":
        return topo, SlurmClient(), None
    tb = Testbed(topo)
    if not tb.is_up():
        raise QoslabError(f"testbed {topo.name} is not up: `qoslab testbed up --slurm -t {pb.topology}` first")
    from ..testbed.slurm import root_netns

    tb.slurm_up()
    prefix, env = tb.slurm_client()
    return topo, SlurmClient(tuple(prefix), env), root_netns(topo.name)


def sbatch_script(topo: Any, folder: Path, job_name: str, *, root_netns: Path | None,
                  env: dict[str, str] | None = None) -> str:
    """The batch script (pure): ``#SBATCH`` lines from the topology's ``slurm:`` block (nodes =
    its hosts, time limit, partition, account, constraint, node names), output to
    ``FOLDER/slurm/job-%j.out``, then ``qoslab campaign run --resume FOLDER`` from this checkout
    (in this machine's network namespace, through the handle ``root_netns``, when given)."""
    s = topo.slurm
    folder = folder.resolve()
    lines = ["#!/bin/sh", f"#SBATCH --job-name={job_name}", f"#SBATCH --nodes={len(topo.hosts)}",
             f"#SBATCH --time={s.time_limit if s is not None else '1:00:00'}",
             f"#SBATCH --output={folder}/slurm/job-%j.out"]
    if s is not None:
        lines += [f"#SBATCH --partition={s.partition}"] if s.partition else []
        lines += [f"#SBATCH --nodelist={','.join(s.nodes)}"] if s.nodes else []
        lines += [f"#SBATCH --account={s.account}"] if s.account else []
        lines += [f"#SBATCH --constraint={s.constraint}"] if s.constraint else []
    run = [sys.executable, "-m", "qoslab", "campaign", "run", "--resume", str(folder)]
    prefix = ["nsenter", f"--net={root_netns}"] if root_netns is not None else []
    exports = ["env", *(f"{k}={v}" for k, v in (env or {}).items())] if env else []
    lines += [f"cd {shlex.quote(str(repo_root()))} || exit 1",
              "exec " + " ".join(shlex.quote(a) for a in [*prefix, *exports, *run]), ""]
    return "\n".join(lines)


def submit(topo: Any, folder: Path, job_name: str, client: SlurmClient, follow_ups: int,
           root_netns: Path | None) -> list[str]:
    """Write the batch script into ``folder/slurm/`` and submit it ``1 + follow_ups`` times, each
    job after the previous one ended (``afterany``); returns the job IDs. Raises QoslabError with
    sbatch's message when a submission is refused (the jobs submitted so far are cancelled)."""
    client.require(("sbatch",))
    d = folder / "slurm"
    d.mkdir(parents=True, exist_ok=True)
    script = d / "campaign.sbatch"
    script.write_text(sbatch_script(topo, folder, job_name, root_netns=root_netns, env=dict(client.env)))
    jobs: list[str] = []
    for i in range(1 + follow_ups):
        dep: Sequence[str] = [f"--dependency=afterany:{jobs[-1]}"] if jobs else []
        r = client.call(["sbatch", "--parsable", *dep, str(script)])
        job = r.stdout.strip().split(";")[0]
        if r.returncode != 0 or not re.fullmatch(r"[0-9]+", job):
            if jobs:
                client.call(["scancel", *jobs])
            raise QoslabError(f"sbatch refused job {i + 1} of the campaign: "
                              f"{(r.stderr or r.stdout).strip()[-300:] or r.returncode}")
        jobs.append(job)
    return jobs
