"""Kernel pacing on the testbed (issue 33): an unpaced ITGSend whose rate its own shaped host link
sets. The flow arrives at the link rate within the generator's tolerance, the sender blocks in
sendto() (its host queue drops nothing) instead of busy-waiting, and it costs a small fraction of
what -poll costs."""

from __future__ import annotations

import os
import time

import pytest

from conftest import REPO
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
        assert f.sender_sched.startswith("kernel pacing (HTB class at ") and f"taskset -c {os.cpu_count() - 1}" in f.sender_sched  # pin_cpu: last
        assert f.target_pps == pytest.approx(link / (1442 * 8))
        assert not f.shortfall, (f.src, f.sent_pps, f.target_pps)  # sent within 5 % of the link's packets/s
        assert abs(f.received_wire_bps / link - 1) < 0.05, (f.src, f.received_wire_bps)
        assert f.host_drops == 0, (f.src, f.host_drops)  # the sender blocked, its host queue dropped nothing
        # nothing to lose: the switch port drains the link rate (D-ITG's logs count in batches of 50 packets,
        # so its loss of ~4,300 packets reads up to 1.2 % with none lost)
        assert f.packets_sent - f.packets_received <= 50 + 0.005 * f.packets_sent, (f.src, f.loss_pct)
    # four blocking senders: well under a core together over 5 s (four -poll senders spin, one core each)
    assert cpu_s / 5.0 < 0.5, cpu_s


def _port_rx_bytes(testbed, hosts: list[str]) -> tuple[dict[str, int], float, float]:
    """Bytes each host's switch port has received (the switch-side veth's rx counter: frames from
    the Ethernet header on, as HTB counts them), all ports read in one netlink dump, with the
    moment the kernel took them and its uncertainty (seconds, :func:`netlink.link_snapshot`: an
    ``ip -s link`` stamped around its process start was off by up to tens of ms on a loaded
    machine, a 2.5 % error over the 3 s window)."""
    from qoslab.portnames import linux_ifname
    from qoslab.testbed import netlink

    snap = netlink.link_snapshot(testbed.switch_ns)
    return {h: snap.rx_bytes[linux_ifname(testbed.topo.host(h).port)] for h in hosts}, snap.at, snap.spread


@pytest.mark.parametrize("share", [0.95, 1.0])
def test_kernel_paced_flood_at_the_switch_port_is_the_asked_rate_with_the_workload_running(testbed, tmp_path,
                                                                                           share):
    """Issue 48: below and at the link rate the kernel sets the flood's rate (an HTB class per
    flow on its host): measured at each flooder's switch port over 3 s while the RayTracer runs
    on jp-1..4, every flow is within 2 % of ``share`` x the link rate, and its host dropped
    nothing (the sender blocked)."""
    import shutil
    import threading

    from qoslab.workloads.pool import JAR
    from qoslab.workloads.raytracer import WorkloadSettings, run_workload

    if not JAR.exists() or shutil.which("java") is None:
        pytest.skip("workload jar not built (make setup)")
    stop, runs, errors = threading.Event(), [], []

    def workload() -> None:
        while not stop.is_set():
            try:
                s = WorkloadSettings(hosts=["jp-1", "jp-2", "jp-3", "jp-4"], size="A", rows_per_call=5)
                runs.append(run_workload(s, testbed.executor, lambda h: testbed.topo.host(h).ip,
                                         tmp_path / f"w{len(runs)}").result["valid"])
            except Exception as e:  # noqa: BLE001 - reported by the assertion below
                errors.append(repr(e))
                return

    defn = load_flood(CAMPAIGN_FLOOD).model_copy(update={"rate": f"{share}x", "pacing": "auto"})
    link = testbed.topo.link.rate
    t = threading.Thread(target=workload)
    t.start()
    try:
        time.sleep(1.0)  # the JVMs are up and rendering
        with DitgGenerator(defn, testbed.topo, testbed.executor, tmp_path / "flood", lifetime_s=60) as fr:
            fr.start()
            senders = [f.src for f in fr.flows]
            time.sleep(1.0)  # the socket buffers are full: the class, not the start, sets the rate
            b0, t0, s0 = _port_rx_bytes(testbed, senders)
            time.sleep(3.0)
            b1, t1, s1 = _port_rx_bytes(testbed, senders)
            fr.halt()  # as a campaign does: the senders still run
            res = fr.stop()
    finally:
        stop.set()
        t.join(timeout=120)
    assert res.ok, res.errors
    assert not errors and runs and all(runs), (errors, runs)
    for f in res.flows:
        assert f.pacing == "kernel" and f.sender_sched.startswith("kernel pacing (HTB class")
        assert f.sent_from == "class counter"
        assert f.host_drops == 0, (f.src, f.host_drops)
        measured = (b1[f.src] - b0[f.src]) * 8 / (t1 - t0) / link
        timing = (s0 + s1) / (t1 - t0)  # the window's own uncertainty (a fraction; well under 0.1 %)
        assert abs(measured / share - 1) < 0.02 + timing, (f.src, measured, share, timing)
        # and the fidelity monitor's sent rate (the class's own count over the senders' run) agrees
        assert abs(f.sent_pps / f.target_pps - 1) < 0.02, (f.src, f.sent_pps, f.target_pps)
    # the flood classes are gone: every host's tree is back to the link class and its leaf
    for h in senders:
        r = testbed.executor(h).run(["tc", "class", "show", "dev", "eth0"])
        assert sorted(line.split()[2] for line in r.stdout.splitlines()) == ["1:1", "1:10"], r.stdout


