"""Run the distributed RMI RayTracer (``java-workload/``) on cluster nodes through executors.

One worker JVM per host (the head node included, as in the thesis), then the manager JVM on the
head node (the first host); the manager prints one JSON line, returned here as a dict. Every JVM
runs with ``-Djava.net.preferIPv4Stack=true`` (needed for DSCP marking, docs/DESIGN.md field notes)
and ``-Djava.rmi.server.hostname=<the node's address>`` (else stubs advertise 127.0.0.1).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from .errors import QoslabError
from .executors import BackgroundProcess, Executor
from .executors.nodes import parallel_map
from .topology import repo_root
from .yamlio import StrictModel, SubFieldProblem

JAR = repo_root() / "java-workload" / "target" / "qoslab-workload-0.1.0.jar"
MAIN = "org.qoslab.workload.Main"
#: JVM flags of every workload JVM: IPv4-only sockets (DSCP marking works), a small serial-GC heap
#: (nine JVMs share two cores on the embedded testbed).
JVM_FLAGS = ["-Djava.net.preferIPv4Stack=true", "-XX:+UseSerialGC", "-Xmx384m"]
#: The manager's per-call times (``--calls-out``: one JSON line per remote call, java-workload/README.md),
#: beside workload-result.json; the result then names it (``calls_file``) and the RMI ports the
#: calls went to (``rmi_ports``: registry and export port, for matching them to wire calls).
CALLS_FILE = "workload-calls.jsonl"


class WorkloadSettings(StrictModel):
    """One workload run (also a playbook's ``workload:`` and a condition's overrides).

    ``hosts``: host names, the first is the head node (manager + a worker); ``size``: "A"
    (150x150), "B" (500x500) or a width in pixels (JGF section 3 sizes); ``rows_per_call``: rows per
    RMI call, or "all"; ``codec``: serializable | externalizable; ``frames``: renders per run;
    ports: RMI registry and render-service export port (fixed, so a QoS profile can match them);
    ``dscp``: 0-63 marking every RMI socket, or None; ``timeout_s``: seconds one RMI call may take;
    ``startup_timeout_s``: seconds a worker JVM may take to listen; ``supersample``: k x k rays per
    pixel (1 = the JGF benchmark; compute grows k^2-fold, bytes do not; checksums in java-workload).
    Invalid values raise pydantic's ValidationError (ConfigError with file and line when loaded
    from a playbook)."""

    hosts: list[str] = Field(..., min_length=1)
    size: str = "A"
    rows_per_call: int | Literal["all"] = "all"
    codec: Literal["serializable", "externalizable"] = "serializable"
    frames: int = Field(1, ge=1, le=10_000)
    registry_port: int = Field(1099, ge=1, le=65535)
    export_port: int = Field(1100, ge=1, le=65535)
    dscp: int | None = Field(None, ge=0, le=63)
    timeout_s: float = Field(120.0, gt=0, le=86_400)
    startup_timeout_s: float = Field(30.0, gt=0, le=3600)
    supersample: int = Field(1, ge=1, le=4)

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError(f"a host is listed twice: {','.join(v)}")
        return v

    @field_validator("size", mode="before")
    @classmethod
    def _size(cls, v: object) -> str:
        s = str(v) if isinstance(v, (str, int)) and not isinstance(v, bool) else ""
        if s.upper() in ("A", "B"):
            return s.upper()
        if s.isdigit() and 8 <= int(s) <= 10_000:
            return s
        raise ValueError(f"size must be A, B or a width in pixels (8-10000), got {v!r}")

    @field_validator("rows_per_call")
    @classmethod
    def _rows(cls, v: int | str) -> int | str:
        if isinstance(v, int) and v < 1:
            raise ValueError(f"rows per call must be >= 1 or 'all', got {v}")
        return v

    @model_validator(mode="after")
    def _ports(self) -> WorkloadSettings:
        if self.registry_port == self.export_port:
            raise SubFieldProblem(("export_port",), f"export port {self.export_port} equals the registry port")
        return self

    @classmethod
    def checked(cls, **values: Any) -> WorkloadSettings:
        """Construct from keyword values; raises QoslabError with one line per problem."""
        try:
            return cls(**values)
        except ValidationError as e:
            raise QoslabError("workload: " + "; ".join(
                f"{'.'.join(map(str, err['loc'])) or 'settings'}: {err['msg'].removeprefix('Value error, ')}"
                for err in e.errors())) from None


@dataclass
class WorkloadRun:
    """Result of :func:`run_workload`: ``result`` is the manager's JSON (elapsed seconds,
    checksum, valid, per-worker rows/calls/busy seconds, bytes), ``logs`` the per-JVM log files."""

    result: dict
    logs: dict[str, Path] = field(default_factory=dict)

    @property
    def valid(self) -> bool:
        return self.result.get("valid") is True


def java_command(*args: str, hostname: str | None = None, root: str | Path | None = None) -> list[str]:
    """``java`` argv for the workload jar with the project's JVM flags; ``root`` is where the node
    has qoslab's jars (:attr:`Executor.qoslab_root`; default this checkout, whose jar must exist)."""
    if root is None or Path(root) == repo_root():
        if not JAR.exists():
            raise QoslabError(f"{JAR} is missing: build the Java modules with `make setup`")
        jar = str(JAR)
    else:
        jar = f"{str(root).rstrip('/')}/{JAR.relative_to(repo_root()).as_posix()}"
    extra = [f"-Djava.rmi.server.hostname={hostname}"] if hostname else []
    return ["java", *JVM_FLAGS, *extra, "-cp", f"{jar}:{jar.rsplit('/', 1)[0]}/lib/*", MAIN, *args]


