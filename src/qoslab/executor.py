"""Run commands on a cluster node.

Everything in qoslab that touches a node (D-ITG, the Java workload, captures) goes through an
:class:`Executor`, so the same orchestration runs on the embedded testbed (:class:`NetnsExecutor`:
the node is a network namespace on this machine) and, later, on a real cluster (an SSH executor
with the same four operations: run-and-wait with a timeout, start a background process, stop it,
fetch a file).

Background processes are started in their own session (process group) and stopped by PID:
SIGTERM to the group, then SIGKILL after a grace period. Nothing is ever killed by name.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CommandFailed, CommandTimeout, QoslabError


@dataclass(frozen=True)
class CommandResult:
    """Outcome of :meth:`Executor.run`: exit code, captured output (text), wall time (seconds)."""

    node: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration_s: float


@dataclass
class BackgroundProcess:
    """A process started with :meth:`Executor.start`. ``pid`` is the process (and its process
    group) on the node; ``stdout_path``/``stderr_path`` are where its output goes (None = discarded)."""

    node: str
    argv: list[str]
    pid: int
    stdout_path: Path | None
    stderr_path: Path | None
    started_at: float = field(default_factory=time.monotonic)
    returncode: int | None = None
    _popen: subprocess.Popen | None = field(default=None, repr=False)


class Executor(ABC):
    """Runs commands on one node. Subclasses: :class:`NetnsExecutor`, :class:`LocalExecutor`."""

    node: str

    @abstractmethod
    def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 60.0,
        check: bool = True,
        input: str | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        """Run ``argv`` on the node and wait at most ``timeout`` seconds.

        Raises CommandTimeout (after killing the command's process group) when it overruns, and
        CommandFailed when ``check`` and the exit code is non-zero.
        """

    @abstractmethod
    def start(
        self,
        argv: Sequence[str],
        *,
        stdout: str | Path | None = None,
        stderr: str | Path | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        timer_slack_ns: int | None = None,
    ) -> BackgroundProcess:
        """Start ``argv`` in the background on the node; output goes to the given files
        (appended) or is discarded. ``timer_slack_ns`` sets the process's timer slack
        (nanoseconds; Linux ``prctl(PR_SET_TIMERSLACK)``, inherited by its threads and children;
        the kernel default is 50 000 ns): 1 lets a sleeping pacer such as ITGSend keep
        sub-100-microsecond packet intervals. Raises QoslabError when it cannot be started."""

    @abstractmethod
    def poll(self, proc: BackgroundProcess) -> int | None:
        """Exit code of ``proc`` if it has ended, else None."""

    @abstractmethod
    def stop(self, proc: BackgroundProcess, *, grace_s: float = 3.0) -> int | None:
        """End ``proc`` (SIGTERM to its process group, SIGKILL after ``grace_s`` seconds) and
        return its exit code (negative = killed by that signal). A process that already ended
        just has its exit code returned."""

    @abstractmethod
    def wait(self, proc: BackgroundProcess, timeout: float) -> int:
        """Wait at most ``timeout`` seconds for ``proc`` to end; return its exit code.
        Raises CommandTimeout if it is still running (it is left running)."""

    @abstractmethod
    def fetch(self, remote_path: str | Path, local_path: str | Path) -> Path:
        """Copy a file from the node to this machine; returns the local path.
        Raises QoslabError naming the node and path when it does not exist."""


class _SubprocessExecutor(Executor):
    """Commands run as local subprocesses, optionally wrapped (e.g. in ``ip netns exec NS``)."""

    def __init__(self, node: str, prefix: Sequence[str] = ()):
        self.node = node
        self._prefix = list(prefix)

    def _argv(self, argv: Sequence[str]) -> list[str]:
        if isinstance(argv, str):
            raise TypeError("argv must be a sequence of strings, not one string")
        return self._prefix + [str(a) for a in argv]

    @staticmethod
    def _env(env: Mapping[str, str] | None) -> dict[str, str] | None:
        return None if env is None else {**os.environ, **env}

    def run(self, argv, *, timeout=60.0, check=True, input=None, cwd=None, env=None) -> CommandResult:
        full = self._argv(argv)
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(
                full,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=cwd,
                env=self._env(env),
                start_new_session=True,
            )
        except FileNotFoundError:
            raise QoslabError(f"on {self.node}: command not found: {full[0]}") from None
        try:
            out, err = p.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(p.pid, signal.SIGKILL)
            p.communicate()
            raise CommandTimeout(self.node, list(argv), timeout) from None
        except BaseException:
            _kill_group(p.pid, signal.SIGKILL)
            p.wait()
            raise
        res = CommandResult(self.node, list(argv), p.returncode, out, err, time.monotonic() - t0)
        if p.returncode != 0 and self._prefix and f'exec of "{full[len(self._prefix)]}" failed' in err:
            raise QoslabError(f"on {self.node}: cannot run {full[len(self._prefix)]}: {err.strip().split(': ')[-1]}")
        if check and p.returncode != 0:
            raise CommandFailed(self.node, list(argv), p.returncode, err or out)
        return res

    def start(self, argv, *, stdout=None, stderr=None, cwd=None, env=None, timer_slack_ns=None) -> BackgroundProcess:
        full = self._argv(argv)
        files = []
        try:
            outs = []
            for path in (stdout, stderr):
                if path is None:
                    outs.append(subprocess.DEVNULL)
                else:
                    f = open(path, "ab")
                    files.append(f)
                    outs.append(f)
            p = subprocess.Popen(
                full,
                stdin=subprocess.DEVNULL,
                stdout=outs[0],
                stderr=outs[1],
                cwd=cwd,
                env=self._env(env),
                start_new_session=True,
                preexec_fn=None if timer_slack_ns is None else _timer_slack_setter(timer_slack_ns),
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
            _popen=p,
        )

    def poll(self, proc: BackgroundProcess) -> int | None:
        if proc.returncode is None and proc._popen is not None:
            proc.returncode = proc._popen.poll()
        return proc.returncode

    def wait(self, proc: BackgroundProcess, timeout: float) -> int:
        if proc.returncode is not None:
            return proc.returncode
        assert proc._popen is not None
        try:
            proc.returncode = proc._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise CommandTimeout(self.node, proc.argv, timeout) from None
        return proc.returncode

    def stop(self, proc: BackgroundProcess, *, grace_s: float = 3.0) -> int | None:
        if self.poll(proc) is not None:
            _kill_group(proc.pid, signal.SIGKILL)  # children left in its group, if any
            return proc.returncode
        assert proc._popen is not None
        _kill_group(proc.pid, signal.SIGTERM)
        try:
            proc.returncode = proc._popen.wait(grace_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid, signal.SIGKILL)
            proc.returncode = proc._popen.wait()
        _kill_group(proc.pid, signal.SIGKILL)
        return proc.returncode

    def fetch(self, remote_path, local_path) -> Path:
        src, dst = Path(remote_path), Path(local_path)
        if not src.is_file():
            raise QoslabError(f"on {self.node}: no such file: {src}")
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.resolve() != dst.resolve():
            shutil.copyfile(src, dst)
        return dst


PR_SET_TIMERSLACK = 29  # <linux/prctl.h>


def _timer_slack_setter(ns: int):
    """A ``preexec_fn`` that sets the child's timer slack to ``ns`` nanoseconds (must be >= 1:
    0 would mean "reset to the default")."""
    if ns < 1:
        raise ValueError(f"timer slack must be >= 1 ns, got {ns}")
    libc = ctypes.CDLL(None, use_errno=True)

    def setter() -> None:
        if libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(ns), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_TIMERSLACK) failed")

    return setter


def _kill_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to process group ``pgid`` (a PID we started with start_new_session)."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class NetnsExecutor(_SubprocessExecutor):
    """A node that is a network namespace on this machine (the embedded testbed).

    Commands run as ``ip netns exec NAMESPACE argv...``; ``ip`` execs the command, so the PID we
    hold is the command's own. The file system is shared with this machine, so ``fetch`` is a copy.
    """

    def __init__(self, node: str, namespace: str):
        super().__init__(node, ["ip", "netns", "exec", namespace])
        self.namespace = namespace


class LocalExecutor(_SubprocessExecutor):
    """This machine's own network namespace (loopback runs, benchmarks)."""

    def __init__(self, node: str = "localhost"):
        super().__init__(node)
