"""The testbed's CPU as part of the model (issue 42), on real namespaces and cgroups: a topology's
``cpu:`` block puts every process a host starts (a workload's, a flood receiver) into that host's
cgroups with the hosts' cpuset, caps a busy host at its capacity, runs the flood senders and the
virtual switch on the switch's cores, and steers the switch ports' packet processing there
(packets each CPU's backlog processed, /proc/net/softnet_stat). The control topology has ``steer: false``."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from conftest import REPO
from qoslab.testbed import Testbed
from qoslab.testbed.procs import descendants
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditg import DitgGenerator

from .cpu_helpers import HOSTS_CPU, NEEDS_CPU_BUDGETS, SWITCH_CPU, cpu_topology

pytestmark = NEEDS_CPU_BUDGETS


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory):
    tb = Testbed(load_topology(cpu_topology(tmp_path_factory.mktemp("cpu"), "c")))
    tb.up()
    try:
        yield tb
    finally:
        tb.down()
    assert not list(Path("/sys/fs/cgroup/cpu/qoslab-testbed").glob(f"{tb.topo.name}*")) \
        if Path("/sys/fs/cgroup/cpu/qoslab-testbed").exists() else True


def _cgroups(pid: int) -> dict[str, str]:
    out = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, ctls, path = line.split(":", 2)
        for c in ctls.split(","):
            out[c] = path
    return out


def _allowed(pid: int) -> str:
    return next(line.split()[1] for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                if line.startswith("Cpus_allowed_list"))


def _leaf(pid: int) -> int:
    """The deepest living process under ``pid`` (the command under ``ip netns exec`` / ``timeout``)."""
    return max(descendants(pid))


def test_a_hosts_processes_and_its_flood_receiver_run_in_its_cgroup_on_the_hosts_cores(budgeted, tmp_path):
    tb = budgeted
    want = f"/qoslab-testbed/{tb.topo.name}/jp-1"
    p = tb.executor("jp-1").start(["sleep", "30"], lifetime_s=30)
    try:
        cg = _cgroups(_leaf(p.pid))
        assert cg["cpu"] == cg["cpuset"] == cg["cpuacct"] == want, cg
        assert _allowed(_leaf(p.pid)) == str(HOSTS_CPU)
    finally:
        tb.executor("jp-1").stop(p)
    defn = load_flood(REPO / "traffic-gen" / "campaign-flood.yaml").model_copy(update={"pin_cpu": None})
    with DitgGenerator(defn, tb.topo, tb.executor, tmp_path, duration_s=3) as fr:
        fr.start()
        recv = fr.receivers["jp-1"].pid
        send = next(s.pid for i, s in fr.senders.items() if fr.flows[i].dst == "jp-1")
        r, s = _cgroups(_leaf(recv)), _cgroups(_leaf(send))
        assert r["cpu"] == want and _allowed(_leaf(recv)) == str(HOSTS_CPU), r
        assert s["cpu"] == "/" and _allowed(_leaf(send)) == str(SWITCH_CPU), s  # a sender stands for another machine
        res = fr.stop()
    assert all(f.packets_received > 0 for f in res.flows), res.errors


def test_a_busy_loop_in_a_quarter_core_host_gets_a_quarter_core(budgeted):
    tb = budgeted
    usage = Path(f"/sys/fs/cgroup/cpuacct/qoslab-testbed/{tb.topo.name}/jp-2/cpuacct.usage")
    ex = tb.executor("jp-2")
    p = ex.start(["sh", "-c", "while :; do :; done"], lifetime_s=30)
    try:
        time.sleep(0.5)
        u0, t0 = int(usage.read_text()), time.monotonic()
        time.sleep(4.0)
        u1, t1 = int(usage.read_text()), time.monotonic()
    finally:
        ex.stop(p)
    cores = (u1 - u0) / 1e9 / (t1 - t0)
    assert abs(cores - 0.25) <= 0.03, f"{cores:.3f} cores"


def _processed() -> list[int]:
    """Packets each CPU's receive backlog processed so far (/proc/net/softnet_stat, first column,
    one line per CPU: where RPS put them, or the CPU that received them without RPS)."""
    return [int(line.split()[0], 16) for line in Path("/proc/net/softnet_stat").read_text().splitlines()]


def _host_to_host_udp(tb: Testbed, seconds: float = 2.0) -> list[int]:
    """Packets processed per CPU's backlog while jp-2 (a budgeted host, on the hosts' core) sends UDP
    to jp-3 at the link rate with iperf3 (both in their hosts' budgets)."""
    srv = tb.executor("jp-3").start(["iperf3", "-s", "-1", "-B", tb.topo.host("jp-3").ip, "-p", "5299"], lifetime_s=30)
    try:
        time.sleep(0.5)
        a = _processed()
        tb.executor("jp-2").run(["iperf3", "-c", tb.topo.host("jp-3").ip, "-p", "5299", "-u", "-b", "20M", "-t",
                                 f"{seconds:g}", "-l", "1400"], timeout=30)
        b = _processed()
    finally:
        tb.executor("jp-3").stop(srv)
    return [y - x for x, y in zip(a, b, strict=True)]


def test_switch_port_packet_processing_runs_on_the_switchs_cores(budgeted, tmp_path):
    d = _host_to_host_udp(budgeted)
    assert d[SWITCH_CPU] > 3000 and d[SWITCH_CPU] > 5 * d[HOSTS_CPU], f"packets processed per CPU {d}"
    # the control: the same topology without steering does the bridge's work on the sender's core
    tb = Testbed(load_topology(cpu_topology(tmp_path, "n", steer=False)))
    tb.up()
    try:
        d = _host_to_host_udp(tb)
    finally:
        tb.down()
    assert d[HOSTS_CPU] > 3000 and d[HOSTS_CPU] > 5 * d[SWITCH_CPU], f"packets processed per CPU without steering {d}"


def test_the_virtual_switch_runs_on_the_switchs_cores_and_down_removes_the_cgroups(budgeted):
    tb = budgeted
    pid = tb._switch_pid
    assert pid is not None and _allowed(pid) == str(SWITCH_CPU)
    groups = [Path(f"/sys/fs/cgroup/{c}/qoslab-testbed/{tb.topo.name}") for c in ("cpu", "cpuset", "cpuacct")]
    assert all(g.is_dir() for g in groups)
    assert subprocess.run(["cat", str(groups[0] / "jp-1" / "cpu.cfs_quota_us")], capture_output=True,
                          text=True).stdout.strip() == "2500"


def test_testbed_exec_runs_in_the_hosts_cgroups_as_a_trials_processes_do(budgeted):
    """Issue 50: ``qoslab testbed exec`` on a ``cpu:`` topology is no way out of the hosts' budget."""
    import sys
    tb = budgeted
    topo = Path(tb.topo.source) if getattr(tb.topo, "source", None) else None
    assert topo is not None and topo.is_file()
    r = subprocess.run([sys.executable, "-m", "qoslab", "testbed", "exec", "-t", str(topo), "jp-1", "--",
                        "sh", "-c", "cat /proc/self/cgroup; grep Cpus_allowed_list /proc/self/status"],
                       capture_output=True, text=True, timeout=60, cwd=REPO)
    assert r.returncode == 0, r.stderr
    want = f"/qoslab-testbed/{tb.topo.name}/jp-1"
    cg = {c: line.split(":", 2)[2] for line in r.stdout.splitlines() if line.count(":") >= 2 and line[0].isdigit()
          for c in line.split(":", 2)[1].split(",")}
    assert cg["cpu"] == cg["cpuset"] == want, r.stdout
    assert f"Cpus_allowed_list:\t{HOSTS_CPU}" in r.stdout, r.stdout
