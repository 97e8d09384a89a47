"""The report: the parameterised notebook ``analysis/notebooks/report.py`` (jupytext percent
format, its helpers in :mod:`qoslab.report.lib`) converted to a notebook at run time (jupytext),
executed headless (papermill; the executed notebook is written as ``report.ipynb``) and exported to
``report.html`` (nbconvert, code hidden, figures embedded and also written as PNG files next to it).

- :func:`campaign_report`: for a campaign folder (statistics computed first if missing).
- :func:`thesis_report`: the thesis's Appendix A data side by side with its published tables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qoslab.errors import QoslabError
from qoslab.topology import repo_root

NOTEBOOK = repo_root() / "analysis" / "notebooks" / "report.py"
# The thesis's Appendix A trial times: ../shared/data next to the checkout, else the copy in analysis/data
THESIS_DATA = next((d for d in (repo_root().parent / "shared" / "data", repo_root() / "analysis" / "data")
                    if (d / "thesis-table5-qos.csv").exists()), repo_root() / "analysis" / "data")


def _notebook(source: Path = NOTEBOOK) -> Any:
    """The report notebook (nbformat NotebookNode) from its jupytext percent-format source, with
    cell ids numbered in order (reproducible HTML)."""
    import jupytext

    nb = jupytext.read(source)
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i}"
    return nb


#: The report kernel's traitlets config: its ZeroMQ sockets encrypted with CurveZMQ keys the kernel
#: manager provisions (jupyter_client >= 8.10 ``KernelManager.transport_encryption``; the python3
#: kernelspec declares ``supported_encryption: curve``). Without it ipykernel 7 warns after every
#: report "Kernel is running over TCP without encryption ... Use IPC transport or launch with kernel
#: manager-provisioned CurveZMQ keys" (ipykernel/kernelapp.py): this is the second of its remedies (Jupyter
#: enhancement proposal "transport encryption").
KERNEL_CONFIG = {"KernelManager": {"transport_encryption": "required"}}


def _execute(params: dict, out_dir: Path) -> Path:
    import nbformat
    import papermill
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    out_dir = out_dir.resolve()  # the notebook runs with cwd=out_dir: a relative path would nest
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / "report.ipynb"
    try:
        papermill.execute_notebook(_notebook(), str(executed), parameters={**params, "out_dir": str(out_dir)},
                                   progress_bar=False, cwd=str(out_dir), kernel_name="python3",
                                   config=Config(KERNEL_CONFIG))
    except papermill.PapermillExecutionError as e:
        raise QoslabError(f"the report notebook failed in cell {e.exec_count}: {e.ename}: {e.evalue} "
                          f"(executed notebook: {executed})") from None
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    html, _ = exporter.from_notebook_node(nbformat.read(executed, as_version=4))
    page = out_dir / "report.html"
    page.write_text(html)
    figures = set(json.loads((out_dir / "figures.json").read_text()))
    for stale in out_dir.glob("fig-*.png"):  # figures of an earlier run that this one did not draw
        if stale.name not in figures:
            stale.unlink()
    return page


def _thesis_stats(out: Path, data: Path = THESIS_DATA) -> Path:
    """``qoslab-analysis thesis`` on the thesis's Appendix A data into ``out`` (stats JSON); returns it.
    Raises QoslabError when the Java statistics fail."""

    from qoslab.stats.jar import run_analysis

    run_analysis(["thesis", "--data", str(data), "--out", str(out)], "thesis statistics", out, timeout_s=120)
    return out


def campaign_report(folder: Path, include_dropped_captures: bool = False) -> Path:
    """report.html of a campaign folder; returns its path. The statistics are (re)computed when
    stats.json is missing or of an older schema (no ``settings``), or censoring.json is missing
    (a campaign from before the censoring sensitivity, see qoslab.stats.censoring); the
    thesis's statistics are written beside them (stats-thesis.json) for Table 5 side by side.
    ``include_dropped_captures`` keeps captures that lost packets in the class figures. Raises
    QoslabError when the campaign has no valid trials or the notebook fails."""
    from qoslab.campaign.folder import load_campaign_playbook
    from qoslab.campaign.store import Store
    from qoslab.stats import campaign_stats, censoring_stats

    stats = folder / "stats.json"
    stale = not stats.exists() or "settings" not in json.loads(stats.read_text())
    if stale or not (folder / "censoring.json").exists():
        pb = load_campaign_playbook(folder)
        store = Store(folder / "trials.sqlite", readonly=True)
        try:
            (campaign_stats if stale else censoring_stats)(pb, store, folder)
        finally:
            store.close()
    thesis = _thesis_stats(folder / "stats-thesis.json")
    name = json.loads((folder / "provenance.json").read_text()).get("playbook", folder.name)
    return _execute({"stats_path": str(stats.resolve()), "campaign_dir": str(folder.resolve()),
                     "thesis_stats_path": str(thesis.resolve()), "thesis_data": str(THESIS_DATA.resolve()),
                     "include_dropped_captures": include_dropped_captures,
                     "title": f"qoslab campaign report: {Path(name).stem}"}, folder)


def thesis_report(out_dir: Path, data: Path = THESIS_DATA) -> Path:
    """report.html of the thesis's raw trial times (Appendix A) against its Tables 3 and 5."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stats = _thesis_stats(out_dir / "stats.json", data)
    return _execute({"stats_path": str(stats.resolve()), "thesis_data": str(data.resolve()),
                     "title": "The thesis's data (Appendix A) against its Tables 3 and 5"}, out_dir)
