"""The README's "What to expect on another machine" table is the reproducibility bench's JSON it
names (bench/results/repro-COMMIT.json), figure by figure: slowdown, its interval, ratio to quiet,
the uncongested time and what congestion added (the slowdown is 1 + one over the other), congested-fifo CV, Holm p, fidelity counts, worst sender rate error and overhead. A table edited by
hand, or a JSON re-run without the table, fails here."""

from __future__ import annotations

import json
import re

import pytest

from conftest import REPO

ROWS = {"quiet": "quiet", "busy loop on CPU 0": "hog-cpu0", "busy loop on CPU 1": "hog-cpu1",
        "senders' timer slack 50 us": "timer-slack-50us", "a process waking every 50 us on CPU 1": "timer-hammer"}


def _section() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index("## What to expect on another machine")
    return text[start:text.index("\n## ", start + 1)]


def test_the_readme_table_is_the_bench_json_it_names():
    section = _section()
    names = re.findall(r"--out (bench/results/repro-[0-9a-z-]+\.json)", section.replace("\n", " "))
    assert len(names) == 1, names
    runs = {r["name"]: r for r in json.loads((REPO / names[0]).read_text())["runs"]}
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| perturbation")]
    assert rows, "no table"
    seen = set()
    for line in rows:
        cells = [c.strip() for c in line.strip("|").split("|")]
        again = re.fullmatch(r"quiet, again \((\d)\)", cells[0])  # --quiet-runs: quiet-2, quiet-3, ...
        name = f"quiet-{again.group(1)}" if again else ROWS[cells[0]]
        seen.add(name)
        r = runs[name]
        lo, hi = r["slowdown_ci95"]
        assert cells[1] == f"{r['slowdown']:.2f}x [{lo:.2f}, {hi:.2f}]", (name, cells[1])
        assert cells[2] == f"{r['slowdown_vs_quiet']:.2f}", (name, cells[2])
        assert cells[3] == f"{r['uncongested_s']:.3f} s, {r['penalty_s']:+.3f} s", (name, cells[3])
        assert r["slowdown"] == pytest.approx(1 + r["penalty_s"] / r["uncongested_s"], rel=1e-6)
        assert cells[4] == f"{100 * r['congested_fifo_cv']:.1f} %", (name, cells[4])
        assert float(cells[5]) == float(f"{r['holm_p']:.2g}"), (name, cells[5])
        f = r["fidelity"]
        assert cells[6] == f"{f['ok']} / {f['invalid']}", (name, cells[6])
        assert cells[7] == f"{100 * r['worst_pacing_error']:.1f} %", (name, cells[7])
        assert cells[8] == f"{r['overhead_median_s']:.2f} s", (name, cells[8])
    assert seen == set(runs), (seen, set(runs))
