"""The RMI RayTracer on the testbed: a valid distributed run, DSCP marking seen on the wire in
both directions, and a worker killed mid-run failing the manager quickly with its name."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time

import pytest

from qoslab.workloads.pool import JAR
from qoslab.workloads.raytracer import WorkerPool, WorkloadSettings, run_workload

pytestmark = pytest.mark.skipif(not JAR.exists() or shutil.which("java") is None,
                                reason="workload jar not built (make setup)")


def _run(testbed, tmp_path, on_started=None, **kw):
    s = WorkloadSettings(**{"hosts": ["jp-1", "jp-2", "jp-3", "jp-4"], **kw})
    return run_workload(s, testbed.executor, lambda h: testbed.topo.host(h).ip, tmp_path, on_started=on_started)


def test_distributed_run_is_valid(testbed, tmp_path):
    run = _run(testbed, tmp_path, size="A", rows_per_call=5)
    r = run.result
    assert r["valid"] is True and r["checksum"] == 2676692
    assert r["workers"] == 4 and r["hosts"] == ["jp-1", "jp-2", "jp-3", "jp-4"]
    assert [w["rows"] for w in r["per_worker"]] == [38, 38, 37, 37]  # 150 rows, cyclic
    assert sum(w["calls"] for w in r["per_worker"]) == 8 + 8 + 8 + 8
    assert r["elapsed_render_s"] > 0 and r["bytes_received"] > 150 * 150 * 4
    assert (tmp_path / "workload-result.json").exists()
    # no JVM survives the run
    for h in ("jp-1", "jp-2", "jp-3", "jp-4"):
        ns = testbed.namespace(h)
        assert subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.strip() == ""


def test_supersampling_grows_compute_not_bytes(testbed, tmp_path):
    """The scale model's compute knob (issue 32): supersample 2 across the testbed gives qoslab's
    size-A reference (2720036, java-workload README), more than 1.6x the workers' render time (4x
    the rays) and the same calls and bytes on the wire as supersample 1."""
    one = _run(testbed, tmp_path / "k1", size="A", rows_per_call=5).result
    two = _run(testbed, tmp_path / "k2", size="A", rows_per_call=5, supersample=2).result
    assert two["valid"] is True and two["checksum"] == two["reference"] == 2720036 and two["supersample"] == 2
    # same calls; the same bytes up to a few of JRMP's 1-byte connection pings (measured: 99,302 vs 99,304)
    assert one["rmi_calls"] == two["rmi_calls"] and abs(one["bytes_received"] - two["bytes_received"]) <= 16
    # 4x the rays; the first run also pays the workers' cold JIT, and busy_s is wall time on a shared
    # machine: 2.13x measured in CI on 2026-11-27 (1.93 -> 4.13 s). Without the knob
    # the ratio would be ~1.0, so 1.6x still tells the knob's effect from noise.
    busy = [sum(w["busy_s"] for w in r["per_worker"]) for r in (one, two)]
    assert busy[1] > 1.6 * busy[0], busy


def test_dscp_marking_is_on_the_wire_in_both_directions(testbed, tmp_path):
    pcap = tmp_path / "jp2.pcap"
    ex = testbed.executor("jp-2")
    cap = ex.start(["dumpcap", "-q", "-i", "eth0", "-f", "tcp port 1099 or tcp port 1100", "-w", str(pcap)],
                   stderr=tmp_path / "dumpcap.log")
    try:
        deadline = time.monotonic() + 10
        while "Capturing on" not in (tmp_path / "dumpcap.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        run = _run(testbed, tmp_path, size="A", rows_per_call=10, dscp=40)
        assert run.valid
        time.sleep(0.3)
    finally:
        ex.stop(cap)
    out = subprocess.run(["tshark", "-r", str(pcap), "-Y", "tcp.len > 0", "-T", "fields",
                          "-e", "ip.src", "-e", "ip.dst", "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "ip.dsfield"],
                         capture_output=True, text=True, check=True).stdout
    rows = [l.split("\t") for l in out.strip().splitlines()]
    jp2 = "198.18.0.2"
    to_worker = [r for r in rows if r[1] == jp2 and r[3] in ("1099", "1100")]
    from_worker = [r for r in rows if r[0] == jp2 and r[2] in ("1099", "1100")]
    assert len(to_worker) >= 5 and len(from_worker) >= 5, rows[:10]
    # DSCP 40 = ToS 0xa0 on every RMI payload packet, both directions
    assert {r[4] for r in to_worker + from_worker} == {"0xa0"}


def test_killed_worker_fails_the_manager_quickly_naming_it(testbed, tmp_path):
    killed: list[float] = []

    def kill_jp3_soon(workers):
        def later():
            time.sleep(1.0)
            testbed.executor("jp-3").stop(workers["jp-3"], grace_s=0)
            killed.append(time.monotonic())
        threading.Thread(target=later, daemon=True).start()

    t0 = time.monotonic()
    run = _run(testbed, tmp_path, size="B", rows_per_call=1, frames=3, timeout_s=20, on_started=kill_jp3_soon)
    ended = time.monotonic()
    r = run.result
    assert r["valid"] is False
    assert "worker jp-3 (198.18.0.3)" in r["error"], r["error"]
    assert ended - t0 < 20 + 15, ended - t0
    # the manager names the dead worker at its first failed call, not after the other workers' three
    # size-B frames (it waited for them in worker order: 16 s here, 2.6 s now). Counted from the kill,
    # wherever it lands (before the render, during the lookup on a busy machine, or in it): a
    # manager that waited for the others' frames would end 10 s or more after it.
    assert len(killed) == 1 and ended - killed[0] < 5, (ended - killed[0] if killed else None, r)


def test_worker_pool_serves_several_runs_and_restarts_a_dead_worker(testbed, tmp_path):
    """Campaign mode: the same worker JVMs serve consecutive runs (valid checksums, same PIDs);
    a worker that died between runs is restarted; close() leaves no JVM behind."""
    s = WorkloadSettings(hosts=["jp-1", "jp-2"], size="A", rows_per_call=10)
    addr = lambda h: testbed.topo.host(h).ip  # noqa: E731
    with WorkerPool(testbed.executor, addr, tmp_path / "workers") as pool:
        r1 = run_workload(s, testbed.executor, addr, tmp_path / "1", pool=pool)
        pids = {h: p.pid for h, p in pool.workers.items()}
        r2 = run_workload(s, testbed.executor, addr, tmp_path / "2", pool=pool)
        assert r1.valid and r2.valid and r2.result["checksum"] == 2676692
        assert {h: p.pid for h, p in pool.workers.items()} == pids and pool.starts == 2
        testbed.executor("jp-2").stop(pool.workers["jp-2"])
        r3 = run_workload(s, testbed.executor, addr, tmp_path / "3", pool=pool)
        assert r3.valid and pool.starts == 3 and pool.workers["jp-2"].pid != pids["jp-2"]
        assert pool.workers["jp-1"].pid == pids["jp-1"]
        # other ports: a new pool generation
        run_workload(WorkloadSettings(hosts=["jp-1", "jp-2"], size="A", registry_port=1199, export_port=1200),
                     testbed.executor, addr, tmp_path / "4", pool=pool)
        assert pool.starts == 5
    for h in ("jp-1", "jp-2"):
        ns = testbed.namespace(h)
        assert subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.strip() == ""
