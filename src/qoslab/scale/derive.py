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

from pydantic import Field, field_validator, model_validator

from ..units import parse_rate, parse_size
from ..yamlio import FieldProblem, StrictModel, load_model
from .knobs import LINK_RATE_RANGE, LINUX_DELACK_MIN_MS, MAX_QUEUE_BYTES, MIN_QUEUE_BYTES, ScaleKnobs, queue_bytes
from .model import FLOOD_FRAME_BYTES, WIRE_OVERHEAD_BYTES

#: A real cluster's link rates (bits/s): from 8 kbit/s to 800 Gbit/s, the fastest Ethernet
#: (IEEE 802.3df-2024, 800GBASE-R).
REAL_RATE_RANGE = (8_000, 800_000_000_000)
#: Largest switch port buffer a real cluster may describe (bytes): 1 TiB, beyond any switch's whole
#: packet memory; anything larger is a typo (and would overflow the arithmetic).
MAX_REAL_BUFFER = 1 << 40
#: The scale knobs' ranges (ms): ScaleKnobs' bounds (an rto_min of at most RFC 6298's 1 s, a queue of
#: at most 1 s).
MAX_RTO_MS = MAX_QUEUE_MS = 1000.0


def _rate(v: object, lo_hi: tuple[int, int]) -> int:
    bits = parse_rate(v)  # type: ignore[arg-type]
    if not lo_hi[0] <= bits <= lo_hi[1]:
        raise ValueError(f"link rate {v!r} is outside {lo_hi[0]} bit/s to {lo_hi[1] // 10**9} Gbit/s")
    return bits


class TestbedTarget(StrictModel):
    """What the scale model runs on: its link rate (bits/s), the uncongested run time it aims at
    (s) and, for the CPU rule, the CPU a testbed host's budget pays per received flood packet
    (``rx_cost_us``, microseconds: the ``rx_cost_us`` column of a campaign on a topology with a
    ``cpu:`` block, :mod:`qoslab.meters.cpuloss`)."""

    __test__ = False  # not a pytest test class

    link_rate: int
    uncongested_s: float = Field(gt=0, le=3600)
    rx_cost_us: float | None = Field(None, strict=True, gt=0, le=100_000)

    @field_validator("link_rate", mode="before")
    @classmethod
    def _rate(cls, v: object) -> int:
        return _rate(v, LINK_RATE_RANGE)  # a topology's link rate


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
    rx_cost_us: float | None = Field(None, strict=True, gt=0, le=100_000,
                                     description="CPU microseconds a node spends per received flood packet")
    uncongested_s: float = Field(gt=0, le=86_400)
    flood_load: float = Field(gt=0, le=10)
    testbed: TestbedTarget

    @field_validator("link_rate", mode="before")
    @classmethod
    def _rate(cls, v: object) -> int:
        return _rate(v, REAL_RATE_RANGE)

    @field_validator("switch_port_buffer", mode="before")
    @classmethod
    def _size(cls, v: object) -> int:
        size = parse_size(v)  # type: ignore[arg-type]
        if size > MAX_REAL_BUFFER:
            raise ValueError(f"{v!r} bytes is more than any switch holds (at most {MAX_REAL_BUFFER} B)")
        return size

    @model_validator(mode="after")
    def _derivable(self) -> RealCluster:
        derive(self)  # raises FieldProblem naming the field that puts a derived knob outside its range
        return self


@dataclass(frozen=True)
class Derived:
    """The derivation's result: the time scale ``s``, the topology's ``scale:`` knobs, its link
    rate (bits/s), the flood rate as a multiple of the link (``flood_multiple``), and notes: the
    deviations forced on a knob (``deviations``) and what the testbed does not scale (``unmatched``);
    ``host_cores``: a testbed host's CPU capacity (cores) that gives the real receive CPU share
    (:func:`host_cores_for`; None without both receive costs)."""

    time_scale: float
    knobs: ScaleKnobs
    link_rate: int
    flood_multiple: float
    deviations: list[str]
    unmatched: list[str]
    host_cores: float | None = None

    def topology_fragment(self) -> dict[str, dict[str, object]]:
        """The ``link.rate`` and ``scale:`` parts of a topology (and ``cpu.host_cores`` when derived),
        as plain data for YAML."""
        out: dict[str, dict[str, object]] = {"link": {"rate": self.link_rate},
                                             "scale": self.knobs.model_dump(mode="json", exclude_none=True)}
        if self.host_cores is not None:
            out["cpu"] = {"host_cores": self.host_cores}
        return out


def rx_share(link_bps: float, flood_load: float, rx_cost_us: float, cores: float) -> float:
    """The receive CPU share of a node flooded at ``flood_load`` of ``link_bps``: packets/s (the
    wire's 1442 B D-ITG frames, :data:`.model.FLOOD_FRAME_BYTES`, plus 24 B of Ethernet overhead) x
    ``rx_cost_us`` / ``cores``. Pure."""
    return link_bps * flood_load / 8 / (FLOOD_FRAME_BYTES + WIRE_OVERHEAD_BYTES) * rx_cost_us / 1e6 / cores


