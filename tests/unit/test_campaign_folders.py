"""Campaign folders as a hostile user leaves them (issue 45): "nothing changed by reading, nothing
run that was not snapshotted".

Every case is a copy of one campaign folder (made by ``create``, its trials recorded) with one
thing done to it, run through the real CLI (``corpus_driver.py``, the campaign runner replaced by
a stub that records "ACCEPTED": no testbed is touched). A refused case must give one line naming
the file at fault (and the field where there is one), exit 2, no "internal error", within 5 s and
200 MB, and leave the folder byte-identical (every file's SHA-256, no file added: no -wal/-shm).
The read commands (``campaign status``, ``report``) must leave every folder byte-identical,
refused or not; ``docs/results`` is checked the same way over all committed campaigns.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from conftest import ECENET, REPO
from qoslab.campaign import Store, create, load_playbook
from qoslab.errors import QoslabError

DRIVER = Path(__file__).parent / "corpus_driver.py"
MAX_S, MAX_RSS_KB = 5.0, 200 * 1024
REPORT_S = 60.0  # a report that gets as far as the notebook
CLIENT = REPO / "examples" / "command-echo" / "client.py"


def checksums(folder: Path) -> dict[str, str]:
    """SHA-256 of every file under ``folder`` (relative path -> digest; FIFOs and sockets by name)."""
    out = {}
    for p in sorted(folder.rglob("*")):
        rel = str(p.relative_to(folder))
        if p.is_symlink() or not (p.is_file() or p.is_dir()):
            out[rel] = f"special {os.lstat(p).st_mode:o}"
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _playbook(tmp: Path, **changes) -> Path:
    """A 2-condition `command` campaign on copies of the topology, a profile and the workload's head
    program (an absolute path: a workload file the snapshot hashes where it is)."""
    (tmp / "topo.yaml").write_text(ECENET.read_text())
    (tmp / "fifo.yaml").write_text((REPO / "qos-profiles" / "fifo.yaml").read_text())
    shutil.copy(CLIENT, tmp / "client.py")
    data = {"name": "folders", "topology": str(tmp / "topo.yaml"), "capture": "off", "trials": 2, "seed": 5,
            "workload": {"kind": "command", "hosts": ["jp-1", "jp-2"], "port": 7300,
                         "worker": "python3 {root}/examples/command-echo/server.py --bind {ip} --port {port}",
                         "head": f"python3 {tmp / 'client.py'} --servers {{workers}} --requests 10"},
            "conditions": [{"name": "a", "congestion": False, "profile": str(tmp / "fifo.yaml")},
                           {"name": "b", "congestion": False, "profile": "thesis"}], **changes}
    pfile = tmp / "pb.yaml"
    pfile.write_text(yaml.safe_dump(data))
    return pfile


def _declared(ms: float) -> str:
    """metrics_json of a trial whose workload declared one metric in ms, ``ms`` its value."""
    return json.dumps({"set": {"primary": {"name": "p99_ms", "unit": "ms", "direction": "lower", "decimals": None},
                               "secondary": []}, "values": {"p99_ms": ms}})


def _campaign(tmp: Path, value: Callable[[str, int], float] = lambda c, t: 10.0 if c == "a" else 20.0) -> Path:
    """A made campaign folder with every trial done (the declared metric: ``value(condition, trial)``)."""
    pfile = _playbook(tmp)
    folder = tmp / "camp"
    with create(load_playbook(pfile), pfile, folder) as st:
        for r in st.trials():
            v = value(r.condition, r.trial)
            st.record(r.idx, status="done", valid=1, elapsed_s=v / 1000, total_s=v / 1000, metrics_json=_declared(v),
                      started=1.0, finished=2.0, attempts=1)
    return folder


def test_a_made_folders_manifest_holds_the_playbook_and_the_workload_files(tmp_path):
    folder = _campaign(tmp_path)
    m = json.loads((folder / "inputs" / "manifest.json").read_text())
    assert m["playbook"]["file"] == "playbook.yaml" and m["playbook"]["ref"] == str(tmp_path / "pb.yaml")
    assert set(m["workload_files"]) == {str(tmp_path / "client.py"), "{root}/examples/command-echo/server.py"}
    assert m["workload_files"]["{root}/examples/command-echo/server.py"]["path"] == str(
        REPO / "examples" / "command-echo" / "server.py")


# -- the store: refused untouched, read without a trace, migrated on a copy ---------------------

def _foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE users (name TEXT)")
    db.execute("INSERT INTO users VALUES ('alice')")
    db.commit()
    db.close()


def _newer(path: Path) -> None:
    from qoslab.trials.store import SCHEMA
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()


STORES: dict[str, tuple[Callable[[Path], None], str]] = {
    "zero-bytes": (lambda p: p.write_bytes(b""), "not a qoslab campaign store: it has no trials and meta tables: an "
                                                 "empty database"),
    "foreign-sqlite": (_foreign, "not a qoslab campaign store: it has no trials and meta tables (tables: users)"),
    "text": (lambda p: p.write_text("hello\n" * 200), "not a qoslab campaign store (file is not a database)"),
    "newer-qoslab": (_newer, "not a qoslab campaign store: schema version 99 is newer than this qoslab's"),
    "fifo": (lambda p: os.mkfifo(p), "no campaign store there (not a regular file)"),
    "folder": (lambda p: p.mkdir(), "no campaign store there (not a regular file)"),
}


@pytest.mark.parametrize("case", list(STORES))
@pytest.mark.parametrize("readonly", [True, False], ids=["reader", "writer"])
def test_a_file_that_is_not_a_qoslab_store_is_refused_untouched(tmp_path, case, readonly):
    make, why = STORES[case]
    db = tmp_path / "trials.sqlite"
    make(db)
    before = checksums(tmp_path)
    with pytest.raises(QoslabError) as e:
        Store(db, readonly=readonly)
    assert str(e.value).startswith(f"{db}: ") and why in str(e.value), str(e.value)
    assert checksums(tmp_path) == before  # not a byte written, no -wal/-shm/-journal beside it


def test_a_reader_leaves_no_wal_or_shm_and_a_writer_migrates_on_a_copy(tmp_path, monkeypatch):
    """A WAL store read with SQLite's plain ``mode=ro`` gains -wal/-shm files that stay after close
    (what `report` left beside the stores it read); the store's reader leaves none. An older store
    opened by a writer is migrated on a copy: a failure before the rename leaves it as it was."""
    from qoslab.trials.store import MIGRATIONS, SCHEMA
    db = tmp_path / "trials.sqlite"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.executescript(SCHEMA)
    con.execute("INSERT INTO trials (idx, condition, trial, warmup, status) VALUES (0, 'a', 1, 0, 'done')")
    con.execute("INSERT INTO meta VALUES ('name', '\"x\"')")
    con.commit()
    con.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["trials.sqlite"]
    before = checksums(tmp_path)
    with Store(db, readonly=True) as st:
        assert st.counts() == {"done": 1} and st.conditions() == ["a"] and "busy_max_s" not in st.columns()
        with pytest.raises(QoslabError, match="opened read-only"):
            st.record(0, status="pending")
    assert checksums(tmp_path) == before
    import qoslab.trials.store as store_mod

    def killed(src, dst):
        raise KeyboardInterrupt  # a kill between the migrated copy and its rename

    monkeypatch.setattr(store_mod.os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        Store(db)
    assert checksums(tmp_path)["trials.sqlite"] == before["trials.sqlite"]
    monkeypatch.undo()
    with Store(db) as st:  # the stale copy is replaced, the store migrated
        assert "busy_max_s" in st.columns() and st.counts() == {"done": 1}
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert not (tmp_path / "trials.sqlite.migrating").exists()


# -- the corpus through the CLI -------------------------------------------------------------------

def _tamper_yaml(rel: str, old: str, new: str) -> Callable[[Path], None]:
    def do(folder: Path) -> None:
        f = folder / rel
        assert old in f.read_text(), (rel, old)
        f.write_text(f.read_text().replace(old, new, 1))
    return do


def _manifest(edit: Callable[[dict], object]) -> Callable[[Path], None]:
    def do(folder: Path) -> None:
        f = folder / "inputs" / "manifest.json"
        m = json.loads(f.read_text())
        out = edit(m)
        f.write_text(out if isinstance(out, str) else json.dumps(m if out is None else out))
    return do


def _fifo(rel: str) -> Callable[[Path], None]:
    def do(folder: Path) -> None:
        (folder / rel).unlink()
        os.mkfifo(folder / rel)
    return do


def _store_case(name: str) -> Callable[[Path], None]:
    def do(folder: Path) -> None:
        (folder / "trials.sqlite").unlink()
        STORES[name][0](folder / "trials.sqlite")
    return do


def _symlinked(rel: str) -> Callable[[Path], None]:
    """``rel`` in the folder made a symbolic link to a file outside it (issue 50: a run must not
    write through it); a missing ``rel`` (a sidecar) links to an empty outside file."""
    def do(folder: Path) -> None:
        outside = folder.parent / f"outside-{rel.replace('/', '-')}"
        src = folder / rel
        if src.exists():
            shutil.move(src, outside)
        else:
            outside.write_bytes(b"")
        src.symlink_to(outside)
    return do


def _old_folder_with_other_conditions(folder: Path) -> None:
    """A folder made before the playbook was hashed whose playbook names another condition."""
    _manifest(lambda m: (m.pop("playbook"), None)[1])(folder)
    _tamper_yaml("playbook.yaml", "name: b\n", "name: c\n")(folder)


def _workload_file_edited(folder: Path) -> None:
    client = folder.parent / "client.py"
    client.write_text(client.read_text() + "\n# edited after the campaign was made\n")


#: name -> (what is done to the folder, text the one error line must hold ({folder}: the copy's path;
#: {tmp}: the case's own folder, where the user's files are))
CORPUS: dict[str, tuple[Callable[[Path], None], str]] = {
    "playbook-workload-command-edited": (_tamper_yaml("playbook.yaml", "--requests 10", "--requests 99"),
                                         "{folder}/playbook.yaml: the campaign's snapshot (playbook) of"),
    "topology-snapshot-edited": (_tamper_yaml("inputs/topology.yaml", "name: ecenet", "name: other"),
                                 "{folder}/inputs/topology.yaml: the campaign's snapshot (topology) of"),
    "profile-snapshot-edited": (_tamper_yaml("inputs/profiles/00-fifo.yaml", "name: fifo", "name: fifo2"),
                                "{folder}/inputs/profiles/00-fifo.yaml: the campaign's snapshot (profiles."),
    "workload-file-edited": (_workload_file_edited, "{tmp}/client.py: the workload's '{tmp}/client.py' is missing or "
                                                    "was changed since the campaign was made"),
    "manifest-empty-object": (_manifest(lambda m: {}), "{folder}/inputs/manifest.json: topology: missing"),
    "manifest-a-list": (_manifest(lambda m: []), "{folder}/inputs/manifest.json: (top level): a JSON object"),
    "manifest-not-json": (_manifest(lambda m: "{not json"), "{folder}/inputs/manifest.json: not a readable input "
                                                            "manifest"),
    "manifest-path-escapes": (_manifest(lambda m: m["topology"].update(file="../../../etc/hostname")),
                              "{folder}/inputs/manifest.json: topology.file: '../../../etc/hostname' is not a path "
                              "inside the campaign folder"),
    "manifest-bad-digest": (_manifest(lambda m: m["topology"].update(sha256="xyz")),
                            "{folder}/inputs/manifest.json: topology.sha256: not a SHA-256"),
    "manifest-unknown-field": (_manifest(lambda m: m.update(extra={})),
                               "{folder}/inputs/manifest.json: extra: not a field of an input manifest"),
    "manifest-fifo": (_fifo("inputs/manifest.json"), "{folder}/inputs/manifest.json: not a regular file"),
    "snapshot-fifo": (_fifo("inputs/topology.yaml"), "{folder}/inputs/topology.yaml: the campaign's snapshot "
                                                     "(topology) of"),
    "playbook-fifo": (_fifo("playbook.yaml"), "{folder}/playbook.yaml: not a regular file"),
    "playbook-syntax": (_tamper_yaml("playbook.yaml", "name: folders", "name: [folders"),
                        "{folder}/playbook.yaml:"),
    "provenance-garbage": (lambda f: (f / "provenance.json").write_text("[1, 2"),
                           "{folder}/provenance.json: not readable JSON"),
    "provenance-no-seed": (lambda f: (f / "provenance.json").write_text('{"qoslab_commit": "x", "kernel": "k"}'),
                           "{folder}/provenance.json: seed: missing or not a int"),
    "old-folder-other-conditions": (_old_folder_with_other_conditions,
                                    "{folder}/playbook.yaml: conditions: 'b' is only in the store's schedule"),
    **{f"store-{k}": (_store_case(k), "{folder}/trials.sqlite: " + v[1]) for k, v in STORES.items()},
    # issue 50: every file a run writes a regular file inside the folder
    "store-symlinked-outside": (_symlinked("trials.sqlite"), "{folder}/trials.sqlite: not a regular file (a symbolic link to {tmp}/"),
    "store-wal-symlinked-outside": (_symlinked("trials.sqlite-wal"),
                                    "{folder}/trials.sqlite-wal: not a regular file (a symbolic link to {tmp}/"),
    "store-shm-fifo": (lambda f: os.mkfifo(f / "trials.sqlite-shm"), "{folder}/trials.sqlite-shm: not a regular file (a named pipe)"),
    "csv-symlinked-outside": (_symlinked("trials.csv"), "{folder}/trials.csv: not a regular file (a symbolic link to {tmp}/"),
    "inputs-folder-symlinked": (lambda f: (f.parent / "elsewhere").mkdir() or (f / "inputs" / "logs").symlink_to(
        f.parent / "elsewhere"), "{folder}/inputs/logs: not a regular file (a symbolic link to {tmp}/elsewhere"),
}


def _copies(tmp_path: Path, names: list[str]) -> dict[str, tuple[Path, Path]]:
    """name -> (its own tmp folder, the campaign folder in it) for every case, prepared."""
    base = tmp_path / "base"
    base.mkdir()
    folder = _campaign(base)
    out = {}
    for name in names:
        tmp = tmp_path / name
        shutil.copytree(base, tmp, symlinks=True)
        camp = tmp / "camp"
        m = camp / "inputs" / "manifest.json"  # the copy's user files are its own
        m.write_text(m.read_text().replace(str(base), str(tmp)))
        pb = camp / "playbook.yaml"
        pb.write_text(pb.read_text().replace(str(base), str(tmp)))
        _rehash(camp)
        out[name] = (tmp, camp)
    assert folder.exists()
    return out


def _rehash(camp: Path) -> None:
    """The copy's manifest hashes its own playbook and workload files (as if made there)."""
    from qoslab.campaign.snapshot import sha256
    m = json.loads((camp / "inputs" / "manifest.json").read_text())
    m["playbook"]["sha256"] = sha256(camp / "playbook.yaml")
    for e in m["workload_files"].values():
        e["sha256"] = sha256(Path(e["path"]))
    (camp / "inputs" / "manifest.json").write_text(json.dumps(m, indent=1))


