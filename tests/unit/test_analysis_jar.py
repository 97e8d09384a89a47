"""The one wrapper of the analysis jar (qoslab.stats.jar): errors name the jar, the tool's message,
and a portable source path in what it returns."""

from __future__ import annotations

from pathlib import Path

import pytest

from qoslab.errors import QoslabError
from qoslab.stats.jar import ANALYSIS_JAR, run_analysis

needs_jar = pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")


def test_a_missing_jar_is_named(tmp_path: Path):
    with pytest.raises(QoslabError, match=r"thesis statistics failed: .*nope\.jar is missing .*make setup"):
        run_analysis(["thesis", "--out", str(tmp_path / "o.json")], "thesis statistics", tmp_path / "o.json",
                     jar=tmp_path / "nope.jar")


@needs_jar
def test_the_tools_own_error_reaches_the_user(tmp_path: Path):
    csv = tmp_path / "broken.csv"
    csv.write_text("condition,elapsed_s\n")
    with pytest.raises(QoslabError, match=r"^statistics failed: ") as e:
        run_analysis(["stats", "--csv", str(csv), "--out", str(tmp_path / "s.json"), "--baseline", "nope"],
                     "statistics", tmp_path / "s.json")
    assert "Traceback" not in str(e.value)


@needs_jar
def test_source_comes_back_relative_to_the_output_folder(tmp_path: Path):
    csv = tmp_path / "trials.csv"
    rows = [f"A,{1 + i / 10:.2f}" for i in range(6)] + [f"B,{2 + i / 10:.2f}" for i in range(6)]
    csv.write_text("condition,elapsed_s\n" + "\n".join(rows) + "\n")
    out = tmp_path / "stats.json"
    data = run_analysis(["stats", "--csv", str(csv.resolve()), "--out", str(out), "--baseline", "A",
                         "--compare", "A|B"], "statistics", out)
    assert data["source"] == "trials.csv" and str(tmp_path) not in out.read_text()
