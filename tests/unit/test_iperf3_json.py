"""iperf3's -J output of a UDP flood read into a FlowResult (trafficgen.iperf3.apply_iperf3_json)."""

from __future__ import annotations

import pytest

from qoslab.trafficgen.base import FlowResult
from qoslab.trafficgen.definitions import ResolvedFlow
from qoslab.trafficgen.iperf3 import apply_iperf3_json

FLOW = ResolvedFlow(0, "jp-5", "jp-1", "198.18.0.5", "198.18.0.1", "UDP", 1400, 260.0, 0, 0.0, 10001)


def _server(intervals: list[tuple[float, int]], end_s: float, end_bytes: int) -> dict:
    return {"intervals": [{"sum": {"seconds": s, "bytes": b, "end": s, "bits_per_second": b * 8 / s}}
                          for s, b in intervals],
            "end": {"sum": {"seconds": end_s, "bytes": end_bytes, "packets": end_bytes // 1400, "lost_packets": 0}}}


def test_received_rate_over_the_report_intervals():
    r = FlowResult("jp-5", "jp-1", 260.0, generator="iperf3")
    client = {"end": {"sum": {"packets": 520, "seconds": 2.0}}}
    apply_iperf3_json(r, client, _server([(1.0, 364000), (1.0, 364000)], 2.0, 728000), FLOW)
    assert r.duration_s == 2.0 and r.received_wire_bps == pytest.approx((728000 + 520 * 42) * 8 / 2.0)


def test_a_run_shorter_than_one_interval_reads_its_end_summary_not_zero():
    """Issue 34: a 0.45 s MPI trial stopped the incast before iperf3's first 1 s report: 0 bit/s
    read, flood_ratio 0, every such trial judged invalid."""
    r = FlowResult("jp-5", "jp-1", 260.0, generator="iperf3")
    client = {"end": {"sum": {"packets": 117, "seconds": 0.45}}}
    apply_iperf3_json(r, client, _server([], 0.45, 117 * 1400), FLOW)
    assert r.duration_s == 0.45 and r.received_wire_bps == pytest.approx(117 * (1400 + 42) * 8 / 0.45)
    assert r.received_wire_bps > 2.9e6
