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

import json
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import QoslabError
from ..executors.slurmalloc import SlurmClient, request_options
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
                  env: dict[str, str] | None = None, report: bool = True) -> str:
    """The batch script (pure): ``#SBATCH`` lines from the topology's ``slurm:`` block (nodes =
    its hosts, time limit, partition, account, constraint, node names), output to
    ``FOLDER/slurm/job-%j.out``, then ``qoslab campaign run --resume FOLDER`` from this checkout
    (in this machine's network namespace, through the handle ``root_netns``, when given; with
    ``--no-report`` unless ``report``: the job that completes the campaign then leaves the report
    to ``qoslab report FOLDER`` outside its allocation)."""
    folder = folder.resolve()
    lines = ["#!/bin/sh", f"#SBATCH --job-name={job_name}", *(f"#SBATCH {o}" for o in request_options(topo)),
             f"#SBATCH --output={folder}/slurm/job-%j.out"]
    run = [sys.executable, "-m", "qoslab", "campaign", "run", "--resume", str(folder),
           *(() if report else ("--no-report",))]
    prefix = ["nsenter", f"--net={root_netns}"] if root_netns is not None else []
    exports = ["env", *(f"{k}={v}" for k, v in (env or {}).items())] if env else []
    lines += [f"cd {shlex.quote(str(repo_root()))} || exit 1",
              "exec " + " ".join(shlex.quote(a) for a in [*prefix, *exports, *run]), ""]
    return "\n".join(lines)


def submit(topo: Any, folder: Path, job_name: str, client: SlurmClient, follow_ups: int,
           root_netns: Path | None, report: bool = True) -> list[str]:
    """Write the batch script into ``folder/slurm/`` and submit it ``1 + follow_ups`` times, each
    job after the previous one ended (``afterany``); returns the job IDs. Raises QoslabError with
    sbatch's message when a submission is refused (the jobs submitted so far are cancelled)."""
    client.require(("sbatch",))
    d = folder / "slurm"
    d.mkdir(parents=True, exist_ok=True)
    script = d / "campaign.sbatch"
    script.write_text(sbatch_script(topo, folder, job_name, root_netns=root_netns, env=dict(client.env),
                                    report=report))
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
    embedded = root_netns is not None
    record = {"jobs": jobs, "topology": topo.name, "head": topo.hosts[0].name if embedded else None}
    (d / JOBS_FILE).write_text(json.dumps(record, indent=1) + "\n")
    return jobs


#: The submitted jobs' record in ``FOLDER/slurm/``: ``{"jobs": [ID, ...], "topology": NAME,
#: "head": HOST or null}`` (``head``: the embedded testbed's head node, whose namespace the Slurm
#: clients run in; null on a cluster).
JOBS_FILE = "jobs.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
MAX_JOBS_BYTES = 4096


def read_jobs(folder: Path) -> tuple[list[str], str, str | None] | None:
    """(job IDs, topology name, head host or None) from ``folder/slurm/jobs.json``, None when the
    campaign was not submitted. Read only from a regular file of at most 4 KiB; every ID digits,
    the names Slurm/host names (they only ever name a namespace and a state folder, never a
    command). Raises QoslabError naming the file and the field at fault."""
    path = folder / "slurm" / JOBS_FILE
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file():
        raise QoslabError(f"{path}: not a regular file")
    if path.stat().st_size > MAX_JOBS_BYTES:
        raise QoslabError(f"{path}: {path.stat().st_size} bytes: larger than a job record ({MAX_JOBS_BYTES} at most)")
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as e:
        raise QoslabError(f"{path}: not JSON ({str(e)[:120]})") from None
    if not isinstance(data, dict) or set(data) != {"jobs", "topology", "head"}:
        raise QoslabError(f"{path}: not a job record (an object with jobs, topology, head)")
    jobs, name, head = data["jobs"], data["topology"], data["head"]
    if not isinstance(jobs, list) or not 1 <= len(jobs) <= 21 or \
            not all(isinstance(j, str) and re.fullmatch(r"[0-9]{1,12}", j) for j in jobs):
        raise QoslabError(f"{path}: jobs: not a list of 1-21 Slurm job IDs (digits)")
    for field_, v in (("topology", name), ("head", head)):
        if not (v is None and field_ == "head") and not (isinstance(v, str) and _NAME.fullmatch(v)):
            raise QoslabError(f"{path}: {field_}: {str(v)[:60]!r} is not a name")
    return jobs, name, head


