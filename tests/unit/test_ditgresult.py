"""A D-ITG flow's figures from ITGDec's texts (trafficgen.ditgresult), on ITGDec 2.8.1's own
outputs recorded here: tests/data/itgdec-recv-summary.txt and itgdec-recv-series.txt (a 10 s
flow of 42,816 packets), itgdec-empty-log-summary.txt (a receiver that got nothing)."""

from __future__ import annotations

import pytest

from conftest import REPO
from qoslab.errors import QoslabError
from qoslab.trafficgen.base import FlowResult
from qoslab.trafficgen.definitions import L2_OVERHEAD
from qoslab.trafficgen.ditgresult import apply_receiver_summary, apply_sender_summary

DATA = REPO / "tests" / "data"
SUMMARY = (DATA / "itgdec-recv-summary.txt").read_text()
SERIES = (DATA / "itgdec-recv-series.txt").read_text()
EMPTY = (DATA / "itgdec-empty-log-summary.txt").read_text()


def _flow() -> FlowResult:
    return FlowResult("jp-5", "jp-1", requested_pps=4300.0, generator="ditg")


def test_a_delivered_flow_gets_its_rates_delay_loss_and_series():
    r = _flow()
    assert apply_sender_summary(r, SUMMARY) == pytest.approx(10.041144)
    assert (r.packets_sent, r.sent_from) == (42816, "sender log") and r.sent_pps == pytest.approx(4264.055968)
    apply_receiver_summary(r, SUMMARY, SERIES, "UDP", None, 4300.0, 0.02)
    assert r.packets_received == 42816 and r.duration_s == pytest.approx(10.041144) and r.loss_pct == 0.0
    assert r.received_payload_bps == pytest.approx(59942400 * 8 / 10.041144)
    assert r.received_wire_bps == pytest.approx((59942400 + 42816 * L2_OVERHEAD["UDP"]) * 8 / 10.041144)
    assert (r.delay_avg_s, r.delay_max_s, r.jitter_s) == (0.0275, 0.083757, 0.000104)
    assert r.shortfall is False and r.packets_flushed is None and len(r.series) == len(SERIES.splitlines())
    apply_receiver_summary(r, SUMMARY, SERIES, "UDP", None, 4400.0, 0.02)  # 4264 < 0.98 x 4400
    assert r.shortfall is True


def test_a_flow_that_delivered_nothing_is_all_lost_unless_its_packets_never_left_the_host():
    r = _flow()
    apply_sender_summary(r, SUMMARY)
    apply_receiver_summary(r, EMPTY, "", "UDP", None, 4300.0, 0.02)
    assert (r.packets_received, r.duration_s, r.received_wire_bps, r.loss_pct) == (0, 0, 0.0, 100.0)
    apply_receiver_summary(r, EMPTY, "", "UDP", 42816, 4300.0, 0.02)  # all emptied from the host queue at the halt
    assert r.packets_flushed == 42816 and r.loss_pct == 0.0


def test_text_that_is_not_itgdecs_is_refused():
    with pytest.raises(QoslabError):
        apply_sender_summary(_flow(), "Segmentation fault\n")
    with pytest.raises(QoslabError):
        apply_receiver_summary(_flow(), (DATA / "itgdec-garbage-log-summary.txt").read_text(), "", "UDP", None, 1.0, 0.02)
