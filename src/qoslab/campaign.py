"""Campaigns: many trials over a matrix of conditions, stored as they end, resumable.

A playbook (``playbooks/*.yaml``) names the topology, the switch device, the workload, the flood,
the conditions (congestion on/off x QoS profile, optional workload overrides), trials per
condition, the order (``interleaved``: shuffled with a recorded seed; ``blocked``: one condition
after another as in the thesis), warm-up trials, per-trial timeout, capture policy and retries.

The campaign folder holds ``playbook.yaml`` (resolved), ``provenance.json`` (tool versions,
kernel, qoslab commit, seed), ``trials.sqlite`` (the schedule and one row per trial, committed as
each trial ends), per-trial artifacts under ``trials/NNNN/``, and after the last trial
``trials.csv`` and ``stats.json``. ``qoslab campaign run --resume DIR`` runs exactly the trials
that are not done: a trial interrupted by a kill is run again, a finished one never.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .errors import QoslabError
from .topology import repo_root
from .yamlio import FieldProblem, load_model


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WorkloadSpec(_Strict):
    """The RayTracer of every trial (see qoslab.workload.WorkloadSettings)."""

    hosts: list[str]
    size: str = "A"
    frames: int = Field(1, ge=1)
    rows_per_call: int | Literal["all"] = "all"
    codec: Literal["serializable", "externalizable"] = "serializable"
    registry_port: int = 1099
    export_port: int = 1100
    dscp: int | None = Field(None, ge=0, le=63)
    timeout_s: float = Field(120.0, gt=0)


class Condition(_Strict):
    """One cell of the matrix: congestion on/off and a QoS profile (plus workload overrides)."""

    name: str
    congestion: bool
    profile: str
    workload: dict = Field(default_factory=dict)


class Playbook(_Strict):
    """A campaign (see module doc). Paths are relative to the repository."""

    name: str
    description: str = ""
    topology: str = "playbooks/topologies/ecenet.yaml"
    device: str = "testbed"
    workload: WorkloadSpec
    flood: str = "traffic-gen/thesis-flood.yaml"
    conditions: list[Condition]
    trials: int = Field(50, ge=2)
    order: Literal["interleaved", "blocked"] = "interleaved"
    seed: int | None = None
    warmup: int = Field(0, ge=0)
    trial_timeout_s: float = Field(600.0, gt=0)
    capture: Literal["off", "first", "every"] = "off"
    capture_port: str = "Gi1/0/21"
    capture_host: str | None = None
    retries: int = Field(2, ge=0)
    settle: Literal["saturated", "fixed"] = Field(
        "saturated", description="when the workload starts after the flood: `saturated` = as soon as every "
                                 "flooded switch port sends >= 95 % of the link rate (the flood is established), "
                                 "at most settle_s; `fixed` = after settle_s")
    settle_s: float = Field(1.0, ge=0, description="seconds: the longest wait (saturated) or the wait (fixed) "
                                                   "between flood start and workload start")
    workers: Literal["per-campaign", "per-trial"] = Field(
        "per-campaign", description="worker JVMs kept up across trials (warm JIT, one JVM start per trial) "
                                    "or started fresh for every trial (as the thesis's JavaParty runs)")
    keep_ditg_logs: bool = Field(False, description="keep the binary ITGSend/ITGRecv logs (144 bytes per packet "
                                                    "each: ~7 MB per log per 10 s at 4768 packets/s) after ITGDec "
                                                    "decoded them; kept anyway when decoding failed")

    @field_validator("capture", mode="before")
    @classmethod
    def _capture_off(cls, v):
        return "off" if v is False else v  # YAML 1.1 reads a bare `off` as false

    @field_validator("conditions")
    @classmethod
    def _conds(cls, v):
        names = [c.name for c in v]
        if len(set(names)) != len(names):
            raise ValueError(f"condition names must be unique: {names}")
        if not v:
            raise ValueError("a campaign needs at least one condition")
        return v


def load_playbook(path: str | Path) -> Playbook:
    """Read a playbook; errors name file, line and field."""
    pb = load_model(path, Playbook)
    for i, c in enumerate(pb.conditions):
        if not (repo_root() / "qos-profiles" / f"{c.profile}.yaml").exists() and not Path(c.profile).exists():
            raise QoslabError(f"{path}: conditions[{i}].profile: no profile {c.profile!r} in qos-profiles/")
        bad = set(c.workload) - set(WorkloadSpec.model_fields)
        if bad:
            raise QoslabError(f"{path}: conditions[{i}].workload: unknown field(s) {sorted(bad)}")
    return pb


@dataclass(frozen=True)
class ScheduledTrial:
    idx: int
    condition: str
    trial: int      # 1-based within its condition; warm-up trials are 0, -1, ...
    warmup: bool


def schedule(pb: Playbook, seed: int) -> list[ScheduledTrial]:
    """The order of all trials (pure): warm-ups first (one round over the conditions each), then
    ``trials`` per condition, interleaved = shuffled with ``seed``, blocked = condition by condition."""
    out: list[tuple[str, int, bool]] = []
    for w in range(pb.warmup):
        out += [(c.name, -w, True) for c in pb.conditions]
    main = [(c.name, t, False) for c in pb.conditions for t in range(1, pb.trials + 1)]
    if pb.order == "interleaved":
        random.Random(seed).shuffle(main)
    out += main
    return [ScheduledTrial(i, c, t, w) for i, (c, t, w) in enumerate(out)]


SCHEMA = """
CREATE TABLE IF NOT EXISTS trials (
  idx INTEGER PRIMARY KEY, condition TEXT NOT NULL, trial INTEGER NOT NULL, warmup INTEGER NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
  elapsed_s REAL, total_s REAL, checksum INTEGER, valid INTEGER,
  flood_json TEXT, capture_summary TEXT, config_hash TEXT, phases_json TEXT, error TEXT,
  started REAL, finished REAL, busy_max_s REAL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
#: Columns added to ``trials`` after the first schema (name -> SQL type).
ADDED_COLUMNS = {"busy_max_s": "REAL"}


class Store:
    """The campaign's SQLite results store (one row per scheduled trial)."""

    def __init__(self, path: Path):
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)  # explicit transactions
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        cols = {r[1] for r in self.db.execute("PRAGMA table_info(trials)")}
        for col, typ in ADDED_COLUMNS.items():  # a campaign folder from an older qoslab resumes too
            if col not in cols:
                self.db.execute(f"ALTER TABLE trials ADD COLUMN {col} {typ}")

    def init(self, trials: list[ScheduledTrial], meta: dict) -> None:
        with self.tx():
            self.db.executemany("INSERT INTO trials (idx, condition, trial, warmup) VALUES (?,?,?,?)",
                                [(t.idx, t.condition, t.trial, int(t.warmup)) for t in trials])
            self.db.executemany("INSERT INTO meta VALUES (?,?)", [(k, json.dumps(v)) for k, v in meta.items()])

    def tx(self):
        db = self.db

        class _Tx:
            def __enter__(self):
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, et, e, tb):
                db.execute("ROLLBACK" if et else "COMMIT")
        return _Tx()

    def meta(self, key: str):
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def pending(self) -> list[tuple[int, str, int, bool, int]]:
        """(idx, condition, trial, warmup, attempts) of trials not done, in schedule order."""
        return [(r[0], r[1], r[2], bool(r[3]), r[4]) for r in self.db.execute(
            "SELECT idx, condition, trial, warmup, attempts FROM trials WHERE status != 'done' "
            "AND NOT (status = 'failed') ORDER BY idx")]

    def record(self, idx: int, **cols) -> None:
        keys = ", ".join(f"{k}=?" for k in cols)
        with self.tx():
            self.db.execute(f"UPDATE trials SET {keys} WHERE idx=?", (*cols.values(), idx))

    def counts(self) -> dict[str, int]:
        return dict(self.db.execute("SELECT status, COUNT(*) FROM trials GROUP BY status").fetchall())

    def close(self) -> None:
        """Close the database connection (the store is unusable afterwards)."""
        self.db.close()

    def captured_conditions(self) -> set[str]:
        """Names of the conditions that already have a finished trial with a capture summary."""
        return {c for (c,) in self.db.execute("SELECT DISTINCT condition FROM trials WHERE status='done' "
                                              "AND capture_summary IS NOT NULL")}

    def done_times(self) -> dict[str, list[float]]:
        out: dict[str, list[float]] = {}
        for c, e in self.db.execute("SELECT condition, elapsed_s FROM trials WHERE status='done' AND warmup=0 "
                                    "AND valid=1 ORDER BY idx"):
            out.setdefault(c, []).append(e)
        return out


