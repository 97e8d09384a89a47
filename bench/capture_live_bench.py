"""Live capture benchmark (issue 15, "lossless, accounted capture"): both SPAN ports of the
ecenet testbed (Gi1/0/21 mirrors Gi1/0/1, Gi1/0/22 mirrors Gi1/0/2, both directions, as the
thesis profile's monitor sessions) offered the full link rate in both directions: D-ITG UDP
jp-5 <-> jp-1 and jp-6 <-> jp-2 at 1.0x the link rate (``-poll`` pacing: four busy senders on two
cores, the campaign's worst CPU case). Per capture configuration and frame size it counts

- offered: packets the mirror put on each SPAN port (switch-side veth tx_packets),
- delivered: packets that reached the capture interface (span-side rx_packets, as the tool reads it),
- captured: packets in the capture's summary, and its own drop counts (kernel, interface, own),
- missing: delivered - captured (what a capture lost without counting it, if anything).

    python bench/run_benchmarks.py --only capture_live
    python bench/capture_live_bench.py [--seconds 10] [--configs dumpcap-64,pcap4j-2]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from qoslab.capture import LiveCapture  # noqa: E402
from qoslab.executor import NetnsExecutor  # noqa: E402
from qoslab.switch import push, testbed_device  # noqa: E402
from qoslab.testbed import Testbed  # noqa: E402
from qoslab.topology import linux_ifname, load_variant  # noqa: E402
from qoslab.trafficgen import Flow, FloodDefinition, FloodRun  # noqa: E402

SPAN = {"Gi1/0/21": "Gi1/0/1", "Gi1/0/22": "Gi1/0/2"}
# name -> (engine, buffer MiB, extra live options)
CONFIGS = {
    "pcap4j-2": ("pcap4j", 2, ()),                                  # the old live path: libpcap's default buffer
    "pcap4j-64": ("pcap4j", 64, ()),
    "pcap4j-64-writer": ("pcap4j", 64, ("--writer-queue", "65536")),
    "pcap4j-64-immediate": ("pcap4j", 64, ("--immediate",)),
    "dumpcap-2": ("dumpcap", 2, ()),
    "dumpcap-64": ("dumpcap", 64, ()),                              # the default
}
PAYLOADS = (1400, 200)  # bytes of UDP payload: 1442-byte frames (the thesis flood) and 242-byte frames


def _counter(ns: str, dev: str, name: str) -> int:
    import subprocess

    out = subprocess.run(["ip", "netns", "exec", ns, "cat", f"/sys/class/net/{dev}/statistics/{name}"],
                         capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def run_once(tb: Testbed, cfg: str, payload: int, seconds: float, d: Path) -> dict:
    """One capture configuration on both SPAN ports during a full-rate bidirectional flood."""
    engine, mb, extra = CONFIGS[cfg]
    caps, offered0 = {}, {}
    for span in SPAN:
        dev = linux_ifname(span)
        offered0[span] = _counter(tb.switch_ns, dev, "tx_packets"), _counter(tb.switch_ns, dev, "tx_dropped")
        caps[span] = LiveCapture(NetnsExecutor("span", tb.span_ns), dev, d / cfg / str(payload) / dev, None, "flow",
                                 engine=engine, buffer_mb=mb, extra=extra)
    for c in caps.values():
        c.start()
    defn = FloodDefinition(name="span-full-rate", payload_bytes=payload, rate="1.0x", pacing="poll",
                           flows=[Flow(src="jp-5", dst="jp-1"), Flow(src="jp-1", dst="jp-5"),
                                  Flow(src="jp-6", dst="jp-2"), Flow(src="jp-2", dst="jp-6")])
    try:
        with FloodRun(defn, tb.topo, tb.executor, d / cfg / str(payload) / "flood", duration_s=seconds,
                      keep_logs=False) as fr:
            fr.start()
            fr.wait()
        time.sleep(1.0)  # let the mirror and the rings drain before the captures stop
    finally:
        summaries = {span: c.stop() for span, c in caps.items()}
    sent = sum(f.packets_sent for f in fr.result.flows) if fr.result else None
    ports = {}
    for span, s in summaries.items():
        dev = linux_ifname(span)
        dr = s["drops"]
        offered = _counter(tb.switch_ns, dev, "tx_packets") - offered0[span][0]
        ports[span] = {
            "source_port": SPAN[span], "offered": offered,
            "veth_tx_dropped": _counter(tb.switch_ns, dev, "tx_dropped") - offered0[span][1],
            "delivered": dr["interface_rx_packets"], "interface_rx_dropped": dr["interface_rx_dropped"],
            "received": dr["received"], "captured": dr["captured"], "dropped_kernel": dr["dropped_kernel"],
            "dropped_interface": dr["dropped_interface"], "dropped_own": dr["dropped_own"],
            "missing": dr["interface_rx_packets"] - dr["captured"], "lossless": dr["lossless"],
            "captured_pps": dr["captured"] / seconds,
        }
    return {"config": cfg, "engine": engine, "buffer_mb": mb, "options": list(extra), "payload_bytes": payload,
            "seconds": seconds, "generators_sent": sent, "ports": ports,
            "all_lossless": all(p["lossless"] and p["missing"] == 0 and p["veth_tx_dropped"] == 0
                                for p in ports.values())}


def bench_capture_live(repeat: int, seconds: float = 10.0, configs: list[str] | None = None) -> dict:
    """Every configuration x frame size once (repeat only the default, dumpcap-64, ``repeat`` times
    at most 3). Returns the runs and, per configuration, whether every run was lossless."""
    topo = load_variant("bclive", 8127)
    tb = Testbed(topo)
    tb.down()
    tb.up()
    runs = []
    try:
        with tempfile.TemporaryDirectory() as d:
            d = Path(d)
            lines = []
            for i, (span, src) in enumerate(SPAN.items(), start=1):
                lines += [f"monitor session {i} source interface {src}", f"monitor session {i} destination interface {span}"]
            push(lines, testbed_device(topo), d / "push", "span-only")
            for cfg in configs or list(CONFIGS):
                for payload in PAYLOADS:
                    for _ in range(max(1, min(repeat, 3)) if cfg == "dumpcap-64" else 1):
                        r = run_once(tb, cfg, payload, seconds, d)
                        runs.append(r)
                        print(json.dumps({k: r[k] for k in ("config", "payload_bytes", "all_lossless")}
                                         | {s: {k: p[k] for k in ("offered", "delivered", "captured", "dropped_kernel",
                                                                  "dropped_own", "missing")}
                                            for s, p in r["ports"].items()}), flush=True)
    finally:
        tb.down()
    verdict = {}
    for r in runs:
        verdict.setdefault(r["config"], True)
        verdict[r["config"]] &= r["all_lossless"]
    return {"runs": runs, "lossless_by_config": verdict, "default": "dumpcap-64",
            "target": "0 drops at full link rate in both directions on both SPAN ports"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    a = ap.parse_args()
    res = bench_capture_live(a.repeat, a.seconds, a.configs.split(","))
    print(json.dumps(res["lossless_by_config"], indent=1))
    out = ROOT / "bench" / "results" / "capture_live-adhoc.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
