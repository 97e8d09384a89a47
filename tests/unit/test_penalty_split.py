"""scripts/penalty_split.py (issue 48, docs/results/manager-boot-20261201): its split of a committed
campaign's FIFO penalty, checked against medians computed here from the trials.csv files the
campaign committed beside its store (another path to the same numbers: trials.csv for the render
time, trials-network.csv for the network wait); its refusals, one line naming the folder; it reads
only."""

from __future__ import annotations

import csv
import hashlib
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "penalty_split.py"
SEED53 = REPO / "docs" / "results" / "thesis-faithful-cpu-onmachine-share-20261129"


def _medians(path: Path) -> dict[str, float]:
    by: dict[str, list[float]] = {}
    with path.open() as f:
        for r in csv.DictReader(f):
            by.setdefault(r["condition"], []).append(float(r["elapsed_s"]))
    return {c: statistics.median(v) for c, v in by.items()}


def test_the_split_of_seed_53_equals_its_committed_csv_files_and_nothing_is_written():
    db = SEED53 / "trials.sqlite"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    out = subprocess.run([sys.executable, str(SCRIPT), str(SEED53)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in SEED53.iterdir() if p.name.startswith("trials.sqlite")) == ["trials.sqlite"]
    header, rule, row = out.stdout.strip().splitlines()
    assert header.startswith("| campaign |") and rule.startswith("| --- |")
    cells = [c.strip() for c in row.strip("|").split("|")]
    render, network = _medians(SEED53 / "trials.csv"), _medians(SEED53 / "trials-network.csv")
    base, fifo = render["no congestion fifo"], render["congestion fifo"]
    assert cells[0] == SEED53.name
    assert float(cells[1]) == round(base, 3) and float(cells[2]) == round(fifo, 3)
    assert float(cells[4]) == round(fifo - base, 3)
    net = network["congestion fifo"] - network["no congestion fifo"]
    assert abs(float(cells[6]) - net) < 0.0015  # +0.307 s: seed 53's network part (README of manager-boot)
    rec = 1 - (render["congestion thesis"] - base) / (fifo - base)
    assert cells[9] == f"{rec:.1%}"


def test_a_folder_that_is_not_a_campaign_is_refused_in_one_line(tmp_path):
    cases = {"none": None, "garbage": b"not sqlite at all", "empty": b""}
    for name, content in cases.items():
        d = tmp_path / name
        d.mkdir()
        if content is not None:
            (d / "trials.sqlite").write_bytes(content)
        out = subprocess.run([sys.executable, str(SCRIPT), str(d)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 2, (name, out.stdout, out.stderr)
        assert out.stderr.startswith(f"error: {d}") and "Traceback" not in out.stderr, (name, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1
