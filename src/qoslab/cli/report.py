"""``qoslab report``: a campaign's statistics and report, or the thesis's own data (Appendix A)
against its Tables 3 and 5."""

from __future__ import annotations

from pathlib import Path

import typer

from ..errors import QoslabError
from .common import console


def report_cmd(folder: Path | None = typer.Argument(None, help="Campaign folder."),
               thesis: bool = typer.Option(False, "--thesis", help="Report on the thesis's own data instead."),
               out: Path = typer.Option(Path("results/thesis-report"), help="Output folder for --thesis."),
               include_dropped_captures: bool = typer.Option(
                   False, "--include-dropped-captures",
                   help="Class figures also from captures that lost packets.")) -> None:
    """Statistics and the report notebook executed headless to report.html (+ PNG figures)."""
    from qoslab.report.notebook import campaign_report, thesis_report

    if thesis:
        page = thesis_report(out)
    elif folder is None:
        raise QoslabError("give a campaign folder, or --thesis")
    else:
        if not (folder / "trials.sqlite").exists():
            raise QoslabError(f"{folder} holds no campaign (no trials.sqlite)")
        page = campaign_report(folder, include_dropped_captures)
    console.print(f"report: {page}")
