"""What the virtual Catalyst's nftables path costs: CPU and throughput of the switch with the
thesis profile's ruleset (DSCP counting in and out, per-port chains, rewrite to the QoS label,
skb priority) against the same tc with the table removed, under 4 UDP flows at the link rate
(iperf3, jp-5..jp-8 -> jp-1..jp-4, 50 Mbit/s each on the wire). Windows alternate (on, off, on,
...) while the flows run; each window records the machine's non-idle CPU (from /proc/stat, all
cores, in cores) and the four destination ports' egress rate (link bytes, bits/s)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from qoslab.ios import load_config
from qoslab.profiles import load_profile, render
from qoslab.switch.backends import virtual_endpoint
from qoslab.switch.push import push
from qoslab.testbed import Testbed
from qoslab.topology import load_variant
from qoslab.trafficgen import FloodDefinition, open_flood
from qoslab.vswitch import VirtualSwitch
from qoslab.vswitch.nftcompile import TABLE

WINDOW_S = 4.0
PORTS = ["Gi1-0-1", "Gi1-0-2", "Gi1-0-3", "Gi1-0-4"]


def _busy_jiffies() -> tuple[int, int]:
    """(non-idle, total) jiffies of all cores from /proc/stat."""
    v = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def _tx_bytes(ns: str) -> int:
    out = json.loads(subprocess.run(["ip", "-n", ns, "-s", "-j", "link", "show"], capture_output=True, text=True,
                                    check=True).stdout)
    return sum(l["stats64"]["tx"]["bytes"] for l in out if l["ifname"] in PORTS)


def _window(ns: str) -> dict:
    b0, (c0, t0), w0 = _tx_bytes(ns), _busy_jiffies(), time.monotonic()
    time.sleep(WINDOW_S)
    b1, (c1, t1), w1 = _tx_bytes(ns), _busy_jiffies(), time.monotonic()
    cores = (c1 - c0) / (t1 - t0) * (os.cpu_count() or 1)
    return {"cpu_cores": round(cores, 3), "egress_bps_per_port": round((b1 - b0) * 8 / (w1 - w0) / len(PORTS))}


def bench_nft(repeat: int) -> dict:
    topo = load_variant("bnft", 8123)
    tb = Testbed(topo)
    tb.down()
    tb.up()
    on: list[dict] = []
    off: list[dict] = []
    try:
        with tempfile.TemporaryDirectory() as d:
            push(render(load_profile("thesis"), topo), virtual_endpoint(topo), Path(d), "thesis")
            vc = VirtualSwitch(topo, apply=False)
            load_config("\n".join(render(load_profile("thesis"), topo)), vc.running)
            ruleset = vc.nft_plan().text
            ns = tb.switch_ns
            defn = FloodDefinition(name="nft-bench", rate="1.0x", duration_s=WINDOW_S * 2 * repeat + 10,
                                   generator="iperf3", flows=[{"src": f"jp-{i + 4}", "dst": f"jp-{i}"} for i in range(1, 5)])
            gen = open_flood(defn, topo, tb.executor, Path(d) / "flood", generator="iperf3")
            gen.start()
            time.sleep(2.0)
            for _ in range(repeat):
                on.append(_window(ns))
                subprocess.run(["ip", "netns", "exec", ns, "nft", "delete", "table", "bridge", TABLE], check=True)
                off.append(_window(ns))
                subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=ruleset, text=True, check=True)
            gen.stop()
    finally:
        tb.down()

    def med(xs: list[dict], k: str) -> float:
        return statistics.median(x[k] for x in xs)

    return {
        "window_s": WINDOW_S, "flows": "4 x UDP 1400 B at 1.0x the 50 Mbit/s link (iperf3)",
        "nft_on": {"samples": on, "cpu_cores_median": med(on, "cpu_cores"),
                   "egress_bps_per_port_median": med(on, "egress_bps_per_port")},
        "nft_off": {"samples": off, "cpu_cores_median": med(off, "cpu_cores"),
                    "egress_bps_per_port_median": med(off, "egress_bps_per_port")},
        "cpu_cores_added": round(med(on, "cpu_cores") - med(off, "cpu_cores"), 3),
    }
