"""Capture benchmark:

- single file: offline classification of a >= 2 M-packet pcap made on the testbed (workload +
  thesis flood captured on jp-1 with snaplen 128, records replicated with advancing timestamps),
  by this module's fast reader, pcap4j raw, pcap4j parsed, and `tshark -T fields`, same file, same
  run. Target (issue 16): >= 10 M packets/s with all classes.
- mixed encapsulations: every crafted capture of the tshark agreement tests (VLAN, QinQ, IPv6 +
  extension headers, fragments, SLL/SLL2, raw IP, PPP, HDLC, loopback, GRE, ERSPAN, IP-in-IP) in one
  pcapng, repeated to 1 M packets: fast reader vs tshark, and per-packet agreement on one copy.
- batch: 500 small files in one `classify` command vs 500 separate commands (target: < 5 %)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qoslab.capture import capture_command
from qoslab.testbed import Testbed
from qoslab.topology import load_variant
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator as FloodRun
from qoslab.workloads.raytracer import WorkloadSettings, run_workload

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
TARGET_PACKETS = 2_000_000
TARGET_PPS = 10_000_000
CALLS_TARGET_PPS = 5_000_000  # issue 24: with JRMP call matching (always on in `bench`)
MIXED_PACKETS = 1_000_000
BATCH_FILES = 500


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


def _fast(path: Path, repeat: int) -> dict:
    """Best of up to 3 JVMs, each classifying the file 3 times: ``packets_per_s`` is the first pass
    (cold: mapping the file and JIT compilation included, what one `classify` gets), ``warm_packets_per_s``
    the best later pass (steady state, what a batch or a long file gets)."""
    best = None
    for _ in range(max(1, min(repeat, 3))):
        r = subprocess.run(capture_command("bench", str(path), "--reader", "fast", "--passes", "3"),
                           capture_output=True, text=True, check=True)
        res = json.loads(r.stdout.strip().splitlines()[-1])
        if best is None or res["packets_per_s"] > best["packets_per_s"]:
            best = res
    return best


def _tshark(path: Path, fields: list[str], extra: list[str] = ()) -> dict:
    t0 = time.monotonic()
    r = subprocess.run(["tshark", "-r", str(path), *extra, "-T", "fields", *[a for f in fields for a in ("-e", f)]],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True)
    secs = time.monotonic() - t0
    n = r.stdout.count(b"\n")
    return {"packets": n, "seconds": secs, "packets_per_s": n / secs}


def bench_mixed(d: Path, repeat: int) -> dict:
    """Fast reader vs tshark on every crafted encapsulation, and per-packet agreement on one copy."""
    from crafted_captures import mixed
    from qoslab.capture import classify_file
    from tshark_ref import FIELDS, NO_DEFRAG, tshark_classes

    once, big = d / "mixed-once.pcapng", d / "mixed.pcapng"
    n_once = mixed(once)
    classify_file(once, d / "mixed-once", rmi_mode="ethereal", per_packet=True)
    with open(d / "mixed-once" / "packets.csv") as f:
        ours = {int(r["index"]): r["class"] for r in csv.DictReader(f)}
    ref = tshark_classes(once)
    n = mixed(big, MIXED_PACKETS)
    fast = _fast(big, repeat)
    mixed(d / "mixed-tshark.pcapng", MIXED_PACKETS // 10)  # tshark runs at ~5 k packets/s on this mix
    ts = _tshark(d / "mixed-tshark.pcapng", FIELDS, NO_DEFRAG)
    return {"packets": n, "file_bytes": big.stat().st_size, "fast": fast, "tshark_fields": ts,
            "fast_vs_tshark": fast["packets_per_s"] / ts["packets_per_s"],
            "agreement_on_one_copy": {"frames": n_once, "differ": sum(ours[k] != v for k, v in ref.items())}}


def bench_batch(d: Path) -> dict:
    """BATCH_FILES small files (the crafted captures, copied round-robin) in one command vs one each."""
    from crafted_captures import captures

    caps = list(captures(d / "crafted").values())
    folder = d / "batch"
    folder.mkdir()
    files = []
    for i in range(BATCH_FILES):
        files.append(folder / f"{i:04d}-{caps[i % len(caps)].name}")
        shutil.copy(caps[i % len(caps)], files[-1])
    t0 = time.monotonic()
    subprocess.run(capture_command("classify", str(folder), "--out", str(d / "one")), capture_output=True, check=True)
    one = time.monotonic() - t0
    t0 = time.monotonic()
    for i, f in enumerate(files):
        subprocess.run(capture_command("classify", str(f), "--out", str(d / "each" / str(i))), capture_output=True,
                       check=True)
    each = time.monotonic() - t0
    return {"files": BATCH_FILES, "packets_per_file": "3-43", "one_command_s": one, "separate_commands_s": each,
            "share": one / each, "target_share": 0.05, "met": one / each < 0.05,
            "per_file_ms": {"one_command": one / BATCH_FILES * 1e3, "separate": each / BATCH_FILES * 1e3}}


def bench_capture(repeat: int) -> dict:
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        seed = _seed_capture(d)
        if os.environ.get("QOSLAB_BENCH_KEEP_SEED"):  # keep the seed capture (profiling the same file later)
            shutil.copy(seed, os.environ["QOSLAB_BENCH_KEEP_SEED"])
        big = d / "big.pcap"
        n = _replicate(seed, big, TARGET_PACKETS)
        out = {"packets": n, "file_bytes": big.stat().st_size, "readers": {}}
        out["readers"]["fast"] = _fast(big, repeat)
        for reader in ("pcap4j-raw", "pcap4j-parsed"):
            r = subprocess.run(capture_command("bench", str(big), "--reader", reader), capture_output=True,
                               text=True, check=True)
            out["readers"][reader] = json.loads(r.stdout.strip().splitlines()[-1])
        out["readers"]["tshark-fields"] = _tshark(big, ["frame.number", "tcp.len", "tcp.port", "udp.port",
                                                         "frame.cap_len"])
        fast = out["readers"]["fast"]["packets_per_s"]
        out["fast_vs"] = {k: fast / v["packets_per_s"] for k, v in out["readers"].items() if k != "fast"}
        out["target_packets_per_s"] = TARGET_PPS
        out["met"] = fast >= TARGET_PPS
        out["warm_met"] = out["readers"]["fast"]["warm_packets_per_s"] >= TARGET_PPS
        out["calls_target_packets_per_s"] = CALLS_TARGET_PPS
        out["calls_met"] = fast >= CALLS_TARGET_PPS
        out["calls_warm_met"] = out["readers"]["fast"]["warm_packets_per_s"] >= CALLS_TARGET_PPS
        out["classes"] = out["readers"]["fast"]["classes"]
        big.unlink()
        out["mixed_encapsulations"] = bench_mixed(d, repeat)
        out["batch"] = bench_batch(d)
        return out
