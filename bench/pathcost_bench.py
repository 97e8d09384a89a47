"""Per-packet cost of the switch's data path by component (issue 52).

The testbed is ``playbooks/topologies/ecenet-cpu.yaml`` (hosts on CPU 0, the switch, the flood's
senders and this bench on CPU 1) at each rate, the virtual switch at factory defaults (its tc plan
and nftables ruleset applied), and the flood alone: ``traffic-gen/campaign-flood.yaml``, 4 x 1.1x
the link, kernel-paced. While the flood runs, ``perf record -C <switch CPU> -g`` samples the
switch's core for ``seconds``; the forwarded packets are the switch ports' ``tx_packets`` over the
same window (``ip -s link`` in the switch namespace), the core's busy share is /proc/stat's.

Each sample's kernel or user-space symbol (self time, ``perf report --no-children --sort sym``)
goes to one component by name (:data:`COMPONENTS`, first match wins); the cost of a component per
forwarded packet is ``busy share x its share of the busy samples / forwarded packets per second``
in microseconds of the switch's core. Inclusive shares of a few entry points (``--children``:
callees counted too, so they overlap) are printed beside it.

Run (needs root, the exclusive quiet lock for timing, the testbed lock)::

    flock -x /tmp/qoslab-quiet.lock flock /tmp/qoslab-testbed.lock \\
        .venv/bin/python bench/pathcost_bench.py --rates 50 100 --seconds 5 [--datapath bridge|ingress]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qoslab.testbed import Testbed
from qoslab.testbed.plan import switch_namespace
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator
from qoslab.vswitch.counters import read_links

ROOT = Path(__file__).resolve().parents[1]
TOPOLOGY = ROOT / "playbooks" / "topologies" / "ecenet-cpu.yaml"
RESULTS = ROOT / "bench" / "results"

#: component -> symbol regex (self time), in match order; idle symbols are not busy time.
COMPONENTS: list[tuple[str, str]] = [
    ("idle", r"idle|safe_halt|mwait|cpu_startup_entry|^do_idle"),
    ("bridge (br_*, fdb)", r"^_*br_|^nbp_|fdb|^_*bridge"),
    ("nftables (nft_*, nf_*)", r"^_*nft_|^_*nf_|^nf_hook|^nft|^jhash|^__nft"),
    ("HTB + bfifo + qdisc layer", r"htb|fifo|qdisc|^__dev_queue_xmit|^dev_queue_xmit|^sch_|psched|"
                                  r"^dev_hard_start_xmit|^__qdisc|^tcf_|^tc_|^validate_xmit|netdev_core_pick"),
    ("veth xmit", r"^veth_|^__veth"),
    ("RPS, backlog, softirq", r"rps|backlog|^net_rx_action|^__napi|^napi|^netif_rx|softirq|"
                              r"^__netif_receive|^netif_receive|^generic_smp|^smp_call|^__smp|ipi|"
                              r"^_*raise_softirq|^flush_smp"),
    ("IP + UDP receive", r"^ip_rcv|^ip_local|^ip_sublist|^ip_list|^_*udp|^ip_route|^fib|^ip_protocol|"
                         r"^raw_local|^sock_def|^skb_copy_datagram|^__skb_recv|^ip_rcv_finish|^l3mdev"),
    ("UDP/IP send (senders' kernel)", r"^ip_make_skb|^ip_append|^ip_finish|^ip_output|^ip_send|^__ip_|"
                                      r"^ip_generic|^neigh|^__neigh|^sys_sendto|^__sys_sendto|sendmsg|"
                                      r"^__x64_sys|^ip_setup_cork|^__ip_make_skb|^eth_header|^skb_set_owner"),
    ("skb alloc/free, copies", r"kmem_cache|kfree|alloc_skb|skb_release|consume_skb|^skb_|^__skb|page|"
                               r"memcpy|memset|copy_user|^_copy|^__copy|slab|^__kmalloc|^kmalloc|csum"),
    ("syscall entry/exit, scheduler", r"entry_|syscall|schedule|^__schedule|switch_to|^finish_task|"
                                      r"^pick_|^update_|^enqueue_task|^dequeue_task|^try_to_wake|hrtimer|"
                                      r"^ktime|tick|^irq|^_raw_spin|^rcu|^native_|^clock|^read_tsc|futex"),
    ("user space (ITGSend, python, ...)", r"^\[\.\]"),
]

INCLUSIVE = ["br_handle_frame", "br_forward", "nft_do_chain", "nf_hook_slow", "htb_enqueue", "htb_dequeue",
             "veth_xmit", "__netif_receive_skb_core", "enqueue_to_backlog", "process_backlog", "udp_sendmsg",
             "ip_rcv", "udp_rcv", "net_rx_action", "nft_fwd_netdev_eval", "nf_hook_netdev_ingress",
             "nf_ingress"]


def _busy(cpu: int) -> list[int]:
    for line in Path("/proc/stat").read_text().splitlines():
        f = line.split()
        if f[0] == f"cpu{cpu}":
            return [int(x) for x in f[1:9]]
    raise RuntimeError(f"cpu{cpu} not in /proc/stat")


def _tx_packets(ns: str) -> int:
    return sum(int(s.get("tx", {}).get("packets", 0)) for dev, s in read_links(ns).items() if dev.startswith("Gi"))


def _report(data: Path, children: bool) -> list[tuple[float, str]]:
    """(percent, symbol) rows of ``perf report`` (self or inclusive), symbol prefixed ``[.] `` for
    user space."""
    argv = ["perf", "report", "-i", str(data), "--stdio", "-g", "none", "--sort", "sym", "--percent-limit", "0"]
    argv.append("--children" if children else "--no-children")
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(?:([\d.]+)%\s+)?\[(.)\]\s+(\S+)", line)
        if m:
            pct = float(m.group(1))
            rows.append((pct, ("[.] " if m.group(3) == "." else "") + m.group(4)))
    return rows


def classify(rows: list[tuple[float, str]]) -> dict[str, float]:
    """Self-time rows -> percent of all samples per component (pure)."""
    out: dict[str, float] = {}
    for pct, sym in rows:
        if sym.startswith("[.] "):
            name = "user space (ITGSend, python, ...)"
        else:
            name = next((c for c, rx in COMPONENTS if re.search(rx, sym)), "other kernel")
        out[name] = out.get(name, 0.0) + pct
    return out


def measure(mbit: int, seconds: float, datapath: str | None) -> dict:
    base = load_topology(TOPOLOGY)
    sw = {**base.switch.model_dump(mode="json"), "management": {"host": "127.0.0.1", "port": 8026}}
    if datapath is not None:
        sw["datapath"] = datapath
    topo = load_topology(TOPOLOGY, name="bpc", link={**base.link.model_dump(), "rate": mbit * 1_000_000}, switch=sw)
    cpu = min(topo.cpu.switch_set)
    tb = Testbed(topo)
    tb.down()
    tb.up()
    ns = switch_namespace(topo.name)
    defn = load_flood(ROOT / "traffic-gen" / "campaign-flood.yaml")
    try:
        with tempfile.TemporaryDirectory() as d:
            fr = DitgGenerator(defn, topo, tb.executor, Path(d), duration_s=seconds + 6)
            fr.start()
            try:
                time.sleep(2.0)
                data = Path(d) / "perf.data"
                c0, p0, t0 = _busy(cpu), _tx_packets(ns), time.monotonic()
                subprocess.run(["perf", "record", "-q", "-C", str(cpu), "-g", "-o", str(data), "--", "sleep",
                                str(seconds)], check=True, capture_output=True)
                c1, p1, t1 = _busy(cpu), _tx_packets(ns), time.monotonic()
            finally:
                fr.stop()
            self_rows, incl_rows = _report(data, False), _report(data, True)
    finally:
        tb.down()
    dc = [b - a for a, b in zip(c0, c1, strict=True)]
    busy = 1 - (dc[3] + dc[4]) / max(sum(dc), 1)
    pps = (p1 - p0) / (t1 - t0)
    comp = classify(self_rows)
    busy_pct = 100.0 - comp.pop("idle", 0.0)
    us_per_pkt = busy * 1e6 / pps if pps else float("nan")
    per_comp = {k: round(us_per_pkt * v / busy_pct, 2) for k, v in sorted(comp.items(), key=lambda kv: -kv[1])}
    incl = {s: p for p, s in incl_rows if s in INCLUSIVE}
    return {"rate_mbit": mbit, "datapath": datapath or "bridge", "window_s": round(t1 - t0, 2),
            "forwarded_pps": round(pps), "switch_core_busy": round(busy, 3), "us_per_packet": round(us_per_pkt, 2),
            "us_per_packet_by_component": per_comp,
            "inclusive_percent_of_samples": {k: incl[k] for k in INCLUSIVE if k in incl},
            "top_self_symbols": [(round(p, 2), s) for p, s in self_rows[:25]]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", type=int, nargs="+", default=[50, 100])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--datapath", default=None)
    ap.add_argument("--out", default=None, help="JSON file (default bench/results/pathcost-<datapath>.json)")
    a = ap.parse_args()
    runs = []
    for mbit in a.rates:
        r = measure(mbit, a.seconds, a.datapath)
        runs.append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "top_self_symbols"}, indent=1), flush=True)
    out = Path(a.out) if a.out else RESULTS / f"pathcost-{a.datapath or 'bridge'}.json"
    out.write_text(json.dumps({"command": " ".join(sys.argv), "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