def test_link_snapshot_brackets_ip_link_and_refuses_a_missing_namespace(testbed):
    """The kernel-timed link dump the rate test reads: every switch port's rx counter read by
    ``ip -s -j link`` between two dumps lies between their counts (both read the same kernel
    counters; a ping from jp-1, every 10 ms, makes its port's count move between the two
    dumps, 0.2 s apart), its interval is ordered, and a namespace that does not exist is a
    QoslabError naming it."""
    import json
    import subprocess
    import time

    from qoslab.errors import QoslabError
    from qoslab.portnames import linux_ifname
    from qoslab.testbed import netlink

    ping = testbed.executor("jp-1").start(["ping", "-q", "-i", "0.01", "-c", "100", testbed.topo.host("jp-2").ip],
                                          stdout="/dev/null", stderr="/dev/null")
    try:
        time.sleep(0.1)  # the ping's first packets are on the wire
        a = netlink.link_snapshot(testbed.switch_ns)
        time.sleep(0.1)
        r = subprocess.run(["ip", "-n", testbed.switch_ns, "-s", "-j", "link", "show"],
                           capture_output=True, text=True, check=True)
        time.sleep(0.1)
        b = netlink.link_snapshot(testbed.switch_ns)
    finally:
        testbed.executor("jp-1").wait(ping, timeout=10)
    by_ip = {d["ifname"]: int(d["stats64"]["rx"]["bytes"]) for d in json.loads(r.stdout)}
    assert set(by_ip) == set(a.rx_bytes) == set(b.rx_bytes)
    for dev, n in by_ip.items():
        assert a.rx_bytes[dev] <= n <= b.rx_bytes[dev], (dev, a.rx_bytes[dev], n, b.rx_bytes[dev])
    jp1 = linux_ifname(testbed.topo.host("jp-1").port)
    assert b.rx_bytes[jp1] > a.rx_bytes[jp1], (jp1, a.rx_bytes[jp1], b.rx_bytes[jp1])  # the ping's echo requests
    assert a.t_from <= a.t_to < b.t_from <= b.t_to and a.spread >= 0
    with pytest.raises(QoslabError, match="qoslab-no-such-ns"):
        netlink.link_snapshot("qoslab-no-such-ns")


