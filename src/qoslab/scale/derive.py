"""Testbed settings derived from a real cluster's description (``qoslab testbed scale --from
REAL.yaml``), the general form of the scale model: one time scale ``s`` = the testbed's target
uncongested run time / the real one, and every time the outcome depends on multiplied by ``s``.

Rules (docs/scale-model.md, "Derivation"), each a pure function of the file:

- ``rto_min_ms`` = s x the real minimum RTO (at least 1 ms, the route metric's resolution);
- ``quickack`` = true when s x the real delayed-ACK time is nearer 0 than Linux's 40 ms floor
  (``TCP_DELACK_MIN``): the testbed cannot delay an ACK by less than 40 ms, only not at all;
- ``switch_queue_ms`` = s x the real switch queue's depth in time (bytes x 8 / real link rate),
  raised to two full frames at the testbed's link rate when smaller (a deviation, reported);
- flood rate = the real flood's offered load / link rate, as a multiple of the testbed link.

The testbed's link rate is the user's choice (CPU bound: docs/lab-notes.md, "The CPU confound and
the link rate"), not derived. What cannot be scaled (base RTT, the SYN timeout, the receivers'
per-packet CPU cost) is listed in :attr:`Derived.unmatched`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, field_validator

from ..units import parse_rate, parse_size
from ..yamlio import StrictModel, load_model
from .knobs import LINUX_DELACK_MIN_MS, MIN_QUEUE_BYTES, ScaleKnobs


class TestbedTarget(StrictModel):
    """What the scale model runs on: its link rate (bits/s) and the uncongested run time it aims at (s)."""

    __test__ = False  # not a pytest test class

    link_rate: int
    uncongested_s: float = Field(gt=0, le=3600)

    @field_validator("link_rate", mode="before")
    @classmethod
    def _rate(cls, v: object) -> int:
        return parse_rate(v)  # type: ignore[arg-type]


class RealCluster(StrictModel):
    """A real cluster's description (REAL.yaml): ``link_rate`` (bits/s, e.g. 1Gbit),
    ``switch_port_buffer`` (bytes of one egress port's FIFO, e.g. 128KiB), ``rtt_us`` (base
    round-trip time, microseconds), ``rto_min_ms`` and ``delack_ms`` (its kernel's TCP timers;
    Linux: 200 and 40), ``cores_per_node`` (CPU cores of a flooded workload node),
    ``uncongested_s`` (the workload's uncongested run time, seconds), ``flood_load`` (flood
    offered to a port / link rate, at most 1 from a sender on its own link of the same rate),
    ``testbed`` (:class:`TestbedTarget`)."""

    name: str = "real"
    link_rate: int
    switch_port_buffer: int
    rtt_us: float = Field(gt=0, le=1e6)
    rto_min_ms: float = Field(200.0, gt=0, le=10_000)
    delack_ms: float = Field(40.0, ge=0, le=1000)
    cores_per_node: float = Field(gt=0, le=1024)
    uncongested_s: float = Field(gt=0, le=86_400)
    flood_load: float = Field(gt=0, le=10)
    testbed: TestbedTarget

    @field_validator("link_rate", mode="before")
    @classmethod
    def _rate(cls, v: object) -> int:
        return parse_rate(v)  # type: ignore[arg-type]

    @field_validator("switch_port_buffer", mode="before")
    @classmethod
    def _size(cls, v: object) -> int:
        return parse_size(v)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Derived:
    """The derivation's result: the time scale ``s``, the topology's ``scale:`` knobs, its link
    rate (bits/s), the flood rate as a multiple of the link (``flood_multiple``), and notes: the
    deviations forced on a knob (``deviations``) and what the testbed does not scale (``unmatched``)."""

    time_scale: float
    knobs: ScaleKnobs
    link_rate: int
    flood_multiple: float
    deviations: list[str]
    unmatched: list[str]

    def topology_fragment(self) -> dict[str, dict[str, object]]:
        """The ``link.rate`` and ``scale:`` parts of a topology, as plain data for YAML."""
        return {"link": {"rate": self.link_rate},
                "scale": self.knobs.model_dump(mode="json", exclude_none=True)}


def derive(real: RealCluster) -> Derived:
    """Apply the module's rules to ``real`` (pure)."""
    s = real.testbed.uncongested_s / real.uncongested_s
    rate = real.testbed.link_rate
    deviations: list[str] = []
    rto = s * real.rto_min_ms
    if rto < 1:
        deviations.append(f"rto_min {rto:.3g} ms raised to 1 ms (the route metric's resolution)")
        rto = 1.0
    queue_ms = s * real.switch_port_buffer * 8 / real.link_rate * 1000
    least_ms = MIN_QUEUE_BYTES * 8 / rate * 1000
    if queue_ms < least_ms:
        deviations.append(f"switch queue {queue_ms:.3g} ms raised to {least_ms:.3g} ms (two full frames at "
                          f"{rate / 1e6:g} Mbit/s): queue_to_rto_min is {least_ms / queue_ms:.3g}x the real one")
        queue_ms = least_ms
    quickack = s * real.delack_ms < LINUX_DELACK_MIN_MS / 2
    if s * real.delack_ms not in (0.0, LINUX_DELACK_MIN_MS):
        deviations.append(f"delayed ACK {s * real.delack_ms:.3g} ms is not settable: "
                          f"{'quickack (0 ms)' if quickack else 'Linux default (40 ms)'} is the nearest")
    unmatched = [
        f"base RTT: {real.rtt_us:g} us x s = {real.rtt_us * s:.3g} us wanted; namespaces give what they give "
        "(measure: qoslab testbed exec jp-2 -- ping -c 20 198.18.0.1)",
        f"SYN timeout: 1 s (RFC 6298 initial RTO) on both; s x 1 s = {s:.3g} s wanted, no route metric sets it",
        "receivers' CPU per flood packet: not scaled (a testbed packet costs what it costs on this machine; "
        "measure cpu_softirq_s and cpu_flood_s per trial)",
    ]
    # queue rounded up to the microsecond, so the floor of two frames still holds after rounding
    knobs = ScaleKnobs(rto_min_ms=round(rto, 3), quickack=quickack, switch_queue_ms=math.ceil(queue_ms * 1000) / 1000)
    return Derived(time_scale=s, knobs=knobs, link_rate=rate, flood_multiple=real.flood_load,
                   deviations=deviations, unmatched=unmatched)


def load_real_cluster(path: str | Path) -> RealCluster:
    """Read and validate REAL.yaml; ConfigError names the file, line and field of every problem."""
    return load_model(path, RealCluster)
