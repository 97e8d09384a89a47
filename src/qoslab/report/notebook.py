"""The report: the parameterised notebook ``analysis/notebooks/report.py`` (jupytext percent
format, its helpers in :mod:`qoslab.report.lib`) converted to a notebook at run time (jupytext),
executed headless (papermill; the executed notebook is written as ``report.ipynb``) and exported to
``report.html`` (nbconvert, code hidden, figures embedded and also written as PNG files next to it).

- :func:`campaign_report`: for a campaign folder (statistics computed first if missing).
- :func:`thesis_report`: the thesis's Appendix A data side by side with its published tables.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qoslab.errors import QoslabError
from qoslab.topology import repo_root

NOTEBOOK = repo_root() / "analysis" / "notebooks" / "report.py"
# The thesis's Appendix A trial times: ../shared/data next to the checkout, else the copy in analysis/data
THESIS_DATA = next((d for d in (repo_root().parent / "shared" / "data", repo_root() / "analysis" / "data")
                    if (d / "thesis-table5-qos.csv").exists()), repo_root() / "analysis" / "data")


#: Seconds a notebook cell may run (the slowest, the figures of a 200-trial campaign, takes < 30 s
#: here): a cell stuck on something it reads ends the report with an error instead of hanging.
CELL_TIMEOUT_S = 600
#: What a report run writes (globs): replaced together, and a figure of an earlier run that this
#: one did not draw is removed (:mod:`qoslab.stats.staging`).
REPORT_FILES = ("report.html", "report.ipynb", "figures.json", "fig-*.png", "factorial-recovery.png")


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
    """Execute the notebook with ``params`` into ``out_dir`` (report.ipynb, report.html, figures);
    returns report.html's path. Raises QoslabError naming the failed cell."""
    import nbformat
    import papermill
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    from qoslab.report.kernel import ReportKernelManager

    out_dir = out_dir.resolve()  # the notebook runs with cwd=out_dir: a relative path would nest
    out_dir.mkdir(parents=True, exist_ok=True)
    executed = out_dir / "report.ipynb"
    try:
        papermill.execute_notebook(_notebook(), str(executed), parameters={**params, "out_dir": str(out_dir)},
                                   progress_bar=False, cwd=str(out_dir), kernel_name="python3",
                                   # written once at its end, not after each of its cells (39 writes of
                                   # the notebook with its figures: 0.7 CPU-seconds of the report's
                                   # process, 0.02 now; they overlapped the kernel's cells, so a report
                                   # alone takes the same 7.0-7.1 s, one beside others less: issue 53)
                                   request_save_on_cell_execute=False,
                                   execution_timeout=CELL_TIMEOUT_S, config=Config(KERNEL_CONFIG),
                                   kernel_manager_class=ReportKernelManager)
    except papermill.PapermillExecutionError as e:
        raise QoslabError(f"the report notebook failed in cell {e.exec_count}: {e.ename}: {e.evalue} "
                          "(nothing written)") from None
    except TimeoutError:  # nbclient's CellTimeoutError
        raise QoslabError(f"the report notebook ran a cell longer than {CELL_TIMEOUT_S} s (nothing written)") from None
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    html, _ = exporter.from_notebook_node(nbformat.read(executed, as_version=4))
    page = out_dir / "report.html"
    page.write_text(html)
    return page


def _thesis_stats(out: Path, data: Path = THESIS_DATA) -> Path:
    """``qoslab-analysis thesis`` on the thesis's Appendix A data into ``out`` (stats JSON); returns it.
    Raises QoslabError when the Java statistics fail."""

    from qoslab.stats.jar import run_analysis

    run_analysis(["thesis", "--data", str(data), "--out", str(out)], "thesis statistics", out, timeout_s=120)
    return out


