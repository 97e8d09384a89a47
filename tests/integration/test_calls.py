"""Per-call latency on the testbed (issue 24): a small quick-like campaign (two conditions, two
trials each, the first of each captured) whose captured uncongested trial's wire latencies agree
with the manager's per-call times. The median absolute difference of the matched render calls is
bounded by what lies between the manager's clock readings and the SPAN tap, measured here:

- the capture's timestamp resolution (from the pcapng's interface block, 1 us by default), x2
  (both ends of a call are timestamps);
- the manager's anchor uncertainty (its wall-clock anchor, ``anchor_uncertainty_ns``);
- the hosts' stack delay for a call's sizes, the RMI stack included: the median round trip of a
  call-shaped RMI call jp-1 -> jp-2 (:data:`PROBE_JAVA`: a fresh client JVM in jp-1, as the
  manager, calls a remote method in jp-2 with the captured calls' median request bytes that
  returns their median reply bytes as an int[][]; the method's own time is subtracted), over the
  same shaped links, switch and profile, right after the campaign. Between the manager's readings
  and the SPAN tap lie a subset of that path: the manager's RMI layer and jp-1's kernel and link
  out for the Call byte, the switch port's queue, jp-1's link and kernel in and the RMI layer for
  the last return segment. (Measured while building this: a plain TCP exchange of those sizes
  took 0.29 ms and one with Java serialisation but no RMI 0.73-0.85 ms, against median
  differences of 0.76-0.95 ms: most of the difference is the fresh manager JVM's RMI layer, not
  the kernel.)

Full-size pings are reported too (they fit the links' HTB burst: no serialisation delay, so
they measure the stacks only). The congested trial is reported, not bounded: the SPAN taps a
port's egress before its queue (docs/DESIGN.md, the virtual Catalyst), so under a flood to the
manager's port every return waits in the FIFO after the tap (up to its 105 ms at 10 Mbit/s).

The numbers are printed (``-s``) and kept in the test's folder (``calls-agreement.json``).
"""

from __future__ import annotations

import json
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from qoslab.campaign import Store
from qoslab.meters.calls import agreement, match_calls, read_jsonl
from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed import Testbed
from qoslab.topology import load_topology

from .conftest import free_port, unique_name

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")
ECENET = Path(__file__).parents[2] / "playbooks" / "topologies" / "ecenet.yaml"


def ts_resolution_s(pcap: Path) -> float:
    """Timestamp resolution of a pcap (magic) or pcapng (first interface block's if_tsresol)."""
    data = pcap.read_bytes()[:4096]
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xD4C3B2A1):
        return 1e-6
    if magic in (0xA1B23C4D, 0x4D3CB2A1):
        return 1e-9
    assert magic == 0x0A0D0D0A, f"{pcap}: not pcap/pcapng"
    shb_len = struct.unpack("<I", data[4:8])[0]
    off = shb_len
    btype, blen = struct.unpack("<II", data[off:off + 8])
    assert btype == 1, "the first block after the section header is an interface description"
    opt = off + 16
    while opt < off + blen - 4:
        code, length = struct.unpack("<HH", data[opt:opt + 4])
        if code == 0:
            break
        if code == 9:
            v = data[opt + 4]
            return 2.0 ** -(v & 0x7F) if v & 0x80 else 10.0 ** -v
        opt += 4 + (length + 3) // 4 * 4
    return 1e-6


def ping_rtt_ms(tb: Testbed, src: str, dst: str, size: int = 1472, count: int = 20) -> list[float]:
    r = tb.executor(src).run(["ping", "-n", "-c", str(count), "-i", "0.05", "-s", str(size), tb.topo.host(dst).ip],
                             timeout=30)
    return [float(line.split("time=")[1].split()[0]) for line in r.stdout.splitlines() if "time=" in line]