def _version(cmd: list[str]) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return ((r.stdout or "") + (r.stderr or "")).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def provenance(seed: int) -> dict:
    """Tool versions, kernel, qoslab commit and the random seed of a campaign."""
    return {
        "seed": seed,
        "qoslab_commit": _version(["git", "-C", str(repo_root()), "rev-parse", "HEAD"]),
        "kernel": os.uname().release,
        "java": _version(["java", "-version"]),
        "d_itg": _version(["dpkg-query", "-W", "-f", "${Version}", "d-itg"]),
        "iproute2": _version(["ip", "-V"]),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def create(pb: Playbook, pb_path: Path, out: Path, trials: int | None = None) -> Store:
    """Make a new campaign folder with its schedule. Raises QoslabError if it already exists."""
    if (out / "trials.sqlite").exists():
        raise QoslabError(f"{out} already holds a campaign: resume it with --resume {out}")
    out.mkdir(parents=True, exist_ok=True)
    if trials is not None:
        pb = pb.model_copy(update={"trials": trials})
    seed = pb.seed if pb.seed is not None else random.SystemRandom().randrange(2**31)
    pb = pb.model_copy(update={"seed": seed})
    (out / "playbook.yaml").write_text(yaml.safe_dump(pb.model_dump(mode="json"), sort_keys=False))
    (out / "provenance.json").write_text(json.dumps({**provenance(seed), "playbook": str(pb_path)}, indent=1))
    store = Store(out / "trials.sqlite")
    store.init(schedule(pb, seed), {"name": pb.name, "seed": seed})
    return store


#: What a trials CSV can hold per trial (seconds): the render phase's wall time, or its network
#: wait = render time minus the busiest worker's render time (what the slowest worker spent not
#: computing: waiting for requests, results and retransmissions; the part a switch can change).
METRICS = {"elapsed_s": "elapsed_s", "network_s": "elapsed_s - busy_max_s"}


def export_csv(store: Store, path: Path, metric: str = "elapsed_s") -> int:
    """Write ``condition,trial,elapsed_s`` rows of the done, valid, non-warm-up trials (the column
    keeps its name so the statistics read either file; ``metric`` chooses its content, see
    METRICS); returns the number of rows. Trials without the metric (older stores) are left out."""
    if metric not in METRICS:
        raise QoslabError(f"unknown metric {metric!r}: one of {sorted(METRICS)}")
    rows = store.db.execute(f"SELECT condition, trial, {METRICS[metric]} FROM trials WHERE status='done' "
                            "AND warmup=0 AND valid=1 ORDER BY idx").fetchall()
    n = 0
    with open(path, "w") as f:
        f.write("condition,trial,elapsed_s\n")
        for c, t, e in rows:
            if "," in c:
                raise QoslabError(f"condition name {c!r} contains a comma (not allowed in trials.csv)")
            if e is not None:
                f.write(f"{c},{t},{e!r}\n")
                n += 1
    return n


def campaign_stats(pb: Playbook, store: Store, folder: Path) -> dict:
    """trials.csv + stats.json (render times) and, when the trials hold worker busy times,
    trials-network.csv + stats-network.json (network wait, see METRICS). Returns stats.json.
    Raises QoslabError when fewer than 2 valid trials exist."""
    if export_csv(store, folder / "trials.csv") < 2:
        raise QoslabError(f"{folder}: fewer than 2 valid trials, no statistics")
    stats = run_stats(pb, folder / "trials.csv", folder / "stats.json")
    total = store.db.execute("SELECT COUNT(*) FROM trials WHERE status='done' AND warmup=0 AND valid=1").fetchone()[0]
    if export_csv(store, folder / "trials-network.csv", "network_s") == total:
        run_stats(pb, folder / "trials-network.csv", folder / "stats-network.json")
    return stats


ANALYSIS_JAR = repo_root() / "analysis" / "target" / "qoslab-analysis-0.1.0.jar"


def run_stats(pb: Playbook, csv: Path, out: Path) -> dict:
    """Run the Java statistics on trials.csv: every condition, congestion vs none under each
    profile, each QoS profile vs fifo with and without congestion, and the recovery ratio of each
    QoS profile. Returns stats.json as a dict."""
    conds = {(c.congestion, c.profile): c.name for c in pb.conditions}
    compare, recovery = [], []
    for (cong, prof), name in conds.items():
        if cong and (False, prof) in conds:
            compare.append(f"{conds[(False, prof)]}|{name}")
        if prof != "fifo" and (cong, "fifo") in conds:
            compare.append(f"{conds[(cong, 'fifo')]}|{name}")
        if cong and prof != "fifo" and (False, "fifo") in conds and (True, "fifo") in conds:
            recovery.append(f"{conds[(False, 'fifo')]}|{conds[(True, 'fifo')]}|{name}")
    argv = ["java", "-cp", f"{ANALYSIS_JAR}:{ANALYSIS_JAR.parent / 'lib'}/*", "org.qoslab.analysis.Main", "stats",
            "--csv", str(csv), "--out", str(out)]
    # TOST reference: the playbook's `baseline:` when it has one, else the uncongested fifo condition
    baseline = getattr(pb, "baseline", None) or conds.get((False, "fifo"))
    if baseline:
        argv += ["--baseline", baseline]
    margin = getattr(pb, "equivalence_margin", None)  # fraction of the baseline mean (Java default 0.02)
    if margin is not None:
        argv += ["--tost-margin", str(margin)]
    for c in compare:
        argv += ["--compare", c]
    for r in recovery:
        argv += ["--recovery", r]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise QoslabError(f"statistics failed: {p.stderr.strip()[-300:]}")
    return json.loads(out.read_text())


# --------------------------------------------------------------------------------------------- the runner
def _config_hash(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


class Runner:
    """Runs the pending trials of a campaign folder on the embedded testbed (see module doc).

    ``on_trial(row)`` is called after each trial with its stored values (for progress display).
    """

    def __init__(self, out: Path, on_trial: Callable[[dict], None] = lambda r: None,
                 on_start: Callable[[int, int], None] = lambda done, total: None,
                 log: Callable[[str], None] = lambda s: None):
        from .trafficgen import load_flood
        from .topology import load_topology

        self.out = out
        self.store = Store(out / "trials.sqlite")
        self.pb = Playbook.model_validate(yaml.safe_load((out / "playbook.yaml").read_text()))
        self.topo = load_topology(repo_root() / self.pb.topology)
        self.flood = load_flood(repo_root() / self.pb.flood)
        self.conds = {c.name: c for c in self.pb.conditions}
        self.on_trial, self.on_start, self.log = on_trial, on_start, log
        self.current_profile: str | None = None

    def run(self) -> Store:
        from .switch import Device, testbed_device
        from .testbed import Testbed
        from .trafficgen import Calibration, calibrate

        import fcntl

        from .testbed import STATE_DIR, _kill_pids, namespace_pids

        STATE_DIR.mkdir(parents=True, exist_ok=True)
        lock = open(STATE_DIR / f"campaign-{self.topo.name}.lock", "a+")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            raise QoslabError(f"testbed {self.topo.name} is in use by another campaign ({lock.read().strip()}); "
                              "run one campaign per testbed at a time") from None
        lock.truncate(0)
        lock.write(f"pid {os.getpid()}, folder {self.out}")
        lock.flush()
        self._lock = lock  # held until this process ends
        tb = Testbed(self.topo)
        if self.store.meta("testbed_built") is None:  # first run: remember whether the campaign builds it
            with self.store.tx():
                self.store.db.execute("INSERT INTO meta VALUES ('testbed_built', ?)", (json.dumps(not tb.is_up()),))
        tb.up()
        built = bool(self.store.meta("testbed_built"))
        # a killed run may have left trial processes (JVMs, D-ITG) in the hosts: they are ours, end them
        hosts = [tb.namespace(h.name) for h in self.topo.hosts]
        left = [p for ps in namespace_pids(hosts).values() for p in ps]
        if left:
            self.log(f"ending {len(left)} processes left in the hosts by an interrupted run")
            _kill_pids(left)
        from .workload import WorkerPool

        self.pool = None
        try:
            self.tb = tb
            if self.pb.workers == "per-campaign":
                self.pool = WorkerPool(tb.executor, lambda h: self.topo.host(h).ip, self.out / "workers")
            self.dev = testbed_device(self.topo) if self.pb.device == "testbed" else \
                load_model(repo_root() / self.pb.device, Device)
            self.cal = Calibration.load(self.topo.name, self.flood.payload_bytes)
            if self.cal is None and self.flood.pacing != "poll" and any(c.congestion for c in self.pb.conditions):
                self.log("calibrating the flood (qoslab flood calibrate) ...")
                self.cal = calibrate(self.topo, tb.executor, [(f.src, f.dst) for f in self.flood.flows],
                                     self.out / "calibration", payload_bytes=self.flood.payload_bytes)
                self.cal.save()
            pending = self.store.pending()
            total = sum(self.store.counts().values())
            self.on_start(total - len(pending), total)
            captured = self.store.captured_conditions()  # a resumed campaign does not capture again
            for idx, cname, trial, warmup, attempts in pending:
                cond = self.conds[cname]
                due = self.pb.capture == "every" or (self.pb.capture == "first" and cname not in captured
                                                     and not warmup)
                while True:
                    attempts += 1
                    tdir = self.out / "trials" / f"{idx:04d}"
                    self.store.record(idx, status="running", attempts=attempts, started=time.time())
                    try:
                        row = self._trial(cond, tdir, due)
                        self.store.record(idx, status="done", finished=time.time(), error=None, **row)
                        if due:
                            captured.add(cname)
                        self.on_trial({"idx": idx, "condition": cname, "trial": trial, "warmup": warmup, **row})
                        break
                    except QoslabError as e:
                        failed = attempts > self.pb.retries
                        self.store.record(idx, status="failed" if failed else "pending", error=str(e)[:2000],
                                          finished=time.time())
                        self.log(f"trial {idx} ({cname}) attempt {attempts} failed: {e}")
                        self.current_profile = None  # re-push next time: the switch state is unknown
                        if self.pool is not None:
                            self.pool.close()  # fresh workers for the retry
                        if failed:
                            self.on_trial({"idx": idx, "condition": cname, "trial": trial, "warmup": warmup,
                                           "error": str(e)})
                            break
        finally:
            if self.pool is not None:
                self.pool.close()
            if built:
                tb.down()
        return self.store

    def _profile_lines(self, cond: Condition) -> list[str]:
        from .profiles import load_profile, render

        lines = render(load_profile(cond.profile), self.topo, {"workload": self.pb.workload.hosts})
        if self.pb.capture != "off" and not any(f"destination interface {self.pb.capture_port}" in l for l in lines):
            src = self.topo.host(self.pb.capture_host or self.pb.workload.hosts[0]).port
            lines += [f"monitor session 1 source interface {src}",
                      f"monitor session 1 destination interface {self.pb.capture_port}"]
        return lines

    def _trial(self, cond: Condition, tdir: Path, capture_due: bool) -> dict:
        from .capture import LiveCapture
        from .executor import NetnsExecutor
        from .switch import push
        from .topology import linux_ifname
        from .trafficgen import FloodRun
        from .workload import WorkloadSettings, run_workload

        t = {"start": time.monotonic()}
        saturated = None  # `saturated` settle: did every flooded port reach the link rate before the workload?
        tdir.mkdir(parents=True, exist_ok=True)
        lines = self._profile_lines(cond)
        key = _config_hash(lines)
        if self.current_profile != key:
            push(lines, self.dev, tdir / "switch", cond.profile)
            self.current_profile = key
        t["switch"] = time.monotonic()
        cap = None
        if capture_due:
            host = self.topo.host(self.pb.capture_host or self.pb.workload.hosts[0])
            cap = LiveCapture(NetnsExecutor("span", self.tb.span_ns), linux_ifname(self.pb.capture_port),
                              tdir / "capture", host.ip, "flow", write=tdir / "capture" / "capture.pcap")
            cap.start()
        t["capture_start"] = time.monotonic()
        flood = None
        try:
            if cond.congestion:
                ports = sorted({self.topo.host(f.dst).port for f in self.flood.flows})
                flood = FloodRun(self.flood, self.topo, self.tb.executor, tdir / "flood", calibration=self.cal,
                                 keep_logs=self.pb.keep_ditg_logs)
                flood.start()
                if flood.errors:
                    raise QoslabError("flood did not start: " + "; ".join(flood.errors))
                if self.pb.settle == "fixed":
                    time.sleep(self.pb.settle_s)
                else:
                    saturated = self.tb.wait_ports_saturated(
                        ports, self.pb.settle_s + max((f.start_delay_s for f in flood.flows), default=0))
                    if not saturated:
                        self.log(f"the flood did not saturate every port of {', '.join(ports)} within "
                                 f"{self.pb.settle_s:g} s; the workload starts anyway (phases: saturated false)")
            t["flood_start"] = time.monotonic()
            spec = {**self.pb.workload.model_dump(), **cond.workload}
            settings = WorkloadSettings(**{k: v for k, v in spec.items()})
            run = run_workload(settings, self.tb.executor, lambda h: self.topo.host(h).ip, tdir / "workload",
                               pool=self.pool)
            t["workload"] = time.monotonic()
        finally:
            fres = flood.stop() if flood is not None else None
            summary = cap.stop() if cap is not None else None
        t["stop"] = time.monotonic()
        r = run.result
        if r.get("valid") is not True:
            raise QoslabError(f"workload failed: {r.get('error') or 'checksum ' + str(r.get('checksum'))}")
        if fres is not None and not fres.ok:
            raise QoslabError("flood failed: " + "; ".join(fres.errors))
        flood_json = None if fres is None else json.dumps(
            [{"src": f.src, "dst": f.dst, "sent_pps": round(f.sent_pps), "received_wire_bps": round(f.received_wire_bps),
              "loss_pct": round(f.loss_pct, 2), "delay_avg_s": f.delay_avg_s} for f in fres.flows])
        keys = list(t)
        phases = {k: round(t[k] - t[keys[i - 1]], 3) for i, k in enumerate(keys) if i}
        if saturated is not None:
            phases["saturated"] = saturated
        busy = [w.get("busy_s") for w in r.get("per_worker", []) if w.get("busy_s") is not None]
        return {"elapsed_s": r["elapsed_render_s"], "total_s": r["elapsed_total_s"], "checksum": r["checksum"],
                "busy_max_s": max(busy) if busy else None,
                "valid": 1, "flood_json": flood_json,
                "capture_summary": str((tdir / "capture" / "summary.json").relative_to(self.out)) if summary else None,
                "config_hash": key, "phases_json": json.dumps(phases)}
