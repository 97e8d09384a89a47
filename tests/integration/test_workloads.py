"""Workloads as backends on the testbed (issue 23): `qoslab workload run --workload matmul` for
every mechanism x algorithm (valid product, total and communication seconds), pingpong over both
transports, DSCP marking passed to matmul; a campaign whose workload is `command` (the shipped
echo example) over netns, killed with SIGKILL in a workload and resumed to exactly N trials per
condition, and over ssh; nothing the workloads started outlives them."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed import Testbed
from qoslab.testbed.procs import namespace_pids
from qoslab.topology import load_topology
from qoslab.workloads.matmul import ALGORITHMS, MECHANISMS
from qoslab.workloads.pool import JAR

from .conftest import free_port, qoslab, unique_name

pytestmark = pytest.mark.skipif(not JAR.exists() or shutil.which("java") is None,
                                reason="workload jar not built (make setup)")
REPO = Path(__file__).parents[2]
DRIVER = Path(__file__).parent / "chaos_driver.py"
N = 2


@pytest.fixture(scope="module")
def topo_path(testbed, tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("topo") / "topo.yaml"
    p.write_text(yaml.safe_dump(testbed.topo.model_dump(mode="json"), sort_keys=False))
    return p


def _comms(tb: Testbed, names: tuple[str, ...]) -> list[str]:
    out = []
    for pids in namespace_pids(tb.host_namespaces()).values():
        for p in pids:
            try:
                comm = Path(f"/proc/{p}/comm").read_text().strip()
            except OSError:
                continue
            if comm in names:
                out.append(comm)
    return out


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_matmul_every_mechanism_and_algorithm_via_the_cli(testbed, topo_path, tmp_path, mechanism):
    for algorithm in ALGORITHMS:
        out = tmp_path / algorithm
        r = qoslab("workload", "run", "--workload", "matmul", "--mechanism", mechanism, "--algorithm", algorithm,
                   "--size", "64", "--hosts", "jp-1,jp-2,jp-3,jp-4", "--out", str(out), "-t", str(topo_path),
                   timeout=180)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        res = json.loads((out / "workload-result.json").read_text())
        assert res["valid"] is True and res["mechanism"] == mechanism and res["algorithm"] == algorithm
        assert res["checksum"] == res["reference"] and res["size"] == 64 and res["workers"] == 4
        assert 0 < res["comm_s"] <= res["total_s"] == res["elapsed_s"]
        assert res["calls"] == (8 if algorithm == "spa" else 2 * 4 + 2 * 4 * 63)
    assert _comms(testbed, ("java",)) == []


@pytest.mark.parametrize("mechanism", ["socket", "rmi"])
def test_pingpong_both_transports_via_the_cli(testbed, topo_path, tmp_path, mechanism):
    r = qoslab("workload", "run", "--workload", "pingpong", "--mechanism", mechanism, "--max-bytes", "65536",
               "--reps", "10", "--hosts", "jp-1,jp-2", "--out", str(tmp_path), "-t", str(topo_path), timeout=180)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    res = json.loads((tmp_path / "workload-result.json").read_text())
    assert res["valid"] is True and res["mechanism"] == mechanism and res["elapsed_s"] > 0
    assert [z["bytes"] for z in res["sizes"]] == [1 << i for i in range(17)]
    assert all(z["rtt_s"]["median"] > 0 and z["throughput_bits_s"] > 0 for z in res["sizes"])
    assert _comms(testbed, ("java",)) == []


def test_matmul_backend_with_a_warm_pool_and_dscp(testbed, tmp_path):
    """A pool serves several runs (one JVM start per host), DSCP reaches workers and manager."""
    from qoslab.workloads import backend, settings_of

    wl = backend("matmul")
    addr = lambda h: testbed.topo.host(h).ip  # noqa: E731
    pool = wl.open_pool(testbed.executor, addr, tmp_path / "workers", lifetime_s=300)
    try:
        for mech in ("datagram", "rmi-externalizable"):
            s = settings_of({"kind": "matmul", "hosts": ["jp-1", "jp-2", "jp-3"], "mechanism": mech,
                             "algorithm": "mca", "size": 48, "dscp": 46})
            run = wl.run(s, testbed.executor, addr, tmp_path / mech, pool=pool)
            assert run.valid and run.result["dscp"] == 46 and run.result["workers"] == 3
        assert pool.starts == 3
        log = (tmp_path / "workers" / "workload-jp-2.log")
    finally:
        pool.close()
    assert "matmul-worker ready" in log.read_text()
    assert _comms(testbed, ("java",)) == []


def _campaign_files(tmp_path: Path, suffix: str, **changes) -> tuple[Path, Path]:
    topo = yaml.safe_load((REPO / "playbooks" / "topologies" / "ecenet.yaml").read_text())
    topo["name"] = unique_name(suffix)
    topo["switch"]["management"]["port"] = free_port()
    tfile = tmp_path / "topo.yaml"
    tfile.write_text(yaml.safe_dump(topo))
    ffile = tmp_path / "flood.yaml"
    ffile.write_text(yaml.safe_dump({"name": "one", "rate": "1.1x", "pacing": "poll",
                                     "flows": [{"src": "jp-3", "dst": "jp-1"}]}))
    example = yaml.safe_load((REPO / "playbooks" / "command-example.yaml").read_text())
    pb = {"name": "cmd", "topology": str(tfile), "device": "virtual", "flood": str(ffile),
          "workload": {**example["workload"], "hosts": ["jp-1", "jp-2", "jp-3"]},
          "conditions": [{"name": "no congestion fifo", "congestion": False, "profile": "fifo"},
                         {"name": "congestion thesis", "congestion": True, "profile": "thesis"}],
          "trials": N, "warmup": 0, "order": "interleaved", "seed": 3, "capture": "off", "settle": "fixed",
          "settle_s": 0.3, "trial_timeout_s": 120, "retries": 2, **changes}
    pfile = tmp_path / "pb.yaml"
    pfile.write_text(yaml.safe_dump(pb))
    return tfile, pfile


def _done(folder: Path) -> dict[str, int]:
    con = sqlite3.connect(folder / "trials.sqlite")
    try:
        rows = con.execute("SELECT condition, status, valid, elapsed_s FROM trials WHERE warmup = 0").fetchall()
    finally:
        con.close()
    out: dict[str, int] = {}
    for cond, status, valid, elapsed in rows:
        assert status == "done" and valid == 1 and elapsed > 0, rows
        out[cond] = out.get(cond, 0) + 1
    return out


def _check_results(folder: Path) -> None:
    results = [json.loads(p.read_text()) for p in folder.glob("trials/[0-9][0-9][0-9][0-9]/workload/"
                                                               "workload-result.json")]
    assert len(results) == 2 * N and all(r["valid"] and r["requests"] == 3 * 25 for r in results)


def test_command_campaign_over_netns_survives_kill_9_and_resumes(tmp_path):
    tfile, pfile = _campaign_files(tmp_path, "w")
    tb = Testbed(load_topology(tfile))
    folder = tmp_path / "campaign"
    try:
        r = subprocess.run([sys.executable, str(DRIVER), "workload", "2", "5", "--", "campaign", "run", str(pfile),
                            "--out", str(folder)], capture_output=True, text=True, timeout=300)
        assert r.returncode == -9, r.stdout[-2000:] + r.stderr[-2000:]
        deadline = time.monotonic() + 10  # parent-death signal: the workers die with the runner
        while _comms(tb, ("python3", "java")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _comms(tb, ("python3", "java")) == []
        r = qoslab("campaign", "run", "--resume", str(folder), "--no-report", timeout=300)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        assert _done(folder) == {"no congestion fifo": N, "congestion thesis": N}
        _check_results(folder)
        assert _comms(tb, ("python3",)) == []
    finally:
        tb.down()


@pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")
def test_command_campaign_over_ssh(tmp_path):
    tfile, pfile = _campaign_files(tmp_path, "v", executor="ssh", name="cmd-ssh")
    tb = Testbed(load_topology(tfile))
    folder = tmp_path / "campaign"
    try:
        r = qoslab("campaign", "run", str(pfile), "--out", str(folder), "--no-report", timeout=600)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        assert _done(folder) == {"no congestion fifo": N, "congestion thesis": N}
        _check_results(folder)
        assert _comms(tb, ("python3",)) == []
    finally:
        tb.down()