def job_states(jobs: Sequence[str], client: SlurmClient, jobcomp: Path | None = None) -> dict[str, str]:
    """Job ID -> its state as Slurm tells it: ``squeue`` (``RUNNING 0:35 of 1:00``,
    ``PENDING (Dependency)``), else ``sacct`` for an ended job (where the cluster keeps
    accounting), else the embedded testbed's job completion log ``jobcomp`` (``TIMEOUT``,
    ``COMPLETED``), else ``ended (gone from squeue; no accounting to say how)``; ``unknown
    (...)`` when Slurm cannot be asked. Raises nothing."""
    try:
        r = client.call(["squeue", "-h", "-t", "all", "-o", "%i|%T|%M|%l|%r"])
    except QoslabError as e:
        return {j: f"unknown ({str(e)[:100]})" for j in jobs}
    if r.returncode != 0:
        return {j: f"unknown (squeue: {(r.stderr.strip().splitlines() or ['exit ' + str(r.returncode)])[-1][:100]})"
                for j in jobs}
    out: dict[str, str] = {}
    for line in r.stdout.splitlines():
        f = line.split("|")
        if len(f) == 5 and f[0] in jobs:
            out[f[0]] = f"{f[1]} {f[2]} of {f[3]}" if f[1] == "RUNNING" else \
                f[1] + (f" ({f[4]})" if f[4] not in ("None", "") else "")
    gone = [j for j in jobs if j not in out]
    if gone:
        out.update(_ended_states(gone, client, jobcomp))
    return {j: out[j] for j in jobs}


def _ended_states(jobs: list[str], client: SlurmClient, jobcomp: Path | None) -> dict[str, str]:
    found: dict[str, str] = {}
    try:
        r = client.call(["sacct", "-n", "-P", "-X", "-j", ",".join(jobs), "-o", "JobID,State,Elapsed"])
        if r.returncode == 0:
            for line in r.stdout.splitlines():
                f = line.split("|")
                if len(f) == 3 and f[0] in jobs:
                    found[f[0]] = f"{f[1].split()[0]} after {f[2]} (sacct)"
    except QoslabError:
        pass
    if jobcomp is not None and jobcomp.is_file():
        for job, state in re.findall(r"JobId=(\d+) .*?JobState=(\S+)", jobcomp.read_text(errors="replace")):
            if job in jobs and job not in found:
                found[job] = f"{state} (job completion log)"
    return {j: found.get(j, "ended (gone from squeue; no accounting to say how)") for j in jobs}


def status_line(folder: Path) -> str | None:
    """The ``campaign status`` line of a submitted campaign: ``slurm jobs: 12 TIMEOUT, 13
    RUNNING 0:35 of 1:00, 14 PENDING (Dependency)``; None for a campaign not submitted. On the
    embedded testbed the clients run in the head node's namespace of the testbed the record
    names (states unknown when its cluster is not running). Raises QoslabError for a malformed
    record (:func:`read_jobs`)."""
    rec = read_jobs(folder)
    if rec is None:
        return None
    jobs, name, head = rec
    got = _client_of(name, head)
    if got is None:
        return f"slurm jobs {', '.join(jobs)}: states unknown (the Slurm cluster of testbed {name} is not running)"
    states = job_states(jobs, *got)
    return "slurm jobs: " + ", ".join(f"{j} {s}" for j, s in states.items())


def _client_of(name: str, head: str | None) -> tuple[SlurmClient, Path | None] | None:
    """(client, job completion log or None) for the jobs of a record: the Slurm commands on PATH
    on a cluster (``head`` None); the embedded testbed ``name``'s cluster from its head node's
    namespace, None when that cluster is not running."""
    if head is None:
        return SlurmClient(), None
    from ..testbed.slurm import client_env, slurm_dir
    from ..testbedplan import NETNS_DIR, host_namespace

    if not (slurm_dir(name) / "slurm.conf").exists():
        return None
    return (SlurmClient(("nsenter", f"--net={NETNS_DIR / host_namespace(name, head)}"), client_env(name)),
            slurm_dir(name) / "jobcomp.txt")


def cancel_follow_ups(folder: Path, environ: Mapping[str, str]) -> list[str]:
    """In a submitted job (``SLURM_JOB_ID`` one of the folder's jobs) whose campaign is complete:
    cancel (``scancel``) the follow-up jobs submitted after it, still waiting for it (they would
    only allocate the nodes to find nothing to run); returns their IDs, [] elsewhere. Raises
    QoslabError for a malformed job record (:func:`read_jobs`)."""
    rec = read_jobs(folder)
    job = environ.get("SLURM_JOB_ID")
    if rec is None or job not in rec[0]:
        return []
    later = rec[0][rec[0].index(job) + 1:]
    got = _client_of(rec[1], rec[2])
    if not later or got is None:
        return []
    r = got[0].call(["scancel", *later])
    if r.returncode != 0:
        raise QoslabError(f"scancel of the follow-up jobs {', '.join(later)}: "
                          f"{(r.stderr or r.stdout).strip()[-200:] or r.returncode}")
    return later
