"""``matmul``: reference 000's distributed matrix multiplication (``java-workload`` ``matmul``).

One ``matmul-worker`` JVM per host (the head node included), listening on BASE (RMI registry),
BASE+1 (RMI service), BASE+2 (TCP, ``socket``) and BASE+3 (UDP, ``datagram``); then the
``matmul`` manager on the head node, whose JSON line has ``valid`` (the product equals the
sequential one), ``total_s`` (= ``elapsed_s``), ``comm_s``, ``compute_s`` and per-worker rows.
DSCP marking (``dscp``) is given to workers and manager alike. The ``matmul-worker`` JVMs also
serve :mod:`.pingpong`'s echo (:func:`worker_pool`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from qoslab.workloads.pool import HEAP_MB, ProcessPool, WorkloadRun, java_command

from ..executors import BackgroundProcess, Executor
from ..yamlio import SubFieldProblem
from .base import JAVA_LONG_MAX, AddressOf, ExecutorOf, JvmWorkloadBase, Pool, head_result, run_pooled

Mechanism = Literal["rmi-serializable", "rmi-externalizable", "socket", "datagram"]
MECHANISMS: tuple[str, ...] = ("rmi-serializable", "rmi-externalizable", "socket", "datagram")
ALGORITHMS: tuple[str, ...] = ("spa", "mca")


class JavaWorkerSettings(JvmWorkloadBase):
    """Settings of a workload served by ``matmul-worker`` JVMs: ``port`` is their base port."""

    port: int = Field(1200, ge=1, le=65532)

    def listen_ports(self) -> list[tuple[str, str, int]]:
        p = self.port
        return [("port", "tcp", p), ("port", "tcp", p + 1), ("port", "tcp", p + 2), ("port", "udp", p + 3)]

    def worker_hosts(self) -> list[str]:
        return list(self.hosts)


#: Bytes of the matmul manager's heap per matrix element: its four n x n int matrices (A, B, the
#: product, the sequential reference: 16) and, per worker, the copy of B and of its band of A in
#: flight to it (8 more each: SPA sends every worker all of B).
MANAGER_BYTES = 16
MANAGER_BYTES_PER_WORKER = 8


def max_size(workers: int) -> int:
    """The largest matrix order whose manager fits 80 % of the workload JVMs' heap (pool.HEAP_MB)
    with ``workers`` workers: isqrt(0.8 x heap / (MANAGER_BYTES + workers x MANAGER_BYTES_PER_WORKER)):
    3172 with 2 workers, 2590 with 4, 2006 with 8. Measured on loopback (2026-11-27, -Xmx384m, SPA,
    ``python bench/heap_probe.py matmul WORKERS MECHANISM SIZE...``): 2 workers, rmi-serializable:
    4000 ran (manager peak RSS 444 MB), 5000 ran out of memory; 4 workers: rmi-serializable 4000 ran
    (457 MB), datagram 3000 ran (417 MB), 3500 and 4000 ran out of memory (4500: the manager hung
    until its 600 s timeout). The maximum the settings took before, 5000, failed with any of them."""
    return math.isqrt(HEAP_MB * 2**20 * 4 // 5 // (MANAGER_BYTES + workers * MANAGER_BYTES_PER_WORKER))


class MatmulSettings(JavaWorkerSettings):
    """``kind: matmul``: ``mechanism`` (rmi-serializable | rmi-externalizable | socket |
    datagram), ``algorithm`` (spa | mca), ``size`` (matrix order n, at most :func:`max_size` of
    the workers), ``seed`` of the matrices."""

    kind: Literal["matmul"] = "matmul"
    mechanism: Mechanism = "socket"
    algorithm: Literal["spa", "mca"] = "spa"
    size: int = Field(200, ge=1, le=5000)
    seed: int = Field(1, ge=0, le=JAVA_LONG_MAX)

    @model_validator(mode="after")
    def _fits(self) -> MatmulSettings:
        if self.size > (most := max_size(len(self.worker_hosts()))):
            raise SubFieldProblem(("size",), f"n = {self.size} does not fit the matmul manager's {HEAP_MB} MiB heap "
                                             f"with {len(self.worker_hosts())} workers: at most {most}")
        return self

    def describe(self) -> str:
        return f"matmul {self.algorithm} over {self.mechanism}, n = {self.size}, on {', '.join(self.hosts)}"


def marking(dscp: int | None) -> list[str]:
    return ["--dscp", str(dscp)] if dscp is not None else []


def worker_pool(executor_of: ExecutorOf, address_of: AddressOf, log_dir: Path, lifetime_s: float | None = None,
                renew_below_s: float = 0.0, worker: str = "matmul-worker") -> ProcessPool:
    """A pool of ``worker`` JVMs (``matmul-worker``, or :mod:`.sort`'s ``sort-worker``), one on each
    of the settings' ``worker_hosts()``, started with ``--advertise <ip> --port BASE --timeout <s>``
    (and ``--dscp``), ready when the registry port (BASE, the last to bind) listens; settings that
    differ in hosts, port, dscp or timeout restart it."""
    def start(s: JavaWorkerSettings, host: str, ex: Executor, ip: str, log: str,
              life: float | None) -> BackgroundProcess:
        argv = java_command(worker, "--advertise", ip, "--port", str(s.port), "--timeout", f"{s.timeout_s:g}",
                            *marking(s.dscp), hostname=ip, root=ex.qoslab_root, jit=s.jit)
        return ex.start(argv, stdout=log, stderr=log, lifetime_s=life)

    return ProcessPool(executor_of, address_of, log_dir, start,
                       key_of=lambda s: (tuple(s.worker_hosts()), s.port, s.dscp, s.timeout_s, s.jit),
                       hosts_of=lambda s: s.worker_hosts(), ready_port=lambda s: s.port,
                       lifetime_s=lifetime_s, renew_below_s=renew_below_s)


class JavaWorkerWorkload:
    """What ``matmul``, ``pingpong`` and ``sort`` share: the pool (:meth:`open_pool`, ``matmul-worker``
    JVMs unless a subclass names another :attr:`worker`) and the run around the manager."""

    what = "java workload"
    #: The worker JVMs' command (the workload jar's ``matmul-worker``; :mod:`.sort`: ``sort-worker``).
    worker = "matmul-worker"
    #: The manager waits for a go gate (:mod:`.gate`) when the trial passes one.
    gated = True
    #: Its servers (RMI registries and exports, socket servers) bind with SO_REUSEADDR: OpenJDK's
    #: default for a ServerSocket on Linux, set explicitly for the others (java-workload
    #: ReuseAddressTest): a killed worker's connections in TIME-WAIT do not keep its successor from
    #: binding, so the runner does not wait for them (:mod:`qoslab.campaign.portwait`).
    binds_reuse_address = True

    def open_pool(self, executor_of: ExecutorOf, address_of: AddressOf, log_dir: Path,
                  lifetime_s: float | None = None, renew_below_s: float = 0.0) -> Pool:
        return worker_pool(executor_of, address_of, log_dir, lifetime_s, renew_below_s, self.worker)

    def manager_args(self, s: Any, address_of: AddressOf) -> list[str]:
        raise NotImplementedError

    def run(self, settings: Any, executor_of: ExecutorOf, address_of: AddressOf, out_dir: Path,
            on_started: Callable[[dict[str, BackgroundProcess]], None] | None = None,
            pool: Pool | None = None, lifetime_s: float | None = None, gate: Any = None) -> WorkloadRun:
        out_dir.mkdir(parents=True, exist_ok=True)
        head = settings.hosts[0]
        ex = gate.executor(executor_of(head)) if gate is not None else executor_of(head)  # (gate: boots unbudgeted)

        def manager(logs: dict[str, Path]) -> dict:
            argv = java_command(*self.manager_args(settings, address_of), *marking(settings.dscp),
                                *(["--go-file", gate.arm(ex)] if gate is not None else []),
                                hostname=address_of(head), root=ex.qoslab_root, jit=settings.jit)
            return head_result(ex, argv, settings.timeout_s * 2 + 60, out_dir, logs, self.what)

        return run_pooled(settings, pool, lambda: self.open_pool(executor_of, address_of, out_dir, lifetime_s),
                          on_started, manager)


class Matmul(JavaWorkerWorkload):
    """The ``matmul`` backend (see the module doc)."""

    settings_model = MatmulSettings
    what = "matmul manager"

    def manager_args(self, s: Any, address_of: AddressOf) -> list[str]:
        spec = ",".join(f"{h}={address_of(h)}:{s.port}" for h in s.hosts)
        return ["matmul", "--workers", spec, "--mechanism", s.mechanism, "--algorithm", s.algorithm,
                "--size", str(s.size), "--seed", str(s.seed), "--port", str(s.port), "--timeout", f"{s.timeout_s:g}"]

    def row(self, result: dict) -> dict[str, Any]:
        busy = [w.get("compute_s") for w in result.get("per_worker", []) if w.get("compute_s") is not None]
        return {"elapsed_s": result["elapsed_s"], "total_s": result.get("total_s"),
                "checksum": result.get("checksum"), "busy_max_s": max(busy) if busy else None}
