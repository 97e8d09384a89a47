"""``qoslab campaign plan`` (and ``campaign run --dry-run``): a playbook's checked references, its
schedule and an ETA per condition, printed as rich tables; nothing is started or written."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from .common import console

if TYPE_CHECKING:
    from qoslab.campaign.preview import CampaignPlan


def hms(seconds: float) -> str:
    """``H:MM:SS`` of a number of seconds."""
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def print_plan(plan: CampaignPlan, show: int) -> None:
    """The plan: references checked, seed, per-condition counts and ETA, the first ``show``
    trials in order."""
    pb = plan.playbook
    console.print(f"[bold]plan of {escape(str(plan.path))}[/]: campaign {escape(pb.name)}, every reference checked; "
                  "nothing started, no folder made", soft_wrap=True)
    for what, desc in plan.references:
        console.print(f"  {what:<9} {escape(desc)}", highlight=False, soft_wrap=True)
    if plan.seed_drawn:
        console.print(f"seed {plan.seed}: drawn for this plan (the playbook sets none and a run draws its own; "
                      f"`qoslab campaign run {escape(str(plan.path))} --seed {plan.seed}` runs this schedule)",
                      soft_wrap=True)
    else:
        console.print(f"seed {plan.seed} (a run makes this schedule)")
    seq = pb.sequential
    if seq is not None:
        console.print(f"sequential: {seq.min}-{seq.max} trials per condition, rule {seq.stop.rule} on "
                      f"{seq.stop.metric} (95 % interval half-width <= {seq.stop.half_width:g}"
                      f"{' x the mean' if seq.stop.metric == 'mean' else ''}), checked after "
                      f"{', '.join(map(str, seq.checkpoints()[:-1])) or 'none'} trials")
    console.print(_conditions_table(plan))
    console.print(_trials_table(plan))
    console.print(f"ETA evidence: {escape(plan.evidence)}", highlight=False, soft_wrap=True)
    console.print(_order_table(plan, show))


def _conditions_table(plan: CampaignPlan) -> Table:
    seq = plan.playbook.sequential is not None
    up_to = "up to " if seq else ""
    tab = Table(title=f"{up_to}{len(plan.trials)} trials in {plan.playbook.order} order", title_justify="left")
    for col in ("condition", "congestion", "profile", "warm-up", "trials", "s/trial", "ETA"):
        tab.add_column(col, justify="left" if col in ("condition", "profile") else "right")
    for c in plan.conditions:
        trials = f"{c.min_trials}-{c.trials}" if seq else str(c.trials)
        eta = f"{hms(c.eta_min_s)}-{hms(c.eta_s)}" if c.eta_min_s is not None else hms(c.eta_s)
        at_most = "at most " if c.bound else ""  # the workload's timeout_s, not an estimate
        tab.add_row(escape(c.name), "yes" if c.congestion else "no", escape(c.profile), str(c.warmup), trials,
                    f"{at_most}{c.trial_s:.1f}", at_most + eta)
    total = f"{hms(plan.eta_min_s)}-{hms(plan.eta_s)}" if plan.eta_min_s is not None else hms(plan.eta_s)
    total = ("at most " if any(c.bound for c in plan.conditions) else "") + total
    tab.add_row("total", "", "", str(sum(c.warmup for c in plan.conditions)),
                str(sum(c.trials for c in plan.conditions)), "", total, style="bold")
    return tab


def _trials_table(plan: CampaignPlan) -> Table:
    """What one trial of each condition does: its resolved :class:`TrialPlan`."""
    tab = Table(title="what one trial of each condition does", title_justify="left")
    for col in ("condition", "flood", "switch ports", "profile", "capture"):
        tab.add_column(col, justify="left")
    captures = plan.playbook.capture != "off"
    for c in plan.conditions:
        tp = c.trial
        flood = ("none" if tp.flood is None
                 else f"{tp.flood.name}: {len(tp.flows)} flows -> {', '.join(tp.flooded_ports)}")
        tab.add_row(escape(c.name), escape(flood), ", ".join(tp.ports),
                    f"{len(tp.profile_lines)} lines, config {tp.config_hash}",
                    f"{tp.capture_ifname} ({tp.capture_host})" if captures else "off")
    return tab


def _order_table(plan: CampaignPlan, show: int) -> Table:
    n = min(show, len(plan.trials))
    tab = Table(title=f"the first {n} of {len(plan.trials)} trials in order", title_justify="left")
    for col in ("#", "condition", "trial"):
        tab.add_column(col, justify="left" if col == "condition" else "right")
    for t in plan.trials[:n]:
        tab.add_row(str(t.idx), escape(t.condition), "warm-up" if t.warmup else str(t.trial))
    return tab


def plan_command(playbook: Path, trials: int | None, seed: int | None, show: int) -> None:
    """Make and print the plan of ``playbook`` (QoslabError for a broken reference)."""
    from qoslab.campaign.preview import make_plan

    print_plan(make_plan(playbook, seed=seed, trials=trials), show)
