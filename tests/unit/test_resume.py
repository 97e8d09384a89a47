"""Campaign runner semantics without a testbed (the trial itself is replaced): unexpected errors
become failed trials, the trial timeout, retries per run, killed attempts, failed trials run again
on resume, a fresh folder per attempt, the input snapshot, provenance segments (issue 14,
items 1, 2 and 7)."""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from hier_config.exceptions import DuplicateChildError
from netmiko.exceptions import ReadTimeout

import qoslab.campaign.attempts as attempts_mod
import qoslab.campaign.runner as runner_mod
from conftest import ECENET, REPO
from qoslab.campaign import Runner, Store, create, load_playbook
from qoslab.campaign.trialenv import TrialEnv
from qoslab.errors import ConfigError, QoslabError


def _folder(tmp_path: Path, **changes) -> Path:
    """A campaign folder of a 2 x 2 playbook on copies of the topology and profiles (no testbed)."""
    topo = tmp_path / "topo.yaml"
    topo.write_text(ECENET.read_text())
    prof = tmp_path / "fifo.yaml"
    prof.write_text((REPO / "qos-profiles" / "fifo.yaml").read_text())
    data = {"name": "t", "topology": str(topo), "workload": {"hosts": ["jp-1", "jp-2"], "size": "A"},
            "conditions": [{"name": "a", "congestion": False, "profile": str(prof)},
                           {"name": "b", "congestion": False, "profile": "thesis"}],
            "trials": 2, "seed": 3, "retries": 2, **changes}
    pfile = tmp_path / "pb.yaml"
    pfile.write_text(yaml.safe_dump(data))
    create(load_playbook(pfile), pfile, tmp_path / "c").close()
    return tmp_path / "c"


class _Tables:
    """A host's executor as the runner's TIME-WAIT check sees it: ``tables`` is what
    ``cat /proc/net/tcp /proc/net/tcp6`` prints (a list: one text per call, the last repeated)."""

    def __init__(self, tables: list[str] | None = None) -> None:
        self.tables, self.calls = list(tables or [""]), 0

    def run(self, argv, timeout=60.0, check=True):
        self.calls += 1
        text = self.tables.pop(0) if len(self.tables) > 1 else self.tables[0]
        return SimpleNamespace(stdout=text, returncode=0)


def _env(r: Runner, tables: _Tables | None = None) -> TrialEnv:
    ex = tables or _Tables()
    return TrialEnv(pb=r.pb, topo=r.topo, out=r.out, testbed=None, executor_of=lambda h: ex,  # type: ignore
                    switch=None, flood=None, profiles=r.profiles)  # type: ignore[arg-type]


def _rows(folder: Path) -> dict[int, dict]:
    with Store(folder / "trials.sqlite") as st:
        return {r["idx"]: r for r in st.rows()}


ROW = {"elapsed_s": 1.0, "total_s": 1.2, "checksum": 1, "busy_max_s": None, "valid": 1, "flood_json": None,
       "capture_summary": None, "config_hash": "x", "phases_json": "{}"}


def test_any_error_in_a_trial_is_a_failed_trial_and_the_campaign_goes_on(tmp_path, monkeypatch):
    folder = _folder(tmp_path)
    calls: dict[int, int] = {}

    def fake(env, cond, tdir, due):
        idx = int(tdir.name)
        calls[idx] = calls.get(idx, 0) + 1
        if idx == 0:
            raise DuplicateChildError("Found a duplicate section: ('class-map match-all class112',)")
        if idx == 1 and calls[idx] == 1:
            raise ReadTimeout("Pattern not detected: 'Switch\\(config.*' in output")
        if idx == 2:
            raise KeyError("jp-9")
        return ROW

    monkeypatch.setattr(attempts_mod, "run_trial", fake)
    r = Runner(folder)
    r._loop(_env(r))
    rows = _rows(folder)
    assert calls == {0: 3, 1: 2, 2: 3, 3: 1}  # retries: 2 more attempts in this run, then failed
    assert rows[0]["status"] == "failed" and rows[0]["failures"] == 3 and rows[0]["attempts"] == 3
    assert rows[0]["error"].startswith("DuplicateChildError: Found a duplicate section")
    assert rows[1]["status"] == "done" and rows[1]["failures"] == 1 and rows[1]["error"] is None
    assert rows[2]["status"] == "failed" and rows[2]["error"] == "KeyError: 'jp-9'"
    assert rows[3]["status"] == "done"
    # a resume runs the failed trials again (a new budget), never the done ones
    calls.clear()
    monkeypatch.setattr(attempts_mod, "run_trial", lambda env, cond, tdir, due: calls.setdefault(int(tdir.name), 1)
                        and ROW)
    r2 = Runner(folder)
    r2._loop(_env(r2))
    assert sorted(calls) == [0, 2]
    rows = _rows(folder)
    assert all(v["status"] == "done" for v in rows.values())
    assert rows[0]["failures"] == 3 and rows[0]["attempts"] == 4