def _drive(items: list[list[str]], out: Path) -> list[dict]:
    args = [f"argv={json.dumps(a)}" for a in items]
    r = subprocess.run([sys.executable, str(DRIVER), str(out), *args], capture_output=True, text=True, cwd=REPO,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Every case run by resume, resume --rerun-invalid, status and report: (records, folders)."""
    tmp = tmp_path_factory.mktemp("folders")
    cases = _copies(tmp, ["valid", "valid-read", *CORPUS])
    before = {}
    for name, (_own, camp) in cases.items():
        if name in CORPUS:
            CORPUS[name][0](camp)
        before[name] = checksums(camp)
    items, keys = [], []
    for name, (own, camp) in cases.items():
        runs = [["campaign", "run", "--resume", str(camp)], ["campaign", "run", "--resume", str(camp),
                                                              "--rerun-invalid"]]
        reads = [["campaign", "status", str(camp)], ["report", str(camp), "--out", str(own / "report")]]
        # (a valid folder's resume writes, as a run does: its reads are checked on a copy of their own)
        for cmd in runs if name == "valid" else reads if name == "valid-read" else runs + reads:
            items.append(cmd)
            keys.append((name, cmd[1] if cmd[0] == "campaign" else "report", "--rerun-invalid" in cmd))
    recs = _drive(items, tmp / "out")
    return {k: r for k, r in zip(keys, recs, strict=True)}, cases, before


def _one_line(rec: dict, max_s: float = MAX_S) -> str:
    lines = [x for x in rec["stderr"].splitlines() if x.strip()]
    assert "Traceback" not in rec["stderr"] and "internal error" not in rec["stderr"] and len(lines) == 1, rec
    assert rec["seconds"] < max_s and rec["maxrss_kb"] < MAX_RSS_KB, rec
    return lines[0]


def test_a_valid_folder_passes_every_check_and_reaches_the_runner(corpus):
    recs, cases, before = corpus
    for rerun in (False, True):
        rec = recs[("valid", "run", rerun)]
        # (the stub's AssertionError reaches the CLI's last resort: exit 3, "ACCEPTED" in its line)
        assert rec["code"] == 3 and "ACCEPTED: the campaign runner was started" in rec["stderr"], rec


@pytest.mark.parametrize("name", list(CORPUS))
def test_a_refused_resume_names_the_file_and_leaves_the_folder_byte_identical(corpus, name):
    recs, cases, before = corpus
    own, camp = cases[name]
    want = CORPUS[name][1].format(folder=camp, tmp=own)
    for rerun in (False, True):
        rec = recs[(name, "run", rerun)]
        assert rec["code"] == 2, rec
        line = _one_line(rec)
        assert line.startswith("error: ") and want in line, (line, want)
    assert checksums(camp) == before[name], "a refused resume changed the folder"


@pytest.mark.parametrize("name", ["valid-read", *CORPUS])
def test_status_and_report_never_change_the_folder(corpus, name):
    """Refused or not, a read command leaves the folder as it was; a refusal is one line (the report's
    within REPORT_S: a folder it accepts runs the notebook)."""
    recs, cases, before = corpus
    own, camp = cases[name]
    status, report = recs[(name, "status", False)], recs[(name, "report", False)]
    if name.startswith("store-"):
        assert status["code"] == 2 and CORPUS[name][1].format(folder=camp, tmp=own) in _one_line(status)
    else:
        assert status["code"] == 0 and status["seconds"] < MAX_S, status
    if report["code"] != 0:
        assert report["code"] == 2 and _one_line(report, REPORT_S).startswith("error: "), report
    assert checksums(camp) == before[name], "a read command changed the folder"


def test_the_report_reads_a_valid_folder_and_writes_only_into_out(corpus):
    recs, cases, before = corpus
    own, camp = cases["valid-read"]
    assert recs[("valid-read", "report", False)]["code"] == 0, recs[("valid-read", "report", False)]
    html = (own / "report" / "report.html").read_text()
    assert "not computable (no spread)" in html and "p99_ms" in html and "mean ms" in html and "mean s<" not in html
    assert {"stats.json", "trials.csv", "stats-thesis.json", "report.html"} <= {p.name for p in (own / "report").iterdir()}


def test_a_fresh_run_refuses_a_device_file_of_another_platform_before_making_anything(tmp_path):
    """The device file's platform against the topology's switch model is checked with every other
    reference, before the folder exists, naming the user's device file (not a snapshot copy)."""
    dev = tmp_path / "dev.yaml"
    dev.write_text("device: catalyst\nhost: 198.18.9.9\nplatform: catalyst9300\nknown_hosts: /nonexistent\n")
    pfile = _playbook(tmp_path, device=str(dev))
    [rec] = _drive([["campaign", "run", str(pfile), "--out", str(tmp_path / "c")]], tmp_path / "out")
    line = _one_line(rec)
    assert rec["code"] == 2 and f"{dev}:3: platform: catalyst9300, but topology ecenet's switch" in line, line
    assert not (tmp_path / "c").exists()


def test_a_resume_refuses_a_snapshot_device_file_of_another_platform_before_writing(tmp_path, monkeypatch):
    from qoslab.campaign.snapshot import sha256
    for k in ("QOSLAB_SWITCH_USERNAME", "QOSLAB_SWITCH_PASSWORD", "QOSLAB_SWITCH_SECRET"):
        monkeypatch.setenv(k, "dummy")  # the device file is checked as the push reads it (issue 50)
    (tmp_path / "known_hosts").write_text("")
    dev = tmp_path / "dev.yaml"
    dev.write_text(f"device: catalyst\nhost: 198.18.9.9\nplatform: catalyst3750\nknown_hosts: {tmp_path}/known_hosts\n")
    pfile = _playbook(tmp_path, device=str(dev))
    folder = tmp_path / "c"
    create(load_playbook(pfile), pfile, folder).close()
    copy = folder / "inputs" / "device.yaml"  # as a qoslab that did not check it would have kept it
    copy.write_text(copy.read_text().replace("catalyst3750", "catalyst9300"))
    m = json.loads((folder / "inputs" / "manifest.json").read_text())
    m["device"]["sha256"] = sha256(copy)
    (folder / "inputs" / "manifest.json").write_text(json.dumps(m))
    before = checksums(folder)
    [rec] = _drive([["campaign", "run", "--resume", str(folder)]], tmp_path / "out")
    assert rec["code"] == 2 and f"{copy}:3: platform: catalyst9300" in _one_line(rec), rec
    assert checksums(folder) == before


def test_rerun_invalid_resets_nothing_when_the_folder_is_refused(tmp_path):
    folder = _campaign(tmp_path)
    with Store(folder / "trials.sqlite") as st:
        for idx in (0, 1):
            st.record(idx, fidelity="invalid", fidelity_reasons="[]")
    _tamper_yaml("inputs/topology.yaml", "name: ecenet", "name: other")(folder)
    before = checksums(folder)
    [rec] = _drive([["campaign", "run", "--resume", str(folder), "--rerun-invalid"]], tmp_path / "out")
    assert rec["code"] == 2 and "snapshot (topology)" in _one_line(rec)
    assert checksums(folder) == before
    with Store(folder / "trials.sqlite", readonly=True) as st:
        assert all(r.status == "done" for r in st.trials())


# -- statistics that cannot fail half-way, a metric that does not vary ----------------------------

def test_a_metric_constant_in_both_compared_conditions_gets_statistics_that_say_so(tmp_path):
    from qoslab.stats import campaign_stats
    folder = _campaign(tmp_path)
    with Store(folder / "trials.sqlite", readonly=True) as st:
        stats = campaign_stats(load_playbook(tmp_path / "pb.yaml"), st, folder)
    assert stats["metric"]["unit"] == "ms" and stats["conditions"]["a"]["sd"] == 0
    [c] = stats["comparisons"]
    assert c["difference_s"] == 10.0 and c["welch_t_p"] is None and "no spread" in c["not_computable"]
    assert json.loads((folder / "stats.json").read_text())["metric"]["unit"] == "ms"


def test_failing_statistics_write_nothing(tmp_path, monkeypatch):
    import qoslab.stats.campaign as stats_mod
    folder = _campaign(tmp_path, lambda c, t: 10.0 + t + (5 if c == "b" else 0))
    (folder / "stats.json").write_text('{"settings": {}, "old": true}\n')
    before = checksums(folder)
    real = stats_mod.run_stats
    calls = []

    def fails_after_writing(pb, csv, out):  # the tool wrote its stats.json, then a later step failed
        calls.append(out.name)
        real(pb, csv, out)
        raise QoslabError("statistics failed: [qoslab-analysis] error: boom")

    monkeypatch.setattr(stats_mod, "run_stats", fails_after_writing)
    with Store(folder / "trials.sqlite", readonly=True) as st, pytest.raises(QoslabError, match="boom"):
        stats_mod.campaign_stats(load_playbook(tmp_path / "pb.yaml"), st, folder)
    assert calls == ["stats.json"] and checksums(folder) == before  # the old stats.json stays, whole


def test_a_failing_report_writes_nothing_into_the_folder(tmp_path, monkeypatch):
    """Before issue 45 a report that failed had already (re)written stats.json and stats-thesis.json:
    now its statistics, the thesis's and the page are staged and moved in only when all succeeded."""
    import qoslab.report.notebook as nb
    folder = _campaign(tmp_path)
    before = checksums(folder)

    def fails(params, out_dir):
        (out_dir / "report.html").write_text("half a page")
        raise QoslabError("the report notebook failed in cell 7: KeyError: 'x' (nothing written)")

    monkeypatch.setattr(nb, "_execute", fails)
    with pytest.raises(QoslabError, match="cell 7"):
        nb.campaign_report(folder)
    assert checksums(folder) == before  # no stats.json, stats-thesis.json, report.html, staging folder


def test_the_read_commands_change_no_committed_campaign_folder():
    """`campaign status` on every committed campaign, and `campaign plan` / `campaign run --dry-run`
    (which read them as ETA evidence), leave docs/results byte-identical (the report's part, with
    --out, is in tests/integration/test_report.py)."""
    results = REPO / "docs" / "results"
    folders = sorted(p for p in results.iterdir() if (p / "trials.sqlite").is_file())
    before = checksums(results)
    items = [["campaign", "status", str(f)] for f in folders]
    items += [["campaign", "plan", "playbooks/quick.yaml"], ["campaign", "run", "playbooks/quick.yaml", "--dry-run"]]
    recs = _drive(items, Path("/nonexistent-out"))
    assert [r["code"] for r in recs] == [0] * len(items), [r for r in recs if r["code"] != 0]
    assert checksums(results) == before


def test_a_resume_through_a_symlinked_store_refuses_before_writing_the_target_byte_identical(tmp_path):
    """Issue 50's acceptance: ``trials.sqlite`` a symbolic link to a store outside the folder; a
    resume refuses it by name before writing anything, the outside store byte-identical and no
    ``-wal``/``-shm`` made beside it or in the folder."""
    folder = _campaign(tmp_path)
    outside = tmp_path / "elsewhere" / "store.sqlite"
    outside.parent.mkdir()
    shutil.move(folder / "trials.sqlite", outside)
    (folder / "trials.sqlite").symlink_to(outside)
    digest, before = hashlib.sha256(outside.read_bytes()).hexdigest(), checksums(folder)
    for argv in (["campaign", "run", "--resume", str(folder)],
                 ["campaign", "run", "--resume", str(folder), "--rerun-invalid"]):
        [rec] = _drive([argv], tmp_path / "out")
        line = _one_line(rec)
        assert rec["code"] == 2 and line.startswith(f"error: {folder}/trials.sqlite: not a regular file (a symbolic link to {outside})"), line
    assert hashlib.sha256(outside.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in outside.parent.iterdir()) == ["store.sqlite"]
    assert checksums(folder) == before
    with pytest.raises(QoslabError, match=r"trials.sqlite: not a regular file \(a symbolic link"):
        Store(folder / "trials.sqlite")


def _in_a_small_tmpfs(tmp_path: Path, options: str, script: str) -> subprocess.CompletedProcess:
    """Run ``script`` (Python, the folder as sys.argv[1]) in a mount namespace of its own where
    ``tmp_path/mnt`` is a tmpfs mounted with ``options``; the mount ends with the process."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    sh = (f"mount -t tmpfs -o {options} qoslab-test {mnt} && {sys.executable} -c \"$0\" {mnt} && "
          f"ls -a {mnt}")
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", sh, script],
                          capture_output=True, text=True, timeout=60)


_OPEN_STORE = """
import sys
from pathlib import Path
from qoslab.campaign import Store
from qoslab.errors import QoslabError
d = Path(sys.argv[1])
try:
    Store(d / "trials.sqlite").close()
except QoslabError as e:
    print("REFUSED", e)
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root to mount a tmpfs")
@pytest.mark.parametrize("options,fill,cause", [("size=256k", True, "its file system is full"),
                                                ("ro,size=1m", False, "its file system is read-only")])
def test_a_store_on_a_full_or_read_only_file_system_says_so_and_leaves_nothing(tmp_path, options, fill, cause):
    script = ("import os, sys\nd = sys.argv[1]\n" + (
        "try:\n  open(os.path.join(d, 'fill'), 'wb').write(b'x' * (1 << 20))\nexcept OSError:\n  pass\n"
        if fill else "") + _OPEN_STORE)
    r = _in_a_small_tmpfs(tmp_path, options, script)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    refused = [x for x in out if x.startswith("REFUSED")]
    assert len(refused) == 1 and f"trials.sqlite: cannot write the campaign store: {cause}" in refused[0], r.stdout
    assert not [x for x in out if x.startswith("trials.sqlite")], f"files left behind: {out}"