PROBE_JAVA = r"""
import java.io.*;
import java.nio.file.*;
import java.rmi.*;
import java.rmi.server.*;
import java.util.*;

/** A call-shaped RMI round trip, as the manager makes a render call: the client calls a remote
 *  method with an int[] of the request's size, which returns an int[][] of the reply's size and
 *  the method's own time. The server exports the object on a fixed port and writes its stub to a
 *  file; the client (a fresh JVM, like the manager) prints, per call, its time minus the method's
 *  (ms), as JSON. */
public class CallProbe {
    public interface Svc extends Remote { Reply call(int[] request) throws RemoteException; }

    public static final class Reply implements Serializable {
        public int[][] rows;
        public long methodNs;
    }

    public static final class Impl implements Svc {
        final int[][] rows;
        Impl(int rep) { rows = new int[5][Math.max(1, rep / 20)]; }
        public Reply call(int[] request) {
            long t0 = System.nanoTime();
            Reply r = new Reply();
            r.rows = rows;
            r.methodNs = System.nanoTime() - t0;
            return r;
        }
    }

    public static void main(String[] a) throws Exception {
        String mode = a[0];
        Path stub = Paths.get(a[1]);
        int port = Integer.parseInt(a[2]), req = Integer.parseInt(a[3]), rep = Integer.parseInt(a[4]);
        int n = Integer.parseInt(a[5]);
        if (mode.equals("server")) {
            Impl impl = new Impl(rep);
            Remote r = UnicastRemoteObject.exportObject(impl, port);
            try (ObjectOutputStream o = new ObjectOutputStream(Files.newOutputStream(stub))) { o.writeObject(r); }
            System.out.println("listening");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
        Svc svc;
        try (ObjectInputStream i = new ObjectInputStream(Files.newInputStream(stub))) { svc = (Svc) i.readObject(); }
        int[] request = new int[Math.max(1, req / 4 - 12)];
        List<String> rtt = new ArrayList<>();
        for (int k = 0; k <= n; k++) {
            long t0 = System.nanoTime();
            Reply r = svc.call(request);
            long t1 = System.nanoTime();
            if (k > 0) rtt.add(Double.toString((t1 - t0 - r.methodNs) / 1e6));
            Thread.sleep(20);
        }
        System.out.println("[" + String.join(",", rtt) + "]");
        System.exit(0);
    }
}
"""


def rmi_round_trip_ms(tb: Testbed, src: str, dst: str, req: int, rep: int, folder: Path, n: int = 40) -> list[float]:
    """Round trips (ms) of ``n`` call-shaped RMI calls (:data:`PROBE_JAVA`; a fresh client JVM, as
    the manager) of ``req`` / ``rep`` bytes from ``src`` to ``dst``: the client's time minus the
    remote method's own time per call."""
    ip, port = tb.topo.host(dst).ip, 40123
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "CallProbe.java").write_text(PROBE_JAVA)
    subprocess.run(["javac", "-d", str(folder), str(folder / "CallProbe.java")], check=True, timeout=120)
    log, stub = folder / "server.log", folder / "stub.ser"
    flags = ["-Djava.net.preferIPv4Stack=true", "-XX:+UseSerialGC", "-cp", str(folder)]
    args = [str(stub), str(port), str(req), str(rep), str(n)]
    server = tb.executor(dst).start(["java", *flags, f"-Djava.rmi.server.hostname={ip}", "CallProbe", "server", *args],
                                    stdout=log, stderr=log, lifetime_s=120)
    try:
        for _ in range(200):
            if log.exists() and "listening" in log.read_text():
                break
            time.sleep(0.05)
        r = tb.executor(src).run(["java", *flags, f"-Djava.rmi.server.hostname={tb.topo.host(src).ip}", "CallProbe",
                                  "client", *args], timeout=120)
        return list(json.loads(r.stdout.strip().splitlines()[-1]))
    finally:
        tb.executor(dst).stop(server)


