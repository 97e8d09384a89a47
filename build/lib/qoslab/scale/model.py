"""The dimensionless quantities that decide a congestion/QoS experiment's outcome, computed the
same way for any world (the thesis's cluster, the embedded testbed, a user's cluster) from a
:class:`World`: link, switch queue, TCP timers, workload, flood and receivers' CPU. Pure: no I/O.
The quantities, their values in both worlds and the knobs that set them: docs/scale-model.md.

Units: seconds, bytes, bits/s throughout; a quantity is a plain float (or None when a fact it
needs is unknown: the page says which facts the thesis does not give).
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Ethernet bytes on the wire per frame beyond the frame itself: FCS 4 + preamble 8 + gap 12
#: (IEEE 802.3); a frame is counted from the destination MAC to the end of the payload.
WIRE_OVERHEAD_BYTES = 24
#: A D-ITG UDP frame with a 1400 B payload (thesis V.C.1): 1400 + UDP 8 + IPv4 20 + Ethernet 14.
FLOOD_FRAME_BYTES = 1442
#: Largest Ethernet frame without FCS (1500 B MTU + 14 B header).
MAX_FRAME_BYTES = 1514


#: The thesis's receive cost per flood packet (seconds), derived before any run from a published
#: rule: about 1 Hz of CPU per bit/s received ("1 GHz per 1 Gbit/s", the rule of thumb examined by
#: Foong, Huff, Hum, Patwardhan and Regnier, "TCP Performance Re-Visited", IEEE ISPASS 2003, for
#: TCP receive with 1500-byte frames on a Pentium 4 server), i.e. one cycle per received bit: a
#: 1442-byte D-ITG frame (11,536 bits) costs 11,536 cycles, 5.77 us on one 2.0 GHz core of jp-1..jp-4
#: (Table 1). An assumption for UDP (no ACKs to send, no reassembly), hence the sensitivity rows
#: at 0 and 2x in docs/scale-model.md.
THESIS_RX_COST_S = FLOOD_FRAME_BYTES * 8 / 2.0e9


@dataclass(frozen=True)
class World:
    """One world's facts (see the module doc for units). ``wire_bytes_per_run``: bytes of the
    workload crossing the busiest (head node's) link in one uncongested run; ``calls_per_run``:
    remote calls of one run (None: unknown); ``flood_offered_bps``: flood bits/s offered to each
    flooded switch port (frames only, as a rate of the link's frames); ``rx_cost_s``: CPU seconds a
    flooded receiver spends per flood packet (None: unknown); ``receiver_cores``: its cores;
    ``class_counts``: packets per traffic class in one run (Figure 9's classes)."""

    name: str
    link_rate_bps: float
    switch_queue_bytes: float
    base_rtt_s: float
    rto_min_s: float
    delack_s: float
    uncongested_s: float
    wire_bytes_per_run: float
    calls_per_run: float | None
    flood_offered_bps: float
    receiver_cores: float
    rx_cost_s: float | None = None
    flood_frame_bytes: int = FLOOD_FRAME_BYTES
    class_counts: dict[str, int] = field(default_factory=dict)


def wire_time_s(nbytes: float, rate_bps: float, frame_bytes: int = MAX_FRAME_BYTES) -> float:
    """Seconds ``nbytes`` of frames take on a link of ``rate_bps``, each frame of ``frame_bytes``
    costing :data:`WIRE_OVERHEAD_BYTES` more on the wire."""
    return nbytes * (frame_bytes + WIRE_OVERHEAD_BYTES) / frame_bytes * 8 / rate_bps


def flood_pps(w: World) -> float:
    """Flood packets per second into one flooded port: the offered bits/s counted on the wire
    (each frame plus :data:`WIRE_OVERHEAD_BYTES`), as a line-rate flood fills a link."""
    return w.flood_offered_bps / 8 / (w.flood_frame_bytes + WIRE_OVERHEAD_BYTES)


def quantities(w: World) -> dict[str, float | None]:
    """The scale model's quantities of ``w`` (names as in docs/scale-model.md):

    - ``network_share``: wire time of a run's bytes on the busiest link / uncongested run time;
    - ``compute_to_comm``: (run time - wire time) / wire time;
    - ``calls_per_run``, ``bytes_per_call``;
    - ``flood_load``: flood offered to a port / link rate;
    - ``queue_s``: the switch FIFO's depth in seconds at the link rate; ``queue_to_rtt``,
      ``queue_to_rto_min``, ``queue_in_frames`` (full frames it holds);
    - ``rto_min_to_run``, ``delack_to_run``: TCP's timers against the uncongested run;
    - ``rx_cpu_share``: flood packets/s x receive cost / receiver cores (None if the cost is unknown);
      ``receiver_cores`` (a flooded node's cores) and ``rx_cost_us`` (its CPU per flood packet, us);
    - ``class_<name>``: each traffic class's share of the run's packets.
    """
    wire = wire_time_s(w.wire_bytes_per_run, w.link_rate_bps)
    queue_s = w.switch_queue_bytes * 8 / w.link_rate_bps
    q: dict[str, float | None] = {
        "network_share": wire / w.uncongested_s,
        "compute_to_comm": (w.uncongested_s - wire) / wire if wire > 0 else None,
        "calls_per_run": w.calls_per_run,
        "bytes_per_call": w.wire_bytes_per_run / w.calls_per_run if w.calls_per_run else None,
        "flood_load": w.flood_offered_bps / w.link_rate_bps,
        "queue_s": queue_s,
        "queue_in_frames": w.switch_queue_bytes / MAX_FRAME_BYTES,
        "queue_to_rtt": queue_s / w.base_rtt_s,
        "queue_to_rto_min": queue_s / w.rto_min_s,
        "rto_min_to_run": w.rto_min_s / w.uncongested_s,
        "delack_to_run": w.delack_s / w.uncongested_s,
        "rx_cpu_share": flood_pps(w) * w.rx_cost_s / w.receiver_cores if w.rx_cost_s is not None else None,
        "receiver_cores": w.receiver_cores,
        "rx_cost_us": w.rx_cost_s * 1e6 if w.rx_cost_s is not None else None,
    }
    total = sum(w.class_counts.values())
    for name, n in w.class_counts.items():
        q[f"class_{name}"] = n / total if total else None
    return q


def compare(a: World, b: World) -> list[tuple[str, float | None, float | None, float | None]]:
    """Rows ``(quantity, value in a, value in b, b / a)`` for every quantity of :func:`quantities`
    (the ratio None when either is unknown or a's is 0): how far world ``b`` is from ``a``."""
    qa, qb = quantities(a), quantities(b)
    rows = []
    for k in dict.fromkeys([*qa, *qb]):
        va, vb = qa.get(k), qb.get(k)
        ratio = vb / va if va not in (None, 0) and vb is not None else None
        rows.append((k, va, vb, ratio))
    return rows


#: The thesis's cluster (reference/004_3bc9645ad454d844.txt), each fact's source beside it.
THESIS = World(
    name="thesis (ECE cluster, 2007)",
    link_rate_bps=1e9,                # IV.A Table 1: gigabit NICs; "Cisco Catalyst 3750 gigabit Ethernet switch"
    switch_queue_bytes=131072,        # assumed: ecenet's 128 KiB (the issue's ~1 ms of a 3750 gigabit port)
    base_rtt_s=150e-6,                # assumed: gigabit LAN RTT of 2006 NICs (the thesis measures none)
    rto_min_s=0.200,                  # Fedora Core 6 (IV.A.2): Linux 2.6.18, TCP_RTO_MIN = HZ/5
    delack_s=0.040,                   # Linux 2.6.18 TCP_DELACK_MIN = HZ/25
    uncongested_s=38.10,              # Table 4 / Table 5, 4 machines, no congestion
    wire_bytes_per_run=18_416 * MAX_FRAME_BYTES,  # Figure 9: 18,416 data frames, at most full size
    calls_per_run=None,               # JavaParty/KaRMI calls are not in Figure 9 (15 JRMP packets only)
    flood_offered_bps=1e9,            # V.C.1: D-ITG "maximum rate", 1400 B, own gigabit NIC per sender: <= 1.0
    receiver_cores=2,                 # Table 1: jp-1..jp-4 one dual-core 2 GHz Opteron
    rx_cost_s=THESIS_RX_COST_S,       # not measured in the thesis (its third cause, V.C.1): the 1 Hz per bit/s rule
    class_counts={"control_ack": 65_664, "ssh": 61_226, "short_frame": 27_020, "data": 18_416, "rmi": 15},
)
