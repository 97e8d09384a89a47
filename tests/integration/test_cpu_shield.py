"""The testbed's CPU shield (issue 48) on real namespaces and the kernel's scheduler: without a
``cpu:`` block every process a host starts runs in the v1 ``cpu`` group ``qoslab-shield-TOPOLOGY``
of 8 tasks' CFS weight, so a busy loop outside the testbed on the same core as one of its busy
processes gets about 1/9 of it (without the shield: half); a flood receiver
keeps its ``pin_cpu``; a flood sender runs outside it, in the real-time class; ``down`` removes the
group. Serial lane: it measures CPU shares."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import ECENET
from qoslab.executors.base import budgeted, emulation
from qoslab.testbed.cpushield import SHIELD_WEIGHT
from qoslab.testbed.procs import descendants

from .conftest import ecenet_testbed

pytestmark = pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or not Path("/sys/fs/cgroup/cpu/cpu.shares").exists(),
    reason="the shield needs two CPUs and the cgroup v1 cpu hierarchy")

BUSY = ["taskset", "-c", "0", "sh", "-c", "while :; do :; done"]


@pytest.fixture(scope="module")
def shielded(tmp_path_factory):
    assert "cpu" not in yaml.safe_load(ECENET.read_text())
    tb = None
    for tb in ecenet_testbed(tmp_path_factory.mktemp("shield"), "sh"):
        yield tb
    assert tb is not None and not Path(f"/sys/fs/cgroup/cpu/qoslab-shield-{tb.topo.name}").exists()


def _cpu_cgroup(pid: int) -> str:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, ctls, path = line.split(":", 2)
        if "cpu" in ctls.split(","):
            return path
    raise AssertionError(f"process {pid} has no v1 cpu cgroup")


def _ticks(pid: int) -> int:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])  # utime, stime (fields 14, 15 of proc(5))


def test_the_hosts_and_the_flood_senders_processes_run_in_the_shield(shielded):
    tb = shielded
    want = f"/qoslab-shield-{tb.topo.name}"
    assert tb.cpu.shielded
    assert Path(f"/sys/fs/cgroup/cpu{want}/cpu.shares").read_text().strip() == str(SHIELD_WEIGHT)
    # a host's process (a receiver keeps its pin_cpu: the shield is no budget); a flood sender
    # outside it, in the real-time class the shield's group (no real-time runtime) would refuse
    for ex, group, argv in ((tb.executor("jp-1"), want, ["sleep", "30"]),
                            (emulation(tb.executor("jp-5")), "/", ["chrt", "-f", "1", "sleep", "30"])):
        assert not budgeted(ex)
        p = ex.start(argv, lifetime_s=30)
        try:
            time.sleep(0.2)
            leaf = max(descendants(p.pid))
            assert _cpu_cgroup(leaf) == group and Path(f"/proc/{leaf}/comm").read_text().strip() == "sleep"
        finally:
            ex.stop(p)


def test_the_virtual_switch_starts_in_the_shield_and_the_harness_joins_it_and_goes_back(shielded):
    tb = shielded
    want = f"/qoslab-shield-{tb.topo.name}"
    assert tb._switch_pid is not None and _cpu_cgroup(tb._switch_pid) == want
    home = tb.cpu.join_shield()
    try:
        assert home == Path("/sys/fs/cgroup/cpu") and _cpu_cgroup(os.getpid()) == want
        # a sender started from inside the shield still runs outside it, in the real-time class
        ex = emulation(tb.executor("jp-6"))
        p = ex.start(["chrt", "-f", "1", "sleep", "30"], lifetime_s=30)
        try:
            time.sleep(0.2)
            leaf = max(descendants(p.pid))
            assert _cpu_cgroup(leaf) == "/" and os.sched_getscheduler(leaf) == os.SCHED_FIFO
        finally:
            ex.stop(p)
    finally:
        tb.cpu.leave_shield(home)
    assert _cpu_cgroup(os.getpid()) == "/"


def test_a_busy_loop_outside_gets_only_what_the_testbed_leaves(shielded):
    """One busy loop in a host, one in this machine's root cpu group, both pinned to CPU 0: CFS
    shares the core by weight, the shield's 8192 (all of it on CPU 0: its only busy task is there)
    against 1024, so the host's loop keeps 8/9 of it, >= 0.85 (two tasks at equal weight: 0.5 each)."""
    assert _cpu_cgroup(os.getpid()) == "/", "the test must run in the root cpu group to stand for another user"
    ex = shielded.executor("jp-2")
    inside = ex.start(BUSY, lifetime_s=30)
    outside = subprocess.Popen(BUSY)
    try:
        time.sleep(0.5)
        leaf = max(descendants(inside.pid))
        a0, b0 = _ticks(leaf), _ticks(outside.pid)
        time.sleep(3.0)
        a, b = _ticks(leaf) - a0, _ticks(outside.pid) - b0
    finally:
        outside.kill()
        outside.wait()
        ex.stop(inside)
    share = a / max(a + b, 1)
    assert a + b > 0.8 * 3.0 * os.sysconf("SC_CLK_TCK"), f"CPU 0 ran the loops only {a + b} ticks in 3 s"
    assert share >= 0.85, f"the host's loop got {share:.3f} of CPU 0 ({a} ticks against {b} outside)"
