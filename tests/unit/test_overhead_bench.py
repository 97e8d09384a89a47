"""bench/overhead_bench.py's own logic (issue 42): a trial's overhead from its phases (newer code's
``overhead_s``, older code's sum of the sequential phases) and whether the code it ran was the
commit it names (``src_dirty``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import overhead_bench  # noqa: E402


def test_overhead_of_prefers_the_recorded_value_and_sums_older_phases():
    assert overhead_bench.overhead_of({"overhead_s": 0.21, "switch": 9.0}) == 0.21
    old = {"switch": 0.3, "capture_start": 0.0, "flood_start": 0.2, "workload": 5.0, "stop": 0.4}
    assert abs(overhead_bench.overhead_of(old) - 0.9) < 1e-9


def test_src_dirty_tells_a_modified_checkout_from_its_commit(tmp_path):
    repo = tmp_path / "r"
    (repo / "src").mkdir(parents=True)
    f = repo / "src" / "m.py"
    f.write_text("x = 1\n")
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "c"], check=True)
    assert overhead_bench.src_dirty(repo / "src") is False
    (repo / "src" / "new.py").write_text("")  # untracked files are not counted (--untracked-files=no)
    assert overhead_bench.src_dirty(repo / "src") is False
    f.write_text("x = 2\n")
    assert overhead_bench.src_dirty(repo / "src") is True
    plain = tmp_path / "copy" / "src"
    plain.mkdir(parents=True)
    assert overhead_bench.src_dirty(plain) is None  # a git archive copy: not a checkout
