"""The virtual Catalyst's data path on real packets: the DS field rewritten at the switch (seen
on SPAN copies as a 3750 takes them: rx before the rewrite, tx after), and a policer that holds a
UDP flow to its rate. Through the capture classifier's DSCP histograms and the switch's own
``show mls qos interface X statistics``."""

from __future__ import annotations

import csv
import json
import subprocess
import threading
import time
from collections import Counter

import pytest

from conftest import ECENET
from qoslab.capture import LiveCapture
from qoslab.platforms.counters import read_statistics
from qoslab.profiles import load_profile, render
from qoslab.switch.backends import VirtualSwitch, virtual_endpoint
from qoslab.switch.push import push
from qoslab.trafficgen import FloodDefinition, open_flood
from qoslab.trafficgen.definitions import L2_OVERHEAD

from .conftest import DATAPATHS, datapath_variant, module_testbed


@pytest.fixture(scope="module", params=DATAPATHS)
def testbed(request):
    """ecenet at 50 Mbit/s for this module, on each switch data path: police-flood holds the
    flooders to 25 Mbit/s, half of that link; on the default topology's 10 Mbit/s links the police
    rate is above the link rate and the policer has nothing to hold."""
    yield from module_testbed(datapath_variant("d", request.param, ECENET,
                                           link={"rate": "50Mbit", "burst_ms": 2.5, "offloads": False}))


def _push(testbed, tmp_path, profile):
    push(render(load_profile(profile), testbed.topo), virtual_endpoint(testbed.topo), tmp_path / "push", profile)


def _udp(testbed, tmp_path, flows, rate, seconds, generator="iperf3"):
    """A UDP flood (1400 B payload) of ``flows`` [(src, dst)] at ``rate`` for ``seconds``: iperf3
    (paced by its own timer), or ``ditg`` kernel-paced (its rate an HTB class's on the sender's
    host, whatever the machine's load)."""
    extra = {"pacing": "kernel"} if generator == "ditg" else {}
    defn = FloodDefinition(name="t", rate=rate, duration_s=seconds, generator=generator,
                           flows=[{"src": s, "dst": d} for s, d in flows], **extra)
    gen = open_flood(defn, testbed.topo, testbed.executor, tmp_path, generator=generator)
    gen.start()
    assert not gen.errors, gen.errors
    gen.wait()
    return gen.stop()


def _span_traffic(testbed, tmp_path, profile):
    """Push ``profile``, capture both SPAN destinations (Gi1/0/21 mirrors Gi1/0/1, Gi1/0/22 mirrors
    Gi1/0/2) while TCP jp-2 -> jp-1 and UDP jp-3 -> jp-1, jp-4 -> jp-2 run; returns per port the
    summary and the per-packet rows."""
    _push(testbed, tmp_path, profile)
    caps = {p: LiveCapture(testbed.span_executor(), p, tmp_path / f"cap-{p}", per_packet=True)
            for p in ("Gi1-0-21", "Gi1-0-22")}
    for c in caps.values():
        c.start()
    try:
        udp = threading.Thread(target=_udp, args=(testbed, tmp_path / "udp", [("jp-3", "jp-1"), ("jp-4", "jp-2")],
                                                  "0.05x", 3))
        udp.start()
        testbed.iperf_tcp("jp-2", "jp-1", seconds=2)
        udp.join()
    finally:
        out = {p: c.stop() for p, c in caps.items()}
    rows = {p: list(csv.DictReader((tmp_path / f"cap-{p}" / "packets.csv").open())) for p in caps}
    return out, rows


def _dscp_by_direction(rows, host_ip):
    """DSCP counts of IPv4 packets to ``host_ip`` (tx copies) and from it (rx copies), and the
    classes of the packets from it that were not DSCP 0."""
    to = Counter(int(r["dscp"]) for r in rows if r["dst"] == host_ip)
    frm = Counter(int(r["dscp"]) for r in rows if r["src"] == host_ip)
    marked_from = Counter(r["class"] for r in rows if r["src"] == host_ip and r["dscp"] != "0")
    return to, frm, marked_from


