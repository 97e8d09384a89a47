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

from qoslab.campaign.playbook import Playbook
from qoslab.campaign.store import Store, TrialRow
from qoslab.meters.fidelityjudge import FidelityThresholds, campaign_counts, invalid_warning


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
        "invalid_share": round(len(bad) / len(rows), 4) if rows else 0.0,
        "excluded_applied": bool(bad) and not short, "not_applied_reason": None,
        "warning": invalid_warning(len(bad), len(rows), th.max_invalid_share, left_out=not short),
        "all_trials": {"csv": "trials-all.csv", "stats": "stats-all.json"} if bad else None}
    if bad and short:
        block["not_applied_reason"] = (f"leaving the invalid trials out would leave {', '.join(short)} fewer than 2 "
                                       "trials: the statistics are over all trials, invalid ones included")
    return block


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
