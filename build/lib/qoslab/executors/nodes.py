"""The executors of one topology's hosts for one campaign (or one command), from the registry.

:class:`Nodes` turns a backend name (``netns``, ``local``, ``ssh`` or a third party's) into one
executor per host, made on first use and kept (``ssh``: one connection per node for the whole
campaign); :meth:`Nodes.parallel` runs a function on many hosts at once (starting workers on 8
nodes costs one round trip, not eight); :meth:`Nodes.close` releases them (``ssh``: ends what is
left, removes the work roots on the nodes, closes the connections).

A backend's factory may have a ``for_topology(node, topology, *, testbed, local_root, run_id)``
class method; without one it is called as ``factory(node)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ..errors import QoslabError
from ..registry import executors
from .base import Executor

T = TypeVar("T")

#: Threads of the shared pool behind :func:`parallel_map` (the thesis cluster has 8 nodes).
MAX_PARALLEL = 32

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_inside = threading.local()


def _shared_pool() -> ThreadPoolExecutor:
    """One pool for the whole program whose threads live until it exits: a process started by the
    ``netns``/``local`` executors gets SIGTERM when the *thread* that started it ends
    (PR_SET_PDEATHSIG), so starts must never run in short-lived threads."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=MAX_PARALLEL, thread_name_prefix="qoslab-parallel")
        return _pool


def _run_marked(fn: Callable[[T], Any], item: T) -> Any:
    _inside.active = True
    try:
        return fn(item)
    finally:
        _inside.active = False


class Nodes:
    """Executors of ``topology``'s hosts with backend ``kind`` (see the module doc). ``testbed``:
    the embedded testbed (None on a cluster); ``local_root``: the campaign folder (what remote
    work roots mirror); ``run_id``: names the run on the nodes. Raises ConfigError for an
    unknown backend."""

    def __init__(self, kind: str, topology: Any, *, testbed: Any = None, local_root: Path | None = None,
                 run_id: str = "adhoc") -> None:
        self.kind, self.topology, self.testbed = kind, topology, testbed
        self.local_root, self.run_id = local_root, run_id
        self.factory = executors.get(kind)
        self._executors: dict[str, Executor] = {}

    def executor_of(self, host: str) -> Executor:
        """The executor of ``host`` (made once). Raises QoslabError for a host not in the topology."""
        ex = self._executors.get(host)
        if ex is None:
            if host not in self.topology.host_names:
                raise QoslabError(f"no host {host!r} in topology {self.topology.name}")
            make = getattr(self.factory, "for_topology", None)
            made = make(host, self.topology, testbed=self.testbed, local_root=self.local_root, run_id=self.run_id) \
                if make is not None else self.factory(host)
            assert isinstance(made, Executor), f"executor {self.kind} does not keep the Executor contract"
            self._executors[host] = ex = made
        return ex

    def use(self, host: str, executor: Executor) -> None:
        """Use ``executor`` for ``host`` from now on (a node reached differently from the others)."""
        self._executors[host] = executor

    def parallel(self, fn: Callable[[Executor], T], hosts: Iterable[str]) -> dict[str, T]:
        """``fn(executor_of(host))`` for every host at once; results by host. The first failure
        is raised (after every call has ended)."""
        hosts = list(dict.fromkeys(hosts))
        results = parallel_map(fn, [self.executor_of(h) for h in hosts])
        return dict(zip(hosts, results, strict=True))

    def opened(self) -> list[str]:
        """Hosts whose executor has been made so far."""
        return list(self._executors)

    def close(self) -> None:
        """Close every executor that can be closed (all at once). Errors are collected and the
        first raised after all have been tried."""
        closable = [h for h, ex in self._executors.items() if callable(getattr(ex, "close", None))]
        errors: list[Exception] = []

        def close(ex: Executor) -> None:
            try:
                ex.close()  # type: ignore[attr-defined]
            except Exception as e:  # noqa: BLE001 - every node gets its turn
                errors.append(e)

        self.parallel(close, closable)
        self._executors.clear()
        if errors:
            raise errors[0]


def parallel_map(fn: Callable[[T], Any], items: Iterable[T]) -> list[Any]:
    """``fn(item)`` for every item at once on the shared pool's long-lived threads, results in
    order; every call ends before the first failure is raised. Called from inside such a call
    (nested) it runs the items one after another instead (the pool cannot deadlock)."""
    items = list(items)
    if len(items) <= 1 or getattr(_inside, "active", False):
        return [fn(i) for i in items]
    futures = [_shared_pool().submit(_run_marked, fn, i) for i in items]
    errors = [f.exception() for f in futures]
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return [f.result() for f in futures]