def test_thesis_rewrites_the_ds_field_span_tx_after_rx_before(testbed, tmp_path):
    ip = {h: testbed.topo.host(h).ip for h in ("jp-1", "jp-2")}
    summ, rows = _span_traffic(testbed, tmp_path / "thesis", "thesis")
    # Gi1/0/1's tx copies (to jp-1: TCP data from jp-2, UDP from jp-3) carry the rewritten 40,
    # its rx copies (from jp-1: the ACKs) the DSCP jp-1 sent (0); Gi1/0/2 the other way round.
    # The host's own packets are DSCP 0 except its TCP resets at the end of the iperf3 test: Linux
    # sends a RST with the TOS of the segment it answers (tcp_v4_send_reset), which arrived as 40.
    for port, host in (("Gi1-0-21", "jp-1"), ("Gi1-0-22", "jp-2")):
        to, frm, marked = _dscp_by_direction(rows[port], ip[host])
        assert sum(to.values()) > 50 and set(to) == {40}, (port, to)
        # (the resets are a handful, but on a short test of ~60 packets from the host 2 of them
        # were 3.3 %: bound the share loosely; an rx-side rewrite would make it ~100 %)
        assert sum(frm.values()) > 50 and frm[0] > 0.9 * sum(frm.values()), (port, frm)
        assert set(marked) <= {"control/ack"} and set(frm) <= {0, 40}, (port, marked)
    c21, c22 = summ["Gi1-0-21"]["classes"], summ["Gi1-0-22"]["classes"]
    for c in (c21, c22):  # UDP jp-3 -> jp-1, jp-4 -> jp-2 (tx copies) and iperf3's few replies (rx copies)
        assert c["udp"]["dscp"].get("40", 0) > 0.95 * sum(c["udp"]["dscp"].values()), c["udp"]["dscp"]
    data21, data22 = c21["data"]["dscp"], c22["data"]["dscp"]  # TCP payload jp-2 -> jp-1 (+ iperf3 control)
    assert data21.get("40", 0) > 0.95 * sum(data21.values()), data21
    assert data22.get("0", 0) > 0.95 * sum(data22.values()), data22
    ack21, ack22 = c21["control/ack"]["dscp"], c22["control/ack"]["dscp"]  # the ACKs jp-1 -> jp-2
    assert ack21.get("0", 0) > 0.9 * sum(ack21.values()) and ack22.get("40", 0) > 0.9 * sum(ack22.values())
    # the switch's own counters agree: Gi1/0/1 received 0 and sent 40. Its received 40s are jp-1's
    # resets (above): 87 of 3,981 (2.2 %) in make test's paired lane, where the iperf3 test's end
    # left more segments in flight; an rx-side rewrite would make them all 40, so 10 % still tells
    stats = read_statistics(VirtualSwitch(testbed.topo), ["Gi1/0/1"])["GigabitEthernet1/0/1"]
    assert stats.dscp_out[40] > 100 and stats.dscp_in[0] > 100 and stats.dscp_in[40] < 0.1 * stats.dscp_in[0]


def test_fifo_leaves_the_ds_field_alone(testbed, tmp_path):
    summ, rows = _span_traffic(testbed, tmp_path / "fifo", "fifo")
    for port in rows:
        dscp = Counter(int(r["dscp"]) for r in rows[port] if r.get("dscp") not in (None, "", "-1"))
        assert sum(dscp.values()) > 100 and set(dscp) == {0}, (port, dscp)
        assert all(set(c["dscp"]) <= {"0"} for c in summ[port]["classes"].values())


