"""Flood definitions (``traffic-gen/*.yaml``), the safety interlock, and flows resolved on a
topology. Generator-neutral: the backends (:mod:`.ditg`, :mod:`.iperf3`) take resolved flows.

On-the-wire sizes are L2 frames as tc shapes them (no preamble/FCS): payload + UDP 8 + IP 20 +
Ethernet 14 = payload + 42 bytes (TCP: + 54).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from ..errors import UnsafeTarget
from ..topology import TESTBED_NETWORK, Topology
from ..yamlio import FieldProblem, StrictModel, load_model
from .patternmodel import (
    MAX_FLOOD_S,
    Dist,
    Pattern,
    check_rate,
)

#: Header bytes below the payload in an Ethernet frame as tc counts it (Ethernet 14 + IP 20 + L4).
L2_OVERHEAD = {"UDP": 14 + 20 + 8, "TCP": 14 + 20 + 20}
#: First UDP/TCP destination port given to flows (flow i uses DATA_PORT_BASE + i).
DATA_PORT_BASE = 10001

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")


class Flow(StrictModel):
    """One flow: ``src`` floods ``dst``. Fields left out take the definition's defaults."""

    src: str
    dst: str
    protocol: Literal["UDP", "TCP"] | None = None
    payload_bytes: int | None = Field(None, ge=16, le=65000)
    rate: str | int | None = None
    ds_byte: int | None = Field(None, ge=0, le=255)
    start_delay_s: float | None = Field(None, ge=0, le=MAX_FLOOD_S)
    idt: Dist = Field("constant", description="inter-departure times: constant, exponential, pareto")
    size: Dist = Field("constant", description="payload sizes (mean payload_bytes): constant, exponential, pareto")
    shape: float = Field(1.5, gt=1, le=10, description="Pareto shape")
    on_ms: float | None = Field(None, gt=0, le=3_600_000, description="on-off: milliseconds sending")
    off_ms: float | None = Field(None, gt=0, le=3_600_000, description="on-off: milliseconds silent")
    periods: Literal["constant", "exponential"] = "constant"
    bulk: bool = Field(False, description="a TCP bulk transfer (iperf3)")

    @field_validator("rate", mode="before")
    @classmethod
    def _rate(cls, v: object) -> object:
        return v if v is None else check_rate(v)

    @model_validator(mode="after")
    def _onoff(self) -> Flow:
        if (self.on_ms is None) != (self.off_ms is None):
            raise ValueError("on_ms and off_ms go together (an on-off flow)")
        return self


class FloodDefinition(StrictModel):
    """A flood: defaults plus flows. ``rate`` is packets/s (int) or a multiple of the link rate on
    the wire (``"1.5x"``); ``duration_s`` None = until stopped; ``pacing`` (D-ITG): ``kernel``
    (ITGSend unpaced, ``-C`` well above the link: the sender's own shaped host link sets the rate,
    sendto() blocks on the socket buffer instead of a busy-wait; needs :func:`kernel_rates`'
    conditions), ``poll`` (ITGSend ``-poll``: accurate, one busy core per sender), ``plain`` (no
    -poll, uses the calibration to pick -C), ``auto`` (kernel where the flood qualifies, else plain
    when a calibration covers the rate, else poll). ``pin_cpu`` (D-ITG) runs all its senders and
    receivers on one CPU (:func:`.ditgpacing.placement`): a packet's sender then wakes its receiver
    without an inter-processor interrupt, which halved the flood's CPU here (docs in traffic-gen/README.md)."""

    name: str
    description: str = ""
    protocol: Literal["UDP", "TCP"] = "UDP"
    payload_bytes: int = Field(1400, ge=16, le=65000)
    rate: str | int = "1.5x"
    duration_s: float | None = Field(None, gt=0, le=MAX_FLOOD_S)
    ds_byte: int = Field(0, ge=0, le=255)
    start_delay_s: float = Field(0.0, ge=0, le=MAX_FLOOD_S)
    pacing: Literal["auto", "kernel", "poll", "plain"] = "auto"
    pin_cpu: Annotated[int, Field(ge=0, le=4095)] | Literal["last"] | None = Field(
        None, description="run every D-ITG sender and receiver of the flood on this CPU (taskset -c; 'last' = the "
                          "highest numbered); None = the scheduler's choice")
    generator: str = Field("ditg", description="traffic generator backend (qoslab.registry.generators): "
                                               "ditg (D-ITG, default) or iperf3")
    flows: list[Flow] = Field(default_factory=list)
    pattern: list[Pattern] | None = Field(None, description="generators expanded against the topology "
                                                            "(trafficgen.patterns); one mapping or a list")
    source: str | None = Field(None, exclude=True, description="file this definition was read from")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(f"flood name {v!r}: 1-64 letters, digits, '.', '_', '-'")
        return v

    @field_validator("generator")
    @classmethod
    def _generator(cls, v: str) -> str:
        from ..registry import generators

        if v not in generators.names():
            raise ValueError(f"unknown generator {v!r} (known: {', '.join(generators.names())})")
        return v

    @field_validator("rate", mode="before")
    @classmethod
    def _rate(cls, v: object) -> object:
        return check_rate(v)

    @field_validator("pattern", mode="before")
    @classmethod
    def _one_pattern(cls, v: object) -> object:
        return [v] if isinstance(v, dict) else v

    @model_validator(mode="after")
    def _flows(self) -> FloodDefinition:
        if not self.flows and not self.pattern:
            raise FieldProblem(("flows",), "a flood needs at least one flow or a pattern")
        if len(self.flows) > 64:
            raise FieldProblem(("flows",), f"{len(self.flows)} flows: at most 64")
        for i, f in enumerate(self.flows):
            if f.src == f.dst:
                raise FieldProblem(("flows", i, "dst"), f"flow {f.src} -> {f.dst} sends to itself")
        return self