def test_a_datagram_its_receiver_has_not_read_holds_the_drain(testbed):
    """The drain ends only when the flood's receivers have read what reached them (a CI run of
    2026-11-30 stopped a receiver 5 ms after the queues were empty with one packet unread). A
    UDP socket in jp-2's namespace receives one datagram from jp-6 and does not read it: the
    queues are empty, yet the drain waits (its whole timeout) and says False; its socket read,
    the drain ends at once. Both sockets are opened in their namespaces by this process
    (:func:`.nsproc.call_in`); the datagram goes to jp-2's testbed address."""
    import socket

    from qoslab.errors import QoslabError
    from qoslab.testbed.nsproc import call_in, udp_queued_bytes
    from qoslab.testbed.probes import queues_empty, receivers_idle

    dst = testbed.topo.host("jp-2")
    ports = [dst.port]
    rx = call_in(testbed.namespace("jp-2"), lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
    tx = call_in(testbed.namespace("jp-6"), lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
    try:
        rx.bind((dst.ip, 0))
        assert receivers_idle(testbed, ports) is True
        tx.sendto(b"x" * 1400, (dst.ip, rx.getsockname()[1]))
        deadline = time.monotonic() + 2.0
        while udp_queued_bytes(testbed.namespace("jp-2")) == 0 and time.monotonic() < deadline:
            time.sleep(0.002)
        assert udp_queued_bytes(testbed.namespace("jp-2")) > 0
        assert queues_empty(testbed, ports, ["jp-6"]) is True
        assert receivers_idle(testbed, ports) is False
        t0 = time.monotonic()
        assert testbed.wait_drained(ports, ["jp-6"], timeout_s=0.3) is False
        assert time.monotonic() - t0 >= 0.3
        assert rx.recv(2048) == b"x" * 1400
        t0 = time.monotonic()
        assert testbed.wait_drained(ports, ["jp-6"], timeout_s=2.0) is True
        assert time.monotonic() - t0 < 1.0
    finally:
        rx.close()
        tx.close()
    with pytest.raises(QoslabError, match="qoslab-no-such-ns"):
        udp_queued_bytes("qoslab-no-such-ns")


def _port_backlog(testbed, port: str) -> int:
    """Bytes queued now in the switch ``port``'s egress (toward its host; every qdisc on it)."""
    from qoslab.portnames import linux_ifname
    from qoslab.testbed.netlink import qdisc_counters

    qs = qdisc_counters(testbed.switch_ns).get(linux_ifname(port), [])
    return max((q.backlog for q in qs), default=0)


def _max_backlog(testbed, port: str, seconds: float) -> int:
    """The largest backlog (bytes) of the switch ``port``'s egress sampled back to back for ``seconds``."""
    deadline, most = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        most = max(most, _port_backlog(testbed, port))
    return most


def test_a_stalled_flood_class_never_bursts_above_the_line_rate(testbed, tmp_path):
    """A kernel-paced flow whose sender stalls sends no burst into the switch port: the port, which
    sends the link rate, never queues eight frames. The stall is made here: the sender (ITGSend and
    its wrapper) stopped for 0.4 s, long enough for its host queue and the port to empty, then
    resumed. The port's backlog is sampled back to back through the flow's first second (a fresh
    class's full bucket) and the 0.2 s after the resume (the stall's credit). With the class of
    68d82ba-f138715 (ceil = rate, both buckets 20 ms of it: 25 kB at this topology's 10 Mbit/s) it
    failed here twice out of two (2026-11-30): the port held 21.6 kB before the stop and 23.1 kB
    after; with the link's 2.5 ms buckets (kernelpace.py) it passes. The flow runs at 0.95x, not
    the experiment's 0.9999x: at 0.9999x a backlog the port's own dequeue leaves when this machine
    holds up the switch's core drains at 100 ppm and stays (ci42, 2026-12-01: 15.9 kB a second
    after the start, 0 after the stall: a hold-up of ~13 ms, not the class), at 0.95x it drains
    at 5 % of the rate, while a 20 ms burst still shows above eight frames for ~0.2 s."""
    import signal

    from qoslab.testbed.procs import children

    defn = load_flood(REPO / "traffic-gen" / "thesis-faithful-flood-100ppm.yaml")
    defn = defn.model_copy(update={"flows": defn.flows[:1], "rate": "0.95x"})
    port = testbed.topo.host(defn.flows[0].dst).port
    link = testbed.topo.link.rate
    with DitgGenerator(defn, testbed.topo, testbed.executor, tmp_path / "flood", lifetime_s=60) as fr:
        fr.start()
        before = _max_backlog(testbed, port, 1.0)  # the fresh class's bucket; then the socket buffer is full
        proc = next(iter(fr.senders.values()))
        tree = [proc.pid, *children(proc.pid)]
        for pid in tree:
            os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(0.4)  # the host queue empties; the class's bucket fills
        finally:
            for pid in tree:
                os.kill(pid, signal.SIGCONT)
        after = _max_backlog(testbed, port, 0.2)
        fr.halt()
        res = fr.stop()
    assert res.ok, res.errors
    assert link * 0.02 / 8 > 8 * 1538  # a 20 ms burst of 68d82ba's class would show
    assert before < 8 * 1538 and after < 8 * 1538, (before, after)
