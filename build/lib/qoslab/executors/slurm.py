"""The ``slurm`` executor: a host's commands as job steps of one Slurm allocation, the way a
cluster's users start processes (see :mod:`qoslab.executors.base` for the contract).

- **The allocation** (:mod:`.slurmalloc`): the job this process runs in (``SLURM_JOB_ID``), a
  running job of this run (a killed run's: the resume runs in it) or one qoslab takes with
  ``salloc --no-shell`` and releases at the end. Hosts are bound to its nodes by name or order.
- **Every command is a step**: ``srun --jobid=J --nodelist=NODE --nodes=1 --ntasks=1 --overlap
  --job-name=qoslab-<run>``, so Slurm accounts, limits and ends it. A foreground command runs
  under the node's GNU ``timeout``; a background one under a small ``sh`` that writes its PID
  and step ID to a pid file (the PID returned is the command's on the node), redirects its
  output on the node and sets its timer slack, under ``timeout`` when it has a lifetime.
- **Bounded lifetime, kill -9**: the ``srun`` client of a step runs on this machine with a
  parent-death signal (SIGTERM when the thread that started it dies, even by SIGKILL), and
  ``srun`` ends its step on SIGTERM; a resumed run cancels (``scancel``) every step of its job
  still named after the run (:meth:`SlurmExecutor.end_leftovers`); a taken allocation ends at
  its time limit whatever happens.
- **Stop**: ``scancel --signal=TERM`` of the step, ``--signal=KILL`` after the grace period.
- **MPI** (the ``mpi`` workload): :meth:`SlurmExecutor.mpi_launch` chooses ``srun --mpi=X`` or
  ``mpirun`` inside the allocation (:mod:`.slurmmpi`) from ``srun --mpi=list`` and the node's
  ``ompi_info``, asked once per allocation; :meth:`SlurmExecutor.step` runs one step over
  several nodes (the ranks as its tasks). The ``auto`` choice is part of :meth:`facts`.
- **Files**: a Slurm cluster shares its file system between login and compute nodes (the
  embedded testbed shares this machine's): :meth:`SlurmExecutor.node_dir` is the local folder
  itself and :meth:`SlurmExecutor.fetch` a copy.
"""

from __future__ import annotations

import ctypes
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import CommandFailed, CommandTimeout, QoslabError
from ..topology import repo_root
from . import slurmalloc, slurmmpi
from .base import BackgroundProcess, CommandResult, shared_fetch, shared_node_dir
from .local import PR_SET_PDEATHSIG, kill_group
from .sshscripts import RUN_MARKER

#: Seconds the srun client may take beyond a command's own timeout (step launch, I/O).
SRUN_MARGIN_S = 15.0
#: Seconds a started step has to write its pid file.
START_TIMEOUT_S = 20.0
#: Seconds between a lifetime's SIGTERM and its SIGKILL (``timeout --kill-after``).
KILL_AFTER_S = 5
#: Seconds a step refused by a job its time limit ended waits for Slurm's SIGTERM.
SIGTERM_WAIT_S = 30.0


#: srun's line when its own reverse lookup of an address fails while it formats another error
#: (Slurm 22.05 ``sockaddr_to_string``: ``getnameinfo`` without NI_NUMERICHOST): no cause itself.
LOOKUP_NOISE = re.compile(r"^srun: error: Unable to get address: ")


def srun_error(err: str) -> str:
    """The line of srun's stderr ``err`` that names why it failed: its first ``srun: error:`` or
    ``srun: fatal:`` line that is not :data:`LOOKUP_NOISE` (under a flood srun printed "Unable to get
    address: Temporary failure in name resolution" before the step launch's own error), else its
    first line. Pure."""
    lines = [ln.strip() for ln in err.strip().splitlines() if ln.strip()]
    cause = [ln for ln in lines if ln.startswith(("srun: error:", "srun: fatal:")) and not LOOKUP_NOISE.match(ln)]
    return (cause or lines or [""])[0]


