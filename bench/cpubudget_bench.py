"""CPU budget bench (issue 42): does the fidelity check ``host_cpu_loss`` (:mod:`qoslab.meters.cpuloss`)
read the CPU the hosts really lost, at 10, 50, 100 and 200 Mbit/s?

The testbed is ``playbooks/topologies/ecenet-cpu.yaml`` at each rate: hosts on CPU 0 with 0.25
cores each, the switch, the senders and this bench on CPU 1. Four busy loops, one in each of
jp-1..jp-4's cgroups, want all of their budget, so what their cgroups did not get is lost, and it
is known exactly: the **truth** is 1 - (the four cgroups' CPU time, ``cpuacct.usage``, ns) /
(budget x window). The **check** reads the same window the way the fidelity meter does (per-CPU
/proc/stat ticks, the cgroups' counters: :class:`qoslab.meters.hostcpu.HostCpuReader`). The flood
is ``traffic-gen/campaign-flood.yaml`` (4 x 1.1x the link, kernel-paced; its receivers in the
flooded hosts' budgets, so their CPU is the hosts' own, not a loss). Variants per rate:

- ``separated``: the topology as shipped (the design under test);
- ``outside-loop``: plus one busy loop on CPU 0 in no host cgroup (another user's work on the
  hosts' core: the hosts lose about half the core);
- ``senders-on-hosts``: the flood's senders on CPU 0 (no separation: the emulation on the hosts' core);
- ``control``: loops only, no flood.

Per run also: the flood's delivered share of the link (the hosts' UDP ``InDatagrams`` +
``RcvbufErrors``), its receive CPU share, and each CPU's busy share.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from qoslab.meters.cpuloss import summary
from qoslab.meters.hostcpu import HostCpuReader
from qoslab.testbed import Testbed
from qoslab.testbed.procs import descendants
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator

ROOT = Path(__file__).resolve().parents[1]
TOPOLOGY = ROOT / "playbooks" / "topologies" / "ecenet-cpu.yaml"
RATES_MBIT = (10, 50, 100, 200)
HOSTS = ("jp-1", "jp-2", "jp-3", "jp-4")
VARIANTS = ("control", "separated", "outside-loop", "senders-on-hosts")
LOOP = [sys.executable, "-c", "while True: pass"]


def _percpu() -> dict[int, list[int]]:
    out = {}
    for line in Path("/proc/stat").read_text().splitlines():
        f = line.split()
        if f[0].startswith("cpu") and f[0][3:].isdigit():
            out[int(f[0][3:])] = [int(x) for x in f[1:9]]
    return out


def _usage(tb: Testbed) -> int:
    base = Path("/sys/fs/cgroup/cpuacct/qoslab-testbed") / tb.topo.name
    return sum(int((base / h / "cpuacct.usage").read_text()) for h in HOSTS)


def _run(tb: Testbed, variant: str, seconds: float) -> dict:
    topo = tb.topo
    hosts_cpu = min(topo.cpu.host_set)
    loops = [tb.executor(h).start(LOOP, lifetime_s=seconds + 60) for h in HOSTS]
    extra = []
    if variant == "outside-loop":
        extra.append(subprocess.Popen(["taskset", "-c", str(hosts_cpu), *LOOP]))
    defn = load_flood(ROOT / "traffic-gen" / "campaign-flood.yaml").model_copy(update={"pin_cpu": None})
    try:
        with tempfile.TemporaryDirectory() as d:
            fr = None if variant == "control" else DitgGenerator(defn, topo, tb.executor, Path(d),
                                                                  duration_s=seconds + 2)
            if fr is not None:
                fr.start()
                if variant == "senders-on-hosts":
                    for p in fr.senders.values():
                        for pid in descendants(p.pid):
                            os.sched_setaffinity(pid, {hosts_cpu})
            time.sleep(0.5)
            reader = HostCpuReader(tb.cpu, list(HOSTS), fr)
            reader.begin()
            u0, c0, t0 = _usage(tb), _percpu(), time.monotonic()
            time.sleep(seconds)
            u1, c1, t1 = _usage(tb), _percpu(), time.monotonic()
            reader.end()
            if fr is not None:
                fr.stop()
    finally:
        for ex, p in zip([tb.executor(h) for h in HOSTS], loops, strict=True):
            ex.stop(p, grace_s=1.0)
        for p in extra:
            p.kill()
            p.wait()
    w = reader.window()
    assert w is not None
    budget = 0.25 * len(HOSTS) * (t1 - t0)
    truth = 1 - (u1 - u0) / 1e9 / budget
    s = summary(w)
    busy = {}
    for cpu, a in c0.items():
        d = [y - x for x, y in zip(a, c1[cpu], strict=True)]
        busy[cpu] = round(1 - (d[3] + d[4]) / max(sum(d), 1), 3)
    link_pps = topo.link.rate / 8 / (1442 + 24)
    delivered = {h: (w.rx_packets.get(h, 0) + w.rx_drops.get(h, 0)) / w.window_s / link_pps for h in w.rx_packets}
    return {"variant": variant, "window_s": round(w.window_s, 3), "truth_loss": round(max(truth, 0.0), 4),
            "check_loss": s["host_cpu_loss"], "diff": round((s["host_cpu_loss"] or 0) - max(truth, 0.0), 4),
            "host_cpu_use": s["host_cpu_use"], "rx_cpu_share": s["rx_cpu_share"], "rx_cost_us": s["rx_cost_us"],
            "rx_socket_drops": s["rx_socket_drops"], "interrupts_s": s["interrupts_s"], "steal_s": s["steal_s"],
            "other_tasks_s": s["other_tasks_s"], "delivered_share": {h: round(v, 3) for h, v in delivered.items()},
            "cpu_busy": busy, "load_avg_1": round(os.getloadavg()[0], 2)}


def bench_cpubudget(repeat: int, seconds: float = 6.0, rates_mbit: tuple[int, ...] = RATES_MBIT) -> dict:
    """Per rate of RATES_MBIT, every variant ``max(1, min(repeat, 3))`` times interleaved on one
    testbed; {rate: [runs]} and the largest |check - truth| per rate."""
    os.sched_setaffinity(0, set(load_topology(TOPOLOGY).cpu.switch_set))  # the harness on the switch's cores
    out: dict = {}
    for mbit in rates_mbit:
        base = load_topology(TOPOLOGY)
        topo = load_topology(TOPOLOGY, name="bcpu", link={**base.link.model_dump(), "rate": mbit * 1_000_000},
                             switch={**base.switch.model_dump(mode="json"),
                                     "management": {"host": "127.0.0.1", "port": 8024}})
        tb = Testbed(topo)
        tb.down()
        tb.up()
        runs = []
        try:
            for i in range(max(1, min(repeat, 3))):
                for v in VARIANTS:
                    r = _run(tb, v, seconds)
                    runs.append(r)
                    print(f"  {mbit} Mbit/s {v} #{i}: truth {r['truth_loss']} check {r['check_loss']} "
                          f"irq {r['interrupts_s']} steal {r['steal_s']} other {r['other_tasks_s']} rx {r['rx_cpu_share']} "
                          f"delivered {r['delivered_share']} busy {r['cpu_busy']}", flush=True)
        finally:
            tb.down()
        out[f"{mbit}Mbit"] = {"runs": runs, "max_abs_diff": max(abs(r["diff"]) for r in runs)}
    return out