def target_rx_share(real: RealCluster) -> float:
    """The real node's receive CPU share (dimensionless) under its flood: :func:`rx_share` with its
    link rate, flood load, ``rx_cost_us`` and cores (the thesis cluster: 0.246); the share the CPU
    rule and rule 2b (:mod:`.onmachine`) hold. Raises ValueError when ``real`` gives no
    ``rx_cost_us``."""
    if real.rx_cost_us is None:
        raise ValueError("the real cluster's file gives no rx_cost_us: the CPU rule needs it")
    return rx_share(real.link_rate, real.flood_load, real.rx_cost_us, real.cores_per_node)


def host_cores_for(real: RealCluster) -> float | None:
    """The CPU rule: the capacity (cores, 3 significant digits) of a testbed host for which its
    flood takes the real node's receive CPU share: testbed packets/s x the testbed's cost per
    packet / the real share; None unless both ``rx_cost_us`` are given. Pure."""
    if real.rx_cost_us is None or real.testbed.rx_cost_us is None:
        return None
    need = rx_share(real.testbed.link_rate, real.flood_load, real.testbed.rx_cost_us, 1.0) / target_rx_share(real)
    return float(f"{need:.3g}")


def _check_range(real: RealCluster, s: float, rto: float, queue_ms: float, least_ms: float) -> None:
    """FieldProblem naming the REAL.yaml field whose value puts a derived knob outside its range:
    the minimum RTO above MAX_RTO_MS (a time scale s > 1: the real run shorter than the testbed's),
    the switch queue above MAX_QUEUE_MS or MAX_QUEUE_BYTES at the testbed's rate, or two frames at
    the testbed's rate already longer than MAX_QUEUE_MS (a testbed link too slow)."""
    rate, tb = real.testbed.link_rate, real.testbed.uncongested_s
    if rto > MAX_RTO_MS:
        raise FieldProblem(("uncongested_s",), f"the real run ({real.uncongested_s:g} s) is shorter than the testbed's "
                                               f"({tb:g} s): s = {s:.4g} makes the minimum RTO {rto:.4g} ms, above the "
                                               f"{MAX_RTO_MS:g} ms a route's rto_min may be")
    if least_ms > MAX_QUEUE_MS:
        raise FieldProblem(("testbed", "link_rate"), f"two full frames ({MIN_QUEUE_BYTES} B) take {least_ms:.4g} ms at "
                                                     f"{rate} bit/s, more than a queue's {MAX_QUEUE_MS:g} ms: a faster "
                                                     "testbed link is needed")
    size = queue_bytes(rate, queue_ms)
    if queue_ms > MAX_QUEUE_MS or size > MAX_QUEUE_BYTES:
        raise FieldProblem(("switch_port_buffer",), f"{real.switch_port_buffer} B at {real.link_rate / 1e6:g} Mbit/s, "
                                                    f"scaled by s = {s:.4g}, is a {queue_ms:.4g} ms queue ({size} B at "
                                                    f"{rate / 1e6:g} Mbit/s): at most {MAX_QUEUE_MS:g} ms and "
                                                    f"{MAX_QUEUE_BYTES} B")


def derive(real: RealCluster) -> Derived:
    """Apply the module's rules to ``real`` (pure). Raises FieldProblem (:func:`_check_range`) when
    a derived knob falls outside its range (a file read by :func:`load_real_cluster` is checked so
    when it loads, with its line)."""
    s = real.testbed.uncongested_s / real.uncongested_s
    rate = real.testbed.link_rate
    deviations: list[str] = []
    rto = s * real.rto_min_ms
    if rto < 1:
        deviations.append(f"rto_min {rto:.3g} ms raised to 1 ms (the route metric's resolution)")
        rto = 1.0
    queue_ms = s * real.switch_port_buffer * 8 / real.link_rate * 1000
    least_ms = MIN_QUEUE_BYTES * 8 / rate * 1000
    _check_range(real, s, rto, queue_ms, least_ms)
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
    ]
    cores = host_cores_for(real)
    if cores is None:
        unmatched.append("receive CPU share: give rx_cost_us (a real node's CPU per flood packet) and "
                         "testbed.rx_cost_us (a testbed host's, the rx_cost_us column of a campaign on a topology "
                         "with a cpu: block) for the host capacity that matches it")
    # queue rounded up to the microsecond, so the floor of two frames still holds after rounding
    knobs = ScaleKnobs(rto_min_ms=round(rto, 3), quickack=quickack, switch_queue_ms=math.ceil(queue_ms * 1000) / 1000)
    return Derived(time_scale=s, knobs=knobs, link_rate=rate, flood_multiple=real.flood_load,
                   deviations=deviations, unmatched=unmatched, host_cores=cores)


def load_real_cluster(path: str | Path) -> RealCluster:
    """Read and validate REAL.yaml; ConfigError names the file, line and field of every problem."""
    return load_model(path, RealCluster)