def test_a_trial_that_overruns_its_timeout_is_ended_and_failed(tmp_path, monkeypatch):
    folder = _folder(tmp_path, trial_timeout_s=0.3, retries=0)
    stopped = []

    def slow(env, cond, tdir, due):
        try:
            time.sleep(30)
        finally:
            stopped.append(tdir.name)  # the trial's own clean-up still runs
        return ROW

    monkeypatch.setattr(attempts_mod, "run_trial", slow)
    r = Runner(folder)
    t0 = time.monotonic()
    r._loop(_env(r))
    assert time.monotonic() - t0 < 4 * 0.3 + 2
    rows = _rows(folder)
    assert all(v["status"] == "failed" for v in rows.values()) and len(stopped) == 4
    assert rows[0]["error"] == "trial timed out: still running after trial_timeout_s = 0.3 s (ended)"


def test_a_killed_attempt_is_not_a_failure_and_runs_again(tmp_path, monkeypatch):
    folder = _folder(tmp_path, retries=0)
    st = Store(folder / "trials.sqlite")
    st.record(0, status="running", attempts=1)  # what a SIGKILL in the middle of trial 0 leaves
    st.close()
    (folder / "trials" / "0000").mkdir(parents=True)
    (folder / "trials" / "0000" / "old.txt").write_text("killed attempt")
    seen = []

    def fake(env, cond, tdir, due):
        seen.append(sorted(p.name for p in tdir.iterdir()) if tdir.exists() else [])
        return ROW

    monkeypatch.setattr(attempts_mod, "run_trial", fake)
    r = Runner(folder)
    r._segment()
    r._loop(_env(r))
    rows = _rows(folder)
    assert rows[0]["status"] == "done" and rows[0]["failures"] == 0 and rows[0]["attempts"] == 2
    assert seen[0] == []  # a fresh folder; the killed attempt's is kept beside it
    assert (folder / "trials" / "0000.attempt-1" / "old.txt").read_text() == "killed attempt"
    seg = json.loads((folder / "provenance.json").read_text())["segments"]
    assert len(seg) == 1 and seg[0]["interrupted"] == [0] and seg[0]["pending"] == 4
    assert {"qoslab_commit", "kernel", "host", "time", "pid", "java"} <= set(seg[0])


def test_capture_first_is_due_until_a_condition_has_a_capture(tmp_path, monkeypatch):
    folder = _folder(tmp_path, capture="first", conditions=[
        {"name": "a", "congestion": False, "profile": "thesis"}, {"name": "b", "congestion": False,
                                                                  "profile": "rmi-ports"}])
    due_of: list[tuple[str, bool]] = []
    fails = {"n": 0}

    def fake(env, cond, tdir, due):
        due_of.append((cond.name, due))
        if due and cond.name == "a" and fails["n"] == 0:
            fails["n"] += 1
            raise RuntimeError("capture did not start")
        return {**ROW, "capture_summary": "s.json" if due else None}

    monkeypatch.setattr(attempts_mod, "run_trial", fake)
    r = Runner(folder)
    r._loop(_env(r))
    first = {}
    for name, due in due_of:
        first.setdefault(name, []).append(due)
    assert first["a"] == [True, True, False] and first["b"] == [True, False]


def test_the_runner_reads_the_snapshot_not_the_working_tree(tmp_path):
    folder = _folder(tmp_path)
    (tmp_path / "fifo.yaml").write_text((REPO / "qos-profiles" / "thesis.yaml").read_text())
    (tmp_path / "topo.yaml").write_text(ECENET.read_text().replace("name: ecenet", "name: edited"))
    r = Runner(folder)
    assert r.topo.name == "ecenet" and r.profiles[str(tmp_path / "fifo.yaml")].name == "fifo"
    manifest = json.loads((folder / "inputs" / "manifest.json").read_text())
    assert set(manifest) == {"topology", "profiles", "playbook", "workload_files"} and len(manifest["profiles"]) == 2
    assert manifest["playbook"]["file"] == "playbook.yaml" and manifest["workload_files"] == {}
    prov = json.loads((folder / "provenance.json").read_text())
    assert prov["inputs"]["topology"]["sha256"] == manifest["topology"]["sha256"]
    (folder / manifest["topology"]["file"]).write_text("name: tampered\n")
    with pytest.raises(ConfigError, match=r"snapshot \(topology\) of .*topo.yaml is missing or was changed since"):
        Runner(folder)


