"""bench/repro_bench.py's repeated quiet reference (``--quiet-runs``): the run order spreads the
quiet repeats between the perturbations, and every ratio is against the quiet runs' mean. On
2026-12-01 here (an AMD EPYC VM) one quiet campaign gave 1.52x and the next 1.60x, with unperturbed
quick campaigns at 1.48-1.93x that hour: a single quiet run was no reference."""

from __future__ import annotations

import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
from repro_bench import main, order, relative_to_quiet  # noqa: E402

NAMES = ["quiet", "hog-cpu0", "hog-cpu1", "timer-slack-50us", "timer-hammer"]


def test_one_quiet_run_keeps_the_order():
    assert order(NAMES, 1) == NAMES
    assert order(["hog-cpu0", "timer-hammer"], 3) == ["hog-cpu0", "timer-hammer"]  # no quiet asked: none added


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_quiet_repeats_are_spread_and_every_perturbation_runs_once(k):
    out = order(NAMES, k)
    assert out[0] == "quiet" and sorted(n for n in out if not n.startswith("quiet")) == sorted(NAMES[1:])
    assert [n for n in out if n.startswith("quiet")] == ["quiet"] + [f"quiet-{i}" for i in range(2, k + 1)]
    assert out[-1] == f"quiet-{k}"  # the last quiet run closes the bench: drift shows at both ends
    assert not any(a.startswith("quiet") and b.startswith("quiet") for a, b in zip(out, out[1:], strict=False))


def test_ratios_are_against_the_mean_of_the_quiet_runs_and_failed_runs_are_left_out():
    rows = [{"name": "quiet", "slowdown": 1.5}, {"name": "hog-cpu0", "slowdown": 1.8},
            {"name": "quiet-2", "slowdown": 1.7}, {"name": "quiet-3", "error": "campaign failed"},
            {"name": "timer-hammer", "error": "x"}]
    relative_to_quiet(rows)
    assert rows[0]["slowdown_vs_quiet"] == pytest.approx(1.5 / 1.6, abs=1e-4)
    assert rows[1]["slowdown_vs_quiet"] == 1.125 and rows[2]["slowdown_vs_quiet"] == pytest.approx(1.0625)
    assert "slowdown_vs_quiet" not in rows[3] and "slowdown_vs_quiet" not in rows[4]
    only = [{"name": "hog-cpu0", "slowdown": 1.8}]
    relative_to_quiet(only)
    assert "slowdown_vs_quiet" not in only[0]  # no quiet run: no reference, no ratio


@pytest.mark.parametrize("k", ["0", "6", "-1"])
def test_a_quiet_run_count_out_of_range_is_refused_before_anything_runs(k, capsys, tmp_path):
    assert main(["--quiet-runs", k, "--out", str(tmp_path / "x.json")]) == 2
    assert "--quiet-runs" in capsys.readouterr().err and not (tmp_path / "x.json").exists()
