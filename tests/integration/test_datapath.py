"""The virtual Catalyst's data path on real packets: the DS field rewritten at the switch (seen
on SPAN copies as a 3750 takes them: rx before the rewrite, tx after), and a policer that holds a
UDP flow to its rate. Through the capture classifier's DSCP histograms and the switch's own
``show mls qos interface X statistics``."""

from __future__ import annotations

import csv
import threading
from collections import Counter

import pytest

from qoslab.capture import LiveCapture
from qoslab.profiles import load_profile, render
from qoslab.switch import push
from qoslab.switchdev import VirtualSwitch, virtual_endpoint
from qoslab.campaign.evidence import parse_statistics
from qoslab.trafficgen import FloodDefinition, open_flood
from qoslab.trafficgen.definitions import L2_OVERHEAD


def _push(testbed, tmp_path, profile):
    push(render(load_profile(profile), testbed.topo), virtual_endpoint(testbed.topo), tmp_path / "push", profile)


def _udp(testbed, tmp_path, flows, rate, seconds):
    """An iperf3 UDP flood (1400 B payload) of ``flows`` [(src, dst)] at ``rate`` for ``seconds``."""
    defn = FloodDefinition(name="t", rate=rate, duration_s=seconds, generator="iperf3",
                           flows=[{"src": s, "dst": d} for s, d in flows])
    gen = open_flood(defn, testbed.topo, testbed.executor, tmp_path, generator="iperf3")
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
    """DSCP counts of IPv4 packets to ``host_ip`` (tx copies) and from it (rx copies)."""
    to = Counter(int(r["dscp"]) for r in rows if r["dst"] == host_ip)
    frm = Counter(int(r["dscp"]) for r in rows if r["src"] == host_ip)
    return to, frm


def test_thesis_rewrites_the_ds_field_span_tx_after_rx_before(testbed, tmp_path):
    ip = {h: testbed.topo.host(h).ip for h in ("jp-1", "jp-2")}
    summ, rows = _span_traffic(testbed, tmp_path / "thesis", "thesis")
    # Gi1/0/1's tx copies (to jp-1: TCP data from jp-2, UDP from jp-3) carry the rewritten 40,
    # its rx copies (from jp-1: the ACKs) the DSCP jp-1 sent (0); Gi1/0/2 the other way round.
    for port, host in (("Gi1-0-21", "jp-1"), ("Gi1-0-22", "jp-2")):
        to, frm = _dscp_by_direction(rows[port], ip[host])
        assert sum(to.values()) > 50 and set(to) == {40}, (port, to)
        assert sum(frm.values()) > 50 and set(frm) == {0}, (port, frm)
    c21, c22 = summ["Gi1-0-21"]["classes"], summ["Gi1-0-22"]["classes"]
    assert set(c21["udp"]["dscp"]) == {"40"} and set(c22["udp"]["dscp"]) == {"40"}  # jp-3 -> jp-1, jp-4 -> jp-2
    data21, data22 = c21["data"]["dscp"], c22["data"]["dscp"]  # TCP payload jp-2 -> jp-1 (+ iperf3 control)
    assert data21.get("40", 0) > 0.95 * sum(data21.values()), data21
    assert data22.get("0", 0) > 0.95 * sum(data22.values()), data22
    ack21, ack22 = c21["control/ack"]["dscp"], c22["control/ack"]["dscp"]  # the ACKs jp-1 -> jp-2
    assert ack21.get("0", 0) > 0.9 * sum(ack21.values()) and ack22.get("40", 0) > 0.9 * sum(ack22.values())
    # the switch's own counters agree: Gi1/0/1 received 0 and sent 40
    stats = parse_statistics(VirtualSwitch(testbed.topo).show(["show mls qos interface Gi1/0/1 statistics"])
                             ["show mls qos interface Gi1/0/1 statistics"])
    assert stats["dscp_out"][40] > 100 and stats["dscp_in"][40] == 0 and stats["dscp_in"][0] > 100


def test_fifo_leaves_the_ds_field_alone(testbed, tmp_path):
    summ, rows = _span_traffic(testbed, tmp_path / "fifo", "fifo")
    for port in rows:
        dscp = Counter(int(r["dscp"]) for r in rows[port] if r["dscp"] not in ("", "-1"))
        assert sum(dscp.values()) > 100 and set(dscp) == {0}, (port, dscp)
        assert all(set(c["dscp"]) <= {"0"} for c in summ[port]["classes"].values())


@pytest.mark.parametrize("offered", ["0.8x"])
def test_police_holds_a_udp_flow_to_the_police_rate(testbed, tmp_path, offered):
    prof = load_profile("police-flood")
    rate = next(r.police.rate_bps for r in prof.rules if r.police)
    _push(testbed, tmp_path, "police-flood")
    sw = VirtualSwitch(testbed.topo)
    cmd = "show mls qos interface Gi1/0/5 statistics"
    before = parse_statistics(sw.show([cmd])[cmd])
    res = _udp(testbed, tmp_path / "udp", [("jp-5", "jp-1")], offered, 5)
    after = parse_statistics(sw.show([cmd])[cmd])
    _push(testbed, tmp_path, "fifo")
    f = res.flows[0]
    ip_bps = f.received_wire_bps * (1400 + L2_OVERHEAD["UDP"] - 14) / (1400 + L2_OVERHEAD["UDP"])
    # the policer meters IP packets (nftables at the bridge hook: no Ethernet header)
    assert abs(ip_bps - rate) <= 0.10 * rate, f"received {ip_bps / 1e6:.2f} Mbit/s (IP) vs police {rate / 1e6:g}"
    pin, pout = after["policer_in"] - before["policer_in"], after["policer_out"] - before["policer_out"]
    assert pin > 0 and pout > 0 and abs(pin / (pin + pout) - rate / (0.8 * 50e6 * 1428 / 1442)) < 0.1, (pin, pout)
