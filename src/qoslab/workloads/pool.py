"""Worker processes kept running across runs, for any workload (the RayTracer keeps its own
:class:`qoslab.workload.WorkerPool`, whose behaviour this one copies).

A :class:`ProcessPool` is given how to start one worker (``start(settings, host, executor, ip,
node_log, lifetime_s) -> BackgroundProcess``), which hosts get one (``hosts_of(settings)``), what
identifies a set of workers (``key_of(settings)``: other settings restart the pool) and which TCP
port tells that a worker is ready (``ready_port(settings)``, None = ready once started). Workers
get the executor's parent-death signal and, with ``lifetime_s``, a bounded life; a worker with
less than ``renew_below_s`` left is restarted before a run. Output goes to
``log_dir/workload-<host>.log``; :meth:`close` stops every worker by PID and fetches its log.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..executors import BackgroundProcess, Executor
from ..executors.nodes import parallel_map
from ..workload import fetch_log, node_log, wait_for_port

Starter = Callable[[Any, str, Executor, str, str, "float | None"], BackgroundProcess]


class ProcessPool:
    """See the module doc."""

    def __init__(self, executor_of: Callable[[str], Executor], address_of: Callable[[str], str], log_dir: Path,
                 start: Starter, key_of: Callable[[Any], tuple], hosts_of: Callable[[Any], list[str]],
                 ready_port: Callable[[Any], int | None], lifetime_s: float | None = None,
                 renew_below_s: float = 0.0):
        self.executor_of, self.address_of, self.log_dir = executor_of, address_of, log_dir
        self.start, self.key_of, self.hosts_of, self.ready_port = start, key_of, hosts_of, ready_port
        self.lifetime_s, self.renew_below_s = lifetime_s, renew_below_s
        self.workers: dict[str, BackgroundProcess] = {}
        self.key: tuple | None = None
        self.starts = 0

    def _usable(self, host: str) -> bool:
        proc = self.workers.get(host)
        if proc is None or self.executor_of(host).poll(proc) is not None:
            return False
        return proc.deadline is None or proc.deadline - time.monotonic() > self.renew_below_s

    def ensure(self, settings: Any) -> dict[str, Path]:
        """A worker for ``settings`` on each of its hosts (restarted when dead or near its end);
        returns the log paths. Raises QoslabError naming the host and log when one cannot start."""
        if self.key != self.key_of(settings):
            self.close()
            self.key = self.key_of(settings)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        hosts = self.hosts_of(settings)
        logs = {h: self.log_dir / f"workload-{h}.log" for h in hosts}
        port = self.ready_port(settings)

        def ensure_one(host: str) -> bool:
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
        """Stop every worker (SIGTERM to its process group, then SIGKILL) and bring its log here."""
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
