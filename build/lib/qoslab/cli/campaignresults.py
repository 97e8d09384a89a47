"""The console output of a finished campaign (``qoslab campaign run``): a smoke run's values, the
statistics tables with their comparisons and recoveries, the harness overhead, a sequential
campaign's stop and the fidelity verdicts. Every name from a playbook or a folder is printed as
text, never as rich markup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from ..errors import QoslabError
from ..workloads.metrics import DEFAULT, Metric, decimals, fmt, primary_value
from .common import console


def print_smoke(store: Any, folder: Path, failed: int = 0) -> None:
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


def print_results(stats: dict[str, Any], kind: str, folder: Path) -> None:
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


def _print_stopping(stopping: dict[str, Any] | None) -> None:
    """A sequential campaign's stop: which rule stopped each condition, after how many trials."""
    if not stopping:
        return
    console.print(f"sequential stopping ({stopping['rule']} of the {stopping['metric']}, half-width <= "
                  f"{stopping['half_width']:g}, {stopping['min']}-{stopping['max']} trials, checked every "
                  f"{stopping['every']}):", soft_wrap=True)
    for name, c in stopping["conditions"].items():
        console.print(f"  {name}: {c['trials']} trials; stopped by {c['stopped_by']}", soft_wrap=True, markup=False)
