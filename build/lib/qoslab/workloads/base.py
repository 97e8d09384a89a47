"""The workload backend protocol, the settings every workload shares, and the head-node helpers.

A workload is what a trial measures: worker processes on the workload hosts (kept warm across
trials by a pool), then one head command on the first host whose stdout's last JSON line is the
run's result. Every backend (``raytracer``, ``matmul``, ``pingpong``, ``command``; others through
the entry-point group ``qoslab.workloads``) is a :class:`Workload`: its settings model (a
:class:`WorkloadBase` with ``kind`` = its registered name) and :meth:`Workload.run`. The result
dict always has ``valid`` (True = the run counts) and ``elapsed_s`` (the trial's metric).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import Field, field_validator

from qoslab.workloads.pool import WorkloadRun

from ..errors import QoslabError
from ..executors import BackgroundProcess, CommandResult, Executor
from ..yamlio import StrictModel

__all__ = ["WorkloadBase", "JvmWorkloadBase", "Workload", "WorkloadRun", "Pool", "head_result", "record_head",
           "RESULT_FILE"]

#: Where a run's result JSON goes in its output folder (the campaign's censoring reads it there).
RESULT_FILE = "workload-result.json"
#: Largest seed a workload takes: the workload jar's ``--seed`` is a Java long (2^63 - 1).
JAVA_LONG_MAX = 2**63 - 1
ExecutorOf = Callable[[str], Executor]
AddressOf = Callable[[str], str]


class WorkloadBase(StrictModel):
    """Fields every workload has: ``kind`` (the backend's registered name), ``hosts`` (the first
    is the head node), ``dscp`` (0-63 or None), ``timeout_s`` (how long the run's calls may take;
    a censored trial's bound), ``startup_timeout_s`` (how long a worker may take to listen)."""

    kind: str
    hosts: list[str] = Field(..., min_length=1)
    dscp: int | None = Field(None, ge=0, le=63)
    timeout_s: float = Field(120.0, gt=0, le=86_400)
    startup_timeout_s: float = Field(30.0, gt=0, le=3600)

    @field_validator("hosts")
    @classmethod
    def _unique_hosts(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError(f"a host is listed twice: {','.join(v)}")
        return v

    def listen_ports(self) -> list[tuple[str, str, int]]:
        """``(field, proto, port)`` the workers listen on (free on their hosts, not the flood's)."""
        return []

    def describe(self) -> str:
        """One line for the campaign plan."""
        return f"{self.kind} on {', '.join(self.hosts)}"


class JvmWorkloadBase(WorkloadBase):
    """A workload whose processes are JVMs (raytracer, matmul, pingpong, sort, mpj): besides
    :class:`WorkloadBase`'s fields, ``jit`` (their JIT compilers: :data:`.pool.JIT_FLAGS`)."""

    jit: Literal["tiered", "c1"] = Field(
        "tiered", description="the workload JVMs' JIT: tiered (the JVM's default, C1 then C2) or c1 "
                              "(-XX:TieredStopAtLevel=1: slower compute, a machine made different on purpose)")


class Pool(Protocol):
    """Worker processes kept across runs (a campaign's trials): ``workers`` host -> process,
    ``starts`` processes started so far; :meth:`ensure` (re)starts what is missing for
    ``settings`` and returns the log paths; :meth:`close` stops them all by PID."""

    workers: dict[str, BackgroundProcess]
    starts: int

    def ensure(self, settings: Any) -> dict[str, Path]: ...

    def close(self) -> None: ...


class Workload(Protocol):
    """A workload backend (registered in :data:`qoslab.registry.workloads`; the factory takes no
    arguments). ``settings_model`` validates the playbook's ``workload:`` mapping."""

    settings_model: type[WorkloadBase]

    def open_pool(self, executor_of: ExecutorOf, address_of: AddressOf, log_dir: Path,
                  lifetime_s: float | None = None, renew_below_s: float = 0.0) -> Pool:
        """A pool of warm workers (logs under ``log_dir``, bounded lifetimes)."""
        ...

    def run(self, settings: Any, executor_of: ExecutorOf, address_of: AddressOf, out_dir: Path,
            on_started: Callable[[dict[str, BackgroundProcess]], None] | None = None,
            pool: Pool | None = None, lifetime_s: float | None = None) -> WorkloadRun:
        """Start (or reuse ``pool``'s) workers, run the head command, stop own workers; the result
        is also written to ``out_dir/workload-result.json``. Raises QoslabError when no result."""
        ...

    def row(self, result: dict) -> dict[str, Any]:
        """The store columns of a valid result: elapsed_s, total_s, checksum, busy_max_s."""
        ...


def last_json_line(stdout: str) -> dict | None:
    """The last line of ``stdout`` that parses as a JSON object, or None."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                return obj
    return None


def head_result(ex: Executor, argv: list[str], timeout_s: float, out_dir: Path, logs: dict[str, Path],
                what: str) -> dict:
    """Run the head command ``argv`` on ``ex``'s node (``timeout_s`` seconds at most) and
    :func:`record_head` its outcome (``what on NODE`` naming it). Raises QoslabError when stdout
    has no JSON object line."""
    res = ex.run(argv, timeout=timeout_s, check=False)
    return record_head(res, out_dir, logs, f"{what} on {ex.node}")


def record_head(res: CommandResult, out_dir: Path, logs: dict[str, Path], what: str,
                finish: Callable[[dict], dict] | None = None) -> dict:
    """Record a finished head command ``res``: its stderr to ``out_dir/workload-manager.log``
    (``logs["manager"]``), its result (the last JSON object line of stdout, ``exit_code`` added
    unless the line has one), passed through ``finish`` when given, to
    ``out_dir/workload-result.json``; returns that result. Raises QoslabError naming ``what`` (the
    command and where it ran), its exit code and last output when stdout has no JSON object line,
    and whatever ``finish`` raises (nothing written to the result file then)."""
    logs["manager"] = out_dir / "workload-manager.log"
    logs["manager"].write_text(res.stderr)
    result = last_json_line(res.stdout)
    if result is None:
        raise QoslabError(f"{what} printed no JSON result line (exit {res.returncode}): "
                          f"{(res.stderr or res.stdout).strip()[-300:]}")
    result.setdefault("exit_code", res.returncode)
    if finish is not None:
        result = finish(result)
    (out_dir / RESULT_FILE).write_text(json.dumps(result, indent=1))
    return result


def run_pooled(settings: Any, pool: Pool | None, open_pool: Callable[[], Pool],
               on_started: Callable[[dict[str, BackgroundProcess]], None] | None,
               head: Callable[[dict[str, Path]], dict]) -> WorkloadRun:
    """Ensure the workers of ``pool`` (a campaign's, kept open) or, when ``pool`` is None, of the
    run's own pool from ``open_pool()`` (closed at the end, by PID, whatever happens); call
    ``on_started`` with the workers (host -> process); run ``head(logs)`` (logs: name -> local
    log path) and return its result dict with the logs. Raises what ``ensure`` (QoslabError: a
    worker did not start) or ``head`` (QoslabError: no JSON result) raise."""
    own = pool is None
    use = open_pool() if pool is None else pool
    try:
        logs = dict(use.ensure(settings))
        if on_started:
            on_started(use.workers)
        return WorkloadRun(head(logs), logs)
    finally:
        if own:
            use.close()
