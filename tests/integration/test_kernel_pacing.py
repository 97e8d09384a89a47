"""Kernel pacing on the testbed (issue 33): an unpaced ITGSend whose rate its own shaped host link
sets. The flow arrives at the link rate within the generator's tolerance, the sender blocks in
sendto() (its host queue drops nothing) instead of busy-waiting, and it costs a small fraction of
what -poll costs."""

from __future__ import annotations

import os
import time

import pytest

from conftest import REPO
from qoslab.errors import QoslabError
from qoslab.testbed.procs import tree_cpu_ticks
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator

CAMPAIGN_FLOOD = REPO / "traffic-gen" / "campaign-flood.yaml"


def _flood(testbed, tmp_path, pacing: str, seconds: float = 5.0):
    """Run the campaign flood (1.1x, four flows) with ``pacing``; returns (result, sender CPU s)."""
    defn = load_flood(CAMPAIGN_FLOOD).model_copy(update={"pacing": pacing})
    with DitgGenerator(defn, testbed.topo, testbed.executor, tmp_path / pacing, duration_s=seconds) as fr:
        fr.start()
        first = {p.pid: tree_cpu_ticks(p.pid) for p in fr.senders.values()}
        last = dict(first)
        while any(testbed.executor(p.node).poll(p) is None for p in fr.senders.values()):
            for p in fr.senders.values():
                last[p.pid] = max(last[p.pid], tree_cpu_ticks(p.pid))
            time.sleep(0.05)
        fr.stop()
    return fr.result, sum(last[k] - first[k] for k in first) / os.sysconf("SC_CLK_TCK")


def test_kernel_pacing_delivers_the_link_rate_without_spinning(testbed, tmp_path):
    r, cpu_s = _flood(testbed, tmp_path, "kernel")
    assert r.ok, r.errors
    link = testbed.topo.link.rate
    for f in r.flows:
        assert f.pacing == "kernel" and f.poll is False
        assert f.sender_sched.startswith(f"kernel pacing (host link), taskset -c {os.cpu_count() - 1}")  # pin_cpu: last
        assert f.target_pps == pytest.approx(link / (1442 * 8))
        assert not f.shortfall, (f.src, f.sent_pps, f.target_pps)  # sent within 5 % of the link's packets/s
        assert abs(f.received_wire_bps / link - 1) < 0.05, (f.src, f.received_wire_bps)
        assert f.host_drops == 0, (f.src, f.host_drops)  # the sender blocked, its host queue dropped nothing
        assert f.loss_pct < 1.0, (f.src, f.loss_pct)     # nothing to lose: the switch port drains the link rate
    # four blocking senders: well under a core together over 5 s (four -poll senders spin, one core each)
    assert cpu_s / 5.0 < 0.5, cpu_s


def test_kernel_pacing_refuses_a_flood_below_the_link_rate(testbed, tmp_path):
    defn = load_flood(CAMPAIGN_FLOOD).model_copy(update={"pacing": "kernel", "rate": "0.8x"})
    with pytest.raises(QoslabError, match="pacing 'kernel': flow jp-5 -> jp-1: asks .* below its link"):
        DitgGenerator(defn, testbed.topo, testbed.executor, tmp_path)