def test_wire_call_latency_agrees_with_the_managers(tmp_path):
    topo = yaml.safe_load(ECENET.read_text())
    topo["name"] = unique_name("k")
    topo["switch"]["management"]["port"] = free_port()
    tfile = tmp_path / "topo.yaml"
    tfile.write_text(yaml.safe_dump(topo))
    flood = {"name": "calls", "rate": "1.1x", "pacing": "poll", "flows": [{"src": "jp-5", "dst": "jp-1"}]}
    (tmp_path / "flood.yaml").write_text(yaml.safe_dump(flood))
    pb = {"name": "calls", "topology": str(tfile), "device": "virtual", "flood": str(tmp_path / "flood.yaml"),
          "workload": {"hosts": ["jp-1", "jp-2", "jp-3"], "size": "A", "frames": 2, "rows_per_call": 5},
          "conditions": [{"name": "no congestion fifo", "congestion": False, "profile": "fifo"},
                         {"name": "congestion fifo", "congestion": True, "profile": "fifo"}],
          "baseline": "no congestion fifo", "trials": 2, "warmup": 0, "order": "blocked", "capture": "first",
          "settle": "fixed", "settle_s": 0.5, "trial_timeout_s": 120}
    (tmp_path / "pb.yaml").write_text(yaml.safe_dump(pb))
    tb = Testbed(load_topology(tfile))
    tb.up()
    folder = tmp_path / "campaign"
    try:
        rtt = ping_rtt_ms(tb, "jp-1", "jp-2")
        r = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "run", str(tmp_path / "pb.yaml"),
                            "--out", str(folder)], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        with Store(folder / "trials.sqlite", readonly=True) as st:
            rows = st.trials(counted=True)
        base_row = next(row for row in rows if row.capture_summary and row.condition == "no congestion fifo")
        wire0, _ = read_jsonl(folder / "trials" / f"{base_row.idx:04d}" / "capture" / "calls.jsonl")
        sizes = [(w["request_bytes"], w["reply_bytes"]) for w in wire0 if w["complete"] and w["index"] > 1]
        req = int(statistics.median(s[0] for s in sizes))
        rep = int(statistics.median(s[1] for s in sizes))
        probe = rmi_round_trip_ms(tb, "jp-1", "jp-2", req, rep, tmp_path / "probe")
    finally:
        tb.down()
    assert len(rows) == 4 and all(row.get("calls_n") == 60 for row in rows)  # 2 frames x 150 rows / 5
    captured = {row.condition: row for row in rows if row.capture_summary}
    assert set(captured) == {"no congestion fifo", "congestion fifo"}
    out: dict = {"ping_rtt_ms": {"median": statistics.median(rtt), "max": max(rtt), "n": len(rtt)},
                 "call_probe_ms": {"request_bytes": req, "reply_bytes": rep, "median": statistics.median(probe),
                                  "max": max(probe), "n": len(probe)}}
    for cond, row in captured.items():
        tdir = folder / "trials" / f"{row.idx:04d}"
        manager, _ = read_jsonl(tdir / "workload" / "workload-calls.jsonl")
        wire, _ = read_jsonl(tdir / "capture" / "calls.jsonl")
        pairs = [(m, w) for m, w in match_calls(manager, wire) if m["method"] == "render"]
        # the manager's calls to jp-2 and jp-3 cross jp-1's port (the SPAN source); jp-1's own do not
        on_wire = [m for m in manager if m["method"] == "render" and m["address"] != tb.topo.host("jp-1").ip]
        a = agreement(pairs)
        assert a is not None
        out[cond] = {**a, "render_calls_on_wire": len(on_wire), "wire_calls": len(wire),
                     "resolution_s": ts_resolution_s(tdir / "capture" / "capture.pcap"),
                     "anchor_uncertainty_ms": max(m["anchor_uncertainty_ns"] for m in manager) / 1e6,
                     "columns": {k: row.get(k) for k in ("calls_n", "calls_p50_ms", "calls_p99_ms", "calls_max_ms",
                                                          "calls_rto", "calls_retransmitted", "calls_wire_n",
                                                          "calls_agree_median_ms", "calls_agree_max_ms")}}
        assert row.get("calls_agree_median_ms") == pytest.approx(a["median_ms"], abs=1e-3)
        if cond == "no congestion fifo":  # every render call on the wire is matched
            assert a["n"] == len(on_wire) > 0
            assert a["signed_median_ms"] >= 0  # the manager brackets the wire call
    base = out["no congestion fifo"]
    bound = 2 * base["resolution_s"] * 1e3 + base["anchor_uncertainty_ms"] + out["call_probe_ms"]["median"]
    out["bound_ms"] = bound
    (tmp_path / "calls-agreement.json").write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))
    assert base["median_ms"] <= bound, out
    stats = json.loads((folder / "stats.json").read_text())
    if "calls" not in stats and (stats.get("fidelity") or {}).get("excluded_applied"):
        # the calls block leaves out fidelity-invalid trials (issue 35), as every block does: on a
        # machine someone else loads, every trial may be judged invalid for outside CPU load
        pytest.skip(f"every trial was judged fidelity-invalid on this loaded machine: {stats['fidelity']}")
    calls = stats["calls"]
    assert set(calls["conditions"]) == {"no congestion fifo", "congestion fifo"}
    for c in calls["conditions"].values():
        assert c["trials"] == 2 and c["calls"] == 120 and c["p50"] <= c["p99"] <= c["max"]
        assert c["ci95"]["p99"][0] <= c["ci95"]["p99"][1]
    assert (folder / "calls-stats.json").exists()
    assert "fig-call-latency-cdf.png" in json.loads((folder / "figures.json").read_text())
