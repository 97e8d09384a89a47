"""Looking at a running testbed: status and counters, flood saturation, all-pairs ping, iperf3."""

from __future__ import annotations

import json
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

from ..errors import QoslabError
from ..executors import Executor
from ..portnames import linux_ifname
from ..testbedplan import HOST_IF
from ..topology import Topology
from .caps import tc_json
from .netlink import qdisc_counters
from .nsproc import udp_queued_bytes


class TestbedView(Protocol):
    """What the probes read of a testbed (:class:`qoslab.testbed.core.Testbed` is one; typed
    here so that the probes need not import the class that uses them)."""

    @property
    def topo(self) -> Topology: ...

    @property
    def switch_ns(self) -> str: ...

    def namespace(self, host: str) -> str: ...

    def executor(self, host: str) -> Executor: ...

    def existing(self) -> list[str]: ...

    def is_up(self) -> bool: ...


@dataclass
class PortStatus:
    """One interface's state and counters (packets, bytes) and its root qdisc's stats."""

    namespace: str
    ifname: str
    alias: str
    state: str
    tx_packets: int
    tx_bytes: int
    rx_packets: int
    rx_bytes: int
    qdiscs: list[str]
    qdisc_drops: int
    qdisc_backlog_bytes: int


@dataclass
class TestbedStatus:
    """``up`` (bool), per-host interface status, switch port status, SPAN port status, and
    whether something listens on the management endpoint."""

    __test__ = False  # not a pytest test class


    name: str
    up: bool
    namespaces: list[str]
    hosts: dict[str, PortStatus] = field(default_factory=dict)
    switch_ports: dict[str, PortStatus] = field(default_factory=dict)
    management: str = ""
    management_listening: bool = False


def status(tb: TestbedView) -> TestbedStatus:
    """Interfaces, qdiscs and counters of every host and switch port (reads the kernel)."""
    mgmt = tb.topo.switch.management
    st = TestbedStatus(tb.topo.name, tb.is_up(), tb.existing(), management=f"{mgmt.host}:{mgmt.port}")
    st.management_listening = listening(mgmt.host, mgmt.port)
    if not st.up:
        return st
    for h in tb.topo.hosts:
        ns = tb.namespace(h.name)
        st.hosts[h.name] = _port_status(ns, "eth0")
    for dev in [linux_ifname(h.port) for h in tb.topo.hosts] + [
        linux_ifname(p) for p in tb.topo.switch.span_destinations
    ]:
        st.switch_ports[dev] = _port_status(tb.switch_ns, dev)
    return st

# -- connectivity -------------------------------------------------------------------------
#: Frames of the largest size (1538 bytes on the wire) the flood's settle window spans at the link
#: rate, so that one frame more or less moves the measured rate by 2.5 % at most ...
SETTLE_FRAMES = 40
#: ... and never less than this (seconds): at 10 Mbit/s the window is 0.05 s, at 1 Mbit/s 0.49 s.
SETTLE_WINDOW_MIN_S = 0.05
#: Seconds between two polls of the drain (one netlink dump per namespace: about 1 ms each).
DRAIN_POLL_S = 0.002
#: Seconds after the queues and the receivers' sockets were empty before the sockets are looked at
#: again (a packet that left the switch port's queue is in its receiver's socket within microseconds,
#: unless a busy CPU holds it in its backlog).
DRAIN_MARGIN_S = 0.005


def settle_window_s(rate_bps: float) -> float:
    """The window (seconds) over which a flooded port's rate is measured before the workload
    starts: SETTLE_FRAMES full frames at ``rate_bps`` (bits/s), at least SETTLE_WINDOW_MIN_S. Pure."""
    return max(SETTLE_WINDOW_MIN_S, SETTLE_FRAMES * 1538 * 8 / rate_bps)


def port_bytes_sent(tb: TestbedView, ports: list[str]) -> dict[str, int]:
    """Bytes sent so far by the root qdisc of each switch port (its egress toward the host;
    Catalyst names such as ``Gi1/0/1``; one netlink dump of the switch namespace). Raises
    QoslabError when the namespace cannot be read."""
    qd = qdisc_counters(tb.switch_ns)
    return {p: next((q.bytes for q in qd.get(linux_ifname(p), []) if q.root), 0) for p in ports}


