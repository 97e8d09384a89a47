"""``qoslab campaign``: campaigns: trials over a matrix of conditions, resumable, with statistics."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ..errors import QoslabError
from ..workloads.metrics import DEFAULT, decimals, fmt, primary_value
from .campaignresults import print_results, print_smoke
from .common import console

app = typer.Typer(help="Campaigns: trials over a matrix of conditions, resumable, with statistics.",
                  no_args_is_help=True)


def eta_s(remaining: list[str], wall: dict[str, list[float]], render: dict[str, list[float]],
          overhead_s: float = 0.0) -> float | None:
    """The progress bar's ETA: :func:`qoslab.campaign.eta.eta_s` (imported when first needed)."""
    from ..campaign.eta import eta_s as per_condition

    return per_condition(remaining, wall, render, overhead_s)


def _hms(seconds: float | None) -> str:
    if seconds is None:
        return "ETA -:--:--"
    s = int(round(seconds))
    return f"ETA {s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


class _TrialProgress:
    """A rich progress bar over a campaign's trials with a per-condition ETA (:func:`eta_s`),
    printing each trial with the running mean of its condition (continued over the trials done
    before a resume). ``pending``: idx -> condition of the trials this run will run."""

    def __init__(self, prog: Progress, means: dict[str, list[float]], pending: dict[int, str]) -> None:
        self.prog, self.means, self.pending = prog, means, dict(pending)
        self.values: dict[str, list[float | None]] = {}  # a declared primary metric's values
        self.wall: dict[str, list[float]] = {}
        self.overheads: list[float] = []  # wall minus render time of this run's successful trials
        self.last = time.monotonic()
        self.task = prog.add_task("campaign", total=None, eta=_hms(None))

    def started(self, done: int, total: int) -> None:
        self.last = time.monotonic()
        self.prog.update(self.task, total=total, completed=done)

    def trial(self, row: dict[str, Any]) -> None:
        now = time.monotonic()
        self.wall.setdefault(row["condition"], []).append(now - self.last)
        if "error" not in row:
            self.overheads.append(max(0.0, now - self.last - row["elapsed_s"]))
        self.last = now
        self.pending.pop(row["idx"], None)
        self.prog.advance(self.task)
        if "error" in row:
            self.prog.console.print(f"[red]trial {row['idx']} ({escape(row['condition'])}) failed:[/] "
                                    f"{escape(row['error'][:200])}")
        else:
            metric, value = primary_value(row.get("metrics_json"), row["elapsed_s"])
            if not row["warmup"]:
                self.means.setdefault(row["condition"], []).append(row["elapsed_s"])
                self.values.setdefault(row["condition"], []).append(value)
            # a declared metric's running mean is over this run's trials (the store's means are elapsed_s)
            v = self.means.get(row["condition"], []) if metric == DEFAULT.primary else \
                [x for x in self.values.get(row["condition"], []) if x is not None]
            d = decimals(metric, [value, *v])
            mean = f"mean {fmt(sum(v) / len(v), d, metric.unit)} over {len(v)}" if v else "warm-up"
            self.prog.update(self.task, description=escape(f"{row['condition']} #{row['trial']}"))
            self.prog.console.print(f"  {row['idx']:4d} {row['condition']:<24} {fmt(value, d, metric.unit):>9}   "
                                    f"({mean})", markup=False, highlight=False)
        overhead = sum(self.overheads) / len(self.overheads) if self.overheads else 0.0
        self.prog.update(self.task, eta=_hms(eta_s(list(self.pending.values()), self.wall, self.means, overhead)))

    def skipped(self, idxs: list[int]) -> None:
        """A sequential campaign stopped: its skipped trials leave the bar's total and the ETA."""
        for i in idxs:
            self.pending.pop(i, None)
        task = next(t for t in self.prog.tasks if t.id == self.task)
        if task.total is not None:
            self.prog.update(self.task, total=task.total - len(idxs))

    def log(self, text: str) -> None:
        self.prog.console.print(f"  {escape(text)}")


