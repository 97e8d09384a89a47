"""The campaign runner: runs the pending trials of a campaign folder, each stored as it ends.

``qoslab campaign run --resume DIR`` runs exactly the trials that are not done: a trial
interrupted by a kill runs again, a finished one never. One campaign per testbed at a time
(an exclusive lock in /run/qoslab). A trial that fails (any error, expected or not) is recorded
with its message and retried up to ``retries`` times; the campaign goes on.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..errors import QoslabError
from ..executors.nodes import Nodes
from ..executors.ssh import run_id_for
from ..netplan import STATE_DIR
from ..procs import kill_pids, namespace_pids
from ..switchdev import open_switch
from ..testbed import Testbed
from ..topology import load_topology
from ..trafficgen import Calibration, calibrate, confirm_cluster_flood, load_flood
from ..trafficgen.definitions import check_cluster_flood
from ..workload import WorkerPool
from .folder import load_campaign_playbook
from .playbook import resolve_path
from .store import Store
from .trial import TrialEnv, run_trial


def _lock(name: str) -> IO[str]:
    """The exclusive campaign lock of testbed ``name`` (held until the process ends).
    Raises QoslabError naming the holder when another campaign has it."""
    STATE_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    lock = open(STATE_DIR / f"campaign-{name}.lock", "a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip()
        lock.close()
        raise QoslabError(f"testbed {name} is in use by another campaign ({holder}); "
                          "run one campaign per testbed at a time") from None
    lock.truncate(0)
    lock.write(f"pid {os.getpid()}")
    lock.flush()
    return lock


class Runner:
    """Runs the pending trials of a campaign folder (see the module doc).

    ``on_start(done, total)`` is called once the testbed is ready; ``on_trial(row)`` after each
    trial with its stored values (or ``error``); ``log(text)`` for remarks.
    """

    def __init__(self, out: Path, on_trial: Callable[[dict[str, Any]], None] = lambda r: None,
                 on_start: Callable[[int, int], None] = lambda done, total: None,
                 log: Callable[[str], None] = lambda s: None) -> None:
        self.out = out
        self.store = Store(out / "trials.sqlite")
        self.pb = load_campaign_playbook(out)
        self.topo = load_topology(resolve_path(self.pb.topology))
        self.flood = load_flood(resolve_path(self.pb.flood)) if any(c.congestion for c in self.pb.conditions) \
            else None
        self.on_trial, self.on_start, self.log = on_trial, on_start, log

    def run(self) -> Store:
        """Run every pending trial; returns the store. Raises QoslabError when the campaign cannot
        start (testbed, switch, lock, pre-flight); trial failures are recorded, not raised."""
        self._lock = _lock(self.topo.name)
        if self.topo.environment == "cluster" and self.flood is not None:  # refused before anything starts
            confirm_cluster_flood(self.topo, self.store.meta("confirm_flood"))
            check_cluster_flood(self.topo)
        tb = Testbed(self.topo) if self.topo.environment == "embedded" else None
        if self.store.meta("testbed_built") is None:  # first run: remember whether the campaign builds it
            with self.store.tx():
                self.store.db.execute("INSERT INTO meta VALUES ('testbed_built', ?)",
                                      (json.dumps(tb is not None and not tb.is_up()),))
        if tb is not None:
            tb.up()
            if self.pb.executor == "ssh":
                tb.sshd_up()
        built = bool(self.store.meta("testbed_built"))
        nodes = Nodes(self.pb.executor, self.topo, testbed=tb, local_root=self.out,
                      run_id=run_id_for(self.pb.name, self.out))
        env = None
        try:
            self._end_leftovers(tb, nodes)
            if self.pb.executor == "ssh" or tb is None:
                self._preflight(nodes)
            env = self._env(tb, nodes)
            self._loop(env)
        finally:
            if env is not None and env.pool is not None:
                env.pool.close()
            nodes.close()
            if built and tb is not None:
                tb.down()
        return self.store

    def _end_leftovers(self, tb: Testbed | None, nodes: Nodes) -> None:
        """A killed run may have left trial processes (JVMs, D-ITG, iperf3) in the hosts: they are
        this campaign's, end them by PID (the testbed's sshd stays). Over SSH also the processes
        marked with this campaign's run id and its old work roots on every node."""
        if tb is not None:
            keep = set(tb.sshd_pids())
            left = [p for ps in namespace_pids(tb.host_namespaces()).values() for p in ps if p not in keep]
            if left:
                self.log(f"ending {len(left)} processes left in the hosts by an interrupted run")
                kill_pids(left)
        if callable(getattr(nodes.factory, "end_leftovers", None)):
            ended = nodes.parallel(lambda ex: ex.end_leftovers(), self.topo.host_names)  # type: ignore[attr-defined]
            n = sum(len(v) for v in ended.values())
            if n:
                self.log(f"ended {n} processes an interrupted run left on the nodes")

    def _preflight(self, nodes: Nodes) -> None:
        """The pre-flight checks (the first step of every SSH or cluster campaign); their facts
        go into provenance.json. Raises QoslabError listing every failed check."""
        from ..preflight import preflight

        report = preflight(self.pb, nodes, log=self.log)
        prov_path = self.out / "provenance.json"
        prov = json.loads(prov_path.read_text()) if prov_path.exists() else {}
        prov.setdefault("preflight", []).append(report.to_json())
        tmp = prov_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(prov, indent=1))
        tmp.replace(prov_path)
        report.raise_for_failures()

    def _env(self, tb: Testbed | None, nodes: Nodes) -> TrialEnv:
        pb = self.pb
        pool = WorkerPool(nodes.executor_of, lambda h: self.topo.host(h).ip, self.out / "workers") \
            if pb.workers == "per-campaign" else None
        env = TrialEnv(pb=pb, topo=self.topo, out=self.out, testbed=tb, executor_of=nodes.executor_of,
                       switch=open_switch(pb.device, self.topo), flood=self.flood,  # type: ignore[arg-type]
                       pool=pool, log=self.log, captured=self.store.captured_conditions())
        if self.flood is not None and (pb.generator or self.flood.generator) == "ditg" and tb is not None:
            env.calibration = self._calibration(tb)
        return env

    def _calibration(self, tb: Testbed) -> Calibration | None:
        assert self.flood is not None
        cal = Calibration.load(self.topo.name, self.flood.payload_bytes)
        if cal is None and self.flood.pacing != "poll":
            self.log("calibrating the flood (qoslab flood calibrate) ...")
            cal = calibrate(self.topo, tb.executor, [(f.src, f.dst) for f in self.flood.flows],
                            self.out / "calibration", payload_bytes=self.flood.payload_bytes)
            cal.save()
        return cal

    def _loop(self, env: TrialEnv) -> None:
        pending = self.store.pending()
        total = sum(self.store.counts().values())
        self.on_start(total - len(pending), total)
        for idx, cname, trial, warmup, attempts in pending:
            cond = self.pb.condition(cname)
            due = self.pb.capture == "every" or (self.pb.capture == "first" and cname not in env.captured
                                                 and not warmup)
            info = {"idx": idx, "condition": cname, "trial": trial, "warmup": warmup}
            while True:
                attempts += 1
                self.store.record(idx, status="running", attempts=attempts, started=time.time())
                try:
                    row = run_trial(env, cond, self.out / "trials" / f"{idx:04d}", due)
                except Exception as e:  # noqa: BLE001 - any failure of a trial is recorded, the campaign goes on
                    msg = str(e) if isinstance(e, QoslabError) else f"{type(e).__name__}: {e}"
                    if self._failed(env, idx, cname, attempts, msg):
                        self.on_trial({**info, "error": msg})
                        break
                    continue
                self.store.record(idx, status="done", finished=time.time(), error=None, **row)
                if due:
                    env.captured.add(cname)
                self.on_trial({**info, **row})
                break

    def _failed(self, env: TrialEnv, idx: int, cname: str, attempts: int, msg: str) -> bool:
        """Record a failed attempt; True when no retry is left."""
        final = attempts > self.pb.retries
        self.store.record(idx, status="failed" if final else "pending", error=msg[:2000], finished=time.time())
        self.log(f"trial {idx} ({cname}) attempt {attempts} failed: {msg}")
        env.current_config = None  # re-push next time: the switch state is unknown
        if env.pool is not None:
            env.pool.close()  # fresh workers for the retry
        return final
