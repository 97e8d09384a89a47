"""The report notebook executed headless, and the HTML loaded in headless Chromium."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from qoslab.report.notebook import THESIS_DATA, campaign_report, thesis_report
from qoslab.stats import ANALYSIS_JAR
from qoslab.topology import repo_root

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
    assert figs == ["fig-means.png", "fig-box.png", "fig-effects.png", "fig-runorder.png"]
    assert "Recovery ratio of congestion, QoS" in html and "95 % BCa" in html and "Hedges" in html
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


def test_a_report_prints_no_kernel_warning_and_its_kernel_is_encrypted(tmp_path):
    """Issue 45: ipykernel warned "Kernel is running over TCP without encryption" after every report.
    The report's kernel manager provisions CurveZMQ keys (KERNEL_CONFIG), the remedy the warning
    names: nothing on stderr, and the kernel it starts has the keys."""
    from jupyter_client.manager import KernelManager
    from traitlets.config import Config

    from qoslab.report.notebook import KERNEL_CONFIG

    r = subprocess.run([str(repo_root() / ".venv" / "bin" / "qoslab"), "report", "--thesis", "--out",
                        str(tmp_path / "thesis")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stderr.strip() == "", r.stderr[-2000:]
    km = KernelManager(kernel_name="python3", config=Config(KERNEL_CONFIG))
    km.start_kernel()
    try:
        info = km.get_connection_info()
        assert info.get("curve_publickey") and info.get("curve_secretkey")
    finally:
        km.shutdown_kernel(now=True)


def _clean_outputs(nb_path: Path) -> None:
    executed = json.loads(nb_path.read_text())
    outputs = [o for c in executed["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert not [o for o in outputs if o.get("name") == "stderr"]  # no warnings either


def test_campaign_report_flags_lossy_captures_and_shows_new_columns(tmp_path):
    """The committed Table-5 campaign (copied): Table 5 beside the thesis's, capture drops flagged and
    left out of the class figure; per-trial cpu_/capture_drops/switch_ columns shown when present."""
    src = repo_root() / "docs" / "results" / "thesis-table5-20261122"
    camp = tmp_path / "camp"
    shutil.copytree(src, camp, ignore=shutil.ignore_patterns("report.*", "fig-*.png", "figures.json", "*.pcap"))
    page = campaign_report(camp)
    html = page.read_text()
    _clean_outputs(camp / "report.ipynb")
    assert "Table 5 beside the thesis" in html and "69.9%" in html and "94.4%" in html
    assert html.count("LOST PACKETS") == 4 and "left out of the class figures" in html
    assert "retried (attempts &gt; 1)" in html or "1 retried" in html
    figs = json.loads((camp / "figures.json").read_text())
    assert "fig-classes.png" in figs and "fig-cpu.png" not in figs
    assert not [f for f in figs if "bitrate-congestion" in f]  # lossy captures: no per-class plots
    # the other engineers' per-trial columns, by name
    import sqlite3
    con = sqlite3.connect(camp / "trials.sqlite")
    from qoslab.meters.cpu import COLUMNS as CPU_COLUMNS
    from qoslab.meters.drops import COLUMNS as DROP_COLUMNS

    have = {r[1] for r in con.execute("PRAGMA table_info(trials)")}  # the report's store may have added them
    for col, typ in {**CPU_COLUMNS, **DROP_COLUMNS, "switch_json": "TEXT"}.items():
        if col not in have:
            con.execute(f"ALTER TABLE trials ADD COLUMN {col} {typ}")
    ev = {"ports": {"Gi1/0/1": {"enqueued": [10, 900, 0, 0], "dropped": [0, 120, 0, 0], "policer_in": 0,
                                "policer_out": 0, "dscp_in": {"0": 50}, "dscp_out": {"0": 910}}}, "reset": []}
    con.execute("UPDATE trials SET cpu_window_s = 2.0, cpu_flood_s = 0.5, cpu_workers_s = 1.0, cpu_busiest_worker_s = 0.3, "
                "cpu_outside_s = 0.1, cpu_user_s = 2.0, cpu_system_s = 0.8, cpu_softirq_s = 0.25, cpu_idle_s = 0.9, "
                "cpu_steal_s = 0.05, cpu_json = '{\"cpus\": {\"cpu0\": {}, \"cpu1\": {}}}', capture_drops = 0, "
                "switch_json = ?", (json.dumps(ev),))
    con.execute("UPDATE trials SET capture_drops = 9 WHERE idx = 5")   # a clean pcap, drops counted elsewhere
    con.commit()
    con.close()
    html = campaign_report(camp, include_dropped_captures=True).read_text()
    _clean_outputs(camp / "report.ipynb")
    assert "CPU time per trial" in html and "egress queue drops per condition" in html and "cpu_softirq_s" in html
    assert "waiting for a core" in html  # the busiest worker's busy time split by its CPU time
    assert html.count("LOST PACKETS") == 5 and "include_dropped_captures=True" in html
    figs = json.loads((camp / "figures.json").read_text())
    assert "fig-cpu.png" in figs and "fig-bitrate-congestion-fifo.png" in figs and "fig-switch-drops.png" in figs
    if CHROMIUM is None:
        pytest.skip("chromium not installed (make setup installs it)")
    shot = tmp_path / "shot.png"
    r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1366,900",
                        f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and shot.stat().st_size > 20000
