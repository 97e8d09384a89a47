"""The executor contract: how qoslab runs commands on a cluster node.

Everything that touches a node (D-ITG, iperf3, the Java workload, captures) goes through an
:class:`Executor`, so the same orchestration runs on the embedded testbed (``netns``: the node is
a network namespace on this machine), on this machine itself (``local``) and on a real cluster
(``ssh``). Executors are registered by name in :data:`qoslab.registry.executors`.

The contract (every backend keeps it exactly):

- :meth:`Executor.run` runs a command and waits at most ``timeout`` seconds (the command's
  process group is killed when it overruns: :class:`~qoslab.errors.CommandTimeout`);
- :meth:`Executor.start` starts a background process **in its own session** (process group) and
  returns its PID on the node; output goes to files or is discarded;
- :meth:`Executor.poll` / :meth:`Executor.wait` report its exit code;
- :meth:`Executor.stop` ends it **by PID**: SIGTERM to its process group, SIGKILL after a grace
  period. Nothing is ever killed by name;
- :meth:`Executor.fetch` copies a file from the node to this machine;
- :meth:`Executor.node_dir` names (and creates) the directory on the node that stands for a local
  folder: the node's file system need not be this machine's (``ssh``), so a command writes its
  artifacts there and the caller fetches them. On a shared file system (``local``, ``netns``) it is
  the local folder itself and ``fetch`` of a file onto itself does nothing;
- ``qoslab_root`` is where the node has qoslab's built jars (the checkout layout:
  ``java-workload/target/qoslab-workload-0.1.0.jar``): this checkout for ``local``/``netns``, the
  provisioned directory (``/opt/qoslab``) on a cluster.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import QoslabError


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
    group) on the node; ``stdout_path``/``stderr_path`` are where its output goes (None =
    discarded); ``handle`` is the backend's own object for it (a Popen, an SSH channel ...);
    ``deadline`` is the monotonic time after which the process ends by itself (its bounded
    lifetime, None = unbounded); ``notes`` says what the backend could not do as asked (e.g. a
    timer slack the node does not permit)."""

    node: str
    argv: list[str]
    pid: int
    stdout_path: Path | None
    stderr_path: Path | None
    started_at: float = field(default_factory=time.monotonic)
    returncode: int | None = None
    handle: Any = field(default=None, repr=False)
    deadline: float | None = None
    notes: list[str] = field(default_factory=list)


@runtime_checkable
class Executor(Protocol):
    """Runs commands on one node (``node`` is its host name). See the module doc for the contract."""

    node: str
    qoslab_root: str | Path

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
        CommandFailed when ``check`` and the exit code is non-zero; QoslabError when the command
        cannot be started (not found)."""
        ...

    def start(
        self,
        argv: Sequence[str],
        *,
        stdout: str | Path | None = None,
        stderr: str | Path | None = None,
        cwd: str | Path | None = None,
        env: Mapping[str, str] | None = None,
        timer_slack_ns: int | None = None,
        lifetime_s: float | None = None,
    ) -> BackgroundProcess:
        """Start ``argv`` in the background on the node in its own session; output goes to the
        given files (appended) or is discarded. ``timer_slack_ns`` sets the process's timer slack
        (nanoseconds; Linux ``prctl(PR_SET_TIMERSLACK)``, inherited by its threads and children;
        the kernel default is 50 000 ns): 1 lets a sleeping pacer such as ITGSend keep
        sub-100-microsecond packet intervals. ``lifetime_s`` bounds how long it may run (seconds):
        after it the process group gets SIGTERM, then SIGKILL, even if this program died. Raises
        QoslabError when it cannot be started."""
        ...

    def poll(self, proc: BackgroundProcess) -> int | None:
        """Exit code of ``proc`` if it has ended, else None."""
        ...

    def stop(self, proc: BackgroundProcess, *, grace_s: float = 3.0) -> int | None:
        """End ``proc`` (SIGTERM to its process group, SIGKILL after ``grace_s`` seconds) and
        return its exit code (negative = killed by that signal). A process that already ended
        just has its exit code returned."""
        ...

    def wait(self, proc: BackgroundProcess, timeout: float) -> int:
        """Wait at most ``timeout`` seconds for ``proc`` to end; return its exit code.
        Raises CommandTimeout if it is still running (it is left running)."""
        ...

    def fetch(self, remote_path: str | Path, local_path: str | Path) -> Path:
        """Copy a file from the node to this machine; returns the local path.
        Raises QoslabError naming the node and path when it does not exist."""
        ...

    def node_dir(self, local_dir: str | Path) -> str:
        """The directory on the node standing for ``local_dir`` (created there if missing):
        commands write their artifacts there, :meth:`fetch` brings them to ``local_dir``.
        Raises QoslabError when it cannot be created."""
        ...


def emulation(ex: Executor) -> Executor:
    """The executor of ``ex``'s node for a process that stands for the network rather than for the
    node (a flood sender: on a real cluster another machine): ``ex.as_emulation()`` where the
    executor has one (the embedded testbed's ``netns`` executor with a ``cpu:`` block: outside
    the host's CPU budget, on the switch's cores), else ``ex`` itself."""
    made = getattr(ex, "as_emulation", None)
    return made() if callable(made) else ex


def budgeted(ex: Executor) -> bool:
    """Whether processes started through ``ex`` run in a host's CPU budget (a ``cpu:`` block), not
    merely in the testbed's CPU shield (:mod:`qoslab.testbed.cpushield`)."""
    return bool(getattr(ex, "in_budget", False))


def shared_fetch(node: str, remote_path: str | Path, local_path: str | Path) -> Path:
    """:meth:`Executor.fetch` of an executor whose nodes share this machine's file system
    (``local``, ``netns``, ``slurm``): a copy of ``remote_path`` to ``local_path`` (nothing when
    they are the same file); returns ``local_path``. Raises QoslabError naming ``node`` when
    there is no such file."""
    src, dst = Path(remote_path), Path(local_path)
    if not src.is_file():
        raise QoslabError(f"on {node}: no such file: {src}")
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.resolve() != dst.resolve():
        shutil.copyfile(src, dst)
    return dst


def shared_node_dir(local_dir: str | Path) -> str:
    """:meth:`Executor.node_dir` on a shared file system: the local folder itself (created)."""
    Path(local_dir).mkdir(parents=True, exist_ok=True)
    return str(local_dir)
