"""``mpj``: reference 003's message passing on MPJ Express 0.44 (Debian ``libmpj-java``).

One MPJ rank per host (``hosts[0]`` is rank 0, which prints the result), started through the
campaign's executors like every workload process; MPJ's own launcher is not used: ``mpjrun``
needs an ``mpjdaemon`` on every node (started by ``mpjboot`` over ssh, listening on 40055/40052)
that spawns the ranks itself, outside the executors' lifetimes and clean-up by PID. What
``mpjrun`` contributes besides, the niodev rendezvous (each rank reports its two random ports
and gets every rank's), is ``java-workload``'s ``mpj-ports``, started on the head node first
(``port``). The ranks run ``org.qoslab.workload.mpj.MpjBench``: MPJ ping-pong rank 0 <-> 1 over
message sizes beside a plain-socket ping-pong (rank 1 listens on ``port`` + 1), Barrier, Bcast
over sizes from rank 0, Allreduce; per operation latency percentiles (seconds). ``elapsed_s`` is
the whole benchmark's time in rank 0. MPJ's sockets are its own (no socket factory): ``dscp``
cannot mark them, and settings refuse it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from ..errors import CommandTimeout
from ..executors import BackgroundProcess
from ..topology import repo_root
from ..yamlio import SubFieldProblem
from .base import RESULT_FILE, AddressOf, ExecutorOf, JvmWorkloadBase, Pool, head_result
from .pool import JAR, JVM_FLAGS, WorkloadRun, fetch_log, java_command, jit_flags, node_log, wait_for_port

#: MPJ Express as Debian 12 installs it (libmpj-java 0.44): its jar, log4j (its manifest's
#: Class-Path is not followed through the /usr/share/java symlink) and MPJ_HOME (its conf/).
MPJ_JARS = ("/usr/share/java/mpj.jar", "/usr/share/java/log4j-1.2.jar")
MPJ_HOME = "/usr/share/mpj"
MAIN = "org.qoslab.workload.mpj.MpjBench"


class MpjSettings(JvmWorkloadBase):
    """``kind: mpj``: ``hosts`` = the ranks (>= 2, rank 0 first); ``min_bytes``/``max_bytes``
    (ping-pong and Bcast sizes, doubling; reference 003's table: 512 B .. 1 MiB), ``reps`` timed
    repetitions per size and operation (its loop: 25) after ``warmup``; ``port``: the rendezvous on
    the head node, ``port`` + 1 the socket ping-pong on ``hosts[1]``."""

    kind: Literal["mpj"] = "mpj"
    min_bytes: int = Field(1, ge=1, le=1 << 24)
    max_bytes: int = Field(65536, ge=1, le=1 << 24)
    reps: int = Field(25, ge=1, le=100_000)
    warmup: int = Field(5, ge=0, le=100_000)
    port: int = Field(1400, ge=1, le=65534)

    @model_validator(mode="after")
    def _shape(self) -> MpjSettings:
        if len(self.hosts) < 2:
            raise SubFieldProblem(("hosts",), f"mpj needs at least two hosts (ranks), got {len(self.hosts)}")
        if self.min_bytes > self.max_bytes:
            raise SubFieldProblem(("min_bytes",), f"min_bytes {self.min_bytes} is above max_bytes {self.max_bytes}")
        if self.dscp is not None:
            raise SubFieldProblem(("dscp",), "MPJ Express opens its own sockets (no socket factory): mpj cannot mark "
                                             "DSCP; classify it by host pair (ACL profiles) instead")
        return self

    def listen_ports(self) -> list[tuple[str, str, int]]:
        return [("port", "tcp", self.port), ("port", "tcp", self.port + 1)]

    def describe(self) -> str:
        return (f"mpj (MPJ Express) on {len(self.hosts)} ranks ({', '.join(self.hosts)}), "
                f"{self.min_bytes}..{self.max_bytes} B, {self.reps} reps")


def timeout_result(e: CommandTimeout) -> dict[str, Any]:
    """The ``workload-result.json`` of a benchmark killed at its bound (rank 0 printed nothing):
    ``valid`` false, ``call_timeout`` true and ``failed_after_s`` = the bound (seconds), so that a
    playbook with ``censor_timeouts`` counts the trial at that bound (stats.censoring), as the Java
    managers' own timeouts are."""
    return {"workload": "mpj", "valid": False, "call_timeout": True, "failed_after_s": e.timeout_s,
            "error": f"the MPJ benchmark did not finish within {e.timeout_s:g} s (rank 0 killed)"}


def rank_command(s: MpjSettings, rank: int, head_ip: str, peer_ip: str, root: str | Path | None) -> list[str]:
    """``env MPJ_HOME=... java ... MpjBench <rank> <conf> niodev [options]`` for one rank."""
    jar = str(JAR) if root is None or Path(root) == repo_root() else \
        f"{str(root).rstrip('/')}/{JAR.relative_to(repo_root()).as_posix()}"
    cp = ":".join([jar, f"{jar.rsplit('/', 1)[0]}/lib/*", *MPJ_JARS])
    conf = (f"#Number of Processes;{len(s.hosts)};#Protocol Switch Limit;131072;#Server Name;{head_ip};"
            f"#Server Port;{s.port}")
    return ["env", f"MPJ_HOME={MPJ_HOME}", "java", *JVM_FLAGS, *jit_flags(s.jit), "-cp", cp, MAIN, str(rank), conf,
            "niodev",
            "--min-bytes", str(s.min_bytes), "--max-bytes", str(s.max_bytes), "--reps", str(s.reps),
            "--warmup", str(s.warmup), "--socket-peer", f"{peer_ip}:{s.port + 1}"]


class _NoPool:
    """MPJ ranks live for one run (MPI.Init to MPI.Finalize): nothing is kept across trials."""

    def __init__(self) -> None:
        self.workers: dict[str, BackgroundProcess] = {}
        self.starts = 0

    def ensure(self, settings: Any) -> dict[str, Path]:
        return {}

    def close(self) -> None:
        pass


class Mpj:
    """The ``mpj`` backend (see the module doc)."""

    settings_model = MpjSettings
    what = "mpj rank 0"

    def open_pool(self, executor_of: ExecutorOf, address_of: AddressOf, log_dir: Path,
                  lifetime_s: float | None = None, renew_below_s: float = 0.0) -> Pool:
        return _NoPool()

    def run(self, settings: Any, executor_of: ExecutorOf, address_of: AddressOf, out_dir: Path,
            on_started: Callable[[dict[str, BackgroundProcess]], None] | None = None,
            pool: Pool | None = None, lifetime_s: float | None = None) -> WorkloadRun:
        """Rendezvous on the head, ranks 1.. in the background, rank 0 as the head command; every
        background process is stopped by PID and its log fetched, whatever happens."""
        s: MpjSettings = settings
        out_dir.mkdir(parents=True, exist_ok=True)
        head, head_ip, peer_ip = s.hosts[0], address_of(s.hosts[0]), address_of(s.hosts[1])
        life = lifetime_s or s.timeout_s * 2 + 120
        procs: dict[str, BackgroundProcess] = {}
        logs = {h: out_dir / f"workload-{h}.log" for h in s.hosts[1:]} | {"ports": out_dir / "workload-ports.log"}
        ex0 = executor_of(head)
        try:
            ports = java_command("mpj-ports", "--bind", head_ip, "--port", str(s.port), "--np", str(len(s.hosts)),
                                 "--timeout", f"{s.startup_timeout_s:g}", root=ex0.qoslab_root)
            procs["ports"] = ex0.start(ports, stdout=node_log(ex0, logs["ports"]), stderr=node_log(ex0, logs["ports"]),
                                       lifetime_s=life)
            # a rank connects to the rendezvous once, at MPI.Init, and fails on a refused connection
            wait_for_port(ex0, procs["ports"], head_ip, s.port, s.startup_timeout_s, logs["ports"])
            for rank, host in enumerate(s.hosts[1:], start=1):
                ex = executor_of(host)
                argv = rank_command(s, rank, head_ip, peer_ip, ex.qoslab_root)
                procs[host] = ex.start(argv, stdout=node_log(ex, logs[host]), stderr=node_log(ex, logs[host]),
                                       lifetime_s=life)
            if on_started:
                on_started({h: p for h, p in procs.items() if h != "ports"})
            argv0 = rank_command(s, 0, head_ip, peer_ip, ex0.qoslab_root)
            try:
                result = head_result(ex0, argv0, s.timeout_s * 2 + 60, out_dir, logs, self.what)
            except CommandTimeout as e:  # the result a censored trial is counted from, then the failure
                (out_dir / RESULT_FILE).write_text(json.dumps(timeout_result(e), indent=1))
                raise
            return WorkloadRun(result, dict(logs))
        finally:
            for host, proc in procs.items():
                ex = ex0 if host == "ports" else executor_of(host)
                ex.stop(proc, grace_s=2.0)
                fetch_log(ex, logs[host])

    def row(self, result: dict) -> dict[str, Any]:
        """``elapsed_s`` = rank 0's benchmark time; no checksum, no per-worker busy time."""
        return {"elapsed_s": result["elapsed_s"], "total_s": result.get("elapsed_s"), "checksum": None,
                "busy_max_s": None}