def _campaign_folder(playbook: Path | None, trials: int | None, out: Path | None,
                     resume: Path | None, seed: int | None = None,
                     smoke: bool = False, rerun_invalid: bool = False) -> Path:
    """The folder to run: made from the playbook (every reference checked first), or the one to
    resume (checked by the runner before it writes)."""
    from ..campaign import load_playbook
    from ..campaign.onmachine import create_campaign

    if rerun_invalid and not resume:
        raise QoslabError("--rerun-invalid goes with --resume FOLDER (the campaign whose invalid trials to run again)")
    if resume:
        if not (resume / "trials.sqlite").exists():  # (one that is not a regular file: the store says so)
            raise QoslabError(f"{resume} holds no campaign (no trials.sqlite)")
        return resume
    if playbook is None:
        raise QoslabError("give a playbook, or --resume DIR")
    pb = load_playbook(playbook)
    if seed is not None:
        pb = pb.model_copy(update={"seed": seed})
    folder = out or Path("results/campaigns") / f"{pb.name}{'-smoke' if smoke else ''}-{time.strftime('%Y%m%d-%H%M%S')}"
    create_campaign(pb, playbook, folder, trials, smoke, console.print)
    return folder


def _prepare(runner: Any, rerun_invalid: bool,
             confirm_flood: str | None) -> tuple[dict[int, str], dict[str, list[float]]]:
    """The writes a run makes before its trials, once the runner has checked the folder:
    ``--rerun-invalid`` (counted trials judged fidelity-invalid pending again, listed in meta) and
    ``--confirm-flood``; returns (idx -> condition of the trials to run, running means so far)."""
    st = runner.store
    if rerun_invalid:
        again = st.reset_invalid()
        rec = (st.meta("rerun_invalid") or []) + [{"time": time.time(), "trials": [i for i, _ in again]}]
        st.set_meta("rerun_invalid", rec)
        console.print(f"{len(again)} counted trial(s) judged fidelity-invalid run again: "
                      + (", ".join(f"#{i}" for i, _ in again) or "none"))
    if confirm_flood is not None:  # checked against the topology's name when the campaign starts
        st.set_meta("confirm_flood", confirm_flood)
    return {idx: cname for idx, cname, *_ in st.pending()}, st.done_times()


@app.command("submit")
def campaign_submit(playbook: Path = typer.Argument(..., help="Campaign playbook with `executor: slurm`."),
                    trials: int | None = typer.Option(None, help="Trials per condition (overrides the playbook)."),
                    out: Path | None = typer.Option(None, help="Campaign folder (default results/campaigns/...)."),
                    follow_ups: int = typer.Option(1, "--follow-ups", min=0, max=20,
                                                   help="Jobs that resume the campaign after the previous one ended "
                                                        "(its time limit, a node failure)."),
                    report: bool = typer.Option(True, "--report/--no-report", help="The job that completes the "
                                                "campaign renders report.html (10-20 s of its allocation); with "
                                                "--no-report `qoslab report FOLDER` renders it afterwards.")) -> None:
    """Submit a campaign as Slurm batch jobs (sbatch): the first runs it in its allocation, each
    follow-up (--dependency=afterany) resumes the folder. Prints the job IDs."""
    from .campaignsubmit import submit_command

    submit_command(playbook, follow_ups, lambda: _campaign_folder(playbook, trials, out, None), report)


