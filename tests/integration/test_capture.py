"""Capture on the testbed: live on the SPAN port during the workload, and per-packet class
agreement with tshark on testbed captures (with short frames) and on a crafted pcap."""

from __future__ import annotations

import csv
import struct
import time

import pytest

from qoslab.capture import JAR, LiveCapture, classify_file
from qoslab.errors import QoslabError
from qoslab.executors import NetnsExecutor
from qoslab.profiles import load_profile, render
from qoslab.switch.backends import virtual_endpoint
from qoslab.switch.push import push
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator as FloodRun
from qoslab.workloads.raytracer import WorkloadSettings, run_workload
from tshark_ref import retransmissions, tshark_classes

from .conftest import THESIS_FLOOD

pytestmark = pytest.mark.skipif(not JAR.exists(), reason="capture jar not built (make setup)")


def agree(pcap, tmp_path) -> tuple[dict[int, str], dict[int, str]]:
    """(ours, tshark's) per-frame classes, retransmissions left out (see retransmissions())."""
    mine, theirs = ours(pcap, tmp_path), tshark_classes(pcap)
    skip = retransmissions(pcap)
    assert len(skip) <= max(2, len(theirs) // 100), f"{len(skip)} retransmissions"
    return ({k: v for k, v in mine.items() if k not in skip}, {k: v for k, v in theirs.items() if k not in skip})


def ours(pcap, tmp_path) -> dict[int, str]:
    classify_file(pcap, tmp_path / "ours", rmi_mode="ethereal", per_packet=True)
    with open(tmp_path / "ours" / "packets.csv") as f:
        return {int(r["index"]): r["class"] for r in csv.DictReader(f)}


def test_live_capture_on_the_span_port_during_the_workload(testbed, tmp_path):
    dev = virtual_endpoint(testbed.topo)
    push(render(load_profile("thesis"), testbed.topo), dev, tmp_path, "thesis")  # SPAN Gi1/0/1 -> Gi1/0/21
    try:
        cap = LiveCapture(NetnsExecutor("span", testbed.span_ns), "Gi1-0-21", tmp_path / "live", "198.18.0.1",
                          "flow", write=tmp_path / "live.pcap")
        with cap:
            run = run_workload(WorkloadSettings(hosts=["jp-1", "jp-2", "jp-3", "jp-4"], size="A", rows_per_call=5),
                               testbed.executor, lambda h: testbed.topo.host(h).ip, tmp_path / "wl")
            assert run.valid
            time.sleep(0.3)
            s = cap.stop()
    finally:
        push([], dev, tmp_path, "fifo")
    c = s["classes"]
    dr = s["drops"]
    assert dr["engine"] == "dumpcap" and dr["lossless"] and dr["dropped_total"] == 0
    assert dr["captured"] == s["packets"] == dr["received"] and dr["interface_rx_packets"] >= s["packets"]
    assert c["control/ack"]["packets"] > 50
    # flow mode: the workload's calls on the export port, not a handful of registry packets
    assert c["rmi"]["packets"] > 100 and c["rmi"]["mean_frame_bytes"] > 300
    assert c["rmi"]["in"]["packets"] > 20 and c["rmi"]["out"]["packets"] > 20
    # and the raw capture it kept agrees with tshark packet by packet (ethereal mode)
    mine, theirs = agree(tmp_path / "live.pcap", tmp_path)
    assert mine == theirs


def _giop_requests(n: int) -> bytes:
    """``n`` GIOP 1.2 Request headers (request ids 0..n-1), as the hostile-input test's pcap."""
    return b"".join(b"GIOP\x01\x02\x00\x00" + struct.pack("!IIB3x", 8, rid, 3) for rid in range(n))


def test_live_capture_stops_at_max_open_calls_on_an_unanswered_giop_stream(testbed, tmp_path):
    """A real TCP stream of GIOP requests nobody answers crosses jp-1's port (SPAN source): with
    ``max_open_calls=50`` the live capture ends with the tool's error naming the limit and the
    option, not an out-of-memory JVM; nothing of it is left running."""
    dev = virtual_endpoint(testbed.topo)
    push(render(load_profile("thesis"), testbed.topo), dev, tmp_path, "thesis")  # SPAN Gi1/0/1 -> Gi1/0/21
    server = testbed.executor("jp-2").start(
        ["python3", "-c", "import socket\ns = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
         "s.bind(('198.18.0.2', 1300)); s.listen(1); s.settimeout(30); c, _ = s.accept()\n"
         "while c.recv(65536): pass"], stderr=tmp_path / "server.log")
    try:
        cap = LiveCapture(NetnsExecutor("span", testbed.span_ns), "Gi1-0-21", tmp_path / "live", "198.18.0.1",
                          "flow", max_open_calls=50)
        cap.start()
        payload = _giop_requests(200).hex()
        testbed.executor("jp-1").run(
            ["python3", "-c", "import socket, time\nfor i in range(50):\n    try:\n"
             "        c = socket.create_connection(('198.18.0.2', 1300), timeout=5); break\n"
             "    except OSError: time.sleep(0.1)\n"
             f"data = bytes.fromhex('{payload}')\n"
             "for k in range(0, len(data), 400): c.sendall(data[k:k + 400]); time.sleep(0.002)\n"
             "time.sleep(0.3); c.close()"], timeout=30)
        time.sleep(0.3)
        with pytest.raises(QoslabError) as e:
            cap.stop()
        msg = str(e.value)
        assert "more than 50 GIOP requests wait for their replies at once" in msg and "--max-open-calls" in msg, msg
        assert cap.ex.poll(cap.proc) is not None  # the tool (and its dumpcap, in its process group) ended
    finally:
        testbed.executor("jp-2").stop(server)
        push([], dev, tmp_path, "fifo")


def test_short_frames_and_flood_agree_with_tshark(testbed, calibrated, tmp_path):
    pcap = tmp_path / "jp1.pcap"
    ex = testbed.executor("jp-1")
    dc = ex.start(["dumpcap", "-q", "-i", "eth0", "-s", "80", "-c", "20000", "-w", str(pcap)],
                  stderr=tmp_path / "dumpcap.log")
    try:
        deadline = time.monotonic() + 10
        while "Capturing on" not in (tmp_path / "dumpcap.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        with FloodRun(load_flood(THESIS_FLOOD), testbed.topo, testbed.executor, tmp_path / "flood", duration_s=1) as fr:
            fr.start()
            run_workload(WorkloadSettings(hosts=["jp-1", "jp-2"], size="A", rows_per_call=10), testbed.executor,
                         lambda h: testbed.topo.host(h).ip, tmp_path / "wl")
            fr.wait()
        time.sleep(0.3)
    finally:
        ex.stop(dc)
    mine, theirs = agree(pcap, tmp_path)
    assert len(mine) > 1000
    assert {c for c in mine.values()} >= {"control/ack", "rmi", "short-frame"}
    assert mine == theirs


def _pcap(frames: list[tuple[bytes, int]]) -> bytes:
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for i, (f, cap) in enumerate(frames):
        out += struct.pack("<IIII", 1_700_000_000, i, cap, len(f)) + f[:cap]
    return out


def _eth_ip(proto: int, l4: bytes, src=b"\xc6\x12\x00\x01", dst=b"\xc6\x12\x00\x02", tos=0) -> bytes:
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(l4), 1, 0, 64, proto, 0, src, dst) + l4
    return b"\x02\x00\x00\x00\x00\x01\x02\x00\x00\x00\x00\x02\x08\x00" + ip


def _tcp(sp: int, dp: int, payload: bytes, flags=0x18) -> bytes:
    return struct.pack("!HHIIBBHHH", sp, dp, 1, 1, 0x50, flags, 65535, 0, 0) + payload


def test_crafted_pcap_agrees_with_tshark(tmp_path):
    frames = [
        (_eth_ip(6, _tcp(40000, 80, b"", 0x02)), 54),                       # SYN
        (_eth_ip(6, _tcp(40000, 22, b"x" * 48)), 102),                       # ssh
        (_eth_ip(6, _tcp(40000, 1099, b"JRMI\x00\x02K")), 61),               # rmi handshake
        (_eth_ip(6, _tcp(1099, 40000, b"N\x00\x09198.18.0.1\x00\x00\x9c\x40")), 71),
        (_eth_ip(6, _tcp(40001, 5001, b"d" * 500)), 554),                    # data
        (_eth_ip(6, _tcp(40001, 5001, b"d" * 500)), 96),                     # short frame
        (_eth_ip(17, struct.pack("!HHHH", 9, 10001, 1408, 0) + b"u" * 1400), 1442),  # udp
        (_eth_ip(17, struct.pack("!HHHH", 9, 10001, 1408, 0) + b"u" * 1400), 80),    # short udp
        (_eth_ip(1, b"\x08\x00" + b"\x00" * 6), 42),                         # icmp
        (b"\xff" * 6 + b"\x02" * 6 + b"\x08\x06" + b"\x00" * 28, 42),         # arp
    ]
    pcap = tmp_path / "crafted.pcap"
    pcap.write_bytes(_pcap(frames))
    mine, theirs = ours(pcap, tmp_path), tshark_classes(pcap)
    assert mine == theirs
    assert list(mine.values()) == ["control/ack", "ssh", "rmi", "rmi", "data", "short-frame", "udp",
                                   "short-frame", "other", "other"]