def node_log(ex: Executor, log: Path) -> str:
    """Where on the node of ``ex`` the log that belongs at local ``log`` is written."""
    return f"{ex.node_dir(log.parent)}/{log.name}"


def fetch_log(ex: Executor, log: Path) -> None:
    """Bring a log from the node to ``log`` (nothing when the node wrote none)."""
    try:
        ex.fetch(node_log(ex, log), log)
    except QoslabError:
        pass


def _wait_for_port(ex: Executor, proc: BackgroundProcess, ip: str, port: int, timeout_s: float, log: Path) -> None:
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
                _wait_for_port(ex, self.workers[host], ip, port, settings.startup_timeout_s, logs[host])
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


class WorkerPool(ProcessPool):
    """The RayTracer's worker JVMs as a :class:`ProcessPool`: one per host, keyed by (hosts,
    registry and export port, DSCP), ready once the RMI registry port listens."""

    def __init__(self, executor_of: Callable[[str], Executor], address_of: Callable[[str], str], log_dir: Path,
                 lifetime_s: float | None = None, renew_below_s: float = 0.0):
        super().__init__(executor_of, address_of, log_dir, _pool_start, key_of=self.key_of,
                         hosts_of=lambda s: list(s.hosts), ready_port=lambda s: s.registry_port,
                         lifetime_s=lifetime_s, renew_below_s=renew_below_s)

    @staticmethod
    def key_of(settings: WorkloadSettings) -> tuple:
        return (tuple(settings.hosts), settings.registry_port, settings.export_port, settings.dscp)


def _start_worker(settings: WorkloadSettings, ex: Executor, ip: str, log: Path,
                  lifetime_s: float | None = None) -> BackgroundProcess:
    return _pool_start(settings, "", ex, ip, node_log(ex, log), lifetime_s)


def _pool_start(settings: WorkloadSettings, host: str, ex: Executor, ip: str, out: str,
                lifetime_s: float | None) -> BackgroundProcess:
    """One RayTracer worker JVM on ``ip`` with its output to ``out`` (a path on its node)."""
    marking = ["--dscp", str(settings.dscp)] if settings.dscp is not None else []
    argv = java_command("worker", "--advertise", ip, "--registry-port", str(settings.registry_port),
                        "--export-port", str(settings.export_port), *marking, hostname=ip, root=ex.qoslab_root)
    return ex.start(argv, stdout=out, stderr=out, lifetime_s=lifetime_s)


