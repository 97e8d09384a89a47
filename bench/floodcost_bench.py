"""Flood cost benchmark (issue 33): CPU microseconds per forwarded flood packet, by component, for
D-ITG's ``poll`` pacing (the busy-wait) and ``kernel`` pacing (unpaced ITGSend, the host link sets
the rate), measured back to back on one testbed per link rate (10, 50, 100 Mbit/s).

The flood is ``traffic-gen/campaign-flood.yaml`` (4 flows jp-5..8 -> jp-1..4, 1400 B UDP, 1.1x the
link) with only ``pacing`` changed. Components per forwarded packet (packets ITGRecv received):

- ``sender``: utime + stime of the four ITGSend processes (/proc/<pid>/stat);
- ``receiver``: the same for the four ITGRecv;
- ``softirq``: the machine's softirq jiffies (/proc/stat) over the flood: the packets' kernel path
  (veth, bridge, HTB/bfifo, nftables) that runs outside the senders' system calls. Machine-wide:
  other users' traffic would count too, hence ``load`` beside every figure;
- ``machine``: every non-idle jiffy of the machine over the flood (includes other users' work).

The floor is the kernel-paced sender's system time + receiver + softirq: the packets' own path with
no user-space pacing at all (an unpaced sender still pays one sendto() per packet).
Constancy: per-second received rate (its coefficient of variation), D-ITG's mean jitter, and the
inter-arrival spread of flow 0 at its receiver (p1/p50/p99 in microseconds, ITGDec -l).

**Loaded** (``loaded`` in the JSON, at 100 Mbit/s): the cost that counts in a trial is the CPU the
workload loses, and tick accounting cannot give it (a softirq tick is charged to whichever task
it interrupts: the flood's, counted twice, or the workload's, not counted as emulation at all).
So four busy loops stand in for the four worker JVMs (they saturate both cores, as the RayTracer
does) and their **user time** is the work they got done: ``lost_cores`` = cores - their user time
per second, against a control run with no flood (``control``). Variants: ``kernel-pinned`` as the
campaign flood runs, and with ``/sys/module/sch_htb/parameters/htb_hysteresis`` set to 1 (HTB lets
a class run into debt of one burst before its timer, fewer hrtimer wake-ups; machine-wide, restored
after the run). ``meter_share`` is what the fidelity monitor's ``emulation_share`` would read:
(flood processes + softirq) / cores.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qoslab.testbed import Testbed
from qoslab.testbed.procs import descendants, tree_cpu_ticks
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator

ROOT = Path(__file__).resolve().parents[1]
HZ = os.sysconf("SC_CLK_TCK")
RATES_MBIT = (10, 50, 100)
#: (name, pacing, pin_cpu): today's busy-wait, kernel pacing, kernel pacing on one CPU
MODES = (("poll", "poll", None), ("kernel", "kernel", None), ("kernel-pinned", "kernel", "last"))


def _stat() -> list[int]:
    """The first line of /proc/stat: user nice system idle iowait irq softirq steal ... (jiffies)."""
    return [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]


def _proc_ticks(pid: int) -> tuple[int, int]:
    """(utime, stime) jiffies of ``pid`` and its living descendants (ITGSend runs under
    ``timeout``), 0 when gone."""
    u = s = 0
    for p in descendants(pid):
        try:
            f = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            u, s = u + int(f[11]), s + int(f[12])
        except (OSError, IndexError, ValueError):
            continue
    return u, s


def _interarrivals_us(recv_log: Path) -> dict:
    """Inter-arrival times at the receiver of one flow (ITGDec -l: per-packet rx times)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "pkts.txt"
        subprocess.run(["ITGDec", str(recv_log), "-l", str(out)], capture_output=True, timeout=120, check=False)
        rx = []
        for line in out.read_text(errors="replace").splitlines() if out.exists() else []:
            # Flow>0001 Seq> 1 Src> a/p Dest> b/p txTime>2:4:24.594751 rxTime>2:4:24.594802 Size> 1400
            i = line.find("rxTime>")
            if i < 0:
                continue
            try:
                h, m, sec = line[i + 7:].split()[0].split(":")
                rx.append(int(h) * 3600 + int(m) * 60 + float(sec))
            except ValueError:
                continue
    gaps = sorted((b - a) * 1e6 for a, b in zip(rx, rx[1:], strict=False) if b >= a)
    if len(gaps) < 100:
        return {"packets": len(rx)}
    q = statistics.quantiles(gaps, n=100)
    return {"packets": len(rx), "p1_us": round(q[0], 1), "p50_us": round(q[49], 1), "p99_us": round(q[98], 1),
            "cv": round(statistics.pstdev(gaps) / statistics.fmean(gaps), 3)}


