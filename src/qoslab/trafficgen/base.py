"""The traffic-generator contract and its results.

A generator makes one flood during one trial: :meth:`TrafficGenerator.start` starts receivers and
senders through executors, :meth:`TrafficGenerator.stop` ends them by PID and decodes what they
measured into a :class:`FloodResult`. A campaign splits both in two: ``prepare`` (receivers) while
the switch counters are read, ``start`` (senders); ``halt`` (senders), the queues drain, ``stop``.
Backends are registered by name in :data:`qoslab.registry.generators` (``ditg``, ``iperf3``);
:func:`open_flood` picks one for a flood definition (its ``generator:`` field, or an explicit
override).

A backend's factory is ``factory(defn, topology, executor_of, out_dir, *, duration_s=None,
lifetime_s=None, **options)``; options it does not know are ignored. ``lifetime_s`` bounds every
process it starts (seconds): a flood never outlives a dead runner by more than that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..executors import Executor
from ..registry import generators
from ..topology import Topology
from .definitions import FloodDefinition, ResolvedFlow

#: Seconds a generator's ``stop`` waits between stopping its senders and its receivers when no
#: caller waited for the queues to drain after ``halt`` (a full 128 KiB host queue drains in
#: 0.105 s at 10 Mbit/s); a campaign off the embedded testbed waits as long.
DRAIN_WAIT_S = 0.2


@dataclass
class FlowResult:
    """One flow's outcome, measured by its generator (never the asked rate): packets sent and
    received, achieved rates (packets/s; bits/s of payload and on the wire), loss (%), one-way
    delay avg/max and jitter (seconds; D-ITG only: iperf3 reports jitter, not delay), per-interval
    series (``time_s, bitrate_kbps, delay_s, jitter_s, loss_pkts``), any error. ``itg_rate`` and
    ``poll`` are D-ITG's pacing (``-C``, ``-poll``); None for other generators. ``sender_sched``
    says how the sender ran: real-time class and timer slack, or the fallback where the node did
    not permit them (D-ITG only). ``pacing`` is the D-ITG pacing mode (``kernel``, ``poll``,
    ``plain``), ``target_pps`` the packets/s the sender was set to send (under kernel pacing its
    host link's rate, which may be below ``requested_pps``; ``shortfall`` compares with it) and
    ``host_drops`` the packets its source host's own egress queue dropped while it ran (kernel
    pacing only: there the sender should block, not lose packets; None = not read).
    ``packets_sent`` and ``packets_received`` are D-ITG's logs' counts (both log in batches of 50
    packets: a sender stopped by SIGTERM mid-flow leaves up to 49 of its last packets out of its
    log, and its receiver, which then never sees the flow's end, up to 49 of its own; measured
    here, a flow of ~274 packets logged 250 on both sides), so ``loss_pct`` compares two
    truncated counts. ``packets_left_host`` is exact: under kernel pacing on the embedded testbed
    the flow's HTB class's count of the packets that left its host for the receiver (the class
    matches the destination, so D-ITG's TCP signalling to it, ~10 segments, is in it), read after
    the drain just before the class is removed (None elsewhere). ``packets_flushed``: under kernel
    pacing on the embedded testbed, the packets still in the flow's class queue when its sender
    stopped, emptied there instead of drained (never sent; ``loss_pct`` leaves them out of the
    sent count; None where no flush ran). Under kernel
    pacing ``sent_pps`` counts what left the host during the sender's life: its packets less those
    still queued at its host when it stopped (a blocked sender has written up to a socket buffer,
    ~92 frames, ahead of the wire: 0.1 s at 10 Mbit/s, 10 % of a 1 s flood). ``sent_from`` says
    what ``sent_pps`` was measured with: ``class counter`` (a kernel-paced flow's HTB class queue,
    read over netlink on the testbed, the window timed by the kernel's dumps) or ``sender log``
    (D-ITG's, in batches of 50 packets); ``sent_bound`` the most the class counter's rate can be
    off from the timing of its reads (relative: 0.001 = 0.1 %; None for the sender log)."""

    src: str
    dst: str
    requested_pps: float
    generator: str = "ditg"
    itg_rate: int | None = None
    poll: bool | None = None
    packets_sent: int = 0
    packets_received: int = 0
    sent_pps: float = 0.0
    received_payload_bps: float = 0.0
    received_wire_bps: float = 0.0
    loss_pct: float = 0.0
    delay_avg_s: float = 0.0
    delay_max_s: float = 0.0
    jitter_s: float = 0.0
    duration_s: float = 0.0
    shortfall: bool = False
    series: list[dict] = field(default_factory=list)
    error: str | None = None
    sender_sched: str | None = None
    pacing: str | None = None
    target_pps: float | None = None
    host_drops: int | None = None
    sent_from: str | None = None
    sent_bound: float | None = None
    packets_left_host: int | None = None
    packets_flushed: int | None = None


@dataclass
class FloodResult:
    """A whole flood: definition name, per-flow results, errors (also per flow), seconds run."""

    name: str
    flows: list[FlowResult]
    errors: list[str]
    seconds: float

    @property
    def ok(self) -> bool:
        """True when no flow had an error."""
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """The result as plain data (flood-result.json)."""
        return asdict(self)


@runtime_checkable
class TrafficGenerator(Protocol):
    """One flood on a topology (see the module doc). ``flows``: the resolved flows; ``errors``:
    problems so far (a flow that failed to start, a receiver that died); ``result``: set by stop."""

    name: str
    flows: list[ResolvedFlow]
    errors: list[str]
    result: FloodResult | None

    def prepare(self, establish_timeout_s: float = 10.0) -> None:
        """Start the receivers and wait until they listen, sending nothing yet (a campaign does
        this while it reads the switch's counters before the trial). Idempotent."""
        ...

    def start(self, establish_timeout_s: float = 10.0) -> None:
        """Start receivers (unless :meth:`prepare` did), wait until they listen, then senders;
        returns once every sender runs or has failed (see ``errors``). Raises QoslabError only for
        a misuse (started twice)."""
        ...

    def wait(self) -> None:
        """Wait until every sender has finished its duration (floods with a fixed duration only;
        raises QoslabError otherwise)."""
        ...

    def halt(self) -> None:
        """Stop the senders by PID; the receivers go on receiving what is still on its way (the
        caller may wait for the queues to drain, then :meth:`stop`). Idempotent."""
        ...

    def stop(self) -> FloodResult:
        """Stop senders (unless :meth:`halt` did) and receivers by PID, decode their
        measurements; never raises for a flow's failure (it goes into the flow's ``error``).
        Idempotent."""
        ...


def open_flood(defn: FloodDefinition, topology: Topology, executor_of: Callable[[str], Executor], out_dir: Path,
               *, generator: str | None = None, **options: Any) -> TrafficGenerator:
    """The generator backend for ``defn`` (``generator`` overrides the definition's ``generator:``).
    Raises ConfigError for an unknown backend, UnsafeTarget/QoslabError from the backend."""
    factory = generators.get(generator or defn.generator)
    gen = factory(defn, topology, executor_of, out_dir, **options)
    assert isinstance(gen, TrafficGenerator)
    return gen