def _rx_bytes(testbed, host):
    out = subprocess.run(["ip", "-n", testbed.namespace(host), "-s", "-j", "link", "show", "eth0"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)[0]["stats64"]["rx"]["bytes"]


SECONDS = 6


def test_police_holds_a_udp_flow_to_the_police_rate(testbed, tmp_path):
    prof = load_profile("police-flood")
    rate = next(r.police.rate_bps for r in prof.rules if r.police)
    _push(testbed, tmp_path, "police-flood")
    sw = VirtualSwitch(testbed.topo)
    before = read_statistics(sw, ["Gi1/0/5"])["GigabitEthernet1/0/5"]
    # kernel-paced: in make test's paired lane (ci48) an iperf3 sender at 0.8x offered less than the
    # police rate (19.9 Mbit/s received where 25 were policed), and the test proved nothing
    udp = threading.Thread(target=_udp, args=(testbed, tmp_path / "udp", [("jp-5", "jp-1")], "0.8x", SECONDS,
                                              "ditg"))
    udp.start()
    time.sleep(2.5)  # past the start and the policer's full bucket (see below)
    b0, t0 = _rx_bytes(testbed, "jp-1"), time.monotonic()
    time.sleep(3.0)
    b1, t1 = _rx_bytes(testbed, "jp-1"), time.monotonic()
    udp.join()
    after = read_statistics(sw, ["Gi1/0/5"])["GigabitEthernet1/0/5"]
    _push(testbed, tmp_path, "fifo")
    # the receiver's frames (1442 B for 1400 B payload) -> IP bytes (1428 B), what the policer meters
    # (nftables at the bridge hook sees the packet without its Ethernet header)
    frame = 1400 + L2_OVERHEAD["UDP"]
    ip_bps = (b1 - b0) * 8 / (t1 - t0) * (frame - 14) / frame
    assert abs(ip_bps - rate) <= 0.10 * rate, f"received {ip_bps / 1e6:.2f} Mbit/s (IP) vs police {rate / 1e6:g}"
    # In profile over the whole run: the rate for SECONDS plus one full bucket. nftables' byte limit
    # holds one second of the rate on top of the burst (kernel nft_limit: tokens_max = unit x (rate +
    # burst) / rate, unit 1 s), where a 3750's bucket holds the burst alone: a flow above the rate
    # passes unpoliced until that bucket is empty (1.7 s here), then exactly at the rate.
    burst = next(r.police.burst_bytes for r in prof.rules if r.police)
    pin, pout = after.policer_in - before.policer_in, after.policer_out - before.policer_out
    bound = rate / 8 * (SECONDS + 1) + burst
    assert pout > 0 and 0.9 * bound <= pin * (frame - 14) <= 1.05 * bound, (pin, pout, bound)


def _queue_backlog(testbed, dev, handle):
    """(backlog bytes, drops, limit) of the bfifo with ``handle`` on switch port ``dev``."""
    out = subprocess.run(["tc", "-n", testbed.switch_ns, "-s", "-j", "qdisc", "show", "dev", dev],
                         capture_output=True, text=True, check=True).stdout
    q = next(x for x in json.loads(out) if x.get("handle") == handle)
    return int(q.get("backlog", 0)), int(q.get("drops", 0)), int(q["options"]["limit"])


WTD_BASE = ["mls qos", "mls qos queue-set output 1 threshold 2 40 100 100 400"]
WTD_T2 = WTD_BASE + [f"mls qos srr-queue output dscp-map queue 2 threshold 2 {' '.join(map(str, range(i, i + 8)))}"
                     for i in (0, 8)]


@pytest.mark.parametrize("lines,threshold,pct", [(WTD_BASE, 1, 40), (WTD_T2, 2, 100)], ids=["threshold1", "threshold2"])
def test_wtd_threshold_is_the_depth_of_the_egress_queue(testbed, tmp_path, lines, threshold, pct):
    """Untrusted UDP (label 0 -> queue 2) from two hosts into jp-1's port at 1.6x its rate: the
    queue fills to the WTD threshold its DSCPs map to (% of queue-set 1's 25 % buffer) and drops
    beyond it, and the switch counts the drops under that threshold."""
    push(lines, virtual_endpoint(testbed.topo), tmp_path / "push", "wtd")
    try:
        limit = testbed.topo.buffers.switch_port_bytes * 25 * pct // 10000
        assert _queue_backlog(testbed, "Gi1-0-1", "12:")[2] == limit
        sw = VirtualSwitch(testbed.topo)
        before = read_statistics(sw, ["Gi1/0/1"])["GigabitEthernet1/0/1"]
        peaks = []
        udp = threading.Thread(target=_udp, args=(testbed, tmp_path / "udp", [("jp-3", "jp-1"), ("jp-4", "jp-1")],
                                                  "0.8x", 4))
        udp.start()
        time.sleep(1.5)
        for _ in range(20):
            peaks.append(_queue_backlog(testbed, "Gi1-0-1", "12:")[0])
            time.sleep(0.05)
        udp.join()
        after = read_statistics(sw, ["Gi1/0/1"])["GigabitEthernet1/0/1"]
    finally:
        _push(testbed, tmp_path, "fifo")
    frame = 1400 + L2_OVERHEAD["UDP"]
    # a bfifo never holds more than its limit; overloaded, it reaches it (within a frame) and
    # stays within one HTB burst (what the class sends at once) plus a frame of it
    burst = testbed.topo.link.burst_bytes
    assert limit - 2 * frame <= max(peaks) <= limit, (peaks, limit)
    assert sorted(peaks)[len(peaks) // 2] >= limit - burst - frame, (peaks, limit, burst)
    t = threshold - 1
    dropped = [after.dropped[1][i] - before.dropped[1][i] for i in range(3)]
    assert dropped[t] > 100 and sum(dropped) == dropped[t], dropped
