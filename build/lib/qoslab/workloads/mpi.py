"""``mpi``: an Open MPI program (Debian ``openmpi-bin``) across the workload hosts (issue 34).

qoslab launches ``mpirun`` on the head node through its executor and sets what only an expert
finds: the launcher agent (``plm_rsh_agent``: a script written per run that runs Open MPI's
``orted`` in each host's namespace with that host's own hostname, ``unshare --uts``, so the
daemons see distinct nodes), no tree spawn (``plm_rsh_no_tree_spawn``: every daemon is started
from the head, where the agent's namespace map is), the BTL and out-of-band interface
(``interface``, ``eth0`` on the testbed) and the BTL's TCP port range (``btl_port_min`` ..
``+btl_port_range``: Open MPI's TCP BTL sets no DSCP, so a profile classifies MPI traffic by
this range) and ``mpi_yield_when_idle 1`` (``yield_when_idle``): the testbed's hosts share this
machine's cores, which Open MPI cannot see (each namespace is a node to it), and ranks that
busy-poll on oversubscribed cores wait for one another's scheduler time slices (measured, 4
ranks on 2 cores: allreduce p50 8.0 ms busy-polling, 0.33 ms yielding; examples/mpi-osu/README.md).
The program and its arguments come from the playbook (templates as for ``command``);
its last JSON line is the result, under the ``command`` contract (``elapsed_s``, ``valid``,
``metrics``). ``examples/mpi-osu/`` ships an OSU-style ping-pong/allreduce/barrier, compiled by
``make setup``, whose per-operation latency percentiles are its metrics.

On the ``slurm`` executor (issue 51) the ranks start the way a cluster's users start them, in
the campaign's allocation (:mod:`qoslab.executors.slurmmpi`): ``srun --mpi=pmix`` (or ``pmi2``)
when the cluster offers a plugin the MPI library has a client for, else ``mpirun`` run as a step
on the first workload node, which starts ``orted`` on the others through Slurm (``plm slurm``,
nested ``srun`` steps with ``SLURM_OVERLAP=1``; the step's environment set to the workload
nodes: :func:`allocation_env`). ``launcher`` (``auto``, ``srun``, ``mpirun``)
picks; the choice goes to the trial's ``mpi-launch.json`` and the ``auto`` choice to the run's
provenance. The MCA settings above reach srun-launched ranks as ``OMPI_MCA_*`` variables, with
one fence in MPI_Init instead of two (:data:`SRUN_MCA`: a rank of a congested run died in
MPI_Init without it).
On a cluster driven over ``ssh`` Open MPI's own ssh launcher would be used, which this backend
does not configure yet.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from ..errors import QoslabError
from ..executors import BackgroundProcess, Executor
from .base import RESULT_FILE, AddressOf, ExecutorOf, Pool, WorkloadBase, head_result, record_head, run_pooled
from .command import check_result, check_template
from .pool import ProcessPool, WorkloadRun

#: The example program built by ``make setup`` (scripts/setup.sh) from examples/mpi-osu/.
EXAMPLE = "{root}/examples/mpi-osu/build/osu-qoslab"
#: Template variables of ``program`` and ``args`` ({name} in a word; checked as the command kind's).
TEMPLATE_VARS = ("root", "timeout_s", "ranks")


class MpiSettings(WorkloadBase):
    """``kind: mpi``: ``program`` and ``args`` (templates: ``{root}``, ``{timeout_s}``, ``{ranks}``),
    ``slots`` (ranks per host), ``interface`` (BTL/OOB interface), ``btl_port_min`` and
    ``btl_port_range`` (the TCP BTL's ports, for a profile's ACLs), ``yield_when_idle`` (Open MPI's
    ``mpi_yield_when_idle``: a rank waiting for a message yields its core; true by default, as the
    testbed's ranks share this machine's cores)."""

    kind: Literal["mpi"] = "mpi"
    program: str = EXAMPLE
    args: str = "--iters 200 --warmup 20 --bytes 8"
    slots: int = Field(1, ge=1, le=64)
    interface: str = Field("eth0", pattern=r"^[A-Za-z0-9_.-]{1,15}$")
    btl_port_min: int = Field(7400, ge=1024, le=65000)
    btl_port_range: int = Field(32, ge=1, le=512)
    yield_when_idle: bool = True
    launcher: Literal["auto", "srun", "mpirun"] = Field(
        "auto", description="On the slurm executor: `srun` (a direct launch through Slurm's PMI: "
        "`srun --mpi=pmix` or `pmi2`, whichever the cluster offers and Open MPI speaks), `mpirun` (inside "
        "the allocation, orted started through Slurm) or `auto` (srun when a plugin works, else mpirun). "
        "The netns executor always uses mpirun with qoslab's launcher agent.")

    @field_validator("program", "args")
    @classmethod
    def _template(cls, v: str, info: ValidationInfo) -> str:
        if info.field_name == "args" and not v.strip():
            return v  # no arguments
        return check_template(v, TEMPLATE_VARS)

    def listen_ports(self) -> list[tuple[str, str, int]]:
        return [("btl_port_min", "tcp", p) for p in range(self.btl_port_min, self.btl_port_min + self.btl_port_range)]

    def describe(self) -> str:
        return f"mpi {self.program.rsplit('/', 1)[-1]} {self.args} on {len(self.hosts)} hosts x {self.slots} slot(s)"


def agent_script(hosts: dict[str, tuple[str, str]]) -> str:
    """The launcher agent (``plm_rsh_agent``) for ``hosts``: address -> (namespace, hostname).
    Called by mpirun as ``AGENT [ssh-style options] HOST COMMAND...``; runs COMMAND in HOST's
    namespace under HOST's hostname (a UTS namespace of its own). Pure."""
    cases = "\n".join(f"  {shlex.quote(ip)}) ns={shlex.quote(ns)}; name={shlex.quote(name)};;"
                      for ip, (ns, name) in hosts.items())
    return ("#!/bin/sh\n# qoslab's Open MPI launcher agent (workloads/mpi.py), written per run\n"
            'while [ "${1#-}" != "$1" ]; do shift; done\n'
            'host=$1; shift\ncase "$host" in\n' + cases + "\n"
            '  *) echo "qoslab mpi agent: unknown host $host" >&2; exit 255;;\nesac\n'
            'exec ip netns exec "$ns" unshare --uts sh -c "hostname $name; $*"\n')


