"""``sort``: reference 002's distributed sort over sockets, RMI and CORBA (``java-workload`` ``sort``).

A client on the head node (``hosts[0]``) sorts ``size`` integers (from ``seed``) on ``servers``
sort servers: one ``sort-worker`` JVM per server host, serving the three mechanisms at once on
BASE (RMI registry), BASE+1 (RMI service), BASE+2 (TCP, ``socket``), BASE+3 (IIOP, ``corba``,
the GlassFish ORB). The servers are the hosts after the head, in order, wrapping round to the
head when there are as many servers as hosts (8 servers on the 8-host testbed: jp-2..jp-8, jp-1).
The client's JSON line has ``valid`` (the merged parts equal a local sort), ``checksum``,
``distribute_s``, ``sort_s``, ``collect_s``, ``merge_s`` and ``total_s`` (= ``elapsed_s``, their
sum: reference 002's "communication and computation time", Figure 2).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from ..yamlio import SubFieldProblem
from .base import JAVA_LONG_MAX, AddressOf
from .matmul import JavaWorkerSettings, JavaWorkerWorkload
from .pool import HEAP_MB

#: Reference 002's mechanisms, in its table's order (Figure 2: socket, RMI, CORBA).
MECHANISMS: tuple[str, ...] = ("socket", "rmi", "corba")
#: The sort servers' default base port (the RayTracer uses 1099/1100, matmul 1200..1203).
DEFAULT_PORT = 1300
#: Bytes of the client's heap per integer sorted: five int arrays of ``size`` (the data, its parts,
#: the sorted parts, the merged result, the reference sort; SortManager.run and result).
CLIENT_BYTES_PER_INT = 5 * 4
#: Largest ``size``: 80 % of the workload JVMs' heap (pool.HEAP_MB) at CLIENT_BYTES_PER_INT, 16,106,127
#: at 384 MiB. Measured on loopback with one server (2026-11-27, -Xmx384m, ``python bench/heap_probe.py sort
#: 1 MECHANISM 4000000 8000000 12000000 16000000 20000000 24000000``): 16,000,000 integers sort over
#: socket, RMI and CORBA (client peak RSS 377 / 382 / 433 MB); 20,000,000 end the client in
#: OutOfMemoryError with every mechanism (the servers, holding their parts, survive).
MAX_SIZE = HEAP_MB * 2**20 * 4 // 5 // CLIENT_BYTES_PER_INT


class SortSettings(JavaWorkerSettings):
    """``kind: sort``: ``mechanism`` socket | rmi | corba; ``servers`` (reference 002: 2, 4, 8; at
    most one per host: at most ``len(hosts)``); ``size`` integers (reference 002: 20,000 ..
    400,000); ``seed`` of the integers; ``port`` the servers' base port (BASE..BASE+3)."""

    kind: Literal["sort"] = "sort"
    mechanism: Literal["socket", "rmi", "corba"] = "socket"
    servers: int = Field(2, ge=1, le=64)
    size: int = Field(100_000, ge=1)
    seed: int = Field(1, ge=0, le=JAVA_LONG_MAX)
    port: int = Field(DEFAULT_PORT, ge=1, le=65532)

    @model_validator(mode="after")
    def _shape(self) -> SortSettings:
        if self.servers > len(self.hosts):
            raise SubFieldProblem(("servers",), f"{self.servers} sort servers need {self.servers} hosts (one server "
                                                f"per host), {len(self.hosts)} listed")
        if self.size > MAX_SIZE:
            raise SubFieldProblem(("size",), f"{self.size} integers do not fit the sort client's {HEAP_MB} MiB heap "
                                             f"({CLIENT_BYTES_PER_INT} B each, five arrays): at most {MAX_SIZE}")
        if self.size < self.servers:
            raise SubFieldProblem(("size",), f"size {self.size} is below the {self.servers} servers")
        return self

    def listen_ports(self) -> list[tuple[str, str, int]]:
        p = self.port
        return [("port", "tcp", p + i) for i in range(4)]

    def worker_hosts(self) -> list[str]:
        """The sort servers' hosts: after the head, wrapping round to it (module doc)."""
        n = len(self.hosts)
        return [self.hosts[(1 + i) % n] for i in range(self.servers)] if n > 1 else list(self.hosts)

    def describe(self) -> str:
        return (f"sort of {self.size} integers over {self.mechanism} on {self.servers} servers "
                f"({', '.join(self.worker_hosts())}), client {self.hosts[0]}")


class Sort(JavaWorkerWorkload):
    """The ``sort`` backend (see the module doc)."""

    settings_model = SortSettings
    what = "sort client"
    worker = "sort-worker"

    def manager_args(self, s: Any, address_of: AddressOf) -> list[str]:
        spec = ",".join(f"{h}={address_of(h)}:{s.port}" for h in s.worker_hosts())
        return ["sort", "--servers", spec, "--mechanism", s.mechanism, "--size", str(s.size), "--seed", str(s.seed),
                "--port", str(s.port), "--timeout", f"{s.timeout_s:g}"]

    def row(self, result: dict) -> dict[str, Any]:
        """``elapsed_s`` = ``total_s``; ``busy_max_s`` = the longest server sort (seconds)."""
        return {"elapsed_s": result["elapsed_s"], "total_s": result.get("total_s"),
                "checksum": result.get("checksum"), "busy_max_s": result.get("sort_max_s")}