def wait_ports_saturated(tb: TestbedView, ports: list[str], timeout_s: float, share: float = 0.95,
                         window_s: float | None = None) -> bool:
    """Wait until every port in ``ports`` sends at least ``share`` of the link rate (bits/s,
    measured from the root qdiscs' byte counters over a window sliding in fifths of it:
    ``window_s`` seconds, default :func:`settle_window_s`): the flood is established. Returns
    True then, or False after ``timeout_s`` seconds.

    Why not "the queue overflows": every host link is shaped at the link rate at both ends, so a
    flood above the link rate loses its excess at the sender's own egress (as a real NIC would)
    and arrives at the switch port at exactly the link rate; the switch port's queue only
    overflows once the workload adds its traffic."""
    window = window_s if window_s is not None else settle_window_s(tb.topo.link.rate)
    need_bps = share * tb.topo.link.rate
    deadline = time.monotonic() + timeout_s
    samples: deque[tuple[float, dict[str, int]]] = deque()
    while True:
        now = port_bytes_sent(tb, ports)
        t = time.monotonic()
        samples.append((t, now))
        while len(samples) > 1 and t - samples[1][0] >= window:
            samples.popleft()  # the oldest sample that is still at least a window old stays
        t0, first = samples[0]
        if t - t0 >= window and all((now[p] - first[p]) * 8 / (t - t0) >= need_bps for p in ports):
            return True
        if t >= deadline:
            return False
        time.sleep(window / 5)


def queues_empty(tb: TestbedView, ports: list[str], hosts: list[str]) -> bool:
    """True when nothing is queued in the egress of ``hosts`` (their NIC, toward the switch) and
    then of the switch ``ports`` (toward their hosts): every qdisc on them has qlen and backlog 0.
    The hosts are read first, so a packet that moves on in between is still seen at the port.
    Raises QoslabError when a namespace cannot be read."""
    for h in hosts:
        if any(q.qlen or q.backlog for q in qdisc_counters(tb.namespace(h)).get(HOST_IF, [])):
            return False
    sw = qdisc_counters(tb.switch_ns)
    return not any(q.qlen or q.backlog for p in ports for q in sw.get(linux_ifname(p), []))


def receivers_idle(tb: TestbedView, ports: list[str]) -> bool:
    """True when the hosts behind the switch ``ports`` have nothing left to read: every UDP socket
    of their namespaces has an empty receive queue (:func:`.nsproc.udp_queued_bytes`). Raises
    QoslabError when a namespace cannot be read."""
    hosts = [h.name for h in tb.topo.hosts if h.port in ports]
    return all(udp_queued_bytes(tb.namespace(h)) == 0 for h in hosts)


def wait_drained(tb: TestbedView, ports: list[str], hosts: list[str], timeout_s: float) -> bool:
    """After a flood's senders on ``hosts`` have stopped: wait until their packets have left
    every queue on the way to the switch ``ports`` (:func:`queues_empty`) and the receivers
    behind those ports have read them off their sockets (:func:`receivers_idle`), both polled
    every DRAIN_POLL_S; then, DRAIN_MARGIN_S later (a packet between the port's queue and its
    socket, in a CPU's backlog, has reached the socket), until the sockets are empty again.
    At 10 Mbit/s a full 128 KiB host queue takes 0.105 s (a kernel-paced flood's class queues
    are emptied at the halt instead: trafficgen.kernelrun.flush). Returns False when that was not so
    after ``timeout_s`` seconds (the caller goes on: what is still queued counts as lost).

    Why the sockets: ``Udp InDatagrams`` counts a datagram when its receiver reads it; in a CI
    run of 2026-11-30 (two test modules side by side) a receiver stopped 5 ms after the port's
    queue was empty had not read one of 747 packets, counted lost by D-ITG."""
    deadline = time.monotonic() + timeout_s
    while not (queues_empty(tb, ports, hosts) and receivers_idle(tb, ports)):
        if time.monotonic() >= deadline:
            return False
        time.sleep(DRAIN_POLL_S)
    time.sleep(DRAIN_MARGIN_S)
    while not receivers_idle(tb, ports):
        if time.monotonic() >= deadline:
            return False
        time.sleep(DRAIN_POLL_S)
    return True


