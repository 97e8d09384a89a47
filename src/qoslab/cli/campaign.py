"""``qoslab campaign``: campaigns: trials over a matrix of conditions, resumable, with statistics."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..errors import QoslabError
from ..workloads.metrics import DEFAULT, Metric, decimals, fmt, primary_value
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
                    experimental: bool = typer.Option(False, "--experimental", help="Use it although it is not "
                                                      "finished (a job outlives its campaign).")) -> None:
    """Submit a campaign as Slurm batch jobs (sbatch): the first runs it in its allocation, each
    follow-up (--dependency=afterany) resumes the folder. Prints the job IDs. Not yet enabled:
    needs --experimental (a job stays until its time limit after its campaign ended)."""
    from ..campaign import load_playbook
    from ..campaign.submit import client_for, submit

    if not experimental:
        raise QoslabError("campaign submit is not finished: each batch job stays until its time limit after its "
                          "campaign ended (issue 51); pass --experimental to use it anyway")
    pb = load_playbook(playbook)
    topo, client, handle = client_for(pb, playbook)
    client.require(("sbatch",))  # before the folder is made: nothing submitted, nothing written
    folder = _campaign_folder(playbook, trials, out, None)
    jobs = submit(topo, folder, f"qoslab-submit-{pb.name}", client, follow_ups, root_netns=handle)
    console.print(f"campaign folder {folder}; jobs {', '.join(jobs)} (each after the one before: "
                  f"sbatch --dependency=afterany); script {folder / 'slurm' / 'campaign.sbatch'}",
                  soft_wrap=True, highlight=False)


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
                                                    "trials judged invalid again (meta lists them).")) -> None:
    """Run a campaign (or --resume one): every trial stored as it ends, then trials.csv,
    stats.json and report.html (with --smoke: one trial per condition, values only)."""
    from ..campaign import Runner
    from ..report import campaign_report
    from ..stats import campaign_stats, stopping
    from ..stats.campaign import censored_failed_trials

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
    counts = store.counts()
    console.print(f"trials: {counts}")
    if store.meta("smoke"):  # a try-out: every condition's value (or why it failed), no statistics
        return _print_smoke(store, folder, counts.get("failed", 0))
    if counts.get("failed") and len(censored_failed_trials(runner.pb, store, folder)) != counts["failed"]:
        raise QoslabError(f"campaign incomplete: {counts['failed']} trial(s) failed after their retries (see "
                          f"`qoslab campaign status {folder}`); no statistics over unequal trial counts: "
                          f"`qoslab campaign run --resume {folder}` runs them again")
    if counts.get("pending") or counts.get("running"):
        raise QoslabError(f"campaign incomplete: resume with `qoslab campaign run --resume {folder}`")
    stats = campaign_stats(runner.pb, store, folder)
    if stats.get("censored"):
        console.print(f"[yellow]{stats['censored']['trials']} trial(s) timed out and count at their lower bound "
                      f"(censor_timeouts): {', '.join(stats['censored']['conditions'])}[/yellow]")
    _print_results(stats, getattr(runner.pb.workload, "kind", "raytracer"), folder)
    with console.status("executing the report notebook ..."):
        page = campaign_report(folder)
    console.print(f"campaign folder: {folder}\nreport: {page}")


def _print_smoke(store: Any, folder: Path, failed: int = 0) -> None:
    """A smoke run's outcome: each condition's one value of the primary metric (no statistics);
    QoslabError after the values when ``failed`` conditions failed."""
    console.print(f"smoke run (one trial per condition): no statistics; campaign folder: {folder}")
    for row in store.trials():
        metric, value = primary_value(row.metrics_json, row.elapsed_s)
        shown = fmt(value, decimals(metric, [value]), metric.unit) if row.status == "done" else row.status
        console.print(f"  {row.condition:<24} {metric.name} {shown}" + (f"  ({row.error[:200]})" if row.error else ""),
                      markup=False, soft_wrap=True)
    if failed:
        raise QoslabError(f"smoke run: {failed} condition(s) failed (see above)")


def _print_results(stats: dict[str, Any], kind: str, folder: Path) -> None:
    """A campaign's statistics on the console: the primary metric, each secondary metric, the
    stopping rule, the harness overhead, the network wait and the fidelity verdicts; first of all
    the fidelity headline (every counted trial ok, or which were not and why)."""
    from ..stats.fidelity import headline

    first = headline(stats.get("fidelity"))
    if first:
        style = None if first.endswith(" ok") else "bold yellow"
        console.print(first, style=style, markup=False, highlight=False, soft_wrap=True)
    _print_stats(stats, _times_title(kind, stats.get("metric")))
    for name, sec in (stats.get("secondary") or {}).items():
        if sec.get("stats"):
            _print_stats(json.loads((folder / sec["stats"]).read_text()), f"secondary metric {name} ({sec['unit']})",
                         Metric.from_dict({"name": name, **sec}))
    _print_stopping(stats.get("stopping"))
    _print_overhead(stats.get("overhead_s"))
    if (folder / "stats-network.json").exists():
        _print_stats(json.loads((folder / "stats-network.json").read_text()),
                     "network wait (render time minus the busiest worker's, seconds)")
    _print_fidelity(stats.get("fidelity"))


def _print_fidelity(block: dict[str, Any] | None) -> None:
    """The fidelity monitor's counts per condition, the trials left out, and the warning."""
    from ..stats.fidelity import console_lines

    for line in console_lines(block):
        style = "bold red" if line.startswith("WARNING") else None
        console.print(line, style=style, markup=False, highlight=False, soft_wrap=True)