def mca_settings(s: MpiSettings) -> dict[str, str]:
    """The Open MPI MCA parameters qoslab sets for every launcher (BTL, interfaces, ports, yield). Pure."""
    return {"btl": "tcp,self", "pml": "ob1", "btl_tcp_if_include": s.interface, "oob_tcp_if_include": s.interface,
            "btl_tcp_port_min_v4": str(s.btl_port_min), "btl_tcp_port_range_v4": str(s.btl_port_range),
            "mpi_yield_when_idle": "1" if s.yield_when_idle else "0"}


def program_argv(s: MpiSettings, ranks: int, root: str) -> list[str]:
    """The program and its arguments, templates filled (``{root}``, ``{timeout_s}``, ``{ranks}``). Pure."""
    variables = dict(zip(TEMPLATE_VARS, (root.rstrip("/"), f"{s.timeout_s:g}", ranks), strict=True))
    return [w.format(**variables) for w in shlex.split(s.program)] + \
        [w.format(**variables) for w in shlex.split(s.args)]


def mpirun_argv(s: MpiSettings, ips: list[str], agent: Path | None, root: str) -> list[str]:
    """``mpirun`` over ``ips`` (addresses; Slurm node names when ``agent`` is None) with every
    setting qoslab owns (see the module doc), then the program. With an ``agent`` (the netns
    executor) orted starts through it, on the hosts and slots given (``--host``); without
    (inside a Slurm allocation) through Slurm (``plm slurm``), on the nodes and slots of
    :func:`allocation_env`. Pure."""
    ranks = len(ips) * s.slots
    argv = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks)]
    if agent is not None:
        argv += ["--host", ",".join(f"{ip}:{s.slots}" for ip in ips)]
    launch = {"plm_rsh_agent": str(agent), "plm_rsh_no_tree_spawn": "1"} if agent is not None else {"plm": "slurm"}
    for k, v in {**launch, **mca_settings(s)}.items():
        argv += ["--mca", k, v]
    return argv + program_argv(s, ranks, root)


