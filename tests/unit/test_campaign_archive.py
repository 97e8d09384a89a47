"""``qoslab campaign archive``: the committable part of a campaign folder in a new folder, the
source never changed, and every hostile case refused with one line and nothing left behind.

The source is a copy of a committed campaign (docs/results/thesis-faithful-cpu-onmachine-100ppm-20261129:
a derivation, captured trials, a store) with what a run leaves that an archive must not take
(a pcap, logs, a switch backup, report.ipynb) and a fidelity record with its port series, as a
run's store holds before archiving.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_campaign_folders import checksums

from conftest import REPO
from qoslab.campaign.archive import archive, plan, relative_text, without_port_series
from qoslab.campaign.folder import FolderLock
from qoslab.errors import ConfigError, QoslabError
from qoslab.trials.store import Store

COMMITTED = REPO / "docs" / "results" / "thesis-faithful-cpu-onmachine-100ppm-20261129"
PORTS = {"Gi1/0/1": [[0.5, 625000, 3000, 2]]}


def _run_leftovers(src: Path) -> None:
    """What a campaign run leaves beside the committable files: a pcap, logs, a backup, the
    notebook, a summary naming its pcap by absolute path; one trial's port series in the store."""
    t = src / "trials" / "0004"
    (t / "capture" / "span.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + b"\0" * 60)
    (t / "workload" / "workload-manager.log").write_text("log\n")
    (t / "switch").mkdir(exist_ok=True)
    (t / "switch" / "running-config-backup.txt").write_text("hostname Switch\n")
    (src / "report.ipynb").write_text(json.dumps({"path": f"{src.absolute()}/trials"}))
    summ = t / "capture" / "summary.json"
    data = json.loads(summ.read_text())
    data["pcap"] = f"{src.absolute()}/trials/0004/capture/span.pcap"
    summ.write_text(json.dumps(data))
    with Store(src / "trials.sqlite") as st:
        row = next(r for r in st.trials(status="done") if r.as_dict().get("fidelity_json"))
        rec = json.loads(row.as_dict()["fidelity_json"])
        st.record(row.idx, fidelity_json=json.dumps({**rec, "ports": PORTS}))
        fidelity = {r.idx: r.as_dict().get("fidelity_json") for r in st.trials()}
    (src / "expected-fidelity.json").write_text(json.dumps(fidelity))


@pytest.fixture
def src(tmp_path: Path) -> Path:
    s = tmp_path / "campaign"
    shutil.copytree(COMMITTED, s)
    (s / "README.md").unlink()
    _run_leftovers(s)
    return s


def test_archive_keeps_what_the_report_needs_and_leaves_the_source_unchanged(src: Path, tmp_path: Path):
    before = checksums(src)
    expected = json.loads((src / "expected-fidelity.json").read_text())
    rep = archive(src, tmp_path / "out")
    assert checksums(src) == before  # read only: not a byte, no -wal/-shm
    dest = tmp_path / "out"
    files = {str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()}
    assert files == set(rep.files) and sorted(rep.files) == sorted(plan(src))
    for needed in ("trials.sqlite", "playbook.yaml", "provenance.json", "stats.json", "inputs/manifest.json",
                   "derive/derivation.json", "derive/topology.yaml", "derive/rx-cost/trials.sqlite",
                   "trials/0004/capture/summary.json", "fig-means.png"):
        assert needed in files, needed
    assert not any(f.endswith((".pcap", ".log", ".ipynb")) or "/switch/" in f for f in files), files
    assert not (tmp_path / "out.partial").exists()
    # the store: every row, the port series gone from the one that had it, every other record as it was
    with Store(dest / "trials.sqlite", readonly=True) as st:
        got = {r.idx: r.as_dict().get("fidelity_json") for r in st.trials()}
    assert set(got) == {int(k) for k in expected} and rep.stripped == 1
    for idx, js in got.items():
        want = expected[str(idx)]
        if want is not None and "ports" in json.loads(want):
            assert json.loads(js) == {k: v for k, v in json.loads(want).items() if k != "ports"}
        else:
            assert js == want
    # the summary's absolute pcap path became relative to the folder
    summ = json.loads((dest / "trials/0004/capture/summary.json").read_text())
    assert summ["pcap"] == "trials/0004/capture/span.pcap" and "trials/0004/capture/summary.json" in rep.relative
    assert str(src) not in "".join(p.read_text(errors="replace") for p in dest.rglob("*.json"))
    assert rep.bytes_out < rep.bytes_in


def test_keep_port_series_keeps_them(src: Path, tmp_path: Path):
    rep = archive(src, tmp_path / "out", keep_port_series=True)
    assert rep.stripped == 0
    with Store(tmp_path / "out" / "trials.sqlite", readonly=True) as st:
        recs = [json.loads(js) for r in st.trials() if (js := r.as_dict().get("fidelity_json"))]
    assert sum("ports" in r for r in recs) == 1


def test_pure_helpers():
    assert without_port_series('{"ports": {"a": 1}, "ok": true}') == '{"ok": true}'
    assert without_port_series('{"ok": true}') == '{"ok": true}'
    assert without_port_series("not json") == "not json" and without_port_series("[1]") == "[1]"
    src = Path("/abs/camp")
    assert relative_text("/abs/camp/trials/1/x.pcap and /abs/camp", src) == "trials/1/x.pcap and ."
    assert relative_text('"/abs/camp"', src) == '"."'
    assert relative_text("/abs/campaign2/x /abs/camp.old /abs/camp-b", src) == "/abs/campaign2/x /abs/camp.old /abs/camp-b"


def _refused(src: Path, dest: Path, match: str, cls: type[Exception] = QoslabError) -> None:
    before = checksums(src)
    with pytest.raises(cls, match=match):
        archive(src, dest)
    assert checksums(src) == before
    assert not dest.with_name(dest.name + ".partial").exists()


def test_hostile_cases_are_refused_with_nothing_written(src: Path, tmp_path: Path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("the user's\n")
    _refused(src, tmp_path / "taken", "exists already")
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["mine.txt"]
    _refused(src, src / "archive", "inside the campaign folder")
    assert not (src / "archive").exists()
    _refused(tmp_path / "nowhere", tmp_path / "o1", "no such campaign folder")
    empty = tmp_path / "empty"
    empty.mkdir()
    _refused(empty, tmp_path / "o2", "no trials.sqlite")
    # an input changed since the snapshot: ConfigError naming the copy
    bad = tmp_path / "bad-input"
    shutil.copytree(src, bad)
    (bad / "inputs" / "flood.yaml").write_text("changed: true\n")
    _refused(bad, tmp_path / "o3", r"inputs/flood\.yaml", ConfigError)
    # a store that is not one
    junk = tmp_path / "junk-store"
    shutil.copytree(src, junk)
    (junk / "trials.sqlite").write_bytes(b"SQLite format 3\0" + b"\xff" * 200)
    _refused(junk, tmp_path / "o4", "trials.sqlite")
    assert not (tmp_path / "o4").exists()


def test_a_running_campaign_is_refused(src: Path, tmp_path: Path):
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               f"fd = os.open({str(src)!r}, os.O_RDONLY | os.O_DIRECTORY)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        _refused(src, tmp_path / "out", "in use by another run")
        assert not (tmp_path / "out").exists()
    finally:
        holder.kill()
        holder.wait()
    lock = FolderLock(src)  # released: the archive took nothing with it
    lock.release()


def test_a_partial_left_by_a_killed_archive_is_named(src: Path, tmp_path: Path):
    (tmp_path / "out.partial").mkdir()
    with pytest.raises(QoslabError, match=r"out\.partial: left by an earlier archive"):
        archive(src, tmp_path / "out")
    assert (tmp_path / "out.partial").is_dir() and not (tmp_path / "out").exists()


def test_cli_prints_one_line_and_exit_2_on_refusal(src: Path, tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    ok = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "archive", str(src), str(tmp_path / "a")],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "archived" in ok.stdout and "port series dropped from 1 trial(s)" in ok.stdout, ok.stdout
    again = subprocess.run([sys.executable, "-m", "qoslab", "campaign", "archive", str(src), str(tmp_path / "a")],
                           capture_output=True, text=True, env=env, timeout=120)
    msg = (again.stdout + again.stderr).strip()
    assert again.returncode == 2 and "exists already" in msg and "Traceback" not in msg, msg
