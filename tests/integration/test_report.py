"""The report notebook executed headless, and the HTML loaded in headless Chromium."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from qoslab.campaign import ANALYSIS_JAR
from qoslab.report import THESIS_DATA, thesis_report

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists() or not THESIS_DATA.exists(),
                                reason="analysis jar or the thesis data missing")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def test_thesis_report_renders_in_chromium(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative folder, as `qoslab report docs/results/X` gives
    page = thesis_report(Path("thesis"))
    assert page == tmp_path / "thesis" / "report.html"
    assert not (tmp_path / "thesis" / "thesis").exists()  # figures not nested under the notebook's cwd
    html = page.read_text()
    assert "Table 5: congestion and QoS" in html and "Recovery ratio" in html
    assert "NO (raw data differ)" in html          # the published sigma that the raw data do not give
    executed = json.loads((tmp_path / "thesis" / "report.ipynb").read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"]  # no warnings either
    figs = json.loads((tmp_path / "thesis" / "figures.json").read_text())
    assert figs == ["fig-means.png", "fig-runorder.png"]
    assert all((tmp_path / "thesis" / f).stat().st_size > 5000 for f in figs)
    assert html.count("data:image/png;base64") >= len(figs)
    if CHROMIUM is None:
        pytest.skip("chromium not installed (make setup installs it)")
    r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
                        "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-500:]
    dom = r.stdout
    assert dom.count("<img") >= len(figs) and "Recovery ratio" in dom
    shot = tmp_path / "shot.png"
    r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile2'}", "--window-size=1200,2400",
                        f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and shot.stat().st_size > 20000