def campaign_report(folder: Path, include_dropped_captures: bool = False, out: Path | None = None,
                    note: Callable[[str], None] = lambda s: None) -> Path:
    """report.html of a campaign folder, written with its figures, report.ipynb and
    stats-thesis.json (the thesis's statistics, for Table 5 side by side) into ``out`` (default:
    the folder itself); returns its path. The campaign is only read (its store read-only); the
    statistics are computed (into ``out``) when stats.json is missing, of an older schema (no
    ``settings``) or lacks the ``metric`` block of a campaign whose trials declare one, and
    censoring.json when it is missing (a campaign from before the censoring sensitivity, see
    qoslab.stats.censoring). Everything is staged and moved into ``out`` only when all of it
    succeeded (:mod:`qoslab.stats.staging`): a failing report writes nothing.
    ``include_dropped_captures`` keeps captures that lost packets in the class figures; ``note``
    is told, in one line, when a stats.json that is there is computed again (corrupt, older,
    incomplete: it is derived from the store, but the user should know). Raises QoslabError when
    the campaign has no valid trials or the notebook fails."""
    from qoslab.campaign.folder import inputs, load_campaign_playbook, read_provenance
    from qoslab.stats import campaign_stats, censoring_stats
    from qoslab.stats.campaign import MANAGED
    from qoslab.stats.metrics import declared_metrics
    from qoslab.stats.staging import staged
    from qoslab.trials.store import Store

    target = out or folder
    name = read_provenance(folder).get("playbook") or folder.name
    pb = load_campaign_playbook(folder)
    inputs(folder, workload_files=False)  # the snapshot the notebook shows (profiles, flood, topology)
    with Store(folder / "trials.sqlite", readonly=True) as store:
        why = _stale_stats(folder / "stats.json", declared_metrics(store) is not None)
        stale = why is not None
        if why is not None and why != "missing":
            note(f"{folder / 'stats.json'}: {why}: the statistics are computed again from the store into {target}")
        if not stale:
            _regular_files(folder)
        with staged(target, (*REPORT_FILES, *(MANAGED if stale else ())), last="report.html") as work:
            derived = work if stale else folder  # where the statistics' files are read from
            if stale:
                campaign_stats(pb, store, folder, out=work)
            elif not (folder / "censoring.json").is_file():
                censoring_stats(pb, store, folder, out=work, trials_csv=folder / "trials.csv")
            thesis = _thesis_stats(work / "stats-thesis.json")
            page = _execute({"stats_path": str((derived / "stats.json").resolve()),
                             "campaign_dir": str(folder.resolve()), "stats_dir": str(derived.resolve()),
                             "thesis_stats_path": str(thesis.resolve()), "thesis_data": str(THESIS_DATA.resolve()),
                             "include_dropped_captures": include_dropped_captures,
                             "title": f"qoslab campaign report: {Path(str(name)).stem}"}, work)
    return (target / page.name).resolve()


def _regular_files(folder: Path) -> None:
    """The statistics' files the notebook reads from ``folder`` are regular files where present
    (a FIFO or device is refused by name, never opened). Raises QoslabError."""
    from qoslab.stats.campaign import MANAGED

    for pattern in (*MANAGED, "censoring.json"):
        for f in folder.glob(pattern):
            if not f.is_file():
                raise QoslabError(f"{f}: not a regular file (a FIFO, device or folder is not a statistics file)")


def _stale_stats(stats: Path, declares: bool) -> str | None:
    """Why stats.json must be (re)computed, or None: ``missing``, unreadable or not JSON, of an
    older schema (no ``settings``) or, for a campaign whose trials declare metrics, without its
    ``metric`` block (a run that failed half-way before issue 45 left such a file)."""
    if not stats.exists():
        return "missing"
    try:
        data = json.loads(stats.read_text()) if stats.is_file() else None
    except OSError as e:
        return f"unreadable ({e.strerror})"
    except ValueError as e:
        return f"not JSON ({' '.join(str(e).split())[:80]})"
    if not isinstance(data, dict):
        return "not a statistics file (no JSON object)"
    if "settings" not in data:
        return "of an older schema (no settings)"
    return "without the metric block its trials declare" if declares and "metric" not in data else None


def thesis_report(out_dir: Path, data: Path = THESIS_DATA) -> Path:
    """report.html of the thesis's raw trial times (Appendix A) against its Tables 3 and 5, with its
    stats.json, written into ``out_dir`` only when all of it succeeded."""
    from qoslab.stats.staging import staged

    with staged(out_dir, REPORT_FILES, last="report.html") as work:
        stats = _thesis_stats(work / "stats.json", data)
        page = _execute({"stats_path": str(stats.resolve()), "thesis_data": str(data.resolve()),
                         "title": "The thesis's data (Appendix A) against its Tables 3 and 5"}, work)
    return (out_dir / page.name).resolve()
