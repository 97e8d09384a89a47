"""The scale model's knobs take effect on the testbed (issue 32): a topology's ``scale:`` block
puts ``rto_min`` and ``quickack`` on every host's route and turns queue times into the bfifo
limits of the host and switch ports. Measured on real namespaces: the kernel's RTO of a live TCP
connection (``ss -ti``), its delayed-ACK counter (``nstat``), and the qdiscs' limits."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from qoslab.testbed import Testbed
from qoslab.testbedplan import switch_namespace

#: The knobs under test: 20 ms minimum RTO (a tenth of Linux's 200 ms), no delayed ACKs, queues of
#: 5 ms at the link rate (10 Mbit/s in ecenet: 6250 B).
KNOBS = {"rto_min_ms": 20, "quickack": True, "switch_queue_ms": 5, "host_queue_ms": 5}

#: A TCP sink on PORT: accepts connections, waits LAZY seconds, then reads until EOF; it never
#: answers, so every ACK it sends is a bare ACK. While it does not read, no read triggers an ACK
#: (tcp_cleanup_rbuf ACKs a small pushed segment as soon as it is read), so an ACK comes either at
#: once (quick ACK) or from the delayed-ACK timer, which TcpExtDelayedACKs counts.
SINK = """
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(8); print("ready", flush=True)
while True:
    c, _ = s.accept()
    time.sleep(float(sys.argv[3]))
    while c.recv(65536): pass
    c.close()
"""

#: A client: connects to ADDR:PORT, writes N small messages GAP seconds apart, then prints the
#: kernel's view of the connection (`ss -tin`) while it is still open.
CLIENT = """
import socket, subprocess, sys, time
addr, port, n, gap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
c = socket.create_connection((addr, port))
for _ in range(n):
    c.sendall(b"x" * 100); time.sleep(gap)
print(subprocess.run(["ss", "-tin", "dst", addr], capture_output=True, text=True).stdout, flush=True)
c.close()
"""


def _in_ns(ns: str, *argv: str, timeout: float = 30) -> str:
    return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, check=True,
                          timeout=timeout).stdout


def _rto_ms(ss_text: str) -> float:
    m = re.search(r"\brto:([\d.]+)", ss_text)
    assert m, ss_text
    return float(m.group(1))


@pytest.fixture(scope="module")
def scaled(tmp_path_factory):
    from .conftest import ecenet_testbed

    yield from ecenet_testbed(tmp_path_factory.mktemp("scale"), "k", scale=KNOBS, buffers={})


def _flow(tb: Testbed, src: str, dst_addr: str, port: int, n: int, gap: float, sink_ns: str,
          lazy_s: float = 0.0) -> str:
    sink = subprocess.Popen(["ip", "netns", "exec", sink_ns, sys.executable, "-c", SINK, dst_addr, str(port),
                             str(lazy_s)], stdout=subprocess.PIPE, text=True)
    try:
        assert sink.stdout is not None and sink.stdout.readline().strip() == "ready"
        return _in_ns(tb.namespace(src), sys.executable, "-c", CLIENT, dst_addr, str(port), str(n), str(gap))
    finally:
        sink.terminate()
        sink.wait(timeout=5)


def test_host_routes_carry_rto_min_and_quickack(scaled):
    for h in ("jp-1", "jp-5"):
        route = _in_ns(scaled.namespace(h), "ip", "route", "show", "198.18.0.0/24")
        assert "rto_min lock 20ms" in route or "rto_min 20ms" in route, route
        assert "quickack 1" in route, route


def _route_with(tb: Testbed, host: str, *opts: str) -> None:
    """Replace ``host``'s connected route by one with only the route options ``opts``."""
    h = tb.topo.host(host)
    _in_ns(tb.namespace(host), "ip", "route", "replace", str(h.address.network), "dev", "eth0", "proto", "kernel",
           "scope", "link", "src", h.ip, *opts)


