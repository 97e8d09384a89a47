"""The embedded testbed as a real Slurm cluster (Debian 12 ``slurm-wlm`` 22.05 and ``munge``), so a
playbook with ``executor: slurm`` runs through Slurm on the namespaces as it would on a cluster.

Per testbed, in ``/run/qoslab/slurm-<topology>/`` (mode 0700):

- ``munge.key`` (1024 random bytes, mode 0400 from the first byte, made per testbed, never
  logged) and one ``munged`` in this machine's namespace serving ``munge.socket`` (a Unix socket
  is reached by path, whatever the network namespace);
- ``slurm.conf``: ``slurmctld`` runs in the **head node's** namespace (the topology's first host,
  where the ``ssh`` executor's connections start too: the root namespace has no route to the
  testbed network), listening on the head's testbed address; one ``slurmd`` per host namespace,
  ``NodeName`` = the host's name, ``NodeAddr`` = its testbed address, its own spool folder
  (``spool-<host>``), pid and log file;
- every daemon runs as ``nsenter --net=/run/netns/NS unshare --uts sh -c 'hostname NAME; exec
  DAEMON -D'``: its own host name (Slurm finds its node by it), the machine's mount namespace
  (slurmd's cgroup plugin needs ``/sys/fs/cgroup``, which ``ip netns exec`` hides), process
  tracking by process group (``proctrack/pgid``, no cgroups);
- accounting (:mod:`.slurmdb`): a private ``mariadbd`` and a ``slurmdbd`` in the head node's
  namespace, ``AccountingStorageType=accounting_storage/slurmdbd``, so ``sacct`` lists every job
  and step with its nodes;
- ``TmpFS`` per node (``tmp-<host>``): Slurm's PMIx plugin makes each step's client folder
  ``TmpFS/spmix_appdir_<uid>_<job>.<step>``; with the default ``/tmp`` the second node's
  ``slurmstepd`` of an ``srun --mpi=pmix`` step on this one file system found the first's folder
  ("Cannot create directory \"/tmp/spmix_appdir_0_1.0\": File exists", then "pmixp_stepd_init()
  failed") and the step was aborted before launch.

Clients (``srun``, ``salloc``, ``squeue``, ``scancel``) run with ``SLURM_CONF`` pointing at the
state folder's ``slurm.conf``, inside the head's namespace (:func:`client_prefix`).
``Testbed.down`` ends the daemons with everything else in the namespaces and ``munged`` by PID,
and removes the folder: nothing is left behind.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from ..errors import EnvironmentProblem, QoslabError
from ..testbedplan import NETNS_DIR, STATE_DIR, host_namespace
from ..topology import Topology
from . import slurmdb
from .daemon import await_ready, in_node, pid_of, running, spawn
from .procs import descendants, kill_pids, pid_alive
from .statedir import private_dir

#: The daemons and clients this needs (Debian ``slurm-wlm``, ``munge``; ``make setup``).
SLURMCTLD, SLURMD, MUNGED = Path("/usr/sbin/slurmctld"), Path("/usr/sbin/slurmd"), Path("/usr/sbin/munged")
SLURMSTEPD = Path("/usr/sbin/slurmstepd")
#: Host name of the controller (its own UTS namespace) and the partition of every testbed node.
CONTROLLER = "qoslab-ctl"
DEFAULT_PARTITION = "qoslab"
#: Seconds the cluster may take until every node is idle.
START_TIMEOUT_S = 60.0
#: Size of the per-testbed munge key (bytes; munge wants at least 32).
MUNGE_KEY_BYTES = 1024


def slurm_dir(topology: str) -> Path:
    """State folder of the testbed's Slurm cluster: ``/run/qoslab/slurm-<topology>``."""
    return STATE_DIR / f"slurm-{topology}"


def cluster_name(topology: str) -> str:
    """Slurm's ``ClusterName`` for a testbed (lower case letters, digits, ``_``; at most 40)."""
    return (re.sub(r"[^a-z0-9_]", "_", topology.lower()) or "qoslab")[:40]


def partition_of(topo: Topology) -> str:
    """The partition holding the testbed's nodes: the ``slurm:`` block's, else ``qoslab``."""
    s = getattr(topo, "slurm", None)
    return s.partition if s is not None and s.partition else DEFAULT_PARTITION