def _run_manager(settings: WorkloadSettings, executor_of: Callable[[str], Executor],
                 address_of: Callable[[str], str], out_dir: Path, logs: dict[str, Path], gate: Any = None) -> dict:
    """Run the manager on the head node; returns its JSON result (also written to
    ``out_dir/workload-result.json``; its log to ``logs["manager"]``; its per-call times, fetched
    from the head node, to ``out_dir/workload-calls.jsonl``, see CALLS_FILE). With ``gate``
    (:class:`qoslab.workloads.gate.GoGate`) the manager's run waits for the gate's go file.
    Raises QoslabError when it prints no result."""
    marking = ["--dscp", str(settings.dscp)] if settings.dscp is not None else []
    head = settings.hosts[0]
    ex = executor_of(head)
    spec = ",".join(f"{h}={address_of(h)}" for h in settings.hosts)
    calls = out_dir / CALLS_FILE
    calls.unlink(missing_ok=True)
    node_calls = node_log(ex, calls)
    argv = java_command("manager", "--workers", spec, "--size", str(settings.size),
                        "--rows-per-call", str(settings.rows_per_call), "--codec", settings.codec,
                        "--frames", str(settings.frames), "--registry-port", str(settings.registry_port),
                        "--timeout", f"{settings.timeout_s:g}", *marking, "--calls-out", node_calls,
                        *(["--go-file", gate.arm(ex)] if gate is not None else []),
                        *(["--supersample", str(settings.supersample)] if settings.supersample > 1 else []),
                        hostname=address_of(head), root=ex.qoslab_root)
    # the manager bounds every call by timeout_s; this outer bound only catches a wedged JVM
    res = ex.run(argv, timeout=settings.timeout_s * (settings.frames + 2) + 60, check=False)
    logs["manager"] = out_dir / "workload-manager.log"
    logs["manager"].write_text(res.stderr)
    line = next((l for l in reversed(res.stdout.strip().splitlines()) if l.startswith("{")), None)
    if line is None:
        raise QoslabError(f"workload manager on {head} printed no result (exit {res.returncode}): "
                          f"{res.stderr.strip()[-300:]}")
    result = json.loads(line)
    fetch_log(ex, calls)  # the per-call times, from the head node like the logs (absent: no calls file)
    if calls.exists():
        result["calls_file"] = CALLS_FILE
        result["rmi_ports"] = {"registry": settings.registry_port, "export": settings.export_port}
    (out_dir / "workload-result.json").write_text(json.dumps(result, indent=1))
    return result


def run_workload(
    settings: WorkloadSettings,
    executor_of: Callable[[str], Executor],
    address_of: Callable[[str], str],
    out_dir: Path,
    on_started: Callable[[dict[str, BackgroundProcess]], None] | None = None,
    pool: WorkerPool | None = None,
    lifetime_s: float | None = None,
    gate: Any = None,
) -> WorkloadRun:
    """Start a worker on every host (or reuse ``pool``'s), run the manager on the head node, stop
    the workers (unless they belong to ``pool``).

    ``executor_of(host)`` and ``address_of(host)`` come from the testbed (or a real cluster);
    logs go to ``out_dir/workload-<host>.log`` (the pool's log folder for pooled workers).
    ``on_started(workers)`` is called once every worker listens (tests use it to kill one
    mid-run). ``lifetime_s`` bounds the run's own worker JVMs (seconds; pooled workers have the
    pool's). ``gate``: the manager's run waits for it (:mod:`qoslab.workloads.gate`). Returns
    the manager's JSON result even for a failed run (``valid`` false, ``error`` set). Raises
    QoslabError when a worker cannot start or the manager prints no result.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    workers: dict[str, BackgroundProcess] = {}
    logs: dict[str, Path] = {}
    try:
        if pool is not None:
            logs.update(pool.ensure(settings))
            started = pool.workers
        else:
            for host in settings.hosts:
                logs[host] = out_dir / f"workload-{host}.log"
                logs[host].unlink(missing_ok=True)

            def start(host: str) -> None:
                workers[host] = _start_worker(settings, executor_of(host), address_of(host), logs[host], lifetime_s)
                _wait_for_port(executor_of(host), workers[host], address_of(host), settings.registry_port,
                               settings.startup_timeout_s, logs[host])

            parallel_map(start, settings.hosts)
            started = workers
        if on_started:
            on_started(started)
        result = _run_manager(settings, executor_of, address_of, out_dir, logs, gate)
        return WorkloadRun(result, logs)
    finally:
        def stop(host: str) -> None:
            executor_of(host).stop(workers[host], grace_s=2.0)
            fetch_log(executor_of(host), logs[host])

        parallel_map(stop, list(workers))
