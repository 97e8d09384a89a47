"""Executors that run commands as subprocesses of this program: ``local`` (this machine's own
network namespace) and ``netns`` (a network namespace of the embedded testbed, through
``ip netns exec``). See :mod:`qoslab.executors.base` for the contract.

Every background process gets, where the kernel allows it, a bounded life twice over: a
parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGTERM)``: it is told to end when the thread of
this program that started it dies, even by SIGKILL) and, with ``lifetime_s``, GNU ``timeout``
as its session leader (SIGTERM to the whole group after the lifetime, SIGKILL 5 s later).
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import CommandFailed, CommandTimeout, QoslabError
from ..topology import repo_root
from . import cgroups
from .base import BackgroundProcess, CommandResult, shared_fetch, shared_node_dir
from .joinexec import join_argv, not_found

#: Seconds between a lifetime's SIGTERM and its SIGKILL (``timeout --kill-after``).
LIFETIME_KILL_AFTER_S = 5
#: Environment variable every process a :class:`NetnsExecutor` starts carries (value: the
#: namespace), inherited by what it starts in turn (a daemon that detaches, MPI's ``orted``, a Slurm
#: step's tasks): the testbed's clean-up of the hosts ends only processes marked so (or over SSH
#: with :data:`~qoslab.executors.sshscripts.RUN_MARKER`), never one an operator or a Slurm client
#: started in a host's namespace (issue 51: a campaign's clean-up ended a ``squeue`` run on the
#: login node).
NETNS_MARKER = "QOSLAB_NETNS"
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
PR_SET_TIMERSLACK = 29  # <linux/prctl.h>
#: util-linux ``setpriv`` sets the parent-death signal of a command run in the foreground
#: (:meth:`SubprocessExecutor.run`, whose calling thread waits for it) and execs it. A
#: ``preexec_fn`` doing the same makes Python fork the whole campaign process (about 130 MB)
#: instead of vfork: 12 short commands side by side took 0.05 s that way, 0.02 s with setpriv
#: (measured here). Without setpriv the preexec_fn is used; background processes always use it.
SETPRIV = ("setpriv", "--pdeathsig", "TERM", "--")


class SubprocessExecutor:
    """Commands run as local subprocesses, optionally wrapped in ``prefix`` (e.g. ``ip netns exec
    NS``); the prefix must exec the command so the PID held is the command's own."""

    def __init__(self, node: str, prefix: Sequence[str] = (), *, cgroups: Sequence[str] = (),
                 cpus: frozenset[int] | None = None) -> None:
        self.node = node
        self._prefix = list(prefix)
        self.qoslab_root: str | Path = repo_root()
        #: ``cgroup.procs`` files every process started here joins (the host's CPU budget) and the
        #: CPU affinity it gets (the switch's cores for a process standing for the network)
        self.cgroups, self.cpus = tuple(cgroups), cpus
        #: variables every process started here gets in its environment (:data:`NETNS_MARKER`)
        self.marker: dict[str, str] = {}

    def _argv(self, argv: Sequence[str]) -> list[str]:
        if isinstance(argv, str):
            raise TypeError("argv must be a sequence of strings, not one string")
        return self._prefix + [str(a) for a in argv]

    def _env(self, env: Mapping[str, str] | None) -> dict[str, str] | None:
        return None if env is None and not self.marker else {**os.environ, **(env or {}), **self.marker}

    def run(self, argv: Sequence[str], *, timeout: float = 60.0, check: bool = True, input: str | None = None,
            cwd: str | Path | None = None, env: Mapping[str, str] | None = None) -> CommandResult:
        """See :meth:`qoslab.executors.base.Executor.run`."""
        full = self._argv(argv)
        # a tracked trial's command, or one with a CPU budget, joins its cgroups and affinity in a
        # shell that setpriv starts (vfork, :mod:`.joinexec`); without setpriv in a preexec_fn
        setpriv, join = _setpriv(), []
        if setpriv and (cgroups.tracking() or self.cgroups or self.cpus):
            join = join_argv(cgroups.current_procs(), self.cgroups, self.cpus)
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(
                [*setpriv, *join, *full],
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",  # a command's bytes that are not UTF-8 become U+FFFD, not a traceback
                cwd=cwd,
                env=self._env(env),
                start_new_session=True,
                preexec_fn=None if setpriv else _child_setup(None, self.cgroups, self.cpus),
            )
        except FileNotFoundError:
            raise QoslabError(f"on {self.node}: command not found: {full[0]}") from None
        try:
            out, err = p.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(p.pid, signal.SIGKILL)
            p.communicate()
            raise CommandTimeout(self.node, list(argv), timeout) from None
        except BaseException:
            kill_group(p.pid, signal.SIGKILL)
            p.wait()
            raise
        if setpriv and p.returncode == 127 and not_found(err, full[0]):
            raise QoslabError(f"on {self.node}: command not found: {full[0]}")
        res = CommandResult(self.node, list(argv), p.returncode, out, err, time.monotonic() - t0)
        if p.returncode != 0 and self._prefix and f'exec of "{full[len(self._prefix)]}" failed' in err:
            raise QoslabError(f"on {self.node}: cannot run {full[len(self._prefix)]}: {err.strip().split(': ')[-1]}")
        if check and p.returncode != 0:
            raise CommandFailed(self.node, list(argv), p.returncode, err or out)
        return res

    def start(self, argv: Sequence[str], *, stdout: str | Path | None = None, stderr: str | Path | None = None,
              cwd: str | Path | None = None, env: Mapping[str, str] | None = None,
              timer_slack_ns: int | None = None, lifetime_s: float | None = None) -> BackgroundProcess:
        """See :meth:`qoslab.executors.base.Executor.start`. With ``lifetime_s`` the command runs
        under GNU ``timeout`` (the PID held is timeout's; it leads the process group and forwards
        SIGTERM to the command)."""
        cmd = [str(a) for a in argv]
        if lifetime_s is not None:
            if lifetime_s <= 0:
                raise QoslabError(f"on {self.node}: lifetime must be > 0 s, got {lifetime_s:g}")
            cmd = ["timeout", f"--kill-after={LIFETIME_KILL_AFTER_S}", f"{lifetime_s:.3f}", *cmd]
        full = self._argv(cmd)
        files = []
        try:
            outs: list[int | object] = []
            for path in (stdout, stderr):
                if path is None:
                    outs.append(subprocess.DEVNULL)
                else:
                    f = open(path, "ab")
                    files.append(f)
                    outs.append(f)
            # a background process gets its parent-death signal in the preexec_fn, before Popen
            # returns: with setpriv (as in run) a starting thread that ends at once could end
            # before the signal is set, and the process would outlive it
            p = subprocess.Popen(
                full,
                stdin=subprocess.DEVNULL,
                stdout=outs[0],  # type: ignore[arg-type]
                stderr=outs[1],  # type: ignore[arg-type]
                cwd=cwd,
                env=self._env(env),
                start_new_session=True,
                preexec_fn=_child_setup(timer_slack_ns, self.cgroups, self.cpus),
            )
        except FileNotFoundError:
            raise QoslabError(f"on {self.node}: command not found: {full[0]}") from None
        except OSError as e:
            raise QoslabError(f"on {self.node}: cannot start `{' '.join(map(str, argv))}`: {e}") from None
        finally:
            for f in files:
                f.close()
        return BackgroundProcess(
            node=self.node,
            argv=list(argv),
            pid=p.pid,
            stdout_path=Path(stdout) if stdout else None,
            stderr_path=Path(stderr) if stderr else None,
            handle=p,
            deadline=None if lifetime_s is None else time.monotonic() + lifetime_s,
        )

    @staticmethod
    def _popen(proc: BackgroundProcess) -> subprocess.Popen[bytes]:
        if not isinstance(proc.handle, subprocess.Popen):
            raise QoslabError(f"on {proc.node}: process {proc.pid} was not started by this executor")
        return proc.handle

    def poll(self, proc: BackgroundProcess) -> int | None:
        """See :meth:`qoslab.executors.base.Executor.poll`."""
        if proc.returncode is None:
            proc.returncode = self._popen(proc).poll()
        return proc.returncode

    def wait(self, proc: BackgroundProcess, timeout: float) -> int:
        """See :meth:`qoslab.executors.base.Executor.wait`."""
        if proc.returncode is not None:
            return proc.returncode
        try:
            proc.returncode = self._popen(proc).wait(timeout)
        except subprocess.TimeoutExpired:
            raise CommandTimeout(self.node, proc.argv, timeout) from None
        return proc.returncode

    def stop(self, proc: BackgroundProcess, *, grace_s: float = 3.0) -> int | None:
        """See :meth:`qoslab.executors.base.Executor.stop`."""
        if self.poll(proc) is not None:
            kill_group(proc.pid, signal.SIGKILL)  # children left in its group, if any
            return proc.returncode
        popen = self._popen(proc)
        kill_group(proc.pid, signal.SIGTERM)
        try:
            proc.returncode = popen.wait(grace_s)
        except subprocess.TimeoutExpired:
            kill_group(proc.pid, signal.SIGKILL)
            proc.returncode = popen.wait()
        kill_group(proc.pid, signal.SIGKILL)
        return proc.returncode

    def fetch(self, remote_path: str | Path, local_path: str | Path) -> Path:
        """See :meth:`qoslab.executors.base.Executor.fetch` (the file system is shared: a copy)."""
        return shared_fetch(self.node, remote_path, local_path)

    def node_dir(self, local_dir: str | Path) -> str:
        """See :meth:`qoslab.executors.base.Executor.node_dir`: the shared file system's own
        folder (created)."""
        return shared_node_dir(local_dir)