def config_text(topo: Topology, d: Path, cpus: int) -> str:
    """The ``slurm.conf`` of the testbed (pure; see the module doc). ``cpus``: CPUs per node."""
    head = topo.hosts[0]
    lines = [
        f"ClusterName={cluster_name(topo.name)}",
        f"SlurmctldHost={CONTROLLER}({head.ip})",
        "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", f"AuthInfo=socket={d / 'munge.socket'}", "CredType=cred/munge",
        f"StateSaveLocation={d / 'ctld'}",
        f"SlurmdSpoolDir={d}/spool-%n",
        f"SlurmctldPidFile={d / 'slurmctld.pid'}", f"SlurmdPidFile={d}/slurmd-%n.pid",
        f"SlurmctldLogFile={d / 'slurmctld.log'}", f"SlurmdLogFile={d}/slurmd-%n.log",
        "ProctrackType=proctrack/pgid", "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none", *slurmdb.accounting_lines(head.ip, d), f"TmpFS={d}/tmp-%n",
        "JobCompType=jobcomp/filetxt", f"JobCompLoc={d / 'jobcomp.txt'}",
        "SchedulerType=sched/backfill", "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
        "MpiDefault=none", "ReturnToService=2", "KillWait=5", "InactiveLimit=0", "MinJobAge=300",
        "SlurmctldDebug=debug", "SlurmdDebug=info", "DebugFlags=Steps",
    ]
    for h in topo.hosts:
        lines.append(f"NodeName={h.name} NodeAddr={h.ip} NodeHostname={h.name} CPUs={cpus} State=UNKNOWN")
    lines.append(f"PartitionName={partition_of(topo)} Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
                 "OverSubscribe=FORCE:4")
    return "\n".join(lines) + "\n"


def client_env(topology: str) -> dict[str, str]:
    """Environment of a Slurm client talking to the testbed's cluster (``SLURM_CONF``)."""
    return {"SLURM_CONF": str(slurm_dir(topology) / "slurm.conf")}


def client_prefix(topo: Topology) -> list[str]:
    """Command prefix of a Slurm client on the testbed: inside the head node's namespace (the
    login node), where the controller and every node's address are reachable."""
    return ["nsenter", f"--net={NETNS_DIR / host_namespace(topo.name, topo.hosts[0].name)}"]


def client(topo: Topology) -> tuple[list[str], dict[str, str]]:
    """(command prefix, environment) of a Slurm client (``srun``, ``salloc``, ``squeue``) talking
    to the testbed's cluster: inside the head node's namespace, ``SLURM_CONF`` set. Raises
    QoslabError when the cluster was never started."""
    if not (slurm_dir(topo.name) / "slurm.conf").exists():
        raise QoslabError(f"the testbed {topo.name} has no Slurm cluster (give its topology a `slurm:` block or "
                          "run `qoslab testbed up --slurm`)")
    return client_prefix(topo), client_env(topo.name)


def _write_key(path: Path) -> None:
    """A fresh munge key at ``path``, mode 0400 from its creation (never readable by others)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    try:
        os.write(fd, os.urandom(MUNGE_KEY_BYTES))
    finally:
        os.close(fd)


def daemon_pids(topo: Topology) -> dict[str, int]:
    """Running daemons of the testbed's cluster: ``munged``, ``mariadbd``, ``slurmdbd``,
    ``slurmctld``, ``slurmd-<host>`` -> PID."""
    d = slurm_dir(topo.name)
    found = {"munged": pid_of(d / "munged.pid", "munged"), **slurmdb.daemon_pids(d),
             "slurmctld": pid_of(d / "slurmctld.pid", "slurmctld")}
    for h in topo.hosts:
        found[f"slurmd-{h.name}"] = pid_of(d / f"slurmd-{h.name}.pid", "slurmd")
    return {k: v for k, v in found.items() if v is not None}


def keep_pids(topo: Topology) -> set[int]:
    """PIDs a clean-up of the hosts must leave alone: the cluster's daemons, the controller's
    helpers (``slurmscriptd``) and every ``slurmstepd`` (a job step's manager; the step's own
    processes are not kept, and Slurm ends the step when they are gone)."""
    daemons = daemon_pids(topo)
    keep = set(daemons.values())
    if not keep:
        return keep
    if "slurmctld" in daemons:
        keep |= set(descendants(daemons["slurmctld"]))
    keep |= stepd_pids()
    return keep


def stepd_pids(binary: Path = SLURMSTEPD) -> set[int]:
    """PIDs of every running ``slurmstepd`` (``binary``), found by the identity (device, inode) of the binary
    their ``/proc/PID/exe`` points to, not by its name: Debian installs the binary as
    ``/usr/sbin/slurmstepd-wlm`` behind the alternatives symlink ``/usr/sbin/slurmstepd``, which
    is what ``exe`` reads, so a name comparison never matched and a campaign's clean-up of the
    hosts ended the batch step's manager of the job it ran in (the job then ran until its time
    limit: nothing was left to report the batch script's end)."""
    try:
        want = os.stat(binary)
    except OSError:
        return set()
    found: set[int] = set()
    for e in os.scandir("/proc"):
        if e.name.isdigit():
            try:
                st = os.stat(f"/proc/{e.name}/exe")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (want.st_dev, want.st_ino):
                found.add(int(e.name))
    return found


