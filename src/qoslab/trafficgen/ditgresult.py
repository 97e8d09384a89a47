"""A D-ITG flow's figures from ITGDec's texts (pure): what :class:`.ditg.DitgGenerator` decodes
at its stop goes into the flow's :class:`~.base.FlowResult` here, apart from running the
processes. The sender log's summary gives the packets D-ITG sent; the receiver log's summary and
``-c`` series what arrived, its rates (bits/s of payload and of frames on the wire), delay and
jitter (seconds), and the loss against what left the host (packets a kernel-paced flood's halt
emptied from the host queue are not lost: they never left it)."""

from __future__ import annotations

from .base import FlowResult
from .definitions import L2_OVERHEAD
from .itgdec import parse_itgdec_series, parse_itgdec_summary


def apply_sender_summary(r: FlowResult, text: str) -> float:
    """``r``'s packets sent and sent rate (packets/s) from ITGDec's summary ``text`` of the sender
    log; returns its total time (seconds, 0 when absent). Raises QoslabError for a text that is
    not ITGDec's summary."""
    s = parse_itgdec_summary(text)
    r.packets_sent = int(s["total_packets"])
    r.sent_pps = s.get("avg_packet_rate_pps", 0.0)
    r.sent_from = "sender log"
    return s.get("total_time_s", 0.0)


def apply_receiver_summary(r: FlowResult, text: str, series: str, protocol: str, flushed: int | None,
                           sender_pps: float, tolerance: float) -> None:
    """``r``'s received figures from ITGDec's summary ``text`` and ``-c`` ``series`` of the
    receiver log: packets, duration (seconds), payload and wire rates (bits/s; ``protocol``'s L2
    overhead per frame), loss (percent of the packets sent less ``flushed``, those emptied from
    the host queue), delay and jitter (seconds), ``shortfall`` (the sent rate more than
    ``tolerance`` below ``sender_pps``), the series. Call after :func:`apply_sender_summary`.
    Raises QoslabError for texts that are not ITGDec's."""
    rv = parse_itgdec_summary(text)
    r.packets_received = int(rv["total_packets"])
    r.duration_s = rv["total_time_s"]
    if r.duration_s > 0:
        received = rv.get("bytes_received", 0.0)
        r.received_payload_bps = received * 8 / r.duration_s
        r.received_wire_bps = (received + r.packets_received * L2_OVERHEAD[protocol]) * 8 / r.duration_s
    r.packets_flushed = flushed
    sent = r.packets_sent - (flushed or 0)
    r.loss_pct = 100.0 * (1 - r.packets_received / sent) if sent > 0 else 0.0
    r.delay_avg_s = rv.get("avg_delay_s", 0.0)
    r.delay_max_s = rv.get("max_delay_s", 0.0)
    r.jitter_s = rv.get("avg_jitter_s", 0.0)
    r.shortfall = r.sent_pps < sender_pps * (1 - tolerance)
    r.series = parse_itgdec_series(series)


__all__ = ["apply_receiver_summary", "apply_sender_summary"]
