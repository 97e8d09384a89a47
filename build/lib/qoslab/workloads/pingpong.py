"""``pingpong``: reference 003's message-size sweep (``java-workload`` ``pingpong``).

The head node (``hosts[0]``) runs the ``pingpong`` manager against the echo of a
``matmul-worker`` JVM on ``hosts[1]``: sizes from ``min_bytes`` doubling to ``max_bytes``,
``reps`` timed round trips per size after ``warmup``; per size the RTT median/min/p99 and the
throughput. ``elapsed_s`` (the trial's metric) is the whole sweep's time.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from ..yamlio import SubFieldProblem
from .base import JAVA_LONG_MAX, AddressOf
from .matmul import JavaWorkerSettings, JavaWorkerWorkload

TRANSPORTS: tuple[str, ...] = ("socket", "rmi", "datagram")


class PingpongSettings(JavaWorkerSettings):
    """``kind: pingpong``: ``hosts`` = [client, echo worker]; ``mechanism`` socket | rmi |
    datagram; ``min_bytes``/``max_bytes`` (1 .. 1 MiB), ``reps``, ``warmup``."""

    kind: Literal["pingpong"] = "pingpong"
    mechanism: Literal["socket", "rmi", "datagram"] = "socket"
    min_bytes: int = Field(1, ge=1, le=1 << 24)
    max_bytes: int = Field(1 << 20, ge=1, le=1 << 24)
    reps: int = Field(25, ge=1, le=100_000)
    warmup: int = Field(5, ge=0, le=100_000)
    seed: int = Field(1, ge=0, le=JAVA_LONG_MAX)

    @model_validator(mode="after")
    def _shape(self) -> PingpongSettings:
        if len(self.hosts) != 2:
            raise SubFieldProblem(("hosts",), f"pingpong needs two hosts (client, echo worker), got {len(self.hosts)}")
        if self.min_bytes > self.max_bytes:
            raise SubFieldProblem(("min_bytes",), f"min_bytes {self.min_bytes} is above max_bytes {self.max_bytes}")
        return self

    def worker_hosts(self) -> list[str]:
        return self.hosts[1:]

    def describe(self) -> str:
        return (f"pingpong over {self.mechanism}, {self.min_bytes}..{self.max_bytes} B, {self.reps} reps, "
                f"{self.hosts[0]} -> {self.hosts[1]}")


class Pingpong(JavaWorkerWorkload):
    """The ``pingpong`` backend (see the module doc)."""

    settings_model = PingpongSettings
    what = "pingpong manager"

    def manager_args(self, s: Any, address_of: AddressOf) -> list[str]:
        return ["pingpong", "--worker", f"{s.hosts[1]}={address_of(s.hosts[1])}:{s.port}", "--mechanism", s.mechanism,
                "--min-bytes", str(s.min_bytes), "--max-bytes", str(s.max_bytes), "--reps", str(s.reps),
                "--warmup", str(s.warmup), "--seed", str(s.seed), "--port", str(s.port),
                "--timeout", f"{s.timeout_s:g}"]

    def row(self, result: dict) -> dict[str, Any]:
        return {"elapsed_s": result["elapsed_s"], "total_s": result.get("elapsed_s"), "checksum": None,
                "busy_max_s": None}
