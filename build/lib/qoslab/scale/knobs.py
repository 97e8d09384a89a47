"""A topology's ``scale:`` block: the knobs of the scale model that the testbed applies to every
host, validated strictly (unknown fields are errors).

- ``rto_min_ms``: TCP's minimum retransmission timeout on the hosts' routes (``ip route replace
  ... rto_min Xms`` in each host namespace). Linux's default is 200 ms (``TCP_RTO_MIN``,
  include/net/tcp.h); a scale model whose workload runs s times faster than the real one scales
  it by s too, or every timeout weighs 1/s times more.
- ``quickack``: ``true`` turns delayed ACKs off on those routes (``quickack 1``; Linux delays an
  ACK by 40 ms at least, ``TCP_DELACK_MIN``, which a scaled-down run cannot scale).
- ``switch_queue_ms`` / ``host_queue_ms``: queue limits as time at the link rate, converted to
  bytes (``rate/8 x ms``) in place of ``buffers.switch_port_bytes`` / ``buffers.host_bytes``
  (giving both is an error unless they agree, as in a resolved topology written back). A queue
  must hold two full frames (2 x 1514 B, as the HTB burst floor in :class:`qoslab.topology.Link`).

The testbed applies them (``qoslab.testbedplan.route_lines``); on ``environment: cluster`` a
real cluster's hosts are configured by its own provisioning (the values are checked all the same).
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from pydantic import Field

from ..yamlio import FieldProblem, StrictModel

#: Smallest queue (bytes): two full Ethernet frames of 1514 B (the HTB burst floor in topology.Link).
#: Link rates a topology may ask for (bits/s): HTB works from a few kbit/s; 100 Gbit/s is beyond any cluster NIC
#: (here, below both the topology and the scale model's derivation, which checks a testbed's rate with it).
LINK_RATE_RANGE = (8_000, 100_000_000_000)
MIN_QUEUE_BYTES = 2 * 1514
#: Largest queue (bytes) of a switch port or host NIC, however it is given (``buffers.*`` in bytes or
#: ``scale.*_queue_ms`` in time): 64 MiB, 32 times a Catalyst 3750's 2 MB of packet buffer per stack
#: member (3750 hardware installation guide); a bfifo this long only costs the testbed's memory.
MAX_QUEUE_BYTES = 64 * 1024 * 1024
#: Linux's default minimum RTO (ms): TCP_RTO_MIN = HZ/5 in include/net/tcp.h.
LINUX_RTO_MIN_MS = 200.0
#: Linux's minimum delayed-ACK timeout (ms): TCP_DELACK_MIN = HZ/25 in include/net/tcp.h.
LINUX_DELACK_MIN_MS = 40.0


class ScaleKnobs(StrictModel):
    """The ``scale:`` block of a topology (see the module doc). Every field is optional: an
    absent one leaves the kernel's or the topology's default."""

    rto_min_ms: float | None = Field(None, ge=1, le=1000, description="ms, TCP minimum RTO on host routes")
    quickack: bool | None = Field(None, strict=True, description="true: no delayed ACKs on host routes")
    switch_queue_ms: float | None = Field(None, gt=0, le=1000, description="ms at the link rate, switch port FIFO")
    host_queue_ms: float | None = Field(None, gt=0, le=1000, description="ms at the link rate, host NIC queue")

    def route_options(self) -> list[str]:
        """``ip route`` metric words for the host routes, e.g. ``["rto_min", "10ms", "quickack", "1"]``."""
        out: list[str] = []
        if self.rto_min_ms is not None:
            out += ["rto_min", f"{self.rto_min_ms:g}ms"]
        if self.quickack is not None:
            out += ["quickack", "1" if self.quickack else "0"]
        return out


def queue_bytes(rate_bps: int, ms: float) -> int:
    """Bytes a queue of ``ms`` milliseconds holds at ``rate_bps`` bits/s (rounded down)."""
    return int(rate_bps / 8 * ms / 1000)


def scaled_buffers(knobs: ScaleKnobs | None, rate_bps: int, buffers: Mapping[str, int],
                   given: Set[str]) -> dict[str, int]:
    """The ``buffers`` fields (``switch_port_bytes``, ``host_bytes``: bytes) that the ``scale:``
    queue times of ``knobs`` become at link rate ``rate_bps`` (bits/s); empty when there is
    nothing to convert. ``buffers``: the topology's current values; ``given``: the buffers fields
    its file set. Raises FieldProblem (file/line/field reported by the loader) when a queue is
    given both ways and the two disagree, holds less than two full frames or more than
    MAX_QUEUE_BYTES."""
    update: dict[str, int] = {}
    if knobs is None:
        return update
    for name, field in (("switch_queue_ms", "switch_port_bytes"), ("host_queue_ms", "host_bytes")):
        ms = getattr(knobs, name)
        if ms is None:
            continue
        size = queue_bytes(rate_bps, ms)
        if field in given and buffers[field] != size:  # equal: a resolved topology read back
            raise FieldProblem(("scale", name), f"the queue is given twice and the two disagree: buffers.{field} "
                                                f"{buffers[field]} B, scale.{name} {ms:g} ms = {size} B; keep one")
        if size > MAX_QUEUE_BYTES:
            most = MAX_QUEUE_BYTES * 8 / rate_bps * 1000
            raise FieldProblem(("scale", name), f"{ms:g} ms at {rate_bps / 1e6:g} Mbit/s is {size} B, more than "
                                                f"the {MAX_QUEUE_BYTES} B a queue may hold (as buffers.*); the most "
                                                f"is {most:.3g} ms")
        if size < MIN_QUEUE_BYTES:
            least = MIN_QUEUE_BYTES * 8 / rate_bps * 1000
            raise FieldProblem(("scale", name), f"{ms:g} ms at {rate_bps / 1e6:g} Mbit/s is {size} B, less "
                                                f"than two full frames ({MIN_QUEUE_BYTES} B); the least is "
                                                f"{least:.3g} ms")
        update[field] = size
    return update
