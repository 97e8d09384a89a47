"""Per-packet cost of the switch's data path by component (issue 52).

The testbed is ``playbooks/topologies/ecenet-cpu.yaml`` (hosts on CPU 0, the switch, the flood's
senders and this bench on CPU 1) at each rate, the virtual switch at factory defaults (its tc plan
and nftables ruleset applied), and the flood alone: ``traffic-gen/campaign-flood.yaml``, 4 x 1.1x
the link, kernel-paced. While the flood runs, ``perf record -C <switch CPU> -g`` samples the
switch's core for ``seconds``; the forwarded packets are the switch ports' ``tx_packets`` over the
same window (``ip -s link`` in the switch namespace), the core's busy share is /proc/stat's.

Each sample goes to one component by its call chain (``perf script``, :func:`classify_stack`:
the innermost frame that names one); the cost of a component per
forwarded packet is ``busy share x its share of the busy samples / forwarded packets per second``
in microseconds of the switch's core. Inclusive shares of a few entry points (``--children``:
callees counted too, so they overlap) are printed beside it.

``--receive-on hosts`` sets the topology's ``cpu.receive_on: hosts`` (issue 52: RPS of the hosts'
interfaces to the hosts' core, so the receivers' IP + UDP receive leaves the switch's core). The
work it moves is then on the hosts' core, which this bench does not sample with perf: each run also
records the hosts' core's busy and softirq shares (/proc/stat) and the packets each core's backlog
processed per forwarded packet (/proc/net/softnet_stat), for both cores, so where the receive went
is in the same JSON.

``--rx-usecs N`` (with ``--receive-on hosts``) sets the topology's ``cpu.rx_usecs``: each host
interface receives in a NAPI thread on the hosts' core polled every N us while packets arrive,
instead of RPS's inter-processor interrupt per packet (``qoslab.scale.cpu``). (The commit that
added this bench's ``--host-napi``, 26d2307, measured plain NAPI threads woken per packet:
``bench/results/pathcost-napi-napi*-100Mbit.json``.)

Run (needs root, the exclusive quiet lock for timing, the testbed lock)::

    flock -x /tmp/qoslab-quiet.lock flock /tmp/qoslab-testbed.lock \\
        .venv/bin/python bench/pathcost_bench.py --rates 50 100 --seconds 5 [--datapath bridge|ingress] \\
        [--receive-on switch|hosts] [--rx-usecs N]
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
from qoslab.testbedplan import switch_namespace
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator
from qoslab.vswitch.counters import read_links

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from machinefacts import machine_facts  # noqa: E402

TOPOLOGY = ROOT / "playbooks" / "topologies" / "ecenet-cpu.yaml"
RESULTS = ROOT / "bench" / "results"

#: component -> frame regex, tried innermost frame first (first match wins): the time a sample
#: took is the innermost frame's that names a component, so time spent with interrupts off (charged
#: to ``_raw_spin_unlock_irqrestore`` and friends by cpu-clock sampling in a VM) goes to the function
#: that held them off. ``qdisc`` and ``veth`` are split by the outer frames: the host's side (in
#: the sender's ``udp_sendmsg``) or the switch port's (below the bridge or ``fwd to``).
COMPONENTS: list[tuple[str, str]] = [
    ("bridge", r"^_*br_|^nbp_|fdb"),
    ("nftables", r"^_*nft_|^_*nf_hook|^nf_ingress|^nf_fwd|^_*nf_|^jhash"),
    ("qdisc", r"htb|fifo|qdisc|^sch_direct_xmit|^_*dev_queue_xmit|^dev_hard_start_xmit|psched|"
              r"^netdev_core_pick|^validate_xmit|^tcf_|^tc_run|^sch_handle|^net_tx_action"),
    ("veth", r"^veth_|^__veth|^_*dev_forward_skb|^eth_type_trans"),
    ("RPS, backlog, softirq", r"enqueue_to_backlog|rps|process_backlog|^net_rx_action|handle_softirqs|"
                              r"^_*do_softirq|^netif_rx|^_*netif_receive_skb|napi|smp_call|raise_softirq|"
                              r"^_*local_bh_enable|ipi"),
    ("IP + UDP receive", r"^ip_rcv|^ip_local_deliver|^ip_sublist|^ip_list_rcv|^_*udp4?_lib_rcv|^udp_rcv|"
                         r"^udp_queue_rcv|^_*udp_enqueue|^udp_recvmsg|^udp_unicast|^_*udp4_lib_lookup|"
                         r"^skb_copy_datagram|^_*skb_recv|^sock_def_readable|^ip_route_input|^fib_|^ip_protocol|"
                         r"^_*sys_recv|^sock_recvmsg|^inet_recvmsg|^ip_rcv_core"),
    ("UDP/IP send (senders' kernel)", r"^udp_sendmsg|^ip_make_skb|^_*ip_append|^ip_finish_output|^ip_output|"
                                      r"^ip_send_skb|^_*ip_local_out|^neigh_|^ip_route_output|^_*sys_sendto|"
                                      r"^_*sock_sendmsg|^ip_generic_getfrag|^_copy_from_iter|^sock_alloc_send"),
    ("select/poll (D-ITG's loops)", r"select|poll"),
    ("scheduler, wakeups, timers", r"schedule|finish_task_switch|try_to_wake_up|ttwu|enqueue_task|dequeue_task|"
                                   r"pick_next|update_curr|hrtimer|tick|futex|wake_up|^_*switch_to"),
    ("syscall entry/exit", r"do_syscall_64|entry_SYSCALL|syscall_exit|irqentry|exit_to_user_mode"),
    ("idle", r"do_idle|cpuidle|default_idle|safe_halt|acpi_idle|poll_idle|cpu_startup_entry"),
]
_SIDE_PORT = re.compile(r"^_*br_|^nft_fwd|^nf_fwd")
_SIDE_HOST = re.compile(r"^udp_sendmsg|^_*sys_sendto|^ip_finish_output")


def classify_stack(frames: list[tuple[str, str]]) -> str:
    """Component of one sample, ``frames`` innermost first as (symbol, dso) (pure)."""
    if frames and "kernel" not in frames[0][1]:
        return "user space (ITGSend, ITGRecv, python)"
    syms = [s for s, _ in frames]
    for i, sym in enumerate(syms):
        for name, rx in COMPONENTS:
            if re.search(rx, sym):
                if name in ("qdisc", "veth"):
                    outer = syms[i + 1:]
                    side = ("switch port" if any(_SIDE_PORT.search(o) for o in outer)
                            else "host" if any(_SIDE_HOST.search(o) for o in outer) else "timer/softirq run")
                    return f"{name} ({side})"
                return name
    return "other kernel"


def _stacks(data: Path) -> list[list[tuple[str, str]]]:
    """Every sample's call chain of ``perf script`` (innermost first, (symbol, dso))."""
    out = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip,sym,dso"], capture_output=True, text=True,
                         check=True).stdout
    stacks: list[list[tuple[str, str]]] = []
    cur: list[tuple[str, str]] = []
    for line in out.splitlines():
        m = re.match(r"\s*[0-9a-f]+ (\S+?)(?:\+0x[0-9a-f]+)? \((.*)\)$", line)
        if m:
            cur.append((m.group(1), m.group(2)))
        elif not line.strip() and cur:
            stacks.append(cur)
            cur = []
    if cur:
        stacks.append(cur)
    return stacks


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


