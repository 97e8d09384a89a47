"""What every workload shares: the workload jar and its ``java`` command line, node-side logs, and
:class:`ProcessPool`, the warm worker processes kept across a campaign's trials.

Every workload JVM runs with ``-Djava.net.preferIPv4Stack=true`` (needed for DSCP marking,
docs/DESIGN.md field notes) and ``-Djava.rmi.server.hostname=<the node's address>`` (else stubs
advertise 127.0.0.1). The workloads themselves are the other modules of this package
(:mod:`.raytracer`, :mod:`.matmul`, :mod:`.pingpong`, :mod:`.command`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qoslab.errors import QoslabError
from qoslab.executors import BackgroundProcess, Executor
from qoslab.executors.nodes import parallel_map
from qoslab.topology import repo_root

JAR = repo_root() / "java-workload" / "target" / "qoslab-workload-0.1.0.jar"
MAIN = "org.qoslab.workload.Main"
#: The heap of every workload JVM (MiB): what sizes a workload's data (sort's ``size``) must fit.
HEAP_MB = 384
#: JVM flags of every workload JVM: IPv4-only sockets (DSCP marking works), a small serial-GC heap
#: (nine JVMs share two cores on the embedded testbed).
JVM_FLAGS = ["-Djava.net.preferIPv4Stack=true", "-XX:+UseSerialGC", f"-Xmx{HEAP_MB}m"]
#: A workload JVM's JIT compilers (a JVM workload's ``jit:``): ``tiered``, the JVM's default (C1,
#: then C2 for hot code); ``c1``, C1 only (``-XX:TieredStopAtLevel=1``, HotSpot's flag): slower
#: compute on the same core, the "machine made different on purpose" of issue 48.
JIT_FLAGS: dict[str, list[str]] = {"tiered": [], "c1": ["-XX:TieredStopAtLevel=1"]}
#: The manager's per-call times (``--calls-out``: one JSON line per remote call, java-workload/README.md),
#: beside workload-result.json; the result then names it (``calls_file``) and the RMI ports the
#: calls went to (``rmi_ports``: registry and export port, for matching them to wire calls).
CALLS_FILE = "workload-calls.jsonl"


@dataclass
class WorkloadRun:
    """Result of :func:`run_workload`: ``result`` is the manager's JSON (elapsed seconds,
    checksum, valid, per-worker rows/calls/busy seconds, bytes), ``logs`` the per-JVM log files."""

    result: dict
    logs: dict[str, Path] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.result.get("valid") is True


def jit_flags(jit: str) -> list[str]:
    """The JVM flags of JIT mode ``jit`` (a key of :data:`JIT_FLAGS`); QoslabError for another."""
    if jit not in JIT_FLAGS:
        raise QoslabError(f"jit {jit!r}: one of {', '.join(JIT_FLAGS)}")
    return list(JIT_FLAGS[jit])


def java_command(*args: str, hostname: str | None = None, root: str | Path | None = None,
                 jit: str = "tiered") -> list[str]:
    """``java`` argv for the workload jar with the project's JVM flags and those of JIT mode ``jit``
    (:data:`JIT_FLAGS`); ``root`` is where the node has qoslab's jars (:attr:`Executor.qoslab_root`;
    default this checkout, whose jar must exist). Raises QoslabError for a missing jar or unknown ``jit``."""
    if root is None or Path(root) == repo_root():
        if not JAR.exists():
            raise QoslabError(f"{JAR} is missing: build the Java modules with `make setup`")
        jar = str(JAR)
    else:
        jar = f"{str(root).rstrip('/')}/{JAR.relative_to(repo_root()).as_posix()}"
    extra = [f"-Djava.rmi.server.hostname={hostname}"] if hostname else []
    return ["java", *JVM_FLAGS, *jit_flags(jit), *extra, "-cp", f"{jar}:{jar.rsplit('/', 1)[0]}/lib/*", MAIN, *args]


def node_log(ex: Executor, log: Path) -> str:
    """Where on the node of ``ex`` the log that belongs at local ``log`` is written."""
    return f"{ex.node_dir(log.parent)}/{log.name}"


def fetch_log(ex: Executor, log: Path) -> None:
    """Bring a log from the node to ``log`` (nothing when the node wrote none)."""
    try:
        ex.fetch(node_log(ex, log), log)
    except QoslabError:
        pass


def wait_for_port(ex: Executor, proc: BackgroundProcess, ip: str, port: int, timeout_s: float, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ex.poll(proc) is not None:
            fetch_log(ex, log)
            tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
            raise QoslabError(f"worker on {ex.node} exited during start-up (code {proc.returncode}): "
                              f"{' / '.join(tail) or 'no output'} (log: {log})")
        r = ex.run(["ss", "-Htln", f"src {ip}:{port} or src 0.0.0.0:{port} or src *:{port}"], check=False, timeout=5)
        if r.stdout.strip():
            return
        time.sleep(0.1)
    raise QoslabError(f"worker on {ex.node}: RMI registry port {port} not listening after {timeout_s:g} s (log: {log})")


#: How a pool starts one worker: ``start(settings, host, executor, ip, node_log, lifetime_s)``.
Starter = Callable[[Any, str, Executor, str, str, "float | None"], BackgroundProcess]


class ProcessPool:
    """Worker processes kept running across workload runs (a campaign's trials), so a trial pays
    one manager start instead of one start per host, and JVM workers keep their JIT warm. Any
    workload's pool (the RayTracer's :class:`WorkerPool`, matmul's, the ``command`` workload's).

    A pool is given how to start one worker (``start``, see :data:`Starter`), which hosts get one
    (``hosts_of(settings)``), what identifies a set of workers (``key_of(settings)``: a run whose
    settings differ restarts the pool) and which TCP port tells that a worker is ready
    (``ready_port(settings)``, None = ready once started). Worker output is appended to
    ``log_dir/workload-<host>.log``. :meth:`ensure` (re)starts workers that are not running;
    :meth:`close` stops them all (by PID). Use as a context manager.

    Bounded life: every worker gets the executor's parent-death signal (it dies with this
    program, SIGKILL included, where the kernel allows it) and, with ``lifetime_s``, a lifetime
    (seconds) after which it ends by itself; :meth:`ensure` restarts a worker with less than
    ``renew_below_s`` seconds of it left, so no worker ends in the middle of a run."""

    def __init__(self, executor_of: Callable[[str], Executor], address_of: Callable[[str], str], log_dir: Path,
                 start: Starter, key_of: Callable[[Any], tuple], hosts_of: Callable[[Any], list[str]],
                 ready_port: Callable[[Any], int | None], lifetime_s: float | None = None,
                 renew_below_s: float = 0.0):
        self.executor_of, self.address_of, self.log_dir = executor_of, address_of, log_dir
        self.start, self.key_of, self.hosts_of, self.ready_port = start, key_of, hosts_of, ready_port
        self.lifetime_s, self.renew_below_s = lifetime_s, renew_below_s
        self.workers: dict[str, BackgroundProcess] = {}
        self.key: tuple | None = None
        self.starts = 0  # workers started so far (for the record: restarts show here)

    def _usable(self, host: str) -> bool:
        proc = self.workers.get(host)
        if proc is None or self.executor_of(host).poll(proc) is not None:
            return False
        return proc.deadline is None or proc.deadline - time.monotonic() > self.renew_below_s

    def ensure(self, settings: Any) -> dict[str, Path]:
        """Make sure a worker for ``settings`` runs on each of its hosts (with enough lifetime
        left); returns the log paths. Raises QoslabError when a worker cannot start (it names the
        host and its log)."""
        if self.key != self.key_of(settings):
            self.close()
            self.key = self.key_of(settings)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        hosts = self.hosts_of(settings)
        logs = {h: self.log_dir / f"workload-{h}.log" for h in hosts}
        port = self.ready_port(settings)

        def ensure_one(host: str) -> bool:  # on every host at once: one round trip, not one per node
            if self._usable(host):
                return False
            ex = self.executor_of(host)
            if host in self.workers:
                ex.stop(self.workers.pop(host), grace_s=2.0)
            ip = self.address_of(host)
            self.workers[host] = self.start(settings, host, ex, ip, node_log(ex, logs[host]), self.lifetime_s)
            if port is not None:
                wait_for_port(ex, self.workers[host], ip, port, settings.startup_timeout_s, logs[host])
            return True

        self.starts += sum(parallel_map(ensure_one, hosts))
        return logs

    def close(self) -> None:
        """Stop every worker (SIGTERM to its process group, then SIGKILL) and bring their logs here."""
        def stop(item: tuple[str, BackgroundProcess]) -> None:
            ex = self.executor_of(item[0])
            ex.stop(item[1], grace_s=2.0)
            fetch_log(ex, self.log_dir / f"workload-{item[0]}.log")

        parallel_map(stop, list(self.workers.items()))
        self.workers.clear()
        self.key = None

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