def _pdeathsig() -> None:
    """``preexec_fn`` of an srun client: SIGTERM when the starting thread dies (srun then ends its
    step); no cgroup joining (the client of a kept worker outlives the trial's cgroup)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class SlurmExecutor:
    """Host ``node`` of a topology as job steps on its allocation node (see the module doc).
    ``alloc``: the run's :class:`.slurmalloc.Allocation`; ``run_id`` names the steps;
    ``local_root``: where pid files go (the campaign folder, shared with the nodes)."""

    def __init__(self, node: str, alloc: slurmalloc.Allocation, *, run_id: str, topo_name: str,
                 local_root: Path | None = None) -> None:
        self.node, self.alloc, self.run_id, self.topo_name = node, alloc, run_id, topo_name
        self.slurm_node = alloc.binding[node]
        self.step_name = slurmalloc.job_name(run_id)
        self.qoslab_root: str | Path = repo_root()
        #: a folder of our own for the pid files when there is no campaign folder (removed by close)
        self._tmp = None if local_root is not None else Path(tempfile.mkdtemp(prefix="qoslab-slurm-"))
        self._pids = (local_root if local_root is not None else Path(str(self._tmp))) / ".slurm" / node
        self._pids.mkdir(parents=True, exist_ok=True)
        self._started: list[BackgroundProcess] = []
        self._closed = False

    @classmethod
    def for_topology(cls, node: str, topology: Any, *, testbed: Any = None, local_root: Path | None = None,
                     run_id: str = "adhoc", **_: Any) -> SlurmExecutor:
        """The executor of ``node``: on the embedded testbed through its Slurm cluster
        (``testbed.slurm_client()``), on a cluster through the Slurm commands on PATH. Takes (or
        finds) the run's allocation on first use. Raises QoslabError / ConfigError (one line,
        nothing submitted) when the allocation cannot be had."""
        if testbed is not None:
            prefix, env = testbed.slurm_client()
            client = slurmalloc.SlurmClient(tuple(prefix), env)
        else:
            client = slurmalloc.SlurmClient()
        alloc = slurmalloc.acquire(topology, run_id, client)
        try:
            return cls(node, alloc, run_id=run_id, topo_name=topology.name, local_root=local_root)
        except BaseException:
            slurmalloc.release(alloc, topology.name, run_id)
            raise

    # -- srun ---------------------------------------------------------------------------------
    def _srun(self, cwd: str | Path | None = None) -> list[str]:
        return [*self.alloc.client.prefix, "srun", f"--jobid={self.alloc.job_id}", f"--nodelist={self.slurm_node}",
                "--nodes=1", "--ntasks=1", "--overlap", "--quiet", "--kill-on-bad-exit=0",
                f"--job-name={self.step_name}", *([f"--chdir={cwd}"] if cwd else [])]

    def _env(self, env: Mapping[str, str] | None) -> dict[str, str]:
        """srun's environment, exported to the step's tasks (srun's default ``--export=ALL``): with
        :data:`~.sshscripts.RUN_MARKER` (this run's id), which the testbed's clean-up of the hosts
        ends by (:meth:`qoslab.testbed.Testbed.end_survivors`)."""
        return {**os.environ, **self.alloc.client.env, **(env or {}), RUN_MARKER: self.run_id}

    @staticmethod
    def _rc(rc: int | None) -> int | None:
        """srun's exit status -> the contract's (a task killed by signal N: -N)."""
        if rc is None:
            return None
        if rc < 0:
            return rc
        return -(rc - 128) if rc > 128 else rc

    # -- the Executor contract ----------------------------------------------------------------
    def run(self, argv: Sequence[str], *, timeout: float = 60.0, check: bool = True, input: str | None = None,
            cwd: str | Path | None = None, env: Mapping[str, str] | None = None) -> CommandResult:
        """See :meth:`qoslab.executors.base.Executor.run` (a step under the node's ``timeout``)."""
        if isinstance(argv, str):
            raise TypeError("argv must be a sequence of strings, not one string")
        return self._run_step(self._srun(cwd), [str(a) for a in argv], timeout, check, input, env)

    def step(self, argv: Sequence[str], *, nodes: Sequence[str], tasks_per_node: int = 1, mpi: str | None = None,
             timeout: float = 60.0, check: bool = False, env: Mapping[str, str] | None = None) -> CommandResult:
        """Run ``argv`` as one step of the allocation over ``nodes`` (Slurm node names),
        ``tasks_per_node`` tasks on each (``srun --nodelist --ntasks-per-node --overlap
        --kill-on-bad-exit=1``), with ``--mpi=mpi`` (None: ``none``), each task under the node's
        ``timeout``; ``env`` is exported to the tasks. Returns the step's result (stdout of every
        task, merged). Raises what :meth:`run` raises."""
        if not nodes or tasks_per_node < 1:
            raise ValueError("a step needs at least one node and one task per node")
        srun = [*self.alloc.client.prefix, "srun", f"--jobid={self.alloc.job_id}", f"--nodelist={','.join(nodes)}",
                f"--nodes={len(nodes)}", f"--ntasks={len(nodes) * tasks_per_node}",
                f"--ntasks-per-node={tasks_per_node}", "--overlap", "--quiet", "--kill-on-bad-exit=1",
                f"--mpi={mpi or 'none'}", f"--job-name={self.step_name}"]
        return self._run_step(srun, [str(a) for a in argv], timeout, check, None, env)

    def mpi_launch(self, want: str = "auto") -> slurmmpi.Launch:
        """How an MPI program starts on this allocation (:func:`.slurmmpi.choose` for ``want``:
        ``auto``, ``srun`` or ``mpirun``), from ``srun --mpi=list`` and ``ompi_info`` on this
        host's node, asked once per allocation. Raises QoslabError for ``want=srun`` when no
        plugin works."""
        offer = self.alloc.mpi_offer
        if offer is None:
            listed = self.alloc.client.call(["srun", "--mpi=list"])
            try:
                info = self.run(["ompi_info"], timeout=60, check=False).stdout
            except QoslabError:  # no Open MPI on the node: mpirun will say so
                info = ""
            offer = self.alloc.mpi_offer = (slurmmpi.parse_srun_mpi_list(listed.stdout),
                                            slurmmpi.parse_ompi_pmix(info))
        return slurmmpi.choose(offer[0], offer[1], want)

    def _run_step(self, srun: list[str], args: list[str], timeout: float, check: bool, input: str | None,
                  env: Mapping[str, str] | None) -> CommandResult:
        full = [*srun, "timeout", "--kill-after=2", f"{timeout:.3f}", *args]
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(full, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                                 env=self._env(env), start_new_session=True, preexec_fn=_pdeathsig)
        except FileNotFoundError:
            raise QoslabError(f"on {self.node}: {full[0]} not found on PATH (the slurm executor needs Slurm's "
                              "client commands)") from None
        try:
            out, err = p.communicate(input, timeout=timeout + SRUN_MARGIN_S)
        except subprocess.TimeoutExpired:
            kill_group(p.pid, signal.SIGTERM)  # srun ends its step on SIGTERM
            p.communicate()
            raise CommandTimeout(self.node, args, timeout) from None
        except BaseException:
            kill_group(p.pid, signal.SIGTERM)
            p.wait()
            raise
        dt = time.monotonic() - t0
        rc = p.returncode
        err = "".join(line for line in err.splitlines(keepends=True)
                      if not line.startswith("srun: error: ") or not re.search(r"task \d+: ", line))
        if rc in (124, 137) and dt >= timeout * 0.95:
            raise CommandTimeout(self.node, args, timeout)
        if rc in (126, 127) and "timeout: failed to run command" in err:
            raise QoslabError(f"on {self.node}: cannot run {args[0]}: {err.strip().rsplit(': ', 1)[-1]}")
        if rc != 0 and err.startswith(("srun: error:", "srun: fatal:")):
            self._job_ending(err)
            raise QoslabError(f"on {self.node} (node {self.slurm_node}, job {self.alloc.job_id}): "
                              f"{srun_error(err)}")
        res = CommandResult(self.node, args, rc, out, err, dt)
        if check and rc != 0:
            raise CommandFailed(self.node, args, rc, err or out)
        return res

    def start(self, argv: Sequence[str], *, stdout: str | Path | None = None, stderr: str | Path | None = None,
              cwd: str | Path | None = None, env: Mapping[str, str] | None = None,
              timer_slack_ns: int | None = None, lifetime_s: float | None = None) -> BackgroundProcess:
        """See :meth:`qoslab.executors.base.Executor.start`: a step whose PID (on the node) is the
        command's own (``timeout``'s with a lifetime)."""
        if lifetime_s is not None and lifetime_s <= 0:
            raise QoslabError(f"on {self.node}: lifetime must be > 0 s, got {lifetime_s:g}")
        if timer_slack_ns is not None and timer_slack_ns < 1:
            raise ValueError(f"timer slack must be >= 1 ns, got {timer_slack_ns}")
        pidfile = self._pids / f"{time.monotonic_ns()}.pid"
        slack = f"echo {int(timer_slack_ns)} > /proc/self/timerslack_ns 2>/dev/null; " if timer_slack_ns else ""
        life = ["timeout", f"--kill-after={KILL_AFTER_S}", f"{lifetime_s:.3f}"] if lifetime_s is not None else []
        inner = (f'echo "$$ $SLURM_STEP_ID" > {shlex.quote(str(pidfile))}.tmp && '
                 f'mv {shlex.quote(str(pidfile))}.tmp {shlex.quote(str(pidfile))}; {slack}'
                 f'exec "$@" </dev/null >>{shlex.quote(str(stdout or "/dev/null"))} '
                 f'2>>{shlex.quote(str(stderr or "/dev/null"))}')
        full = [*self._srun(cwd), "sh", "-c", inner, "qoslab", *life, *[str(a) for a in argv]]
        log = open(self._pids / "srun.log", "ab")
        try:
            p = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=self._env(env),
                                 start_new_session=True, preexec_fn=_pdeathsig)
        except FileNotFoundError:
            raise QoslabError(f"on {self.node}: {full[0]} not found on PATH") from None
        finally:
            log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not pidfile.exists():
            if p.poll() is not None or time.monotonic() > deadline:
                kill_group(p.pid, signal.SIGTERM)
                p.wait()
                tail = (self._pids / "srun.log").read_text(errors="replace").strip().splitlines()[-1:]
                self._job_ending(tail[0] if tail else "")
                raise QoslabError(f"on {self.node}: cannot start `{' '.join(map(str, argv))}` as a step of job "
                                  f"{self.alloc.job_id}: {tail[0] if tail else f'srun exit {p.returncode}'}")
            time.sleep(0.01)
        pid, _, step = pidfile.read_text().strip().partition(" ")
        pidfile.unlink(missing_ok=True)
        proc = BackgroundProcess(node=self.node, argv=list(argv), pid=int(pid),
                                 stdout_path=Path(stdout) if stdout else None,
                                 stderr_path=Path(stderr) if stderr else None,
                                 handle=(p, f"{self.alloc.job_id}.{step}"),
                                 deadline=None if lifetime_s is None else time.monotonic() + lifetime_s)
        self._started.append(proc)
        return proc

    def _job_ending(self, err: str) -> None:
        """srun refused a step because the job is completing: when that job is the one this
        process runs in (``given``: a batch job) and its time limit cut it, Slurm's SIGTERM to
        this process is on its way: the main thread waits for it (at most :data:`SIGTERM_WAIT_S`; a
        worker thread's refusal is its error, the main thread meets the job's end next), so the campaign
        records the cut trial as a failed attempt (an interrupt, not a failure that spends its
        retries on steps Slurm refuses) and Slurm, not an early exit, gives the job its state
        (TIMEOUT; a batch script that exits first with an error leaves it FAILED)."""
        if "already completing or completed" in err and self.alloc.how == "given" \
                and threading.current_thread() is threading.main_thread() and self.alloc.time_limit_reached():
            deadline = time.monotonic() + SIGTERM_WAIT_S
            while time.monotonic() < deadline:
                time.sleep(0.1)  # the SIGTERM handler raises KeyboardInterrupt in the main thread

    @staticmethod
    def _handle(proc: BackgroundProcess) -> tuple[subprocess.Popen[bytes], str]:
        h = proc.handle
        if not (isinstance(h, tuple) and len(h) == 2 and isinstance(h[0], subprocess.Popen)):
            raise QoslabError(f"on {proc.node}: process {proc.pid} was not started by the slurm executor")
        return h[0], h[1]

    def poll(self, proc: BackgroundProcess) -> int | None:
        """See :meth:`qoslab.executors.base.Executor.poll`."""
        if proc.returncode is None:
            proc.returncode = self._rc(self._handle(proc)[0].poll())
        return proc.returncode

    def wait(self, proc: BackgroundProcess, timeout: float) -> int:
        """See :meth:`qoslab.executors.base.Executor.wait`."""
        if proc.returncode is not None:
            return proc.returncode
        try:
            rc = self._rc(self._handle(proc)[0].wait(timeout))
        except subprocess.TimeoutExpired:
            raise CommandTimeout(self.node, proc.argv, timeout) from None
        assert rc is not None
        proc.returncode = rc
        return rc

    def stop(self, proc: BackgroundProcess, *, grace_s: float = 3.0) -> int | None:
        """See :meth:`qoslab.executors.base.Executor.stop`: ``scancel --signal=TERM`` of the step,
        ``--signal=KILL`` after ``grace_s``."""
        p, step = self._handle(proc)
        if self.poll(proc) is None:
            self.alloc.client.call(["scancel", "--signal=TERM", step])
            try:
                p.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.alloc.client.call(["scancel", "--signal=KILL", step])
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    kill_group(p.pid, signal.SIGKILL)
                    p.wait()
            if proc.returncode is None:
                proc.returncode = self._rc(p.returncode)
        return proc.returncode

    def fetch(self, remote_path: str | Path, local_path: str | Path) -> Path:
        """See :meth:`qoslab.executors.base.Executor.fetch` (the shared file system: a copy)."""
        return shared_fetch(self.node, remote_path, local_path)

    def node_dir(self, local_dir: str | Path) -> str:
        """See :meth:`qoslab.executors.base.Executor.node_dir`: the shared file system's folder."""
        return shared_node_dir(local_dir)

    # -- leftovers, facts, close --------------------------------------------------------------
    def end_leftovers(self) -> list[str]:
        """Cancel (``scancel``) the steps of this run still running on this host's node (what a
        killed run left); returns their step IDs."""
        left = [i for i, nodes in self.alloc.steps(self.step_name) if nodes == self.slurm_node]
        if left:
            self.alloc.client.call(["scancel", "--signal=KILL", *left])
        return left

    def facts(self) -> dict[str, Any]:
        """The allocation's facts (job ID, binding, node facts; see :meth:`Allocation.facts`) and
        ``mpi``: how the ``mpi`` workload's ranks start here with ``launcher: auto``
        (:meth:`mpi_launch`; ``{"error": ...}`` when that could not be asked)."""
        facts = self.alloc.facts()
        try:
            facts["mpi"] = self.mpi_launch().to_json()
        except QoslabError as e:
            facts["mpi"] = {"error": str(e)}
        return facts

    def close(self) -> None:
        """Stop every step this executor started that still runs, and release the allocation
        (the last executor of the run ends a taken one). Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            for proc in self._started:
                if self.poll(proc) is None:
                    self.stop(proc, grace_s=1.0)
        finally:
            self._started.clear()
            if self._tmp is not None:
                shutil.rmtree(self._tmp, ignore_errors=True)
            slurmalloc.release(self.alloc, self.topo_name, self.run_id)
