"""Helpers shared by the Slurm integration modules (test_slurm_campaign, test_slurm_submit,
test_slurm_mpi): the testbed's Slurm client commands, waits on the queue and on accounting, the
processes left in the hosts, and a fixture's Slurm cluster with its testbed (slurmctld, a slurmd
per host, munge, slurmdbd and its MariaDB: about 5 s to start).

Tests that share a cluster (test_slurm_submit's, for the module) do so through topology files
of one name and management port (:meth:`ModuleCluster.topology`): each test's ``slurm:`` block
(time limit, partition) is read when a campaign takes its allocation, the cluster itself is the
running one. Of two RayTracer campaigns one after the other on one testbed, the second had waited
out the first's TIME-WAIT on the workers' ports until the runner learnt that the RayTracer's
servers bind with SO_REUSEADDR (test_slurm_campaign's fixture has the numbers)."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from conftest import ECENET
from qoslab.testbed import Testbed
from qoslab.testbed import slurm as tbslurm
from qoslab.testbed.procs import namespace_pids, pid_alive
from qoslab.topology import load_topology

from .conftest import free_port, unique_name


def client(tb: Testbed, *argv: str) -> str:
    """stdout of the Slurm client command ``argv`` (sinfo, squeue, sacct, ...) against ``tb``'s
    cluster; asserts it exits 0 (its stderr shown otherwise)."""
    prefix, env = tb.slurm_client()
    r = subprocess.run([*prefix, *argv], capture_output=True, text=True, env={**os.environ, **env}, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def queue_empty(tb: Testbed, *argv: str, wait_s: float = 15.0) -> bool:
    """True once ``squeue -h ARGV`` lists nothing within ``wait_s`` seconds (a cancelled job is
    COMPLETING for a moment)."""
    deadline = time.monotonic() + wait_s
    while client(tb, "squeue", "-h", *argv).strip():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def sacct_rows(tb: Testbed, job: str, wait_s: float = 30.0) -> list[list[str]]:
    """``sacct -j JOB --format=JobID,NodeList,State -P -n`` as [JobID, NodeList, State] rows, once
    the job's own record has ended (slurmctld sends its records to slurmdbd as it goes), or as they
    are after ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    while True:
        rows = [ln.split("|") for ln in client(tb, "sacct", "-j", job, "--format=JobID,NodeList,State", "-P",
                                               "-n").splitlines() if ln.strip()]
        if any(r[0] == job and r[2] not in ("RUNNING", "PENDING", "REQUEUED") for r in rows) \
                or time.monotonic() > deadline:
            return rows
        time.sleep(0.5)


def accounting_daemons() -> list[str]:
    """mariadbd and slurmdbd processes on this machine (``comm PID``), whoever started them; a
    zombie (ended, waiting for this machine's PID 1 to reap it) is not one."""
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


def left_in_hosts(tb: Testbed) -> list[str]:
    """Names (``comm``) of the processes in ``tb``'s host namespaces besides the Slurm cluster's
    daemons and step managers."""
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


class ModuleCluster:
    """The ecenet testbed under a name of this pytest process, its Slurm cluster up."""

    def __init__(self, folder: Path, suffix: str, slurm: dict[str, Any]) -> None:
        self.data: dict[str, Any] = yaml.safe_load(ECENET.read_text())
        self.data["name"] = unique_name(suffix)
        self.data["switch"]["management"]["port"] = free_port()
        self.file = self.topology(folder / "topo-cluster.yaml", slurm=slurm)
        self.tb = Testbed(load_topology(self.file))

    def topology(self, path: Path, **changes: Any) -> Path:
        """``path``: this testbed's topology (same name, same management port) with the top-level
        keys ``changes`` replaced (``slurm={...}``: the test's own block)."""
        path.write_text(yaml.safe_dump({**self.data, **changes}))
        return path


def module_cluster(folder: Path, suffix: str, slurm: dict[str, Any] | None = None,
                   machine_wide: bool = False) -> Iterator[ModuleCluster]:
    """Generator for a fixture (module or test): a :class:`ModuleCluster` (topology files in ``folder``,
    named ``unique_name(suffix)``, the base ``slurm:`` block ``slurm``) up with its cluster, then
    down; after it no daemon of the cluster runs and neither its folder (munge key, database,
    ``slurmdbd.conf`` with the database password) nor a namespace is left. With ``machine_wide``
    no mariadbd or slurmdbd runs on the machine at all (the serial lane: nothing beside it)."""
    c = ModuleCluster(folder, suffix, slurm if slurm is not None else {})
    c.tb.up()  # the topology's slurm: block starts the cluster with the testbed
    daemons = tbslurm.daemon_pids(c.tb.topo)
    try:
        yield c
    finally:
        c.tb.down()
    assert not [k for k, p in daemons.items() if pid_alive(p)]
    assert not tbslurm.slurm_dir(c.tb.topo.name).exists()
    assert c.tb.existing() == []
    if machine_wide:
        assert accounting_daemons() == []  # no mariadbd, no slurmdbd left (ours or anyone's)


def steps_by_node(rows: list[list[str]], job: str) -> dict[str, int]:
    """Node -> steps of ``job`` in sacct rows (:func:`sacct_rows`): its ``JOB.N`` records."""
    counts: dict[str, int] = {}
    for jobid, nodes, _state in rows:
        if re.fullmatch(rf"{job}\.\d+", jobid):
            counts[nodes] = counts.get(nodes, 0) + 1
    return counts
