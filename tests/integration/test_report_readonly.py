"""Issue 45, "no read command changes a byte of any committed campaign folder": the report's part
(`campaign status`, `campaign plan` and `--dry-run` over the same folders are in
tests/unit/test_campaign_folders.py, which needs no notebook)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from qoslab.report.notebook import THESIS_DATA
from qoslab.stats import ANALYSIS_JAR
from qoslab.topology import repo_root

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists() or not THESIS_DATA.exists(),
                                reason="analysis jar or the thesis data missing")


def _checksums(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def shape(folder: Path) -> tuple:
    """What decides which of the report's code paths a committed campaign takes: its store's schema
    (``PRAGMA user_version``, the trials table's columns), the workload's kind, the statistics
    files, censoring.json, calls-stats.json, a derive/ folder, a factorial block, an inputs/ folder."""
    con = sqlite3.connect(f"file:{folder / 'trials.sqlite'}?mode=ro&immutable=1", uri=True)
    try:
        schema = (con.execute("PRAGMA user_version").fetchone()[0],
                  tuple(r[1] for r in con.execute("PRAGMA table_info(trials)")))
    finally:
        con.close()
    pb = yaml.safe_load((folder / "playbook.yaml").read_text())
    kind = pb["workload"].get("kind", "raytracer") if isinstance(pb.get("workload"), dict) else "raytracer"
    names = {p.name for p in folder.iterdir()}
    stats = json.loads((folder / "stats.json").read_text())
    return (schema, kind, tuple(sorted(n for n in names if n.startswith("stats"))),
            *(n in names for n in ("censoring.json", "calls-stats.json", "derive", "inputs")), "factorial" in stats)


def test_report_with_out_changes_no_byte_of_any_committed_campaign(tmp_path):
    """`qoslab report DIR --out OUT` on the committed campaigns of docs/results writes its report
    (and the statistics it had to compute: censoring.json of the older ones) into OUT only; the
    committed folders stay byte-identical (no -wal/-shm beside their stores either). One campaign
    of each :func:`shape` (14 of 21 folders on 2026-11-29; every folder renders in 120-150 s
    here, two notebooks at a time, and each session adds folders of a shape already there);
    QOSLAB_TEST_ALL_REPORTS=1 renders every folder."""
    results = repo_root() / "docs" / "results"
    every = sorted(p for p in results.iterdir() if (p / "trials.sqlite").is_file())
    assert len(every) >= 10
    shapes: dict[tuple, Path] = {}
    for f in every:
        shapes.setdefault(shape(f), f)
    folders = every if os.environ.get("QOSLAB_TEST_ALL_REPORTS") == "1" else sorted(shapes.values())
    assert len(folders) >= 10
    before = _checksums(results)

    def report(f: Path) -> tuple[str, subprocess.CompletedProcess[str]]:
        return f.name, subprocess.run([sys.executable, "-m", "qoslab", "report", str(f), "--out",
                                       str(tmp_path / f.name)], capture_output=True, text=True, timeout=600)

    # two at a time: a notebook run is one busy core, the integration tests run one after another
    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
        for name, r in pool.map(report, folders):
            assert r.returncode == 0, (name, r.stderr[-1500:])
            assert (tmp_path / name / "report.html").stat().st_size > 10000
    assert _checksums(results) == before