def allocation_env(nodes: list[str], slots: int) -> dict[str, str]:
    """The environment of an ``mpirun`` run as a step on the first of ``nodes`` (Slurm node
    names): the allocation it may use, ``slots`` on each node, and ``SLURM_OVERLAP=1`` for its
    nested ``srun`` of ``orted``. A step's own variables name only its node (``SLURM_NODELIST``,
    ``SLURM_TASKS_PER_NODE``, ...): Open MPI read them as its whole allocation, and its ``srun``
    of the other nodes' ``orted`` (no ``--nodelist`` then) was refused: "Unable to create step for
    job 1: More processors requested than permitted". Pure."""
    per_node, n = f"{slots}(x{len(nodes)})", str(len(nodes))
    return {"SLURM_OVERLAP": "1", "SLURM_NODELIST": ",".join(nodes), "SLURM_JOB_NODELIST": ",".join(nodes),
            "SLURM_NNODES": n, "SLURM_JOB_NUM_NODES": n, "SLURM_TASKS_PER_NODE": per_node,
            "SLURM_JOB_CPUS_PER_NODE": per_node}


#: MCA settings of srun-launched ranks only: MPI_Init's one PMIx fence is its closing barrier, after
#: the PML registered its receive callbacks; the peers' addresses come by direct modex (PMIx_Get
#: answered by the peer's slurmstepd). Open MPI 4.1 otherwise fences twice (the modex exchange,
#: then the barrier) and ignores a fence's error status (open-mpi/ompi#5086; the race:
#: open-mpi/ompi#13559). Under a flood a rank died in MPI_Init (SIGSEGV "Failing at address:
#: (nil)"): a peer released early from the barrier (Slurm 22.05's PMIx collectives give up a fence
#: whose send between step managers failed, ``pmixp_coll_tree.c``) sent its first message to it
#: while it still waited in the first fence, and its TCP BTL called ob1's MATCH callback (tag 0x41)
#: before ob1 had registered it (examples/mpi-osu/README.md has the backtrace).
SRUN_MCA = {"pmix_base_async_modex": "1", "pmix_base_collect_data": "0"}


def srun_env(s: MpiSettings) -> dict[str, str]:
    """The MCA settings (:func:`mca_settings` and :data:`SRUN_MCA`) as ``OMPI_MCA_*`` variables,
    for ranks srun starts itself. Pure."""
    return {f"OMPI_MCA_{k}": v for k, v in {**mca_settings(s), **SRUN_MCA}.items()}


