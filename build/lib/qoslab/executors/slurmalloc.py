"""The Slurm allocation a campaign runs in (for the ``slurm`` executor, :mod:`.slurm`).

- **Given**: run inside ``sbatch``/``salloc``, ``SLURM_JOB_ID`` names the job and
  ``SLURM_JOB_NODELIST`` its nodes, expanded by Slurm's own ``scontrol show hostnames``.
- **Found**: a job named ``qoslab-<run id>`` that runs already (a killed run's allocation: the
  resume runs in it).
- **Taken**: ``salloc --no-shell`` with the topology's ``slurm:`` block (partition, node names
  or count, time limit, account, constraint), released (``scancel``) when the run ends.

Before anything is submitted the block is checked against the cluster (the partition and the
node names exist, enough nodes for the topology's hosts); every refusal is one line naming the
topology file and line, or the environment variable. The topology's hosts are bound to the
allocation's nodes by name or by order (:func:`bind`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError, QoslabError

#: The Slurm client commands the executor needs.
CLIENTS = ("srun", "salloc", "squeue", "scancel", "scontrol", "sinfo")
#: Seconds a Slurm client command may take (salloc: until the allocation is granted).
CLIENT_TIMEOUT_S = 30.0
SALLOC_TIMEOUT_S = 600.0
#: Seconds an interrupted run may wait for Slurm to say whether its job's time limit cut it.
CUT_CHECK_S = 2.0
#: What a Slurm node list may hold before ``scontrol`` sees it: ``a[1-3,5],b-2``.
_RANGES = r"\[[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*\]"
_HOST = rf"[A-Za-z0-9][A-Za-z0-9_.-]*({_RANGES}[A-Za-z0-9_.-]*)*"
NODELIST = re.compile(rf"^{_HOST}(,{_HOST})*$")


@dataclass(frozen=True)
class SlurmClient:
    """How Slurm's client commands run here: ``prefix`` (the embedded testbed: enter its head
    node's namespace; a cluster: nothing) and ``env`` (``SLURM_CONF`` on the testbed)."""

    prefix: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    def require(self, extra: Sequence[str] = ()) -> None:
        """Raise QoslabError naming the first Slurm client command (of CLIENTS and ``extra``)
        missing on PATH."""
        for c in (*CLIENTS, *extra):
            if shutil.which(c) is None:
                raise QoslabError(f"{c} not found on PATH: the slurm executor needs Slurm's client commands "
                                  "(Debian slurm-client); nothing was submitted")

    def call(self, argv: Sequence[str], timeout: float = CLIENT_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        """Run a client command; its result (no exception for a non-zero exit). Raises
        QoslabError when it cannot run or overruns ``timeout`` seconds."""
        try:
            return subprocess.run([*self.prefix, *argv], capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, **self.env}, stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise QoslabError(f"{argv[0]} not found on PATH: the slurm executor needs Slurm's client commands") \
                from None
        except subprocess.TimeoutExpired:
            raise QoslabError(f"`{' '.join(argv)}` gave no answer within {timeout:g} s") from None

    def out(self, argv: Sequence[str], what: str, timeout: float = CLIENT_TIMEOUT_S) -> str:
        """stdout of a client command that must succeed; QoslabError naming ``what`` otherwise."""
        r = self.call(argv, timeout)
        if r.returncode != 0:
            last = (r.stderr or r.stdout).strip().splitlines()
            raise QoslabError(f"{what}: {last[-1] if last else f'exit {r.returncode}'}")
        return r.stdout

    def hostnames(self, nodelist: str, source: str) -> list[str]:
        """``nodelist`` expanded by ``scontrol show hostnames``. Raises QoslabError naming
        ``source`` (a variable or job) when it is not a Slurm node list."""
        if len(nodelist) > 65536 or not NODELIST.match(nodelist):
            raise QoslabError(f"{source}={nodelist[:200]!r}: not a Slurm node list (e.g. node[1-4],login2)")
        r = self.call(["scontrol", "show", "hostnames", nodelist])
        names = r.stdout.split()
        if r.returncode != 0 or not names:
            raise QoslabError(f"{source}={nodelist!r}: not a Slurm node list "
                              f"(scontrol: {r.stderr.strip()[-200:] or 'no host names'})")
        return names


@dataclass
class Allocation:
    """One Slurm job the run's steps go into: ``job_id``, its ``nodes`` (expanded, in Slurm's
    order), ``taken`` (qoslab submitted it and releases it), ``binding`` (topology host ->
    node), ``client``, ``how`` (``given``, ``found`` or ``taken``)."""

    job_id: str
    nodes: list[str]
    taken: bool
    binding: dict[str, str]
    client: SlurmClient
    how: str
    users: int = 0
    #: (``srun --mpi=list``'s plugin types, Open MPI's ``pmix`` components), once asked
    #: (:meth:`.slurm.SlurmExecutor.mpi_launch`)
    mpi_offer: tuple[list[str], list[str]] | None = None

    def facts(self) -> dict[str, Any]:
        """Job ID, how it was got, the binding and per-node facts from ``scontrol show node``
        (CPUs, memory in MB, OS/kernel, architecture, features), for provenance.json."""
        nodes: dict[str, dict[str, str]] = {}
        r = self.client.call(["scontrol", "show", "node", "-o", ",".join(self.nodes)])
        for line in r.stdout.splitlines():
            kv: dict[str, str] = {m.group(1): m.group(2) for m in re.finditer(r"(\w+)=(\S*)", line)}
            os_ = re.search(r"\bOS=(.*?) \w+=", line)  # "Linux 6.1.0-18-amd64 #1 SMP ...": the kernel
            if os_:
                kv["OS"] = os_.group(1)
            if "NodeName" in kv:
                nodes[kv["NodeName"]] = {k: kv[k] for k in ("CPUTot", "RealMemory", "OS", "Arch", "AvailableFeatures",
                                                            "NodeAddr") if k in kv}
        return {"job_id": self.job_id, "allocation": self.how, "binding": self.binding, "nodes": nodes}

    def steps(self, name: str) -> list[tuple[str, str]]:
        """Running steps of the job named ``name``: (step ID ``JOB.N``, node list)."""
        r = self.client.call(["squeue", "-h", "-s", "-j", self.job_id, "-o", "%i|%j|%N"])
        rows = [line.split("|") for line in r.stdout.splitlines() if line.count("|") == 2]
        return [(i, n) for i, j, n in rows if j == name]

    def time_limit_reached(self, timeout: float = CUT_CHECK_S) -> bool:
        """Whether the job has reached its time limit: ``scontrol show job`` says
        ``JobState=TIMEOUT`` or ``Reason=TimeLimit`` (set by the controller before it signals the
        job's processes), or its ``EndTime`` has passed. False when Slurm gives no answer within
        ``timeout`` seconds (the job's processes have KillWait seconds between SIGTERM and SIGKILL)."""
        try:
            r = self.client.call(["scontrol", "show", "job", "-o", self.job_id], timeout)
        except QoslabError:
            return False
        if r.returncode != 0:
            return False
        if re.search(r"\b(JobState=TIMEOUT|Reason=TimeLimit)\b", r.stdout):
            return True
        end = re.search(r"\bEndTime=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\b", r.stdout)  # local time, as Slurm's
        try:
            return end is not None and time.mktime(time.strptime(end.group(1), "%Y-%m-%dT%H:%M:%S")) <= time.time()
        except (ValueError, OverflowError):
            return False

    def release(self) -> None:
        """End the job when qoslab took it (``scancel``); a given job is left to its owner."""
        if self.taken:
            self.client.call(["scancel", self.job_id])


def job_name(run_id: str) -> str:
    """The name of the job (and of its steps) of run ``run_id``: ``qoslab-<run id>``."""
    return f"qoslab-{run_id}"


def bind(hosts: Sequence[str], nodes: Sequence[str], how: str, where: str) -> dict[str, str]:
    """Topology hosts -> allocation nodes, ``how`` = ``name`` (each host is the node of its name)
    or ``order`` (the i-th host the i-th node). ``where`` names the allocation in errors. Raises
    QoslabError naming both lists when they do not fit."""
    if how == "order":
        if len(nodes) < len(hosts):
            raise QoslabError(f"{where} has {len(nodes)} node(s) ({', '.join(nodes)}) for the topology's "
                              f"{len(hosts)} hosts ({', '.join(hosts)}): bind: order needs one node per host")
        return dict(zip(hosts, nodes, strict=False))
    missing = [h for h in hosts if h not in nodes]
    if missing:
        raise QoslabError(f"{where}: node(s) {', '.join(nodes)} do not include the topology's host(s) "
                          f"{', '.join(missing)} (bind: name; use bind: order to map by position)")
    return {h: h for h in hosts}


def from_environment(environ: Mapping[str, str], client: SlurmClient) -> tuple[str, list[str]] | None:
    """(job ID, expanded nodes) of the job this process runs in (``SLURM_JOB_ID``,
    ``SLURM_JOB_NODELIST``), or None outside one. Raises QoslabError naming the variable when
    one is malformed or missing."""
    job = environ.get("SLURM_JOB_ID")
    if job is None:
        return None
    if not re.fullmatch(r"[0-9]+", job):
        raise QoslabError(f"SLURM_JOB_ID={job!r}: not a Slurm job ID (digits)")
    nodelist = environ.get("SLURM_JOB_NODELIST", environ.get("SLURM_NODELIST"))
    if not nodelist:
        raise QoslabError(f"SLURM_JOB_NODELIST is not set although SLURM_JOB_ID={job}: not inside a Slurm job")
    return job, client.hostnames(nodelist.strip(), "SLURM_JOB_NODELIST")


def _field_error(topo: Any, field_: str, msg: str) -> ConfigError:
    from ..yamlio import config_error

    if topo.source:
        return config_error(topo.source, ("slurm", field_), msg)
    return ConfigError(f"topology {topo.name}: slurm.{field_}: {msg}")


def check_request(topo: Any, client: SlurmClient) -> None:
    """Check the topology's ``slurm:`` block against the cluster before submitting: the partition
    exists, the named nodes exist, enough nodes for the hosts. Raises ConfigError at the
    block's file:line."""
    s = topo.slurm
    if s is None:
        return
    if s.nodes and len(s.nodes) < len(topo.hosts):
        raise _field_error(topo, "nodes", f"{len(s.nodes)} node(s) ({', '.join(s.nodes)}) for {len(topo.hosts)} "
                                          f"hosts ({', '.join(topo.host_names)})")
    if s.partition is not None:
        parts = [p.rstrip("*") for p in client.out(["sinfo", "-h", "-o", "%P"], "sinfo").split()]
        if s.partition not in parts:
            raise _field_error(topo, "partition", f"no partition {s.partition!r} on this cluster "
                                                  f"({', '.join(parts) or 'none'})")
    if s.nodes:
        known = set(client.out(["sinfo", "-h", "-N", "-o", "%N"], "sinfo").split())
        unknown = [n for n in s.nodes if n not in known]
        if unknown:
            raise _field_error(topo, "nodes", f"no node(s) {', '.join(unknown)} on this cluster")


def request_options(topo: Any) -> list[str]:
    """The allocation request of the topology's ``slurm:`` block as ``salloc``/``sbatch``
    options: ``--nodes`` (one per host), ``--time`` (default 1:00:00), then ``--partition``,
    ``--nodelist``, ``--account``, ``--constraint`` where the block gives them."""
    s = topo.slurm
    opts = [f"--nodes={len(topo.hosts)}", f"--time={s.time_limit if s is not None else '1:00:00'}"]
    if s is not None:
        opts += [f"--partition={s.partition}"] if s.partition else []
        opts += [f"--nodelist={','.join(s.nodes)}"] if s.nodes else []
        opts += [f"--account={s.account}"] if s.account else []
        opts += [f"--constraint={s.constraint}"] if s.constraint else []
    return opts


def take(topo: Any, run_id: str, client: SlurmClient) -> tuple[str, str]:
    """(job ID, ``found`` or ``taken``) of the run: a running job named ``qoslab-<run id>`` (a
    killed run's allocation, which this run now owns and releases), else
    a new allocation from ``salloc --no-shell`` with the ``slurm:`` block. Raises ConfigError /
    QoslabError (nothing submitted) when the block does not fit the cluster, QoslabError with
    salloc's message when the allocation is refused."""
    name = job_name(run_id)
    found = client.out(["squeue", "-h", "--name", name, "-t", "RUNNING", "-o", "%i"], "squeue").split()
    if found:
        return found[0], "found"
    check_request(topo, client)
    r = client.call(["salloc", "--no-shell", f"--job-name={name}", *request_options(topo)], SALLOC_TIMEOUT_S)
    m = re.search(r"Granted job allocation (\d+)", r.stderr + r.stdout)
    if r.returncode != 0 or m is None:
        raise QoslabError(f"salloc refused the allocation: {(r.stderr or r.stdout).strip()[-300:] or r.returncode}")
    return m.group(1), "taken"


_lock = threading.Lock()
_shared: dict[tuple[str, str], Allocation] = {}


def acquire(topo: Any, run_id: str, client: SlurmClient, environ: Mapping[str, str] | None = None) -> Allocation:
    """The allocation of run ``run_id`` on ``topo``, made on the first call and shared by every
    executor of the run (each call counts a user; :func:`release` ends it with the last)."""
    with _lock:
        key = (topo.name, run_id)
        a = _shared.get(key)
        if a is None:
            client.require()
            given = from_environment(os.environ if environ is None else environ, client)
            if given is not None:
                job, nodes = given
                how, taken = "given", False
            else:
                job, how = take(topo, run_id, client)
                taken = True
                nodelist = client.out(["squeue", "-h", "-j", job, "-o", "%N"], f"squeue -j {job}").strip()
                nodes = client.hostnames(nodelist, f"job {job} node list")
            try:
                binding = bind(topo.host_names, nodes, topo.slurm.bind if topo.slurm else "name",
                               f"allocation {job}")
            except QoslabError:
                if taken:
                    client.call(["scancel", job])
                raise
            a = _shared[key] = Allocation(job, nodes, taken, binding, client, how)
        a.users += 1
        return a


def release(a: Allocation, topo_name: str, run_id: str) -> None:
    """One user of ``a`` is done; the last one ends the job if it was taken."""
    with _lock:
        a.users -= 1
        if a.users > 0:
            return
        _shared.pop((topo_name, run_id), None)
    a.release()


def time_limit_cut(topo_name: str) -> str | None:
    """When this process runs commands on topology ``topo_name`` in a Slurm job (an allocation
    of :func:`acquire` still in use) that has reached its time limit: the text of that cut
    (``cut by the time limit of Slurm job J (TIMEOUT)``), else None (no Slurm call then). What an
    interrupted campaign records: a trial cut by the limit is a failed attempt, not a Ctrl-C."""
    with _lock:
        allocs = [a for (t, _), a in _shared.items() if t == topo_name]
    for a in allocs:
        if a.time_limit_reached():
            return f"cut by the time limit of Slurm job {a.job_id} (TIMEOUT)"
    return None