@app.command("run")
def campaign_run(playbook: Path | None = typer.Argument(None, help="Campaign playbook, e.g. playbooks/quick.yaml."),
                 trials: int | None = typer.Option(None, help="Trials per condition (overrides the playbook)."),
                 out: Path | None = typer.Option(None, help="Campaign folder (default results/campaigns/NAME-TIME)."),
                 resume: Path | None = typer.Option(None, help="Finish the campaign in this folder."),
                 confirm_flood: str | None = typer.Option(None, "--confirm-flood", metavar="TOPOLOGY",
                                                          help="Allow floods on a real cluster (environment: "
                                                               "cluster): its topology's name."),
                 seed: int | None = typer.Option(None, min=0, help="Seed of the interleaved order (overrides the "
                                                                   "playbook's; `campaign plan` shows its schedule)."),
                 dry_run: bool = typer.Option(False, "--dry-run", help="Only check the playbook and print its "
                                                                       "plan (as `campaign plan`); start nothing."),
                 show: int = typer.Option(12, min=0, help="With --dry-run: trials of the order to print."),
                 smoke: bool = typer.Option(False, "--smoke", help="Try the campaign once: one trial per "
                                                                   "condition, no warm-up, no statistics."),
                 rerun_invalid: bool = typer.Option(False, "--rerun-invalid", help="With --resume: run counted "
                                                    "trials judged invalid again (meta lists them)."),
                 report: bool = typer.Option(True, "--report/--no-report", help="Render report.html once the "
                                             "campaign is complete (the notebook: 10-20 s); with --no-report "
                                             "the statistics and results only, `qoslab report FOLDER` renders "
                                             "it later.")) -> None:
    """Run a campaign (or --resume one): every trial stored as it ends, then trials.csv,
    stats.json and report.html (with --smoke: one trial per condition, values only; with
    --no-report: no report.html)."""
    from ..campaign import Runner
    from ..stats import stopping

    if dry_run:
        if playbook is None or resume is not None:
            raise QoslabError("--dry-run plans a playbook: give the playbook (not --resume)")
        from .campaignplan import plan_command

        plan_command(playbook, trials, seed, show)
        return
    folder = _campaign_folder(playbook, trials, out, resume, seed, smoke, rerun_invalid)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[eta]}"), console=console) as prog:
        bar = _TrialProgress(prog, {}, {})
        runner = Runner(folder, on_trial=bar.trial, on_start=bar.started, log=bar.log, on_skip=bar.skipped,
                        stop_check=stopping.check)
        bar.pending, bar.means = _prepare(runner, rerun_invalid, confirm_flood)
        store = runner.run()
    _finish(runner, store, folder, report)


def _finish(runner: Any, store: Any, folder: Path, report: bool = True) -> None:
    """After a run: the counts, then (a complete campaign) the statistics, results and (``report``)
    the report."""
    from ..report import campaign_report
    from ..stats import campaign_stats
    from ..stats.campaign import censored_failed_trials

    counts = store.counts()
    console.print(f"trials: {counts}")
    if store.meta("smoke"):  # a try-out: every condition's value (or why it failed), no statistics
        print_smoke(store, folder, counts.get("failed", 0))
        return
    if counts.get("failed") and len(censored_failed_trials(runner.pb, store, folder)) != counts["failed"]:
        raise QoslabError(f"campaign incomplete: {counts['failed']} trial(s) failed after their retries (see "
                          f"`qoslab campaign status {folder}`); no statistics over unequal trial counts: "
                          f"`qoslab campaign run --resume {folder}` runs them again")
    if counts.get("pending") or counts.get("running"):
        raise QoslabError(f"campaign incomplete: resume with `qoslab campaign run --resume {folder}`")
    from ..campaign.submit import cancel_follow_ups

    cancelled = cancel_follow_ups(folder, os.environ)  # a submitted campaign done: its later jobs have nothing to do
    if cancelled:
        console.print(f"campaign complete: follow-up job(s) {', '.join(cancelled)} cancelled")
    stats = campaign_stats(runner.pb, store, folder)
    if stats.get("censored"):
        console.print(f"[yellow]{stats['censored']['trials']} trial(s) timed out and count at their lower bound "
                      f"(censor_timeouts): {', '.join(stats['censored']['conditions'])}[/yellow]")
    print_results(stats, getattr(runner.pb.workload, "kind", "raytracer"), folder)
    if not report:
        console.print(f"campaign folder: {folder}\nreport: not rendered (--no-report): qoslab report {folder}",
                      markup=False, soft_wrap=True)  # one line: the command copies whole
        return
    with console.status("executing the report notebook ..."):
        page = campaign_report(folder)
    console.print(f"campaign folder: {folder}\nreport: {page}")


@app.command("plan")
def campaign_plan(playbook: Path = typer.Argument(..., help="Campaign playbook, e.g. playbooks/thesis-table5.yaml."),
                  trials: int | None = typer.Option(None, help="Trials per condition (overrides the playbook)."),
                  seed: int | None = typer.Option(None, min=0, help="Seed of the order (default: the playbook's, "
                                                                    "else one drawn for the plan)."),
                  show: int = typer.Option(12, min=0, help="Trials of the order to print.")) -> None:
    """Check every reference of a playbook and print its schedule and an ETA per condition,
    without starting anything (no testbed, switch, node, process or campaign folder)."""
    from .campaignplan import plan_command

    plan_command(playbook, trials, seed, show)