def test_a_killed_create_leaves_no_campaign(tmp_path, monkeypatch):
    """trials.sqlite appears complete or not at all."""
    import qoslab.campaign.folder as folder_mod

    pb = load_playbook(REPO / "playbooks" / "quick.yaml")

    def boom(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(folder_mod.Store, "init", boom)
    with pytest.raises(KeyboardInterrupt):
        create(pb, REPO / "playbooks" / "quick.yaml", tmp_path / "c")
    assert not (tmp_path / "c" / "trials.sqlite").exists()
    monkeypatch.undo()
    create(pb, REPO / "playbooks" / "quick.yaml", tmp_path / "c").close()
    assert len(Store(tmp_path / "c" / "trials.sqlite").pending()) == 4 * 6 + 4


def test_no_statistics_over_unequal_trial_counts(tmp_path):
    from qoslab.errors import QoslabError
    from qoslab.stats import campaign_stats

    folder = _folder(tmp_path)
    st = Store(folder / "trials.sqlite")
    for idx in range(4):
        st.record(idx, status="done", elapsed_s=1.0 + idx / 10, valid=1)
    st.record(2, status="failed", error="x")
    r = Runner(folder)
    with pytest.raises(QoslabError, match=r"campaign incomplete \(1 failed\): no statistics over unequal trial counts"):
        campaign_stats(r.pb, st, folder)
    assert not (folder / "trials.csv").exists()


# -- what a crash leaves (issue 34): TIME-WAIT and a failure that repeats -----------------------

TCP_HEAD = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"


def _tcp(port: int, state: str = "06") -> str:
    return (f"   0: 020012C6:{port:04X} 030012C6:D2C4 {state} 00000000:00000000 03:00000F1A 00000000     0        0 0 "
            "3 0000000000000000\n")


def test_time_wait_ports_reads_proc_net_tcp():
    from qoslab.campaign.portwait import same_failure, time_wait_ports

    text = TCP_HEAD + _tcp(7300) + _tcp(7300) + _tcp(7300, "0A") + _tcp(1099) + _tcp(5555)
    assert time_wait_ports(text, [7300, 1099, 1100]) == {7300: 2, 1099: 1}  # LISTEN (0A) is not TIME-WAIT
    assert time_wait_ports("garbage\n\n", [7300]) == {}
    a = same_failure("worker jp-2 (198.18.0.2) exited: errno=98 Address already in use (log /tmp/x/0003/w.log)")
    b = same_failure("worker jp-3 (198.18.0.3) exited: errno=98 Address already in use (log /tmp/x/0007/w.log)")
    assert a == b and a != same_failure("worker jp-2: Connection refused")
    assert same_failure("trial timed out: still running after 30 s") is None


def test_wait_ports_free_waits_only_while_a_port_is_in_time_wait():
    from qoslab.campaign.portwait import wait_ports_free

    ex = _Tables([TCP_HEAD + _tcp(7300), TCP_HEAD + _tcp(7300), TCP_HEAD])
    said: list[str] = []
    waited = wait_ports_free(lambda h: ex, ["jp-1"], [7300], said.append, poll_s=0.01)  # type: ignore[arg-type]
    assert ex.calls == 3 and 0 < waited < 1 and len(said) == 1 and "jp-1 7300 (1)" in said[0]
    assert wait_ports_free(lambda h: _Tables([TCP_HEAD]), ["jp-1"], [7300]) == 0.0  # type: ignore[arg-type]
    stuck = _Tables([TCP_HEAD + _tcp(7300)])
    assert wait_ports_free(lambda h: stuck, ["jp-1"], [7300], limit_s=0.05, poll_s=0.01) >= 0.05  # type: ignore


COMMAND = {"kind": "command", "hosts": ["jp-1", "jp-2"], "port": 7300, "worker": "server --port {port}",
           "head": "client --servers {workers}", "timeout_s": 60}


def test_resume_waits_for_time_wait_before_the_first_and_every_retried_attempt(tmp_path, monkeypatch):
    folder = _folder(tmp_path, retries=1, workload=COMMAND)  # a user's server may bind without SO_REUSEADDR
    tables = _Tables([TCP_HEAD + _tcp(7300), TCP_HEAD + _tcp(7300), TCP_HEAD])  # the command's worker port
    seen: list[int] = []

    def fake(env, cond, tdir, due):
        seen.append(tables.calls)  # how often the table was read before this attempt
        if int(tdir.name) == 1 and len(seen) == 2:
            raise QoslabError("worker jp-2 exited during start-up")
        return ROW

    monkeypatch.setattr(attempts_mod, "run_trial", fake)
    monkeypatch.setattr(attempts_mod, "wait_ports_free", partial(attempts_mod.wait_ports_free, poll_s=0.01))
    r = Runner(folder)
    r._loop(_env(r, tables))
    rows = _rows(folder)
    assert all(v["status"] == "done" for v in rows.values())
    # 2 hosts read per round: the first attempt after 2 rounds (port 1099 in TIME-WAIT in the first), the
    # next trial on the warm workers without a check, its retry (fresh workers) after one more round
    assert seen[:3] == [4, 4, 6] and seen[3:] == [6] * (len(seen) - 3)


def test_a_java_workload_whose_servers_reuse_their_address_does_not_wait_for_time_wait(tmp_path, monkeypatch):
    """The RayTracer's (and matmul's, pingpong's, sort's) servers bind with SO_REUSEADDR (java-workload
    ReuseAddressTest): its registry port in TIME-WAIT is no reason to wait; no table is read."""
    from qoslab.workloads import backend

    assert [k for k in ("raytracer", "matmul", "pingpong", "sort", "mpj", "command", "mpi")
            if getattr(backend(k), "binds_reuse_address", False)] == ["raytracer", "matmul", "pingpong", "sort"]
    folder = _folder(tmp_path, retries=1)
    tables = _Tables([TCP_HEAD + _tcp(1099)])  # the registry port in TIME-WAIT for ever
    monkeypatch.setattr(attempts_mod, "run_trial", lambda env, cond, tdir, due: ROW)
    r = Runner(folder)
    r._loop(_env(r, tables))
    assert all(v["status"] == "done" for v in _rows(folder).values()) and tables.calls == 0


def test_a_campaign_whose_every_attempt_fails_the_same_way_stops(tmp_path, monkeypatch):
    folder = _folder(tmp_path, retries=1)

    def fake(env, cond, tdir, due):
        raise QoslabError(f"worker jp-2 exited: OSError: [Errno 98] Address already in use (trial {tdir.name})")

    monkeypatch.setattr(attempts_mod, "run_trial", fake)
    r = Runner(folder)
    with pytest.raises(QoslabError, match=r"stopped: every attempt of trials 0 and 1 failed the same way"):
        r._loop(_env(r))
    rows = _rows(folder)
    assert [rows[i]["status"] for i in range(4)] == ["failed", "failed", "pending", "pending"]
    assert rows[0]["failures"] == 2 and rows[1]["failures"] == 2


def test_a_smoke_campaign_schedules_one_trial_per_condition_and_no_warmup(tmp_path):
    _folder(tmp_path, warmup=1)
    with Store(tmp_path / "c" / "trials.sqlite") as st:
        assert len(st.rows()) == 2 * 2 + 2 and not st.meta("smoke")  # the plain campaign: 2 per condition + warm-ups
    pfile = tmp_path / "pb.yaml"
    pb = load_playbook(pfile)
    with create(pb, pfile, tmp_path / "smoke", trials=1, smoke=True) as st:
        rows = st.rows()
        assert [(r["condition"], r["trial"], r["warmup"]) for r in sorted(rows, key=lambda r: r["condition"])] == [
            ("a", 1, 0), ("b", 1, 0)] and st.meta("smoke") is True
    with pytest.raises(QoslabError, match="--smoke runs one trial per condition"):
        create(pb, pfile, tmp_path / "smoke2", trials=3, smoke=True)
    with pytest.raises(QoslabError, match=r"--trials 1: .*--smoke tries a campaign once"):
        create(pb, pfile, tmp_path / "one", trials=1)


def test_the_log_tells_a_dirty_run_of_a_commit_from_the_clean_one():
    from qoslab.campaign.runner import short_commit

    c = "5ab8f2b439437b00380f4a268c54a2ac0ff0ebd2"
    assert short_commit(c) == "5ab8f2b43943"
    assert short_commit(c + "+dirty") == "5ab8f2b43943+dirty"
    assert short_commit(c) != short_commit(c + "+dirty")


def test_a_second_run_of_a_folder_is_refused_before_it_opens_the_store(tmp_path, monkeypatch):
    """Two runs of one folder: the second (another process) is refused with the folder named
    before the store is opened, so it can neither migrate the store on a copy renamed over the
    one the first run writes, nor resume trials under it; once the first ends, it runs."""
    import subprocess
    import sys

    from qoslab.campaign.folder import FolderLock

    folder = _folder(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom pathlib import Path\n"
                               "from qoslab.campaign.folder import FolderLock\n"
                               f"FolderLock(Path({str(folder)!r})); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = (folder / "trials.sqlite").read_bytes()
        opened: list = []
        real = runner_mod.Store
        monkeypatch.setattr(runner_mod, "Store", lambda *a, **k: opened.append(a) or real(*a, **k))
        with pytest.raises(QoslabError, match=f"campaign folder {folder} is in use by another run of it"):
            Runner(folder)
        monkeypatch.undo()
        assert opened == [] and (folder / "trials.sqlite").read_bytes() == before
    finally:
        holder.kill()
        holder.wait()
    r = Runner(folder)  # the holder is gone (SIGKILL: the kernel dropped its lock)
    again = FolderLock(folder)  # this process's own runs share the lock ...
    again.release()
    assert r.store.counts()["pending"] == 4
    r._folder_lock.release()


def test_a_folder_on_a_file_system_without_locks_runs_and_says_so(tmp_path, monkeypatch):
    """flock fails with ENOLCK on an NFS mount without lockd: the run goes on, its log says the
    folder is not guarded against a second run."""
    import errno

    import qoslab.campaign.folder as folder_mod

    def no_locks(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    folder = _folder(tmp_path)
    monkeypatch.setattr(folder_mod.fcntl, "flock", no_locks)
    said: list[str] = []
    r = Runner(folder, log=said.append)
    assert said == [f"campaign folder {folder} cannot be locked (No locks available): a second run of it at the "
                    "same time would not be refused"]
    assert r.store.counts()["pending"] == 4
    r._folder_lock.release()


def test_a_trial_judged_invalid_runs_again_within_the_retries_and_its_attempt_is_kept(tmp_path, monkeypatch):
    """Issue 48: a flood off its rate (or a machine taken by others) is a different experiment: the
    trial runs again, up to `retries` more times; the last attempt stays, invalid, when all were."""
    folder = _folder(tmp_path)
    calls: dict[int, int] = {}
    bad = {**ROW, "fidelity": "invalid", "fidelity_reasons": json.dumps(
        [{"check": "offered_load", "verdict": "invalid", "text": "offered_load 1.1: the flood offered ..."}])}

    def fake(env, cond, tdir, due):
        idx = int(tdir.name)
        calls[idx] = calls.get(idx, 0) + 1
        (tdir / "attempt.txt").parent.mkdir(parents=True, exist_ok=True)
        (tdir / "attempt.txt").write_text(str(calls[idx]))
        if idx == 0 or (idx == 1 and calls[idx] == 1):
            return bad
        return {**ROW, "fidelity": "ok", "fidelity_reasons": "[]"}

    monkeypatch.setattr(attempts_mod, "run_trial", fake)
    r = Runner(folder)
    r._loop(_env(r))
    rows = _rows(folder)
    assert calls == {0: 3, 1: 2, 2: 1, 3: 1}
    assert rows[0]["status"] == "done" and rows[0]["fidelity"] == "invalid" and rows[0]["attempts"] == 3
    assert rows[1]["status"] == "done" and rows[1]["fidelity"] == "ok" and rows[1]["error"] is None
    assert (folder / "trials" / "0001.attempt-1" / "attempt.txt").read_text() == "1"  # the invalid attempt kept
    # retry_invalid: false keeps the first verdict
    (tmp_path / "off").mkdir()
    folder2 = _folder(tmp_path / "off", fidelity={"retry_invalid": False})
    calls.clear()
    r2 = Runner(folder2)
    r2._loop(_env(r2))
    assert calls == {0: 1, 1: 1, 2: 1, 3: 1}
