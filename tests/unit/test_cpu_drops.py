"""Per-trial CPU accounting (meters/cpu.py) and capture drop columns (meters/drops.py): the
pure parts, plus the meter on real processes of this machine (no testbed, no lock needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from qoslab.campaign import SCHEMA, Store
from qoslab.meters.base import meter_columns
from qoslab.meters.cpu import (
    COLUMNS,
    Snapshot,
    TrialCpu,
    busiest_host,
    descendants,
    flood_processes,
    outside_processes,
    parse_pid_stat,
    parse_proc_stat,
    summarize,
)
from qoslab.meters.drops import drop_columns

STAT = """cpu  134423 512 38931 144105 1323 0 8419 903 0 0
cpu0 61589 222 18017 79444 278 0 4261 460 0 0
cpu1 72834 290 20914 64660 1044 0 4158 442 0 0
intr 1 2 3
ctxt 99
"""


def test_parse_proc_stat_per_cpu_without_the_aggregate():
    c = parse_proc_stat(STAT)
    assert list(c) == ["cpu0", "cpu1"]
    assert c["cpu0"] == (61589, 222, 18017, 79444, 278, 0, 4261, 460)
    assert parse_proc_stat("cpu0 1 2 3 4\n")["cpu0"] == (1, 2, 3, 4, 0, 0, 0, 0)  # old kernel: fewer fields


def test_parse_pid_stat_handles_odd_command_names():
    fields = ["S", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "250", "50", "0", "0", "20", "0", "1", "0",
              "777777"]
    assert parse_pid_stat("123 (a) b) (c) " + " ".join(fields)) == (300, 777777)
    assert parse_pid_stat("garbage") is None


def _snap(t, cpus, procs):
    return Snapshot(t, {c: tuple(v) for c, v in cpus.items()}, procs)


def test_summarize_columns_and_units():
    # 100 ticks/s; window 2.0 s on two CPUs
    s0 = _snap(10.0, {"cpu0": [0, 0, 0, 0, 0, 0, 0, 0], "cpu1": [0] * 8},
               {(1, 5): 100, (2, 5): 0, (3, 6): 0, (4, 7): 10})
    s1 = _snap(12.0, {"cpu0": [50, 10, 40, 60, 20, 5, 15, 0], "cpu1": [100, 0, 30, 40, 0, 0, 25, 5]},
               {(1, 5): 180, (2, 5): 30, (3, 6): 45, (4, 7): 10})
    groups = {"workers": {"jp-1": [(1, 5)], "jp-2": [(2, 5)]}, "flood": {"senders:0@jp-5": [(3, 6), (4, 7)]}}
    c = summarize(s0, s1, groups, "jp-2", 100.0)
    assert set(c) == set(COLUMNS)
    assert c["cpu_window_s"] == 2.0 and c["cpu_workers_s"] == pytest.approx(1.1)
    assert c["cpu_busiest_worker_s"] == pytest.approx(0.3) and c["cpu_flood_s"] == pytest.approx(0.45)
    assert c["cpu_user_s"] == pytest.approx(1.6)       # user + nice
    assert c["cpu_system_s"] == pytest.approx(0.75)    # system + irq
    assert c["cpu_softirq_s"] == pytest.approx(0.4) and c["cpu_idle_s"] == pytest.approx(1.2)
    assert c["cpu_steal_s"] == pytest.approx(0.05)
    total = sum(c[k] for k in ("cpu_user_s", "cpu_system_s", "cpu_softirq_s", "cpu_idle_s", "cpu_steal_s"))
    assert total == pytest.approx(4.0)  # 2 cores x 2 s
    js = json.loads(c["cpu_json"])
    assert js["cpus"]["cpu1"]["softirq"] == 0.25 and js["workers"] == {"jp-1": 0.8, "jp-2": 0.3}
    assert c["cpu_outside_s"] is None  # not read
    s0.outside, s1.outside = {(50, 1): 100, (51, 1): 10}, {(50, 1): 130, (52, 9): 20}  # 51 ended, 52 new
    assert summarize(s0, s1, groups, "jp-2", 100.0)["cpu_outside_s"] == pytest.approx(0.5)


def test_summarize_no_flood_is_zero_and_unreadable_groups_are_null():
    s = _snap(0.0, {"cpu0": [0] * 8}, {})
    e = _snap(1.0, {"cpu0": [10, 0, 0, 90, 0, 0, 0, 0]}, {})
    c = summarize(s, e, {"workers": {}}, None, 100.0)
    assert c["cpu_flood_s"] == 0.0 and c["cpu_workers_s"] is None and c["cpu_busiest_worker_s"] is None
    assert summarize(s, e, {"flood": {}}, None, 100.0)["cpu_flood_s"] is None
    # a process gone before the end snapshot (never sampled) counts 0, not negative
    s2 = _snap(0.0, {"cpu0": [0] * 8}, {(9, 1): 50})
    assert summarize(s2, e, {"flood": {"x": [(9, 1)]}}, None, 100.0)["cpu_flood_s"] == 0.0


def test_busiest_host_and_flood_processes():
    assert busiest_host([{"host": "jp-1", "busy_s": 0.2}, {"host": "jp-3", "busy_s": 0.5}, {"host": "x"}]) == "jp-3"
    assert busiest_host([]) is None
    gen = SimpleNamespace(senders={0: SimpleNamespace(pid=11, node="jp-5")},
                          receivers={"jp-1": SimpleNamespace(pid=12, node="jp-1")})
    assert flood_processes(gen) == {"senders:0@jp-5": 11, "receivers:jp-1@jp-1": 12}
    assert flood_processes(None) == {}


def _spin(seconds: float) -> list[str]:
    return [sys.executable, "-c", f"import time\nt=time.process_time()\nwhile time.process_time()-t<{seconds}: pass"]


def test_meter_counts_a_child_under_timeout_and_a_process_that_ended(tmp_path):
    """Real processes: a 'flood' run under GNU timeout (the CPU is its child's) and a 'worker'
    that ends inside the window (per-trial workers): both count, from /proc."""
    flood_p = subprocess.Popen(["timeout", "30", *_spin(0.6)])
    worker_p = subprocess.Popen(_spin(0.3))
    try:
        deadline = time.monotonic() + 10
        while len(descendants(flood_p.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(descendants(flood_p.pid)) == 2  # timeout and its child
        m = TrialCpu(period_s=0.05)
        m.begin({"jp-1": SimpleNamespace(pid=worker_p.pid)},
                SimpleNamespace(senders={0: SimpleNamespace(pid=flood_p.pid, node="jp-5")}))
        worker_p.wait(10)
        time.sleep(0.3)   # the worker is gone (reaped) well before the window closes
        flood_p.wait(10)
        m.end()
        c = m.columns([{"host": "jp-1", "busy_s": 0.3}])
    finally:
        for p in (flood_p, worker_p):
            if p.poll() is None:
                p.kill()
                p.wait()
    assert c["cpu_flood_s"] == pytest.approx(0.6, abs=0.2)  # + the interpreter's start-up
    assert c["cpu_workers_s"] == pytest.approx(0.3, abs=0.15) and c["cpu_busiest_worker_s"] == c["cpu_workers_s"]
    assert c["cpu_window_s"] >= 0.6
    busy = c["cpu_user_s"] + c["cpu_system_s"] + c["cpu_softirq_s"]
    assert busy >= 0.8  # the machine saw at least our two spinners
    ncpu = os.cpu_count() or 1
    whole = busy + c["cpu_idle_s"] + c["cpu_steal_s"]
    assert whole == pytest.approx(ncpu * c["cpu_window_s"], rel=0.1, abs=0.05)


@pytest.mark.serial  # a spinner's share of a 0.6 s window: not beside the parallel tests on 2 cores
def test_outside_load_is_counted_and_our_own_children_are_not():
    """A spinner that is not this process's descendant (double fork: reparented away) counts as
    outside load; a child of ours does not."""
    own = subprocess.Popen(_spin(5))
    r = subprocess.run(["sh", "-c", " ".join(f"'{a}'" for a in _spin(5)) + " >/dev/null 2>&1 & echo $!"],
                       capture_output=True, text=True, timeout=10)
    orphan = int(r.stdout.strip())
    try:
        time.sleep(0.05)
        before = outside_processes(set(descendants(os.getpid())))
        assert orphan in {k[0] for k in before} and own.pid not in {k[0] for k in before}
        m = TrialCpu(period_s=0.05)
        m.begin({}, None)
        time.sleep(0.6)
        m.end()
        after = outside_processes(set(descendants(os.getpid())))
    finally:
        for pid in (own.pid, orphan):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        own.wait()
    orphan_s = sum(v - before[k] for k, v in after.items() if k[0] == orphan) / os.sysconf("SC_CLK_TCK")
    assert orphan_s > 0.1  # it ran during the window
    assert m.columns([])["cpu_outside_s"] >= 0.8 * orphan_s  # counted (with whatever else runs here)


def test_disabled_meter_gives_null_columns():
    m = TrialCpu(enabled=False)
    m.begin({"jp-1": SimpleNamespace(pid=os.getpid())}, None)
    m.end()
    m.close()
    assert m.columns([]) == dict.fromkeys(COLUMNS)


def test_drop_columns_read_both_summary_layouts():
    new = {"drops": {"received": 1000, "captured": 990, "dropped_kernel": 7, "dropped_interface": 1,
                     "dropped_own": 2, "dropped_total": 10, "lossless": False}}
    assert drop_columns(new) == {"capture_received": 1000, "capture_drops": 10, "capture_drops_kernel": 7,
                                 "capture_drops_interface": 1, "capture_drops_own": 2}
    old = {"drops": {"interface": "Gi1-0-21", "link_type": "EN10MB", "pcap_received": 500, "pcap_dropped": 3,
                     "pcap_dropped_by_interface": 0}}
    assert drop_columns(old) == {"capture_received": 500, "capture_drops": 3, "capture_drops_kernel": 3,
                                 "capture_drops_interface": 0, "capture_drops_own": None}
    for s in (None, {}, {"drops": None}, {"drops": "x"}):
        assert set(drop_columns(s).values()) == {None}
    assert drop_columns({"drops": {"received": 5, "dropped_kernel": True}})["capture_drops"] is None


def test_store_adds_the_columns_to_an_older_store(tmp_path):
    import sqlite3

    db = tmp_path / "trials.sqlite"
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)  # the first store's schema (user_version 0), before any migration or meter column
    con.commit()
    con.close()
    st = Store(db)
    cols = set(st.columns())
    st.close()
    assert set(meter_columns()) | {"busy_max_s", "failures"} <= cols and {"cpu_flood_s", "cpu_json", "capture_drops", "capture_drops_own"} <= cols


def test_tree_cpu_ticks_counts_the_child_under_timeout():
    """What `qoslab flood calibrate` reads: a sender under GNU timeout spends its CPU in the child."""
    from qoslab.testbed.procs import cpu_ticks, tree_cpu_ticks

    p = subprocess.Popen(["timeout", "30", *_spin(2.0)])
    try:
        deadline = time.monotonic() + 10
        while tree_cpu_ticks(p.pid) < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert tree_cpu_ticks(p.pid) >= 30 and cpu_ticks(p.pid) < 5  # timeout itself hardly runs
    finally:
        for pid in reversed(descendants(p.pid)):  # the child first, by PID
            os.kill(pid, 9)
        p.wait()
    assert tree_cpu_ticks(p.pid) == 0  # all gone
