"""Helpers shared by the campaign tests that kill and interrupt a real campaign (test_campaign's
chaos test, test_interrupt, the ssh and Slurm campaigns): the chaos campaign's files, a renamed
topology and a shipped playbook pointed at it, a run that must succeed, its trial rows, and the
trial processes left in a testbed's namespaces."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from qoslab.testbed import Testbed
from qoslab.testbed.procs import namespace_pids

from .conftest import free_port, unique_name

DRIVER = Path(__file__).parent / "chaos_driver.py"
PLAYBOOKS = Path(__file__).parents[2] / "playbooks"
N = 3                     # trials per condition
TIMEOUT_S = 40            # the playbook's trial_timeout_s
#: Process names a trial starts (D-ITG, JVMs, the capture, the lifetime wrapper, iperf3).
TRIAL_PROCS = ("ITGSend", "ITGRecv", "ITGDec", "java", "dumpcap", "timeout", "iperf3")


def trial_rows(db: Path) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT idx, condition, trial, status, finished, attempts, failures, valid "
                           "FROM trials ORDER BY idx").fetchall()
    except sqlite3.OperationalError:  # the campaign is being made
        return []
    finally:
        con.close()


def age_s(pid: int) -> float | None:
    try:
        start = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return None
    return uptime - start / os.sysconf("SC_CLK_TCK")


def trial_procs(tb: Testbed) -> dict[int, tuple[str, float | None]]:
    """D-ITG, JVM, capture and lifetime-wrapper processes in the testbed's hosts and SPAN namespace."""
    out = {}
    for ps in namespace_pids([*tb.host_namespaces(), tb.span_ns]).values():
        for p in ps:
            try:
                comm = Path(f"/proc/{p}/comm").read_text().strip()
            except OSError:
                continue
            if comm in TRIAL_PROCS:
                out[p] = (comm, age_s(p))
    return out


def topology_copy(tmp_path: Path, name: str, base: str = "ecenet") -> Path:
    """``tmp_path/topo.yaml``: the shipped ``playbooks/topologies/BASE.yaml`` renamed ``name`` with
    a free management port."""
    topo = yaml.safe_load((Path(__file__).parents[2] / "playbooks" / "topologies" / f"{base}.yaml").read_text())
    topo["name"] = name
    topo["switch"]["management"]["port"] = free_port()
    tfile = tmp_path / "topo.yaml"
    tfile.write_text(yaml.safe_dump(topo))
    return tfile


def campaign_topology(tmp_path: Path, ecenet_data: dict, suffix: str, **changes) -> Path:
    """``tmp_path/topo-SUFFIX.yaml``: ``ecenet_data`` (the ecenet fixture's plain data) named
    ``unique_name(suffix)`` with a free management port, top-level keys replaced by ``changes``
    (``ssh={...}``, ``slurm={...}``, even ``name=``)."""
    topo = {**ecenet_data, "name": unique_name(suffix), **changes}
    topo["switch"]["management"]["port"] = free_port()
    path = tmp_path / f"topo-{suffix}.yaml"
    path.write_text(yaml.safe_dump(topo))
    return path


def shipped_playbook(tmp_path: Path, shipped: str, topo: Path, **changes) -> Path:
    """``tmp_path/pb.yaml``: the shipped ``playbooks/SHIPPED.yaml`` on topology file ``topo``,
    top-level keys replaced by ``changes``."""
    pb = {**yaml.safe_load((PLAYBOOKS / f"{shipped}.yaml").read_text()), "topology": str(topo), **changes}
    path = tmp_path / "pb.yaml"
    path.write_text(yaml.safe_dump(pb))
    return path


def chaos_files(tmp_path: Path, name: str, **changes: Any) -> tuple[Path, Path]:
    """The chaos campaign's (topology, playbook) files: one flood flow jp-3 -> jp-1 at 1.1x, two
    congested conditions of N trials, capture every trial; top-level playbook keys replaced by
    ``changes``."""
    tfile = topology_copy(tmp_path, name)
    flood = {"name": "chaos", "rate": "1.1x", "pacing": "poll", "flows": [{"src": "jp-3", "dst": "jp-1"}]}
    ffile = tmp_path / "flood.yaml"
    ffile.write_text(yaml.safe_dump(flood))
    pb = {"name": "chaos", "topology": str(tfile), "device": "virtual", "flood": str(ffile),
          "workload": {"hosts": ["jp-1", "jp-2"], "size": "A", "frames": 1},
          "conditions": [{"name": "congestion fifo", "congestion": True, "profile": "fifo"},
                         {"name": "congestion thesis", "congestion": True, "profile": "thesis"}],
          "trials": N, "order": "interleaved", "seed": 7, "capture": "every", "settle": "fixed",
          "settle_s": 0.3, "trial_timeout_s": TIMEOUT_S, "retries": 2, **changes}
    pfile = tmp_path / "chaos.yaml"
    pfile.write_text(yaml.safe_dump(pb))
    return tfile, pfile


def qoslab_ok(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """``qoslab ARGS...`` as a user runs it, asserting exit 0 (the output's tail shown otherwise)."""
    r = subprocess.run([sys.executable, "-m", "qoslab", *args], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def trial_states(folder: Path, columns: str = "condition, status, valid") -> list[tuple]:
    """The ``columns`` (default condition, status, valid) of every trial of the campaign in ``folder``."""
    con = sqlite3.connect(folder / "trials.sqlite")
    try:
        return con.execute(f"SELECT {columns} FROM trials").fetchall()
    finally:
        con.close()


def smoke_run(pb: Path, folder: Path, trials: int) -> subprocess.CompletedProcess:
    """``qoslab campaign run PB --out FOLDER --smoke`` exits 0 and leaves ``trials`` trials, each
    done and valid; returns the finished run (its output names every failed attempt)."""
    r = qoslab_ok("campaign", "run", str(pb), "--out", str(folder), "--smoke")
    rows = trial_states(folder)
    assert len(rows) == trials and all(row[1] == "done" and row[2] == 1 for row in rows), rows
    return r


def kill_run(args: list[str], phase: str, occurrence: int, seed: int) -> subprocess.CompletedProcess:
    """``qoslab ARGS...`` under chaos_driver.py, SIGKILLed at the ``occurrence``-th ``phase``
    (push, flood, workload, capture, commit; the moment within it drawn from ``seed``, see
    chaos_driver.py); 180 s at most."""
    return subprocess.run([sys.executable, str(DRIVER), phase, str(occurrence), str(seed), "--", *args],
                          capture_output=True, text=True, timeout=180)
