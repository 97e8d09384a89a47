"""``raytracer``: the distributed RMI RayTracer of :mod:`qoslab.workload`, as a workload backend.

Nothing of the run changes: :func:`qoslab.workload.run_workload` and its WorkerPool do the work;
this module adds ``kind`` to its settings and maps the result to the store row
(``elapsed_s`` = ``elapsed_render_s``, as campaigns have always recorded it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ..executors import BackgroundProcess
from ..workload import WorkerPool, WorkloadRun, WorkloadSettings, run_workload
from .base import AddressOf, ExecutorOf, Pool, WorkloadBase


class RaytracerSettings(WorkloadSettings, WorkloadBase):
    """:class:`qoslab.workload.WorkloadSettings` with ``kind: raytracer`` (the default kind)."""

    kind: Literal["raytracer"] = "raytracer"

    def listen_ports(self) -> list[tuple[str, str, int]]:
        return [("registry_port", "tcp", self.registry_port), ("export_port", "tcp", self.export_port)]

    def describe(self) -> str:
        return (f"raytracer on {', '.join(self.hosts)}, size {self.size}, {self.frames} frame(s), rows per call "
                f"{self.rows_per_call}" + (f", supersample {self.supersample}" if self.supersample > 1 else ""))


class Raytracer:
    """The ``raytracer`` backend (see the module doc)."""

    settings_model = RaytracerSettings
    #: The manager waits for a go gate (:mod:`.gate`) when the trial passes one.
    gated = True

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