def load_flood(path: str | Path) -> FloodDefinition:
    """Read a flood definition; raises ConfigError naming file, line and field."""
    return load_model(path, FloodDefinition).model_copy(update={"source": str(path)})


@dataclass(frozen=True)
class ResolvedFlow:
    """A flow with everything decided: host names and addresses, protocol, payload (bytes),
    packets/s wanted on the wire, DS byte, start delay (seconds), destination port."""

    index: int
    src: str
    dst: str
    src_ip: str
    dst_ip: str
    protocol: str
    payload_bytes: int
    pps: float            # packets/s wanted on the wire
    ds_byte: int
    start_delay_s: float
    port: int
    idt: str = "constant"
    size: str = "constant"
    shape: float = 1.5
    on_ms: float | None = None
    off_ms: float | None = None
    periods: str = "constant"
    bulk: bool = False

    @property
    def mean_pps(self) -> float:
        """Packets/s averaged over the whole flood: ``pps`` during on periods x the on share
        (on-off flows), else ``pps``."""
        if self.on_ms is None or self.off_ms is None:
            return self.pps
        return self.pps * self.on_ms / (self.on_ms + self.off_ms)

    @property
    def frame_bytes(self) -> int:
        """L2 frame size as tc counts it (bytes)."""
        return self.payload_bytes + L2_OVERHEAD[self.protocol]

    @property
    def wire_bps(self) -> float:
        """Requested on-the-wire rate (bits/s)."""
        return self.pps * self.frame_bytes * 8


#: Cluster topologies whose floods were confirmed in this process (:func:`confirm_cluster_flood`).
_confirmed_clusters: set[str] = set()


def confirm_cluster_flood(topology: Topology, name: str | None) -> None:
    """Record the operator's confirmation that floods may run on the real cluster ``topology``:
    ``name`` must be the topology's own name (the CLI's ``--confirm-flood NAME``). Without it
    (None) nothing is recorded; a wrong name raises UnsafeTarget. Embedded topologies need none."""
    if name is None or topology.environment != "cluster":
        return
    if name != topology.name:
        raise UnsafeTarget(f"--confirm-flood {name} does not name this cluster's topology ({topology.name})")
    _confirmed_clusters.add(topology.name)


def check_cluster_flood(topology: Topology) -> None:
    """Refuse (UnsafeTarget) a flood on a real cluster that was not confirmed in this process."""
    if topology.environment == "cluster" and topology.name not in _confirmed_clusters:
        raise UnsafeTarget(f"topology {topology.name} is a real cluster: the first flood on it needs an explicit "
                           f"confirmation, --confirm-flood {topology.name}")