def _softnet() -> list[int]:
    """Packets each CPU's backlog processed so far (/proc/net/softnet_stat, column 1, one line per CPU)."""
    return [int(line.split()[0], 16) for line in Path("/proc/net/softnet_stat").read_text().splitlines()]


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


def measure(mbit: int, seconds: float, datapath: str | None, receive_on: str = "switch",
            rx_usecs: int | None = None) -> dict:
    base = load_topology(TOPOLOGY)
    sw = {**base.switch.model_dump(mode="json"), "management": {"host": "127.0.0.1", "port": 8026}}
    if datapath is not None:
        sw["datapath"] = datapath
    assert base.cpu is not None
    topo = load_topology(TOPOLOGY, name="bpc", link={**base.link.model_dump(), "rate": mbit * 1_000_000}, switch=sw,
                         cpu={**base.cpu.model_dump(), "receive_on": receive_on, "rx_usecs": rx_usecs})
    assert topo.cpu is not None
    cpu, hcpu = min(topo.cpu.switch_set), min(topo.cpu.host_set)
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
                h0, s0 = _busy(hcpu), _softnet()
                c0, p0, t0 = _busy(cpu), _tx_packets(ns), time.monotonic()
                subprocess.run(["perf", "record", "-q", "-C", str(cpu), "-g", "-o", str(data), "--", "sleep",
                                str(seconds)], check=True, capture_output=True)
                c1, p1, t1 = _busy(cpu), _tx_packets(ns), time.monotonic()
                h1, s1 = _busy(hcpu), _softnet()
            finally:
                fr.stop()
            stacks, self_rows, incl_rows = _stacks(data), _report(data, False), _report(data, True)
    finally:
        tb.down()
    dc = [b - a for a, b in zip(c0, c1, strict=True)]
    busy = 1 - (dc[3] + dc[4]) / max(sum(dc), 1)
    pps = (p1 - p0) / (t1 - t0)
    dh = [b - a for a, b in zip(h0, h1, strict=True)]
    hosts_core = {"busy": round(1 - (dh[3] + dh[4]) / max(sum(dh), 1), 3),
                  "softirq": round(dh[6] / max(sum(dh), 1), 3)}
    fwd = max(p1 - p0, 1)
    backlog = {f"cpu{c}": round((s1[c] - s0[c]) / fwd, 2) for c in (hcpu, cpu)}
    comp: dict[str, int] = {}
    for st in stacks:
        k = classify_stack(st)
        comp[k] = comp.get(k, 0) + 1
    idle = comp.pop("idle", 0)
    busy_pct = float(sum(comp.values()))
    us_per_pkt = busy * 1e6 / pps if pps else float("nan")
    per_comp = {k: round(us_per_pkt * v / busy_pct, 2) for k, v in sorted(comp.items(), key=lambda kv: -kv[1])}
    incl = {s: p for p, s in incl_rows if s in INCLUSIVE}
    return {"rate_mbit": mbit, "datapath": datapath or "bridge", "receive_on": receive_on,
            **({"rx_usecs": rx_usecs} if rx_usecs is not None else {}),
            "window_s": round(t1 - t0, 2),
            "forwarded_pps": round(pps), "switch_core_busy": round(busy, 3), "us_per_packet": round(us_per_pkt, 2),
            "hosts_core": hosts_core, "backlog_packets_per_forwarded": backlog,
            "load_avg": Path("/proc/loadavg").read_text().split()[:3],
            "us_per_packet_by_component": per_comp,
            "samples": {"busy": int(busy_pct), "idle": idle},
            "inclusive_percent_of_samples": {k: incl[k] for k in INCLUSIVE if k in incl},
            "top_self_symbols": [(round(p, 2), s) for p, s in self_rows[:25]]}