@functools.lru_cache(maxsize=1)
def _setpriv() -> tuple[str, ...]:
    """SETPRIV when this machine has a ``setpriv`` that knows ``--pdeathsig``, else ()."""
    if shutil.which("setpriv") is None:
        return ()
    try:
        ok = subprocess.run([*SETPRIV, "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return SETPRIV if ok else ()


def _child_setup(timer_slack_ns: int | None, join: Sequence[str] = (),
                 cpus: frozenset[int] | None = None) -> Callable[[], None]:
    """A ``preexec_fn``: the child gets SIGTERM when the thread that started it dies
    (PR_SET_PDEATHSIG; it survives exec), joins the tracked trial's cgroup (:mod:`.cgroups`) and
    the ``cgroup.procs`` files in ``join`` (a host's CPU budget: a file that cannot be written
    ends the child with code 126, so a process never runs outside its budget), takes the CPU
    affinity ``cpus`` (when given), and
    ends at once when its parent died before the signal was set (a SIGKILL between fork and prctl:
    the chaos test's kill during a worker's start left one JVM running); when given, a timer slack
    of ``timer_slack_ns`` nanoseconds (PR_SET_TIMERSLACK; must be >= 1: 0 would mean "reset to the default").
    Raises ValueError for a slack < 1."""
    if timer_slack_ns is not None and timer_slack_ns < 1:
        raise ValueError(f"timer slack must be >= 1 ns, got {timer_slack_ns}")
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def setup() -> None:
        cgroups.join_in_child()  # the current trial's cgroup, if one is tracked
        if not cgroups.join_files(join):
            os._exit(126)
        if cpus:
            os.sched_setaffinity(0, cpus)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:  # the parent died between fork and prctl: no signal will come
            os._exit(143)
        if timer_slack_ns is not None and libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(timer_slack_ns), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_TIMERSLACK) failed")

    return setup


def kill_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to process group ``pgid`` (a PID started in its own session); a group that is
    gone is ignored."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class NetnsExecutor(SubprocessExecutor):
    """A node that is a network namespace on this machine (the embedded testbed).

    Commands run as ``ip netns exec NAMESPACE argv...``; ``ip`` execs the command, so the PID we
    hold is the command's own. The file system is shared with this machine, so ``fetch`` is a copy.
    """

    def __init__(self, node: str, namespace: str, *, cgroups: Sequence[str] = (),
                 cpus: frozenset[int] | None = None, emulation_cpus: frozenset[int] | None = None,
                 boot_cgroups: Sequence[str] = (), admit: Callable[[], int] | None = None,
                 in_budget: bool | None = None, emulation_cgroups: Sequence[str] = ()) -> None:
        super().__init__(node, ["ip", "netns", "exec", namespace], cgroups=cgroups, cpus=cpus)
        self.namespace = namespace
        self.marker = {NETNS_MARKER: namespace}
        self._emulation_cpus = emulation_cpus
        self._emulation_cgroups = tuple(emulation_cgroups)
        #: whether ``cgroups`` are a host's CPU budget (a ``cpu:`` block; the default when there are
        #: any) rather than the testbed's CPU shield (:mod:`qoslab.testbed.cpushield`): False there
        self.in_budget = bool(self.cgroups) if in_budget is None else in_budget
        self._boot_cgroups, self._admit = list(boot_cgroups), admit
        #: For an executor of :meth:`as_booting`: moves the processes it started into the host's CPU
        #: budget (returns how many moved); None when they are in it from their start.
        self.admit_boot: Callable[[], int] | None = None

    def as_booting(self) -> NetnsExecutor:
        """The same node for a process that boots before its measured run (a workload manager
        behind a go gate, :mod:`qoslab.workloads.gate`): it starts in the host's boot group (the
        hosts' cores, no quota) and :attr:`admit_boot` moves it into the host's budget before the
        go; ``self`` when the host has no budget (no ``cpu:`` block)."""
        if not self._boot_cgroups or self._admit is None:
            return self
        ex = NetnsExecutor(self.node, self.namespace, cgroups=self._boot_cgroups, cpus=self.cpus,
                           emulation_cpus=self._emulation_cpus)
        ex.admit_boot = self._admit
        return ex

    def as_emulation(self) -> NetnsExecutor:
        """The same node for a process that stands for the network rather than for the host (a
        flood sender: on a real cluster it is another machine): outside the host's CPU budget, on
        the switch's cores when the testbed has a ``cpu:`` block; outside the testbed's CPU shield,
        in ``emulation_cgroups`` (the group the harness came from: ITGSend runs in the real-time
        class, which a v1 cpu group without real-time runtime refuses, and which no busy loop at
        normal priority delays); ``self`` without cgroups or switch cores."""
        if not self.cgroups and self._emulation_cpus is None and not self._emulation_cgroups:
            return self
        return NetnsExecutor(self.node, self.namespace, cgroups=self._emulation_cgroups, cpus=self._emulation_cpus,
                             in_budget=False)

    @classmethod
    def for_topology(cls, node: str, topology: Any, *, testbed: Any = None, **_: Any) -> NetnsExecutor:
        """The executor of ``node`` on the embedded testbed ``testbed`` (its host namespace).
        Raises QoslabError without a testbed."""
        if testbed is None:
            raise QoslabError(f"executor netns needs the embedded testbed; topology {topology.name} has none")
        return testbed.executor(node)


class LocalExecutor(SubprocessExecutor):
    """This machine's own network namespace (loopback runs, benchmarks, ITGDec)."""

    def __init__(self, node: str = "localhost") -> None:
        super().__init__(node)

    @classmethod
    def for_topology(cls, node: str, topology: Any, **_: Any) -> LocalExecutor:
        """This machine standing for ``node`` (loopback runs)."""
        return cls(node)


def offline(ex: Any) -> Any:
    """An executor for commands of ``ex``'s node that need no network (ITGDec, ``rm``, ``ps``):
    for a :class:`NetnsExecutor` this machine's own :class:`LocalExecutor` (same file system and
    processes; no ``ip netns exec``, which costs 5-10 ms of mount-namespace setup per command),
    else ``ex`` itself."""
    return LocalExecutor(ex.node) if isinstance(ex, NetnsExecutor) else ex


def listens_tcp(pid: int, port: int) -> bool:
    """True when process ``pid`` (on this machine) or one of its children holds a TCP socket
    listening on ``port``, in their network namespace: the LISTEN entries of
    ``/proc/PID/net/tcp`` and ``tcp6`` matched by socket inode against the processes' open files.
    No command runs (``ss -p`` through ``ip netns exec`` costs 5-10 ms a look); a process that is
    gone, or whose files cannot be read, listens on nothing."""
    pids = [pid]
    try:
        pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return False
    wanted: set[str] = set()
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
                wanted.add(f"socket:[{f[9]}]")
    if not wanted:
        return False
    for p in pids:
        try:
            fds = os.listdir(f"/proc/{p}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{p}/fd/{fd}") in wanted:
                    return True
            except OSError:
                continue
    return False