def _times_title(kind: str, metric: dict[str, Any] | None = None) -> str:
    """The console title of the statistics table for a workload kind and its declared primary
    ``metric`` (stats.json's ``metric`` block, None: elapsed_s in seconds)."""
    if metric:
        better = "lower" if metric.get("direction", "lower") == "lower" else "higher"
        return f"{metric['name']} ({kind}: {metric['unit']}, {better} is better)"
    return "trial times (render phase, seconds)" if kind == "raytracer" else \
        f"trial times ({kind}: the workload's elapsed_s, seconds)"


def _print_stats(stats: dict[str, Any], title: str = "trial times (render phase, seconds)",
                 metric: Metric | None = None) -> None:
    """A statistics table (mean, sd, CI, median, CV per condition) with its comparisons and
    recoveries, values in ``metric``'s unit and precision (default: stats.json's ``metric``)."""
    m = metric or (Metric.from_dict(stats["metric"]) if stats.get("metric") else DEFAULT.primary)
    d_ = decimals(m, [d["mean"] for d in stats["conditions"].values()])
    tab = Table(title=escape(title))  # condition names, metric names and units are the user's: text, not markup
    for c in ("condition", "n", f"mean {m.unit}", f"sd {m.unit}", "95% BCa CI", f"median {m.unit}", "CV"):
        tab.add_column(escape(c), justify="left" if c == "condition" else "right")
    for name, d in stats["conditions"].items():
        tab.add_row(escape(name), str(d["n"]), fmt(d["mean"], d_), fmt(d["sd"], d_),
                    f"{fmt(d['ci95'][0], d_)}-{fmt(d['ci95'][1], d_)}", fmt(d["median"], d_), f"{d['cv']:.1%}")
    console.print(tab)
    for c in stats.get("comparisons", []):
        console.print(_comparison_line(c, m.unit, d_), markup=False)
    for r in stats.get("recovery", []):
        ratio, ci = r["ratio"], r.get("ci95")
        kind = "percentile" if r.get("method") else "BCa"  # method: a higher-is-better metric's recovery
        interval = f" [{ci[0]:.1%}, {ci[1]:.1%}] ({kind} 95 %)" if ci and None not in ci and ratio is not None else ""
        console.print(f"  recovery of {r['treated']}: " + (f"{ratio:.1%}" if ratio is not None else "n/a (no slowdown)")
                      + f"{interval} of the slowdown {r['baseline']} -> {r['congested']}", markup=False)


def _print_overhead(overhead: dict[str, Any] | None) -> None:
    """The harness overhead per trial (median of trial wall time minus the workload phase)."""
    if overhead:
        per = ", ".join(f"{c} {v:.2f}" for c, v in overhead["conditions"].items())
        console.print(f"harness overhead per trial (median, s): {overhead['median']:.2f} over {overhead['n']} "
                      f"trials; {per}", markup=False)


def _comparison_line(c: dict[str, Any], unit: str = "s", places: int = 3) -> str:
    """One comparison as a line: difference with its bootstrap interval, ratio, Hedges' g, Holm-
    adjusted p values, and, where no difference was detected (Welch p >= 0.05), whether the data
    show the conditions equivalent within the TOST margin (absence of evidence is not equivalence)."""
    ci = c.get("difference_ci95_s")
    line = f"  {c['b']} vs {c['a']}: {c['difference_s']:+.{places}f} {unit}"
    if ci:
        line += f" [{ci[0]:+.{places}f}, {ci[1]:+.{places}f}]"
    line += f" ({c['ratio']:.2f}x)"
    if c.get("not_computable"):  # a metric constant in both conditions: no test divides by its spread
        mw = c.get("mann_whitney_p")
        return line + ", no spread in either condition: Welch t, g and TOST not computable" + (
            f", Mann-Whitney p = {mw:.2g}" if mw is not None else "")
    if c.get("hedges_g") is not None:
        line += f", g = {c['hedges_g']:+.2f}"
    line += f", Welch p = {c['welch_t_p']:.2g}"
    if c.get("welch_t_p_holm") is not None:
        line += f" (Holm {c['welch_t_p_holm']:.2g})"
    line += f", Mann-Whitney p = {c['mann_whitney_p']:.2g}"
    tost = c.get("tost")
    if tost and c["welch_t_p"] >= 0.05:
        verdict = "equivalent" if tost["equivalent"] else "not shown equivalent"
        line += f"; within +-{tost['margin_rel']:.0%} of {tost['reference']}: {verdict} (TOST p = {tost['p']:.2g})"
    return line


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


def _print_stopping(stopping: dict[str, Any] | None) -> None:
    """A sequential campaign's stop: which rule stopped each condition, after how many trials."""
    if not stopping:
        return
    console.print(f"sequential stopping ({stopping['rule']} of the {stopping['metric']}, half-width <= "
                  f"{stopping['half_width']:g}, {stopping['min']}-{stopping['max']} trials, checked every "
                  f"{stopping['every']}):", soft_wrap=True)
    for name, c in stopping["conditions"].items():
        console.print(f"  {name}: {c['trials']} trials; stopped by {c['stopped_by']}", soft_wrap=True, markup=False)


@app.command("status")
def campaign_status(folder: Path = typer.Argument(..., help="Campaign folder.")) -> None:
    """Trials done, pending, failed; running means per condition; processes left in a finished
    trial's cgroup (leftovers the trial's end could not kill, or a killed run left). Reads only."""
    from .campaignstatus import print_status

    print_status(folder)


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