def _label(r: dict) -> str:
    if r.get("rx_usecs"):
        return f" (rx_usecs {r['rx_usecs']})"
    return " (NAPI threads)" if r.get("host_napi_threads") else ""


def table(files: list[Path]) -> str:
    """A markdown table (components x runs, us of the switch core per forwarded packet) of result
    files of this bench."""
    runs = [r for f in files for r in json.loads(f.read_text())["runs"]]
    comps = sorted({c for r in runs for c in r["us_per_packet_by_component"]},
                   key=lambda c: -max(r["us_per_packet_by_component"].get(c, 0) for r in runs))
    head = [f"{r['datapath']}{', rx on ' + r['receive_on'] if r.get('receive_on', 'switch') != 'switch' else ''}"
            f"{_label(r)} "
            f"{r['rate_mbit']} Mbit/s" for r in runs]
    out = ["| us of the switch core per forwarded packet | " + " | ".join(head) + " |",
           "|---|" + "---|" * len(runs)]
    for c in comps:
        out.append(f"| {c} | " + " | ".join(f"{r['us_per_packet_by_component'].get(c, 0):.2f}" for r in runs) + " |")
    out.append("| **total** | " + " | ".join(f"**{r['us_per_packet']:.2f}**" for r in runs) + " |")
    out.append("| forwarded packets/s | " + " | ".join(str(r["forwarded_pps"]) for r in runs) + " |")
    out.append("| switch core busy | " + " | ".join(str(r["switch_core_busy"]) for r in runs) + " |")
    if any("hosts_core" in r for r in runs):
        out.append("| hosts' core busy (softirq) | " + " | ".join(
            f"{r['hosts_core']['busy']} ({r['hosts_core']['softirq']})" if "hosts_core" in r else "-" for r in runs)
            + " |")
        out.append("| backlog packets per forwarded packet, hosts' core / switch core | " + " | ".join(
            " / ".join(str(v) for v in r["backlog_packets_per_forwarded"].values())
            if "backlog_packets_per_forwarded" in r else "-" for r in runs) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", type=int, nargs="+", default=[50, 100])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--datapath", default=None)
    ap.add_argument("--receive-on", default="switch", choices=["switch", "hosts"],
                    help="the topology's cpu.receive_on (issue 52): where the hosts' interfaces' receive runs")
    ap.add_argument("--rx-usecs", type=int, default=None, metavar="N",
                    help="with --receive-on hosts: the topology's cpu.rx_usecs (the hosts' receive in NAPI threads "
                         "polled every N us)")
    ap.add_argument("--out", default=None, help="JSON file (default bench/results/pathcost-<datapath>.json)")
    ap.add_argument("--table", nargs="+", type=Path, help="print the markdown table of these result files, run nothing")
    a = ap.parse_args()
    if a.table:
        print(table(a.table))
        return
    if a.rx_usecs is not None and a.receive_on != "hosts":
        ap.error("--rx-usecs moderates the hosts' receive, which only --receive-on hosts puts on the hosts' core")
    runs = []
    for mbit in a.rates:
        r = measure(mbit, a.seconds, a.datapath, a.receive_on, a.rx_usecs)
        runs.append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "top_self_symbols"}, indent=1), flush=True)
    out = Path(a.out) if a.out else RESULTS / f"pathcost-{a.datapath or 'bridge'}-rx{a.receive_on}.json"
    out.write_text(json.dumps({"command": " ".join(sys.argv), "machine": machine_facts(), "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