def _restore_routes(tb: Testbed, hosts: list[str]) -> None:
    from qoslab.testbedplan import route_lines

    for host in hosts:
        for line in route_lines(tb.topo, host):
            _in_ns(tb.namespace(host), "ip", *line.split())


def test_rto_of_a_live_flow_follows_rto_min(scaled):
    """The kernel's RTO of a jp-2 -> jp-1 connection is rto_min + about one RTT (20-40 ms); the
    same flow on a route without rto_min (the control) keeps Linux's >= 200 ms."""
    with_knob = _flow(scaled, "jp-2", "198.18.0.1", 15001, 20, 0.01, scaled.namespace("jp-1"))
    try:
        _route_with(scaled, "jp-2", "quickack", "1")
        without = _flow(scaled, "jp-2", "198.18.0.1", 15002, 20, 0.01, scaled.namespace("jp-1"))
    finally:
        _restore_routes(scaled, ["jp-2"])
    assert 20 <= _rto_ms(with_knob) < 40, with_knob
    assert _rto_ms(without) >= 200, without


def _counter(ns: str, name: str) -> int:
    out = _in_ns(ns, "nstat", "-az", name)
    m = re.search(rf"{name}\s+(\d+)", out)
    assert m, out
    return int(m.group(1))


def test_quickack_stops_delayed_acks_and_rto_min_needs_it(scaled):
    """30 isolated 100-byte writes 60 ms apart, jp-2 -> jp-1, to a sink that does not read yet.
    Only quickack on jp-1's route: jp-1 ACKs each at once (its delayed-ACK counter stays put).
    Default routes (the control): the delayed-ACK timer (40 ms) sends them. rto_min 20 ms on the
    sender's route without quickack at the receiver: the sender's timer fires before the 40 ms
    delayed ACK comes and it retransmits spuriously (measured: 1 of 30 segments; the duplicate
    puts the receiver back in quick-ACK mode for up to 16 segments, tcp_enter_quickack_mode), which
    is why the scale model sets the two together. (The control needs rto_min off on both sides: a
    gap longer than the RTO puts a receiver back in quick-ACK mode by itself, tcp_event_data_recv.)"""
    ns1, ns2 = scaled.namespace("jp-1"), scaled.namespace("jp-2")

    def run(port: int, jp1: list[str], jp2: list[str]) -> tuple[int, int]:
        _route_with(scaled, "jp-1", *jp1)
        _route_with(scaled, "jp-2", *jp2)
        acks, retrans = _counter(ns1, "TcpExtDelayedACKs"), _counter(ns2, "TcpRetransSegs")
        _flow(scaled, "jp-2", "198.18.0.1", port, 30, 0.06, ns1, lazy_s=2.5)
        return _counter(ns1, "TcpExtDelayedACKs") - acks, _counter(ns2, "TcpRetransSegs") - retrans

    try:
        quick = run(15003, ["quickack", "1"], [])
        default = run(15004, [], [])
        rto_only = run(15005, [], ["rto_min", "20ms"])
    finally:
        _restore_routes(scaled, ["jp-1", "jp-2"])
    assert quick[0] <= 2 and quick[1] <= 2, quick
    assert default[0] >= 10 and default[1] <= 2, default
    assert rto_only[1] >= 1 and rto_only[0] < default[0], rto_only


def test_queue_times_become_bfifo_limits(scaled):
    assert scaled.topo.buffers.switch_port_bytes == 6250 and scaled.topo.buffers.host_bytes == 6250
    host = _in_ns(scaled.namespace("jp-3"), "tc", "qdisc", "show", "dev", "eth0")
    assert re.search(r"bfifo 10: .*limit 6250b", host), host
    sw = _in_ns(switch_namespace(scaled.topo.name), "tc", "qdisc", "show", "dev", "Gi1-0-3")
    assert re.search(r"bfifo .*limit 6250b", sw), sw