def check_target(topology: Topology, ip: str) -> None:
    """Safety interlock: refuse any destination that is not a host of ``topology`` or that is
    multicast, broadcast, loopback, unspecified, or outside the topology's experiment network
    (embedded testbed: 198.18.0.0/15; a cluster: its ``experiment_network``).
    Raises UnsafeTarget before any packet is sent."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        raise UnsafeTarget(f"refusing flood target {ip!r}: not an IP address") from None
    if addr.is_multicast or addr.is_loopback or addr.is_unspecified or addr == ipaddress.ip_address("255.255.255.255"):
        raise UnsafeTarget(f"refusing flood target {ip}: multicast, broadcast, loopback or unspecified")
    host = topology.host_by_ip(ip)
    if host is None:
        raise UnsafeTarget(f"refusing flood target {ip}: not a host of topology {topology.name}")
    if addr in (host.address.network.broadcast_address, host.address.network.network_address):
        raise UnsafeTarget(f"refusing flood target {ip}: broadcast/network address of {host.address.network}")
    if topology.environment == "embedded" and addr not in TESTBED_NETWORK:
        raise UnsafeTarget(f"refusing flood target {ip}: outside {TESTBED_NETWORK} on the embedded testbed")
    if addr not in topology.network:
        raise UnsafeTarget(f"refusing flood target {ip}: outside the experiment network {topology.network} of "
                           f"{topology.name}")


def check_rate_cap(topology: Topology, flows: list[ResolvedFlow], name: str) -> None:
    """Refuse (UnsafeTarget) a flood whose flows ask more on the wire together than the
    topology's ``flood_rate_cap`` (bits/s; no cap = no limit)."""
    cap = topology.flood_rate_cap
    total = sum(f.wire_bps for f in flows)
    if cap is not None and total > cap:
        raise UnsafeTarget(f"refusing flood {name}: its flows ask {total / 1e6:.1f} Mbit/s on the wire together, "
                           f"over the flood rate cap of {topology.name} ({cap / 1e6:.1f} Mbit/s)")


def kernel_rates(flows: list[ResolvedFlow], link_bps: float, below_link: bool = True) -> dict[int, float] | str:
    """Packets/s each flow gets when its sender does not pace (``pacing: kernel``) and the kernel
    sets its rate: ``min(asked wire rate, link_bps) / (frame bytes x 8)``. On the embedded testbed
    (``below_link``) every such flow leaves its host through an HTB class of its own at that rate
    (:func:`~qoslab.trafficgen.kernelpace.flood_class_lines`), below the link rate too; off it
    (a real cluster's NIC, ``below_link`` False) only the link sets a rate, so a flow must ask at
    least the link's (the thesis's flood: D-ITG at "maximum rate", limited by its NIC). A sender
    that asks more than its link loses the excess at its own host queue under any pacing, so the
    switch port sees the link rate. Returns ``{flow index: packets/s}``, or the reason the flood
    does not qualify (a string): every flow must be UDP, constant inter-departure and size, not
    on-off, alone on its source host (and at or above its link's rate off the testbed). Pure."""
    by_src: dict[str, int] = {}
    for f in flows:
        by_src[f.src] = by_src.get(f.src, 0) + 1
    out: dict[int, float] = {}
    for f in flows:
        name = f"flow {f.src} -> {f.dst}"
        if f.protocol != "UDP" or f.bulk:
            return f"{name}: {f.protocol}{' bulk' if f.bulk else ''}, kernel pacing is for UDP floods"
        if f.idt != "constant" or f.size != "constant" or f.on_ms is not None:
            return f"{name}: not a constant-rate flow (idt {f.idt}, size {f.size}, on-off {f.on_ms is not None})"
        if by_src[f.src] > 1:
            return f"{name}: {by_src[f.src]} flows leave {f.src}, kernel pacing needs one flow per source host"
        if not below_link and f.wire_bps < link_bps * (1 - 1e-9):
            return (f"{name}: asks {f.wire_bps / 1e6:.2f} Mbit/s, below its link's {link_bps / 1e6:.2f}: "
                    "off the embedded testbed only a paced sender sets a rate under the link")
        out[f.index] = min(f.wire_bps, link_bps) / (f.frame_bytes * 8)
    return out


#: Room above the socket send buffer in a kernel-paced flooder's host queue (bytes): one maximal
#: datagram's truesize, so the queue is never the first to fill.
KERNEL_QUEUE_HEADROOM = 65536 + 4096


def kernel_queue_limit(host_bytes: int, sndbuf_bytes: int) -> int:
    """The egress queue limit (bytes) a kernel-paced flooder's host link needs for its sender to
    block instead of losing packets at home: above what one socket can have in flight
    (``sndbuf_bytes``, ``net.core.wmem_default``, counted in skb truesize, which is never below a
    frame's length), else the topology's own ``host_bytes``, whichever is larger. The queue then
    holds what the socket buffer holds (about 92 frames of 1442 bytes with 212,992 bytes of
    buffer: 133 KB, as much as the 128 KiB default): measured at 10 and 50 Mbit/s with the 128 KiB
    queue, the senders were never blocked and half their packets (-C 2x the link) were dropped
    at their own host queue. Pure."""
    return max(host_bytes, sndbuf_bytes + KERNEL_QUEUE_HEADROOM)