def start(topo: Topology) -> bool:
    """Start the testbed's Slurm cluster unless it runs (idempotent): munge key, ``munged``,
    ``slurm.conf``, the accounting (:mod:`.slurmdb`: ``mariadbd``, ``slurmdbd``, the cluster
    registered), ``slurmctld``, one ``slurmd`` per host, then wait until every node is idle.
    Returns True when it started it. On failure whatever it started is ended. Raises
    EnvironmentProblem when Slurm, munge, slurmdbd or MariaDB is not installed, QoslabError naming
    the daemon that did not start (with the last lines of its log)."""
    missing = [str(p) for p in (SLURMCTLD, SLURMD, MUNGED) if not p.exists()]
    if missing or shutil.which("srun") is None:
        raise EnvironmentProblem(f"{', '.join(missing) or 'srun'} missing: install slurm-wlm and munge (make setup)")
    if slurmdb.missing():
        raise EnvironmentProblem(f"{', '.join(slurmdb.missing())} missing: install slurmdbd and mariadb-server "
                                 "(make setup)")
    running = daemon_pids(topo)
    if len(running) == len(topo.hosts) + 4:
        return False
    stop(topo)
    d = private_dir(slurm_dir(topo.name))
    try:
        _start(topo, d)
    except BaseException:
        stop(topo)
        raise
    return True


def root_netns(topology: str) -> Path:
    """A handle on this machine's own network namespace (``mount --bind /proc/self/ns/net``) in
    the cluster's folder: a batch job's runner enters it with ``nsenter --net=HANDLE`` to reach the
    virtual switch's loopback endpoint (a job step may not open ``/proc/1/ns/net``)."""
    return slurm_dir(topology) / "root-netns"


def _start(topo: Topology, d: Path) -> None:
    handle = root_netns(topo.name)
    handle.touch()
    subprocess.run(["mount", "--bind", "/proc/self/ns/net", str(handle)], check=True, capture_output=True)
    for sub in ["ctld", *(f"{kind}-{h.name}" for h in topo.hosts for kind in ("spool", "tmp"))]:
        private_dir(d / sub)
    _write_key(d / "munge.key")
    (d / "slurm.conf").write_text(config_text(topo, d, os.cpu_count() or 1))
    env = client_env(topo.name)
    deadline = time.monotonic() + START_TIMEOUT_S
    munged = spawn([str(MUNGED), "-F", "--force", f"--socket={d / 'munge.socket'}", f"--key-file={d / 'munge.key'}",
                    f"--pid-file={d / 'munged.pid'}", f"--seed-file={d / 'munged.seed'}",
                    f"--log-file={d / 'munged.log'}"], d / "munged.out", env)
    await_ready(lambda: (d / "munge.socket").exists(), munged, "munged", d / "munged.out", deadline)
    slurmdb.start(topo, cluster_name(topo.name), d, env, deadline)
    ctld = spawn(in_node(topo, topo.hosts[0].name, CONTROLLER, [str(SLURMCTLD), "-D", "-i"]),
                 d / "slurmctld.out", env)
    await_ready(running(d / "slurmctld.pid", "slurmctld"), ctld, "slurmctld", d / "slurmctld.log", deadline)
    for h in topo.hosts:
        p = spawn(in_node(topo, h.name, h.name, [str(SLURMD), "-D"]), d / f"slurmd-{h.name}.out", env)
        await_ready(running(d / f"slurmd-{h.name}.pid", "slurmd"), p, f"slurmd on {h.name}",
                    d / f"slurmd-{h.name}.out", deadline)
    while True:
        r = subprocess.run([*client_prefix(topo), "sinfo", "-h", "-N", "-o", "%N %T"], capture_output=True,
                           text=True, env={**os.environ, **env}, timeout=15)
        states = dict(line.split() for line in r.stdout.splitlines() if len(line.split()) == 2)
        if r.returncode == 0 and len(states) == len(topo.hosts) and all(s == "idle" for s in states.values()):
            return
        if time.monotonic() > deadline:
            raise QoslabError(f"Slurm cluster of {topo.name}: nodes not idle after {START_TIMEOUT_S:g} s "
                              f"({', '.join(f'{k} {v}' for k, v in states.items()) or r.stderr.strip()[-200:]})")
        time.sleep(0.2)


def stop(topo: Topology) -> list[int]:
    """End the cluster's daemons by PID (slurmd first, then slurmctld, slurmdbd, mariadbd, munged)
    and remove its state folder (key and database included). Returns the PIDs signalled. Idempotent."""
    pids = daemon_pids(topo)
    order = [p for k, p in pids.items() if k.startswith("slurmd-")] + \
        [pids[k] for k in ("slurmctld", "slurmdbd", "mariadbd", "munged") if k in pids]
    killed = kill_pids(order) if order else []
    handle = root_netns(topo.name)
    if handle.exists():
        subprocess.run(["umount", "-l", str(handle)], capture_output=True)
    deadline = time.monotonic() + 5.0  # SIGKILLed daemons take a moment to leave the process table
    while any(pid_alive(p) for p in killed) and time.monotonic() < deadline:
        time.sleep(0.05)
    shutil.rmtree(slurm_dir(topo.name), ignore_errors=True)
    return killed
