"""Live capture benchmark (issue 15, "lossless, accounted capture"): both SPAN ports of the
ecenet testbed (Gi1/0/21 mirrors Gi1/0/1, Gi1/0/22 mirrors Gi1/0/2, both directions, as the
thesis profile's monitor sessions) offered the full link rate in both directions: iperf3 UDP
``--bidir`` jp-1 <-> jp-5 and jp-2 <-> jp-6, each direction paced at 102 % of the link rate on the
wire (D-ITG with ``-poll`` reached only 44-48 % of that here: four busy senders on two cores).
Per capture configuration and frame size it counts

- offered: packets the mirror put on each SPAN port (switch-side veth tx_packets),
- delivered: packets that reached the capture interface (span-side rx_packets, as the tool reads it),
- captured: packets in the capture's summary, and its own drop counts (kernel, interface, own),
- missing: delivered - captured (what a capture lost without counting it, if anything).

    python bench/run_benchmarks.py --only capture_live
    python bench/capture_live_bench.py [--seconds 10] [--configs dumpcap-64,pcap4j-2] [--rate 50Mbit]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from qoslab.capture import LiveCapture  # noqa: E402
from qoslab.portnames import linux_ifname  # noqa: E402
from qoslab.switch.backends import virtual_endpoint  # noqa: E402
from qoslab.switch.push import push  # noqa: E402
from qoslab.testbed import Testbed  # noqa: E402
from qoslab.topology import load_variant  # noqa: E402

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


PAIRS = (("jp-1", "jp-5"), ("jp-2", "jp-6"))  # (client on the mirrored port, server)


def _bidir_udp(tb: Testbed, payload: int, seconds: float, d: Path) -> dict:
    """iperf3 UDP --bidir on both pairs at once; returns packets sent per direction (iperf3's own count)."""
    d.mkdir(parents=True, exist_ok=True)
    rate = tb.topo.link.rate * payload / (payload + 42) * 1.02  # payload bits/s for 102 % of the link on the wire
    servers, clients = [], []
    try:
        for _, srv in PAIRS:
            servers.append(tb.executor(srv).start(["iperf3", "-s", "-1", "-p", "5299"], stdout=d / f"{srv}.log",
                                                  stderr=d / f"{srv}.log"))
        time.sleep(0.5)
        for cl, srv in PAIRS:
            clients.append((cl, srv, tb.executor(cl).start(
                ["iperf3", "-c", tb.topo.host(srv).ip, "-p", "5299", "-u", "-b", str(int(rate)), "-l", str(payload),
                 "--bidir", "-t", str(seconds), "-J"], stdout=d / f"{cl}.json", stderr=d / f"{cl}.err")))
        for cl, _, p in clients:
            tb.executor(cl).wait(p, seconds + 30)
    finally:
        for cl, _, p in clients:
            tb.executor(cl).stop(p)
        for p, (_, srv) in zip(servers, PAIRS[:len(servers)], strict=True):
            tb.executor(srv).stop(p)
    sent = {}
    for cl, srv, _ in clients:
        end = json.loads((d / f"{cl}.json").read_text())["end"]
        sent[f"{cl}<->{srv}"] = {k: {f: v.get(f) for f in ("packets", "bits_per_second", "lost_packets")}
                                 for k, v in end.items() if k.startswith("sum") and isinstance(v, dict)}
    return sent


def run_once(tb: Testbed, cfg: str, payload: int, seconds: float, d: Path, rep: int = 0) -> dict:
    """One capture configuration on both SPAN ports during a full-rate bidirectional flood. Each
    repetition ``rep`` has its own folder: the executor appends to a log it is given, so a repeat in
    the same folder would leave two iperf3 reports in one file."""
    engine, mb, extra = CONFIGS[cfg]
    run_dir = d / cfg / str(payload) / f"run{rep}"
    caps, offered0 = {}, {}
    for span in SPAN:
        dev = linux_ifname(span)
        offered0[span] = _counter(tb.switch_ns, dev, "tx_packets"), _counter(tb.switch_ns, dev, "tx_dropped")
        caps[span] = LiveCapture(tb.span_executor(), dev, run_dir / dev, None, "flow",
                                 engine=engine, buffer_mb=mb, extra=extra)
    for c in caps.values():
        c.start()
    try:
        sent = _bidir_udp(tb, payload, seconds, run_dir)
        time.sleep(1.0)  # let the mirror and the rings drain before the captures stop
    except BaseException:
        for c in caps.values():
            c.__exit__(None, None, None)
        raise
    summaries = {span: c.stop() for span, c in caps.items()}
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


def bench_capture_live(repeat: int, seconds: float = 10.0, configs: list[str] | None = None,
                       rate: str | None = None) -> dict:
    """Every configuration x frame size once (repeat only the default, dumpcap-64, ``repeat`` times
    at most 3). Returns the runs and, per configuration, whether every run was lossless. ``rate``
    (e.g. "50Mbit") replaces the topology's link rate (default: the topology's, 10 Mbit/s)."""
    topo = load_variant("bclive", 8127)
    if rate:
        topo = load_variant("bclive", 8127, link={**topo.link.model_dump(mode="json"), "rate": rate})
    tb = Testbed(topo)
    tb.down()
    tb.up()
    runs = []
    try:
        with tempfile.TemporaryDirectory(dir=os.environ.get("QOSLAB_BENCH_TMP")) as d:
            d = Path(d)
            lines = []
            for i, (span, src) in enumerate(SPAN.items(), start=1):
                lines += [f"monitor session {i} source interface {src}", f"monitor session {i} destination interface {span}"]
            push(lines, virtual_endpoint(topo), d / "push", "span-only")
            for cfg in configs or list(CONFIGS):
                for payload in PAYLOADS:
                    for rep in range(max(1, min(repeat, 3)) if cfg == "dumpcap-64" else 1):
                        r = run_once(tb, cfg, payload, seconds, d, rep)
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
    return {"runs": runs, "lossless_by_config": verdict, "default": "dumpcap-64", "link_rate_bps": topo.link.rate,
            "target": "0 drops at full link rate in both directions on both SPAN ports"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--rate", help="link rate instead of the topology's (e.g. 50Mbit, the rate of the README's "
                                   "first table)")
    a = ap.parse_args()
    res = bench_capture_live(a.repeat, a.seconds, a.configs.split(","), a.rate)
    print(json.dumps(res["lossless_by_config"], indent=1))
    out = ROOT / "bench" / "results" / "capture_live-adhoc.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
