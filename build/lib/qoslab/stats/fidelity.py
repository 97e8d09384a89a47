"""The fidelity monitor's verdicts over a whole campaign (docs/DESIGN.md, "Emulation fidelity"):
which trials the main statistics leave out, the counts per condition for ``stats.json``'s
``fidelity`` block, and the warning when too many trials were emulated unfaithfully.

Trials judged ``invalid`` by :mod:`.fidelity` are left out of ``trials.csv`` (and so of
``stats.json``, ``stats-network.json`` and the censoring sensitivity); ``trials-all.csv`` and
``stats-all.json`` keep every trial and exist only when something was left out. When leaving them
out would leave a condition fewer than 2 trials, nothing is left out and the block says why
(``excluded_applied`` false): the statistics are then over all trials, flagged, never silently.
"""

from __future__ import annotations

import json
from typing import Any

from qoslab.meters.fidelityjudge import FidelityThresholds, campaign_counts, headline, invalid_warning
from qoslab.trials.playbook import Playbook
from qoslab.trials.store import Store, TrialRow


def is_invalid(row: TrialRow) -> bool:
    """The fidelity monitor judged the trial ``invalid``."""
    return bool(row.get("fidelity") == "invalid")


def fidelity_block(pb: Playbook, store: Store) -> dict[str, Any]:
    """``stats.json``'s ``fidelity`` block: ``thresholds``, ``counts`` (condition -> verdict ->
    trials, over the counted trials), ``excluded`` (idx, condition, trial, reasons of each invalid
    trial), ``invalid_share``, ``excluded_applied`` (false with ``not_applied_reason`` when
    excluding would leave a condition < 2 trials), ``warning`` (None unless the invalid share is
    above ``max_invalid_share``)."""
    th: FidelityThresholds = pb.fidelity
    rows = store.trials(counted=True)
    counts = campaign_counts((r.condition, r.get("fidelity")) for r in rows)
    bad = [r for r in rows if is_invalid(r)]
    left = {c: sum(1 for r in rows if r.condition == c and not is_invalid(r)) for c in counts}
    short = sorted(c for c, n in left.items() if n < 2)
    block: dict[str, Any] = {
        "thresholds": th.model_dump(), "counts": counts,
        "excluded": [{"idx": r.idx, "condition": r.condition, "trial": r.trial,
                      "reasons": json.loads(r.get("fidelity_reasons") or "[]")} for r in bad],
        "degraded": [{"idx": r.idx, "condition": r.condition, "trial": r.trial, "checks": _checks_of(r)}
                     for r in rows if r.get("fidelity") == "degraded"],
        "invalid_share": round(len(bad) / len(rows), 4) if rows else 0.0,
        "excluded_applied": bool(bad) and not short, "not_applied_reason": None,
        "warning": _warning(bad, len(rows), th.max_invalid_share, left_out=not short),
        "all_trials": {"csv": "trials-all.csv", "stats": "stats-all.json"} if bad else None}
    if bad and short:
        block["not_applied_reason"] = (f"leaving the invalid trials out would leave {', '.join(short)} fewer than 2 "
                                       "trials: the statistics are over all trials, invalid ones included")
    return block


def _checks_of(row: TrialRow) -> list[str]:
    """The names of the checks that failed in ``row`` ([] when its reasons are unreadable)."""
    try:
        reasons = json.loads(row.get("fidelity_reasons") or "[]")
    except ValueError:
        return []
    return [str(x.get("check")) for x in reasons if isinstance(x, dict)] if isinstance(reasons, list) else []


#: The checks whose failure says the machine (its CPU, other users' load) could not emulate the
#: trial; any other invalid check (the flood's rate) says nothing about the machine.
MACHINE_CHECKS = ("port_utilisation", "outside_cores", "cpu_steal")


def _warning(bad: list[TrialRow], total: int, max_share: float, left_out: bool) -> str | None:
    """The campaign's fidelity warning (:func:`invalid_warning`) naming the checks that made its
    trials invalid; the machine is blamed only when one of :data:`MACHINE_CHECKS` failed (issue 45:
    a flood judged below its rate says nothing about the machine)."""
    failed: dict[str, int] = {}
    for r in bad:
        try:
            reasons = json.loads(r.get("fidelity_reasons") or "[]")
        except ValueError:
            reasons = []
        for c in {str(x.get("check")) for x in reasons if isinstance(x, dict) and x.get("verdict") == "invalid"}:
            failed[c] = failed.get(c, 0) + 1
    checks = ", ".join(f"{c} in {n}" for c, n in sorted(failed.items(), key=lambda kv: (-kv[1], kv[0])))
    if not failed or set(failed) & set(MACHINE_CHECKS):
        text = invalid_warning(len(bad), total, max_share, left_out)
        return None if text is None else text + (f" (failed: {checks})" if checks else "")
    if total == 0 or len(bad) / total <= max_share:
        return None
    where = "left out of the main statistics" if left_out else "still IN the main statistics (see below)"
    return (f"{len(bad)} of {total} trials ({len(bad) / total:.0%}) were judged fidelity invalid (more than "
            f"{max_share:.0%}): they are {where}; the checks that failed ({checks}) concern the flood's rate, not "
            "this machine's capacity: see each trial's fidelity_reasons and the flood file")


__all__ = ["MACHINE_CHECKS", "console_lines", "fidelity_block", "headline", "is_invalid"]


def console_lines(block: dict[str, Any] | None) -> list[str]:
    """What ``qoslab campaign run`` prints about fidelity at the end (plain text lines)."""
    if not block:
        return []
    out = ["fidelity per condition (ok / degraded / invalid / unknown):"]
    for cond, c in block["counts"].items():
        out.append(f"  {cond}: {c['ok']} / {c['degraded']} / {c['invalid']} / {c['unknown']}"
                   + (f" (+{c['none']} not judged)" if c.get("none") else ""))
    if block["excluded"]:
        verb = "left out of the main statistics" if block["excluded_applied"] else "NOT left out"
        out.append(f"  {len(block['excluded'])} invalid trial(s) {verb}: "
                   + ", ".join(f"#{e['idx']} ({e['condition']})" for e in block["excluded"][:12]))
    if block.get("not_applied_reason"):
        out.append(f"  {block['not_applied_reason']}")
    if block.get("warning"):
        out.append(f"WARNING: {block['warning']}")
    return out