def _one(defn, topo, tb: Testbed, out: Path, seconds: float) -> dict:
    with DitgGenerator(defn, topo, tb.executor, out, duration_s=seconds) as fr:
        fr.start()
        senders, receivers = list(fr.senders.values()), list(fr.receivers.values())
        s0 = {p.pid: tree_cpu_ticks(p.pid) for p in senders}
        split0 = {p.pid: _proc_ticks(p.pid) for p in senders}
        r0 = {p.pid: tree_cpu_ticks(p.pid) for p in receivers}
        st0, w0, load = _stat(), time.monotonic(), os.getloadavg()
        s1, split1, r1 = dict(s0), dict(split0), dict(r0)
        while any(tb.executor(p.node).poll(p) is None for p in senders):
            for p in senders:
                s1[p.pid] = max(s1[p.pid], tree_cpu_ticks(p.pid))
                t = _proc_ticks(p.pid)
                if sum(t) >= sum(split1[p.pid]):
                    split1[p.pid] = t
            for p in receivers:
                r1[p.pid] = max(r1[p.pid], tree_cpu_ticks(p.pid))
            time.sleep(0.1)
        st1, wall = _stat(), time.monotonic() - w0
        res = fr.stop()
    pkts = sum(f.packets_received for f in res.flows)
    per_s = pkts / wall if wall else 0.0

    def us_per_pkt(jiffies: float) -> float:
        return round(1e6 * jiffies / HZ / pkts, 2) if pkts else float("nan")

    send = sum(s1[k] - s0[k] for k in s0)
    send_sys = sum(split1[k][1] - split0[k][1] for k in split0)
    recv = sum(r1[k] - r0[k] for k in r0)
    d = [b - a for a, b in zip(st0, st1, strict=False)]
    softirq, busy = d[6], sum(d) - d[3] - d[4]
    rates = [s["bitrate_kbps"] for f in res.flows for s in f.series[1:-1]]
    cores = os.cpu_count() or 1
    return {
        "pacing": sorted({f.pacing for f in res.flows}), "itg_rate_C": res.flows[0].itg_rate,
        "asked_pps_per_flow": round(res.flows[0].requested_pps, 1), "target_pps_per_flow": round(res.flows[0].target_pps or 0, 1),
        "sent_pps_per_flow": [round(f.sent_pps) for f in res.flows],
        "received_share_of_link": [round(f.received_wire_bps / topo.link.rate, 4) for f in res.flows],
        "loss_pct": [round(f.loss_pct, 2) for f in res.flows], "host_drops": [f.host_drops for f in res.flows],
        "jitter_us": [round(f.jitter_s * 1e6, 1) for f in res.flows],
        "per_second_rate_cv": round(statistics.pstdev(rates) / statistics.fmean(rates), 4) if len(rates) > 1 else None,
        "interarrival_flow0": _interarrivals_us(out / "ditg-jp-1" / "recv-0.log"),
        "forwarded_pps": round(per_s), "wall_s": round(wall, 2),
        "us_per_packet": {"sender": us_per_pkt(send), "sender_sys": us_per_pkt(send_sys), "receiver": us_per_pkt(recv),
                          "softirq": us_per_pkt(softirq), "machine": us_per_pkt(busy),
                          "floor": us_per_pkt(send_sys + recv + softirq)},
        "cores_used": {"sender": round(send / HZ / wall, 3), "receiver": round(recv / HZ / wall, 3),
                       "softirq": round(softirq / HZ / wall, 3), "machine": round(busy / HZ / wall, 3), "of": cores},
        "load_avg_1_5_15": [round(x, 2) for x in load], "errors": res.errors,
    }


HYSTERESIS = Path("/sys/module/sch_htb/parameters/htb_hysteresis")
BUSY_LOOPS = 4


