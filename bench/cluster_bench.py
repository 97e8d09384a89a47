"""Cluster benchmark: what driving the nodes over SSH costs, on the embedded testbed with an sshd
in every host namespace (the ssh executor connects from jp-1's namespace, as a head node would).

- ``harness_overhead_s``: per trial, wall time minus render time, for the same playbook (4
  workload hosts, size A, {no congestion, congestion} x fifo, worker JVMs kept per campaign) run
  with ``executor: netns`` and with ``executor: ssh``; median per condition and the difference.
  Target (issue 12): ssh at most 0.3 s more per trial.
- ``worker_start_8_nodes_s``: ``WorkerPool.ensure`` of one worker JVM on each of the 8 hosts
  (started in parallel, until every RMI registry listens): netns, ssh with fresh connections
  (cold: includes logging in to 8 nodes) and with open ones (warm); plus the 8 logins alone.
"""

from __future__ import annotations

import socket
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from qoslab.campaign import Runner, create
from qoslab.executors.nodes import Nodes
from qoslab.testbed import Testbed
from qoslab.topology import load_variant
from qoslab.trials.playbook import Playbook
from qoslab.workloads.raytracer import WorkerPool, WorkloadSettings

TARGET_EXTRA_S = 0.3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker_start(tb: Testbed, reps: int, out_dir: Path) -> dict:
    settings = WorkloadSettings(hosts=tb.topo.host_names, size="A")
    ip = lambda h: tb.topo.host(h).ip  # noqa: E731
    res: dict[str, list[float]] = {"netns": [], "ssh_cold": [], "ssh_warm": [], "ssh_login_8_nodes": []}
    for i in range(reps):
        for kind in ("netns", "ssh"):
            nodes = Nodes(kind, tb.topo, testbed=tb, local_root=out_dir, run_id=f"bench{i}")
            if kind == "ssh":
                t0 = time.perf_counter()
                nodes.parallel(lambda ex: ex.run(["true"]), tb.topo.host_names)
                res["ssh_login_8_nodes"].append(time.perf_counter() - t0)
                nodes.close()
                nodes = Nodes(kind, tb.topo, testbed=tb, local_root=out_dir, run_id=f"bench{i}")
            pool = WorkerPool(nodes.executor_of, ip, out_dir / f"{kind}-{i}")
            try:
                t0 = time.perf_counter()
                pool.ensure(settings)
                res["netns" if kind == "netns" else "ssh_cold"].append(time.perf_counter() - t0)
                if kind == "ssh":
                    pool.close()
                    t0 = time.perf_counter()
                    pool.ensure(settings)
                    res["ssh_warm"].append(time.perf_counter() - t0)
            finally:
                pool.close()
                nodes.close()
    return {k: {"samples": [round(x, 3) for x in v], "median": round(statistics.median(v), 3)} for k, v in res.items()}


def _campaign(tb: Testbed, topo_file: Path, executor: str, trials: int, out: Path) -> dict[str, list[float]]:
    pb = Playbook.model_validate({
        "name": f"bench-{executor}", "topology": str(topo_file), "executor": executor, "device": "virtual",
        "workload": {"hosts": ["jp-1", "jp-2", "jp-3", "jp-4"], "size": "A", "frames": 1, "rows_per_call": 5},
        "flood": "traffic-gen/campaign-flood.yaml", "trials": trials, "warmup": 1, "seed": 12, "capture": "off",
        "conditions": [{"name": "no congestion", "congestion": False, "profile": "fifo"},
                       {"name": "congestion", "congestion": True, "profile": "fifo"}]})
    folder = out / executor
    store = create(pb, topo_file, folder)
    store.close()
    store = Runner(folder).run()
    rows = [(r.condition, r.finished - r.started, r.elapsed_s) for r in store.trials(status="done", warmup=False)
            if r.finished is not None and r.started is not None and r.elapsed_s is not None]
    store.close()
    over: dict[str, list[float]] = {}
    for cond, wall, render in rows:
        over.setdefault(cond, []).append(wall - render)
    return over


def bench_cluster(repeat: int) -> dict:
    """Median harness overhead per trial (seconds) ssh vs netns, and worker start on 8 nodes."""
    topo = load_variant("benchssh", _free_port())
    tb = Testbed(topo)
    tb.down()
    tb.up()
    tb.sshd_up()
    try:
        with tempfile.TemporaryDirectory() as d:
            out = Path(d)
            topo_file = out / "topo.yaml"
            topo_file.write_text(yaml.safe_dump(topo.model_dump(mode="json"), sort_keys=False))
            start = _worker_start(tb, max(2, min(repeat, 5)), out / "workers")
            trials = max(3, min(repeat, 8))
            over = {ex: _campaign(tb, topo_file, ex, trials, out) for ex in ("netns", "ssh")}
    finally:
        tb.down()
    med = {ex: {c: round(statistics.median(v), 3) for c, v in o.items()} for ex, o in over.items()}
    extra = {c: round(med["ssh"][c] - med["netns"][c], 3) for c in med["netns"]}
    return {
        "harness_overhead_s": {"median": med, "samples": {ex: {c: [round(x, 3) for x in v] for c, v in o.items()}
                                                          for ex, o in over.items()},
                               "ssh_extra_per_trial": extra, "target_extra": TARGET_EXTRA_S,
                               "met": all(v <= TARGET_EXTRA_S for v in extra.values()), "trials_per_condition": trials},
        "worker_start_8_nodes_s": start,
    }