def slurm_head(s: MpiSettings, executor_of: ExecutorOf, out_dir: Path, logs: dict[str, Path]) -> dict:
    """Run the ranks in the slurm executor's allocation (see the module doc): ``srun --mpi=X``
    over the workload hosts' nodes, one step, ``slots`` tasks on each; or ``mpirun`` as a step on
    the first node. Writes ``mpi-launch.json`` (the choice and why), the launcher's stderr to
    ``workload-manager.log`` and the result (``launch`` added) to ``workload-result.json``;
    returns the checked result. Raises QoslabError when no JSON result line came (naming the
    launcher and its last output) or ``launcher: srun`` has no working plugin."""
    ex: Any = executor_of(s.hosts[0])
    nodes = [getattr(executor_of(h), "slurm_node", h) for h in s.hosts]
    launch = ex.mpi_launch(s.launcher)
    (out_dir / "mpi-launch.json").write_text(json.dumps(launch.to_json(), indent=1))
    root, ranks, timeout = str(ex.qoslab_root), len(nodes) * s.slots, s.timeout_s + 30
    if launch.mpi:
        res = ex.step(program_argv(s, ranks, root), nodes=nodes, tasks_per_node=s.slots, mpi=launch.mpi,
                      timeout=timeout, env=srun_env(s))
    else:  # orted through Slurm: nested srun steps, sharing the allocation's CPUs with the campaign's
        env = [f"{k}={v}" for k, v in allocation_env(nodes, s.slots).items()]
        res = ex.run(["env", *env, *mpirun_argv(s, nodes, None, root)], timeout=timeout, check=False)

    def finish(result: dict) -> dict:
        checked = check_result(result)
        checked["launch"] = launch.describe()
        return checked

    return record_head(res, out_dir, logs, f"{launch.describe()} on {', '.join(nodes)}", finish)


class Mpi:
    """The ``mpi`` backend (see the module doc). No warm workers: mpirun starts every rank per run."""

    settings_model = MpiSettings

    def open_pool(self, executor_of: ExecutorOf, address_of: AddressOf, log_dir: Path,
                  lifetime_s: float | None = None, renew_below_s: float = 0.0) -> Pool:
        def start(s: Any, host: str, ex: Executor, ip: str, log: str, life: float | None) -> BackgroundProcess:
            raise AssertionError("the mpi backend keeps no workers")

        return ProcessPool(executor_of, address_of, log_dir, start, key_of=lambda s: (tuple(s.hosts),),
                           hosts_of=lambda s: [], ready_port=lambda s: None, lifetime_s=lifetime_s,
                           renew_below_s=renew_below_s)

    def run(self, settings: Any, executor_of: ExecutorOf, address_of: AddressOf, out_dir: Path,
            on_started: Callable[[dict[str, BackgroundProcess]], None] | None = None,
            pool: Pool | None = None, lifetime_s: float | None = None) -> WorkloadRun:
        out_dir.mkdir(parents=True, exist_ok=True)
        ex = executor_of(settings.hosts[0])
        if callable(getattr(ex, "mpi_launch", None)):  # the slurm executor
            return run_pooled(settings, pool, lambda: self.open_pool(executor_of, address_of, out_dir, lifetime_s),
                              on_started, lambda logs: slurm_head(settings, executor_of, out_dir, logs))
        if settings.launcher == "srun":
            raise QoslabError("kind mpi: launcher srun needs the slurm executor")
        hosts = {}
        for h in settings.hosts:
            ns = getattr(executor_of(h), "namespace", None)
            if not ns:
                raise QoslabError(f"kind mpi runs on the netns executor (the embedded testbed); {h} has none")
            hosts[address_of(h)] = (ns, h)
        agent = out_dir / "mpi-agent.sh"
        agent.write_text(agent_script(hosts))
        agent.chmod(0o755)

        def head(logs: dict[str, Path]) -> dict:
            argv = ["unshare", "--uts", "sh", "-c", f'hostname {shlex.quote(settings.hosts[0])}; exec "$@"', "sh",
                    *mpirun_argv(settings, list(hosts), agent.resolve(), str(ex.qoslab_root))]
            checked = check_result(head_result(ex, argv, settings.timeout_s + 30, out_dir, logs, "mpirun"))
            (out_dir / RESULT_FILE).write_text(json.dumps(checked, indent=1))
            return checked

        return run_pooled(settings, pool, lambda: self.open_pool(executor_of, address_of, out_dir, lifetime_s),
                          on_started, head)

    def row(self, result: dict) -> dict[str, Any]:
        """As the command workload's (elapsed_s, the declared metrics)."""
        from .command import Command

        return Command().row(result)
