"""The report: the parameterised notebook ``analysis/notebooks/report.ipynb`` executed headless
(papermill) and exported to ``report.html`` (nbconvert, code hidden, figures embedded and also
written as PNG files next to it).

- :func:`campaign_report`: for a campaign folder (statistics computed first if missing).
- :func:`thesis_report`: the thesis's Appendix A data side by side with its published tables.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .errors import QoslabError
from .topology import repo_root

NOTEBOOK = repo_root() / "analysis" / "notebooks" / "report.ipynb"
# The thesis's Appendix A trial times: ../shared/data next to the checkout, else the copy in analysis/data
THESIS_DATA = next((d for d in (repo_root().parent / "shared" / "data", repo_root() / "analysis" / "data")
                    if (d / "thesis-table5-qos.csv").exists()), repo_root() / "analysis" / "data")


def _execute(params: dict, out_dir: Path) -> Path:
    import nbformat
    import papermill
    from nbconvert import HTMLExporter

    out_dir = out_dir.resolve()  # the notebook runs with cwd=out_dir: a relative path would nest
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / "report.ipynb"
    try:
        papermill.execute_notebook(str(NOTEBOOK), str(executed), parameters={**params, "out_dir": str(out_dir)},
                                   progress_bar=False, cwd=str(out_dir), kernel_name="python3")
    except papermill.PapermillExecutionError as e:
        raise QoslabError(f"the report notebook failed in cell {e.exec_count}: {e.ename}: {e.evalue} "
                          f"(executed notebook: {executed})") from None
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    html, _ = exporter.from_notebook_node(nbformat.read(executed, as_version=4))
    page = out_dir / "report.html"
    page.write_text(html)
    return page


def campaign_report(folder: Path) -> Path:
    """report.html of a campaign folder; returns its path. Raises QoslabError when the campaign
    has no valid trials or the notebook fails."""
    from .campaign import Store, campaign_stats, load_campaign_playbook

    stats = folder / "stats.json"
    if not stats.exists():
        campaign_stats(load_campaign_playbook(folder), Store(folder / "trials.sqlite"), folder)
    name = json.loads((folder / "provenance.json").read_text()).get("playbook", folder.name)
    return _execute({"stats_path": str(stats.resolve()), "campaign_dir": str(folder.resolve()),
                     "title": f"qoslab campaign report: {Path(name).stem}"}, folder)


def thesis_report(out_dir: Path, data: Path = THESIS_DATA) -> Path:
    """report.html of the thesis's raw trial times (Appendix A) against its Tables 3 and 5."""
    from .campaign import ANALYSIS_JAR

    out_dir.mkdir(parents=True, exist_ok=True)
    stats = out_dir / "stats.json"
    p = subprocess.run(["java", "-cp", f"{ANALYSIS_JAR}:{ANALYSIS_JAR.parent / 'lib'}/*", "org.qoslab.analysis.Main",
                        "thesis", "--data", str(data), "--out", str(stats)],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise QoslabError(f"thesis statistics failed: {p.stderr.strip()[-300:]}")
    return _execute({"stats_path": str(stats.resolve()), "thesis_data": str(data.resolve()),
                     "title": "The thesis's data (Appendix A) against its Tables 3 and 5"}, out_dir)
