"""``qoslab report``: a campaign's statistics and report, or the thesis's own data (Appendix A)
against its Tables 3 and 5."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from ..errors import QoslabError
from .common import console


def report_cmd(folder: Path | None = typer.Argument(None, help="Campaign folder."),
               thesis: bool = typer.Option(False, "--thesis", help="Report on the thesis's own data instead."),
               out: Path | None = typer.Option(None, help="Output folder (default: the campaign folder itself; "
                                                          "results/thesis-report with --thesis). The campaign "
                                                          "folder is only read when it is another folder."),
               include_dropped_captures: bool = typer.Option(
                   False, "--include-dropped-captures",
                   help="Class figures also from captures that lost packets.")) -> None:
    """Statistics and the report notebook executed headless to report.html (+ PNG figures); with
    --out the campaign folder is only read (its store read-only) and everything goes there."""
    from qoslab.report.notebook import campaign_report, thesis_report

    if thesis:
        page = thesis_report(out or Path("results/thesis-report"))
    elif folder is None:
        raise QoslabError("give a campaign folder, or --thesis")
    else:
        if not (folder / "trials.sqlite").is_file():
            raise QoslabError(f"{folder} holds no campaign (no trials.sqlite)")
        page = campaign_report(folder, include_dropped_captures, out=out,
                               note=lambda s: console.print(f"note: {escape(s)}", soft_wrap=True))
    console.print(f"report: {escape(str(page))}", soft_wrap=True)
