"""``qoslab campaign submit PLAYBOOK``: a whole campaign as Slurm batch jobs
(:mod:`qoslab.campaign.submit`): the first job runs it, each follow-up resumes the folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .common import console


def submit_command(playbook: Path, follow_ups: int, make_folder: Callable[[], Path], report: bool = True) -> None:
    """Check the playbook and the cluster (``sbatch`` on PATH, the testbed's cluster up), make the
    campaign folder (``make_folder``) only then, submit ``1 + follow_ups`` jobs and print the
    folder, the job IDs and the script. Raises QoslabError (nothing submitted, no folder made)
    for another executor, a testbed that is down or a missing Slurm command. ``report`` False: the
    jobs run ``campaign run --no-report``."""
    from ..campaign import load_playbook
    from ..campaign.submit import client_for, submit

    pb = load_playbook(playbook)
    topo, client, handle = client_for(pb, playbook)
    client.require(("sbatch",))  # before the folder is made: nothing submitted, nothing written
    folder = make_folder()
    jobs = submit(topo, folder, f"qoslab-submit-{pb.name}", client, follow_ups, root_netns=handle, report=report)
    console.print(f"campaign folder {folder}; jobs {', '.join(jobs)} (each after the one before: "
                  f"sbatch --dependency=afterany); script {folder / 'slurm' / 'campaign.sbatch'}",
                  soft_wrap=True, highlight=False)
