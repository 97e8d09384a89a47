"""The seeds' other systems on the testbed (issue 37): `qoslab workload run --workload sort` over
socket, RMI and CORBA with 4 servers and 100,000 integers (reference 002), each a valid result with
its phases, and with `--dscp 40` every sort payload packet on jp-2's link carries DSCP 40, GIOP
included; `--workload mpj` on 4 ranks across the host namespaces (reference 003, MPJ Express);
no JVM outlives the runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from qoslab.testbed.procs import namespace_pids
from qoslab.workloads.pool import JAR
from qoslab.workloads.sort import MECHANISMS

from .conftest import qoslab

pytestmark = pytest.mark.skipif(not JAR.exists() or shutil.which("java") is None,
                                reason="workload jar not built (make setup)")
HOSTS = "jp-1,jp-2,jp-3,jp-4,jp-5"


@pytest.fixture(scope="module")
def topo_path(testbed, tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("topo") / "topo.yaml"
    p.write_text(yaml.safe_dump(testbed.topo.model_dump(mode="json"), sort_keys=False))
    return p


def _no_java(testbed) -> bool:
    for pids in namespace_pids(testbed.host_namespaces()).values():
        for p in pids:
            try:
                if Path(f"/proc/{p}/comm").read_text().strip() == "java":
                    return False
            except OSError:
                continue
    return True


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_sort_each_mechanism_on_four_servers_via_the_cli(testbed, topo_path, tmp_path, mechanism):
    pcap, ex = tmp_path / "jp2.pcap", testbed.executor("jp-2")
    cap = ex.start(["dumpcap", "-q", "-i", "eth0", "-f", "tcp portrange 1300-1303", "-w", str(pcap)],
                   stderr=tmp_path / "dumpcap.log")
    try:
        deadline = time.monotonic() + 10
        while "Capturing on" not in (tmp_path / "dumpcap.log").read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        r = qoslab("workload", "run", "--workload", "sort", "--mechanism", mechanism, "--servers", "4",
                   "--size", "100000", "--dscp", "40", "--hosts", HOSTS, "--out", str(tmp_path / "out"),
                   "-t", str(topo_path), timeout=240)
        time.sleep(0.3)
    finally:
        ex.stop(cap)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    res = json.loads((tmp_path / "out" / "workload-result.json").read_text())
    assert res["valid"] is True and res["mechanism"] == mechanism and res["servers"] == 4
    assert res["hosts"] == ["jp-2", "jp-3", "jp-4", "jp-5"] and res["size"] == 100000
    assert res["checksum"] == res["reference"]
    assert [w["items"] for w in res["per_server"]] == [25000] * 4
    parts = res["distribute_s"] + res["sort_s"] + res["collect_s"] + res["merge_s"]
    assert res["elapsed_s"] == res["total_s"] == pytest.approx(parts)
    assert all(res[k] > 0 for k in ("distribute_s", "sort_s", "collect_s", "sort_max_s"))
    port = {"socket": "1302", "rmi": "1301", "corba": "1303"}[mechanism]
    out = subprocess.run(["tshark", "-r", str(pcap), "-d", "tcp.port==1303,giop", "-Y", f"tcp.len > 0 && tcp.port == {port}",
                          "-T", "fields", "-e", "ip.dsfield.dscp", "-e", "frame.protocols"],
                         capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert len(rows) >= 10, out[:500]
    assert {row[0] for row in rows} == {"40"}  # both directions: client and server mark
    if mechanism == "corba":
        assert any("giop" in row[1] for row in rows)
    assert _no_java(testbed)


def test_mpj_on_four_ranks_across_the_namespaces_via_the_cli(testbed, topo_path, tmp_path):
    r = qoslab("workload", "run", "--workload", "mpj", "--max-bytes", "4096", "--reps", "10",
               "--hosts", "jp-1,jp-2,jp-3,jp-4", "--out", str(tmp_path), "-t", str(topo_path), timeout=240)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    res = json.loads((tmp_path / "workload-result.json").read_text())
    assert res["valid"] is True and res["ranks"] == 4 and res["elapsed_s"] > 0
    sizes = [1 << i for i in range(13)]
    for op in ("pingpong", "socket_pingpong", "bcast"):
        assert [z["bytes"] for z in res[op]] == sizes, op
        assert all(0 < z["latency_s"]["min"] <= z["latency_s"]["p50"] <= z["latency_s"]["p99"] for z in res[op])
    assert res["barrier"]["n"] == 10 and res["barrier"]["p50"] > 0
    assert [a["doubles"] for a in res["allreduce"]] == [1, 1024]
    # the ranks talked across the namespaces: rank 1's log exists, the rendezvous served 4 ranks
    assert "table sent to 4 ranks" in (tmp_path / "workload-ports.log").read_text()
    assert _no_java(testbed)
