"""Issue 52 on real namespaces: ``cpu.receive_on: hosts`` steers the host interfaces' receive path
(RPS of ``eth0`` in each host's namespace) to ``hosts_cpus`` while the switch ports stay on
``switch_cpus`` (the masks read back from sysfs), and the receive work of a flood then runs on the
hosts' core: every packet the flood delivers is processed by that core's backlog (where the IP +
UDP receive runs, /proc/net/softnet_stat), which the default placement (the control, same flood)
leaves to the switch's core."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from conftest import REPO
from qoslab.testbed import Testbed
from qoslab.testbedplan import host_namespace
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator

from .cpu_helpers import HOSTS_CPU, NEEDS_CPU_BUDGETS, SWITCH_CPU, cpu_topology

pytestmark = NEEDS_CPU_BUDGETS


def _softnet() -> list[tuple[int, int]]:
    """Per CPU: (packets its backlog processed, RPS inter-processor wake-ups it received):
    /proc/net/softnet_stat's columns 1 and 10 (net/core/net-procfs.c), hex, one line per CPU."""
    out = []
    for line in Path("/proc/net/softnet_stat").read_text().splitlines():
        f = line.split()
        out.append((int(f[0], 16), int(f[9], 16) if len(f) > 9 else 0))
    return out


def _ipis(cpu: int) -> int:
    """Inter-processor interrupts ``cpu`` has received: /proc/interrupts' rows CAL (function call,
    RPS's) and RES (rescheduling: a thread woken from another CPU)."""
    n = 0
    for line in Path("/proc/interrupts").read_text().splitlines():
        f = line.split()
        if f and f[0] in ("CAL:", "RES:"):
            n += int(f[1 + cpu])
    return n


def _flood(tb: Testbed, tmp: Path) -> tuple[list[tuple[int, int]], int, int]:
    """The campaign's flood (4 flows at 1.1x the link, senders on the switch's core) for 3 s:
    (softnet deltas per CPU, packets the receivers got, IPIs the hosts' core received)."""
    defn = load_flood(REPO / "traffic-gen" / "campaign-flood.yaml")
    i0 = _ipis(HOSTS_CPU)
    a = _softnet()
    with DitgGenerator(defn, tb.topo, tb.executor, tmp, duration_s=3) as fr:
        fr.start()
        time.sleep(3.0)
        res = fr.stop()
    b = _softnet()
    ipis = _ipis(HOSTS_CPU) - i0
    assert not res.errors, res.errors
    got = sum(f.packets_received for f in res.flows)
    assert got > 10000, res.flows  # 4 x ~1,730 packets/s at 20 Mbit/s for ~3 s
    return [(y[0] - x[0], y[1] - x[1]) for x, y in zip(a, b, strict=True)], got, ipis


def test_receive_on_hosts_puts_the_hosts_receive_work_on_the_hosts_core(tmp_path):
    tb = Testbed(load_topology(cpu_topology(tmp_path, "r", receive_on="hosts")))
    tb.up()
    try:
        rps = tb.cpu.rps()
        assert {rps[h.name] for h in tb.topo.hosts} == {frozenset({HOSTS_CPU})}, rps
        ports = {k: v for k, v in rps.items() if k.startswith("switch/")}
        assert len(ports) == len(tb.topo.hosts) + len(tb.topo.switch.span_destinations)
        assert set(ports.values()) == {frozenset({SWITCH_CPU})}, ports
        d, got, ipis = _flood(tb, tmp_path)
    finally:
        tb.down()
    # each delivered packet crosses two backlogs: the switch port's (switch core) and the flooded
    # host's eth0 (hosts' core, where ip_rcv .. udp_rcv run), woken there by RPS IPIs from the senders' core
    assert d[HOSTS_CPU][0] >= 0.9 * got, f"hosts' core processed {d[HOSTS_CPU][0]} of {got} delivered packets {d}"
    assert d[SWITCH_CPU][0] >= 0.9 * got, f"switch core processed {d[SWITCH_CPU][0]} of {got} {d}"
    assert d[HOSTS_CPU][1] > 0, f"no RPS wake-ups of the hosts' core {d}"
    # the control of test_rx_usecs_...: RPS interrupts the idle hosts' core for about every packet
    assert ipis > 0.2 * got, f"the hosts' core received {ipis} IPIs for {got} delivered packets"


def test_the_default_leaves_the_hosts_receive_work_on_the_switchs_core(tmp_path):
    tb = Testbed(load_topology(cpu_topology(tmp_path, "s")))
    tb.up()
    try:
        rps = tb.cpu.rps()
        assert set(rps.values()) == {frozenset({SWITCH_CPU})}, rps
        d, got, _ = _flood(tb, tmp_path)
    finally:
        tb.down()
    assert d[SWITCH_CPU][0] >= 1.8 * got, f"switch core processed {d[SWITCH_CPU][0]} of 2 x {got} {d}"
    # the hosts' core takes none of it (what it processed is other users' loopback traffic)
    assert d[HOSTS_CPU][0] < 0.3 * got, f"hosts' core processed {d[HOSTS_CPU][0]} of {got} delivered packets {d}"


def test_rx_usecs_receives_in_pinned_napi_threads_without_an_interrupt_per_packet(tmp_path):
    tb = Testbed(load_topology(cpu_topology(tmp_path, "p", receive_on="hosts", rx_usecs=100)))
    tb.up()
    try:
        threads = tb.cpu.rx_threads()
        assert sorted(threads) == sorted(h.name for h in tb.topo.hosts), threads
        for host, (pid, cpus, policy, prio) in threads.items():
            assert cpus == {HOSTS_CPU} and policy == os.SCHED_FIFO and prio == 50, (host, pid, cpus, policy, prio)
            assert Path(f"/proc/{pid}/comm").read_text().startswith("napi/eth0-"), host
        rps = tb.cpu.rps()
        assert {rps[h.name] for h in tb.topo.hosts} == {frozenset()}, rps  # no RPS: the thread receives
        link = subprocess.run(["ip", "netns", "exec", host_namespace(tb.topo.name, "jp-1"), "ip", "-d", "link",
                               "show", "eth0"], capture_output=True, text=True, check=True).stdout
        assert "gro_max_size 0 " in link, link  # GRO on for the NAPI context, merging nothing
        d, got, ipis = _flood(tb, tmp_path)
    finally:
        tb.down()
    # the hosts' core received the flood (in its NAPI threads) ...
    assert d[HOSTS_CPU][0] >= 0.9 * got, f"hosts' core processed {d[HOSTS_CPU][0]} of {got} delivered packets {d}"
    # ... polled on its own timer: far fewer interrupts from the switch's core than packets (RPS:
    # one per packet while the hosts' core idles)
    assert ipis < 0.05 * got, f"the hosts' core received {ipis} IPIs for {got} delivered packets"