@app.command("status")
def campaign_status(folder: Path = typer.Argument(..., help="Campaign folder.")) -> None:
    """Trials done, pending, failed; running means per condition; a submitted campaign's Slurm
    jobs and their states; processes left in a finished trial's cgroup (leftovers the trial's end
    could not kill, or a killed run left). Reads only."""
    from .campaignstatus import print_status

    print_status(folder)


@app.command("archive")
def campaign_archive(folder: Path = typer.Argument(..., help="Campaign folder, e.g. results/campaigns/quick-TIME."),
                     dest: Path = typer.Argument(..., help="New folder for the archive, e.g. docs/results/NAME."),
                     keep_port_series: bool = typer.Option(
                         False, "--keep-port-series", help="Keep each trial's per-interval switch-port series in "
                         "its fidelity record (the largest part of a store).")) -> None:
    """Copy what a campaign's report and statistics need (store, playbook, provenance, input
    snapshot, statistics, figures, derivation, call summaries) to a new folder worth committing:
    no packet captures, logs or switch backups. Reads the campaign folder only; refuses a running one."""
    from ..campaign.archive import archive

    rep = archive(folder, dest, keep_port_series)
    console.print(f"archived {len(rep.files)} files: {rep.bytes_in / 1e6:.1f} MB -> {rep.bytes_out / 1e6:.1f} MB "
                  f"in {rep.dest}" + (f"; port series dropped from {rep.stripped} trial(s)" if rep.stripped else "")
                  + (f"; made relative: {', '.join(rep.relative[:3])}{' ...' if len(rep.relative) > 3 else ''}"
                     if rep.relative else ""), markup=False, highlight=False, soft_wrap=True)
    console.print(f"check it: qoslab report {rep.dest} --out /tmp/report-check", markup=False,
                  highlight=False)


@app.command("sweep")
def campaign_sweep(file: Path = typer.Argument(..., help="Sweep file, e.g. playbooks/sweeps/rate.yaml."),
                   rate: list[str] = typer.Option(None, "--rate", help="Run only this rate (repeatable), e.g. 20Mbit."),
                   out: Path | None = typer.Option(None, help="Sweep folder (default results/sweeps/NAME); "
                                                              "give the same one to run further rates."),
                   table_only: bool = typer.Option(False, "--table",
                                                   help="Only (re)write and print the table.")) -> None:
    """Run a campaign playbook at several link rates (one campaign per rate, each resumable), then
    the sweep table: slowdown, recovery (render time, network wait) and flood CPU per rate."""
    from ..campaign import Store
    from ..campaign.sweep import ensure_rate_campaign, load_sweep, prepare, summarize_sweep, sweep_markdown
    from ..units import parse_rate

    sw = load_sweep(file)
    folder = out or Path("results/sweeps") / sw.name
    sw = prepare(sw, folder)
    try:
        chosen = [parse_rate(r) for r in rate] if rate else list(sw.rates)
    except ValueError as e:
        raise QoslabError(f"--rate: {e}") from None
    unknown = [r for r in chosen if r not in sw.rates]
    if unknown:
        raise QoslabError(f"--rate {unknown[0]} bit/s is not one of the sweep's rates")
    for bps in [] if table_only else chosen:
        camp = ensure_rate_campaign(sw, folder, bps)
        st = Store(camp / "trials.sqlite", readonly=True)
        counts = st.counts()
        st.close()
        if counts.get("pending") or counts.get("running") or not (camp / "stats.json").exists():
            console.print(f"[bold]sweep {sw.name}: {bps / 1e6:g} Mbit/s[/] -> {camp}")
            campaign_run(None, None, None, camp)
    rows = summarize_sweep(sw, folder)
    console.print(sweep_markdown(rows), markup=False, highlight=False, soft_wrap=True)
    console.print(f"sweep folder: {folder} (sweep.json, sweep.md)")