def ping_matrix(tb: TestbedView, count: int = 1, timeout_s: float = 2.0) -> dict[tuple[str, str], float | None]:
    """Ping every host from every other host (all ordered pairs). Returns ``{(src, dst): rtt_ms
    or None when unreachable}`` (see :mod:`.mesh`: one raw ICMP socket per host namespace, paced
    rounds, retries; ``count`` echoes are asked of each pair that answers, the mean RTT kept)."""
    from .mesh import icmp_mesh

    hosts = [(h.name, tb.namespace(h.name), h.ip) for h in tb.topo.hosts]
    return icmp_mesh(hosts, count=count, timeout_s=timeout_s)

def iperf_tcp(tb: TestbedView, src: str, dst: str, seconds: float = 5.0, port: int = 5201) -> dict[str, float]:
    """TCP throughput ``src`` -> ``dst`` measured by iperf3 (server on ``dst``, one test).
    Returns ``{"bits_per_second": received rate (bits/s), "retransmits": n, "seconds": s}``.
    Raises QoslabError when iperf3 fails."""
    dst_ip = tb.topo.host(dst).ip
    server_ex, client_ex = tb.executor(dst), tb.executor(src)
    server = server_ex.start(["iperf3", "-s", "-1", "-B", dst_ip, "-p", str(port)])
    try:
        wait_listening(server_ex, dst_ip, port)
        res = client_ex.run(["iperf3", "-c", dst_ip, "-p", str(port), "-t", f"{seconds:g}", "-J"],
                            timeout=seconds + 20, check=False)
        try:
            data = json.loads(res.stdout)
        except ValueError:
            raise QoslabError(f"iperf3 {src} -> {dst}: unreadable output: {res.stderr.strip()[:200]}") from None
        if "error" in data:
            raise QoslabError(f"iperf3 {src} -> {dst}: {data['error']}")
        end = data["end"]
        return {"bits_per_second": end["sum_received"]["bits_per_second"],
                "retransmits": end["sum_sent"].get("retransmits", 0),
                "seconds": end["sum_received"]["seconds"]}
    finally:
        server_ex.stop(server)

def wait_listening(ex: Executor, ip: str, port: int, timeout_s: float = 5.0) -> None:
    """Wait until something listens on TCP ``ip:port`` on ``ex``'s node. Raises QoslabError
    after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        r = ex.run(["ss", "-Htln", f"src {ip}:{port}"], check=False, timeout=5)
        if r.stdout.strip():
            return
        time.sleep(0.05)
    raise QoslabError(f"on {ex.node}: nothing listens on {ip}:{port} after {timeout_s:g} s")


def listening(host: str, port: int) -> bool:
    """True when a TCP connection to ``host:port`` (from this machine) succeeds within 0.3 s."""
    try:
        with socket.create_connection((host, port), timeout=0.3):
            return True
    except OSError:
        return False


def _port_status(ns: str, dev: str) -> PortStatus:
    link = tc_json(["ip", "-n", ns, "-j", "-s", "link", "show", "dev", dev])[0]
    qdiscs = tc_json(["tc", "-n", ns, "-j", "-s", "qdisc", "show", "dev", dev])
    stats = link.get("stats64", link.get("stats", {}))
    root = next((q for q in qdiscs if q.get("root")), {})
    return PortStatus(
        namespace=ns,
        ifname=dev,
        alias=link.get("ifalias", ""),
        state=link.get("operstate", "?"),
        tx_packets=stats.get("tx", {}).get("packets", 0),
        tx_bytes=stats.get("tx", {}).get("bytes", 0),
        rx_packets=stats.get("rx", {}).get("packets", 0),
        rx_bytes=stats.get("rx", {}).get("bytes", 0),
        qdiscs=[f"{q['kind']} {q['handle']}" for q in qdiscs],
        qdisc_drops=root.get("drops", 0),
        qdisc_backlog_bytes=root.get("backlog", 0),
    )
