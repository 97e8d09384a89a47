"""``raytracer``: the distributed RMI RayTracer (``java-workload/``, JGF section 3) as a workload backend.

One worker JVM per host (the head node included, as in the thesis), then the manager JVM on the
head node (the first host); the manager prints one JSON line, returned here as a dict
(:func:`run_workload`). :class:`WorkerPool` keeps the worker JVMs warm across trials
(a :class:`qoslab.workloads.pool.ProcessPool`). The backend (:class:`Raytracer`) adds ``kind`` to
the settings and maps the result to the store row (``elapsed_s`` = ``elapsed_render_s``, as
campaigns have always recorded it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from ..errors import QoslabError
from ..executors import BackgroundProcess, Executor
from ..executors.nodes import parallel_map
from ..yamlio import SubFieldProblem
from .base import AddressOf, ExecutorOf, JvmWorkloadBase, Pool
from .pool import CALLS_FILE, ProcessPool, WorkloadRun, fetch_log, java_command, node_log, wait_for_port


class RaytracerSettings(JvmWorkloadBase):
    """The RayTracer's settings: one workload run (also a playbook's ``workload:`` and a
    condition's overrides); ``kind: raytracer`` is the default kind.

    Besides :class:`JvmWorkloadBase`'s fields (``jit``: tiered | c1; ``hosts``: the first is the head node, manager + a
    worker; ``dscp``: 0-63 marking every RMI socket, or None; ``timeout_s``: seconds one RMI call
    may take; ``startup_timeout_s``: seconds a worker JVM may take to listen): ``size``: "A"
    (150x150), "B" (500x500) or a width in pixels (JGF section 3 sizes); ``rows_per_call``: rows per
    RMI call, or "all"; ``codec``: serializable | externalizable; ``frames``: renders per run;
    ports: RMI registry and render-service export port (fixed, so a QoS profile can match them);
    ``supersample``: k x k rays per pixel (1 = the JGF benchmark; compute grows k^2-fold, bytes do
    not; checksums in java-workload); ``rays``: N rays per pixel on a cols x rows sub-pixel grid
    instead (1-16, issue 48: a finer compute knob; N = k*k is supersample k). Invalid values raise
    pydantic's ValidationError (ConfigError with file and line when loaded from a playbook)."""

    kind: Literal["raytracer"] = "raytracer"
    size: str = "A"
    rows_per_call: int | Literal["all"] = "all"
    codec: Literal["serializable", "externalizable"] = "serializable"
    frames: int = Field(1, ge=1, le=10_000)
    registry_port: int = Field(1099, ge=1, le=65535)
    export_port: int = Field(1100, ge=1, le=65535)
    supersample: int = Field(1, ge=1, le=4)
    rays: int | None = Field(None, ge=1, le=16, description=(
        "rays per pixel on a cols x rows grid of sub-pixels (1-16; compute grows N-fold, bytes do not; "
        "k*k = supersample k); None: supersample's k x k"))

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
    def _ports(self) -> RaytracerSettings:
        if self.registry_port == self.export_port:
            raise SubFieldProblem(("export_port",), f"export port {self.export_port} equals the registry port")
        if self.rays is not None and self.supersample > 1:
            raise SubFieldProblem(("rays",), f"rays {self.rays} and supersample {self.supersample}: give one "
                                             "(k x k rays = supersample k)")
        return self

    @property
    def rays_per_pixel(self) -> int:
        """The rays traced per pixel: ``rays``, or supersample^2."""
        return self.rays if self.rays is not None else self.supersample ** 2

    @classmethod
    def checked(cls, **values: Any) -> RaytracerSettings:
        """Construct from keyword values; raises QoslabError with one line per problem."""
        try:
            return cls(**values)
        except ValidationError as e:
            raise QoslabError("workload: " + "; ".join(
                f"{'.'.join(map(str, err['loc'])) or 'settings'}: {err['msg'].removeprefix('Value error, ')}"
                for err in e.errors())) from None

    def listen_ports(self) -> list[tuple[str, str, int]]:
        return [("registry_port", "tcp", self.registry_port), ("export_port", "tcp", self.export_port)]

    def describe(self) -> str:
        return (f"raytracer on {', '.join(self.hosts)}, size {self.size}, {self.frames} frame(s), rows per call "
                f"{self.rows_per_call}" + (f", supersample {self.supersample}" if self.supersample > 1 else "")
                + (f", {self.rays} rays per pixel" if self.rays is not None else ""))


#: The RayTracer's settings under their first name (every run is a RayTracer run's settings).
WorkloadSettings = RaytracerSettings


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
        return (tuple(settings.hosts), settings.registry_port, settings.export_port, settings.dscp, settings.jit)


def _start_worker(settings: WorkloadSettings, ex: Executor, ip: str, log: Path,
                  lifetime_s: float | None = None) -> BackgroundProcess:
    return _pool_start(settings, "", ex, ip, node_log(ex, log), lifetime_s)


def _pool_start(settings: WorkloadSettings, host: str, ex: Executor, ip: str, out: str,
                lifetime_s: float | None) -> BackgroundProcess:
    """One RayTracer worker JVM on ``ip`` with its output to ``out`` (a path on its node)."""
    marking = ["--dscp", str(settings.dscp)] if settings.dscp is not None else []
    argv = java_command("worker", "--advertise", ip, "--registry-port", str(settings.registry_port),
                        "--export-port", str(settings.export_port), *marking, hostname=ip, root=ex.qoslab_root,
                        jit=settings.jit)
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
    ex = gate.executor(executor_of(head)) if gate is not None else executor_of(head)  # (gate: boots unbudgeted)
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
                        *(["--rays", str(settings.rays)] if settings.rays is not None else []),
                        hostname=address_of(head), root=ex.qoslab_root, jit=settings.jit)
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
                wait_for_port(executor_of(host), workers[host], address_of(host), settings.registry_port,
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


class Raytracer:
    """The ``raytracer`` backend (see the module doc)."""

    settings_model = RaytracerSettings
    #: The manager waits for a go gate (:mod:`.gate`) when the trial passes one.
    gated = True
    #: Its servers (RMI registries and exports, socket servers) bind with SO_REUSEADDR: OpenJDK's
    #: default for a ServerSocket on Linux, set explicitly for the others (java-workload
    #: ReuseAddressTest): a killed worker's connections in TIME-WAIT do not keep its successor from
    #: binding, so the runner does not wait for them (:mod:`qoslab.campaign.portwait`).
    binds_reuse_address = True

    def open_pool(self, executor_of: ExecutorOf, address_of: AddressOf, log_dir: Path,
                  lifetime_s: float | None = None, renew_below_s: float = 0.0) -> Pool:
        return WorkerPool(executor_of, address_of, log_dir, lifetime_s=lifetime_s, renew_below_s=renew_below_s)

    def run(self, settings: Any, executor_of: ExecutorOf, address_of: AddressOf, out_dir: Path,
            on_started: Callable[[dict[str, BackgroundProcess]], None] | None = None,
            pool: Pool | None = None, lifetime_s: float | None = None, gate: Any = None) -> WorkloadRun:
        return run_workload(settings, executor_of, address_of, out_dir, on_started=on_started,
                            pool=pool, lifetime_s=lifetime_s, gate=gate)  # type: ignore[arg-type]

    def row(self, result: dict) -> dict[str, Any]:
        busy = [w.get("busy_s") for w in result.get("per_worker", []) if w.get("busy_s") is not None]
        return {"elapsed_s": result["elapsed_render_s"], "total_s": result["elapsed_total_s"],
                "checksum": result["checksum"], "busy_max_s": max(busy) if busy else None}
