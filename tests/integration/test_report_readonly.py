"""Issue 45, "no read command changes a byte of any committed campaign folder": the report's part
(`campaign status`, `campaign plan` and `--dry-run` over the same folders are in
tests/unit/test_campaign_folders.py, which needs no notebook)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from qoslab.report.notebook import THESIS_DATA
from qoslab.stats import ANALYSIS_JAR
from qoslab.topology import repo_root

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists() or not THESIS_DATA.exists(),
                                reason="analysis jar or the thesis data missing")


def _checksums(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_report_with_out_changes_no_byte_of_any_committed_campaign(tmp_path):
    """`qoslab report DIR --out OUT` on every committed campaign of docs/results writes its report
    (and the statistics it had to compute: censoring.json of the older ones) into OUT only; the
    committed folders stay byte-identical (no -wal/-shm beside their stores either)."""
    results = repo_root() / "docs" / "results"
    folders = sorted(p for p in results.iterdir() if (p / "trials.sqlite").is_file())
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