def _loaded(defn, topo, tb: Testbed, seconds: float, hysteresis: bool | None) -> dict:
    """One run with BUSY_LOOPS busy loops beside the flood (``defn``; None: no flood, the control);
    ``hysteresis`` sets sch_htb's module parameter for the run and restores it."""
    before = HYSTERESIS.read_text().strip() if HYSTERESIS.exists() else None
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(BUSY_LOOPS)]
    try:
        if hysteresis is not None and before is not None:
            HYSTERESIS.write_text("1" if hysteresis else "0")
        time.sleep(0.3)
        c0, t0 = [_proc_ticks(p.pid) for p in loops], time.monotonic()
        r = None
        if defn is None:
            time.sleep(seconds)
        else:
            with tempfile.TemporaryDirectory() as d:
                r = _one(defn, topo, tb, Path(d), seconds)
        wall, c1 = time.monotonic() - t0, [_proc_ticks(p.pid) for p in loops]
    finally:
        for p in loops:
            p.kill()
            p.wait()
        if before is not None:
            HYSTERESIS.write_text(before)
    cores = os.cpu_count() or 1
    user = sum(b[0] - a[0] for a, b in zip(c0, c1, strict=True)) / HZ / wall
    sys_ = sum(b[1] - a[1] for a, b in zip(c0, c1, strict=True)) / HZ / wall
    out = {"loops_user_cores": round(user, 3), "loops_sys_cores": round(sys_, 3), "lost_cores": round(cores - user, 3)}
    if r is not None:
        c = r["cores_used"]
        out |= {"meter_share": round((c["sender"] + c["receiver"] + c["softirq"]) / cores, 3), "cores_used": c,
                "us_per_packet": r["us_per_packet"], "forwarded_pps": r["forwarded_pps"],
                "received_share_of_link": r["received_share_of_link"],
                "lost_us_per_packet": round(1e6 * (cores - user) / r["forwarded_pps"], 2) if r["forwarded_pps"] else None}
    return out


def _testbed(mbit: int) -> tuple:
    """(topology, Testbed) of the default topology at ``mbit`` Mbit/s, brought up fresh."""
    base = load_topology(None)
    topo = load_topology(None, name="bfcost", link={**base.link.model_dump(), "rate": mbit * 1_000_000})
    tb = Testbed(topo)
    tb.down()
    tb.up()
    return topo, tb


def bench_loaded(repeat: int, mbit: int = 100, seconds: float = 6.0) -> dict:
    """At ``mbit``: control, kernel-pinned and kernel-pinned + HTB hysteresis, each beside
    BUSY_LOOPS busy loops, interleaved ``max(1, min(repeat, 3))`` times; {variant: [runs]}."""
    defn = load_flood(ROOT / "traffic-gen" / "campaign-flood.yaml").model_copy(
        update={"pacing": "kernel", "pin_cpu": "last"})
    topo, tb = _testbed(mbit)
    runs: dict = {"control": [], "kernel-pinned": [], "kernel-pinned-hysteresis": []}
    try:
        for i in range(max(1, min(repeat, 3))):
            for name, d, hyst in (("control", None, None), ("kernel-pinned", defn, False),
                                  ("kernel-pinned-hysteresis", defn, True)):
                runs[name].append(_loaded(d, topo, tb, seconds, hyst))
                print(f"  loaded {mbit} Mbit/s {name} #{i}: lost {runs[name][-1]['lost_cores']} cores, "
                      f"meter {runs[name][-1].get('meter_share')}", flush=True)
    finally:
        tb.down()
    return runs


def bench_floodcost(repeat: int, seconds: float = 6.0) -> dict:
    """Per link rate, each mode of MODES ``min(repeat, 2)`` times interleaved (poll, kernel,
    kernel-pinned, poll, ...) on one testbed; returns {rate: {mode: [runs]}}."""
    defn = load_flood(ROOT / "traffic-gen" / "campaign-flood.yaml")
    out: dict = {}
    for mbit in RATES_MBIT:
        topo, tb = _testbed(mbit)
        runs: dict = {m[0]: [] for m in MODES}
        try:
            for i in range(max(1, min(repeat, 2))):
                for mode, pacing, pin in MODES:
                    with tempfile.TemporaryDirectory() as d:
                        runs[mode].append(_one(defn.model_copy(update={"pacing": pacing, "pin_cpu": pin}), topo, tb,
                                               Path(d), seconds))
                    print(f"  {mbit} Mbit/s {mode} #{i}: {runs[mode][-1]['us_per_packet']}", flush=True)
        finally:
            tb.down()
        out[f"{mbit}Mbit"] = runs
    out["loaded"] = {"100Mbit": bench_loaded(repeat)}
    return out
