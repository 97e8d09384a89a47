"""The report's fidelity section (helpers of ``analysis/notebooks/report.py``; pure, tested in
tests/unit/test_fidelity.py): the warning at the top of a campaign whose share of invalid trials
is above the playbook's ``fidelity.max_invalid_share``, the counts per condition and the trials
left out of the main statistics (``stats.json``'s ``fidelity`` block, :mod:`qoslab.stats.fidelity`)."""

from __future__ import annotations

from typing import Any

from qoslab.meters.fidelityjudge import headline


def top_warning(stats: dict[str, Any]) -> str | None:
    """Markdown for the top of the report: the fidelity headline (every counted trial ok, or each
    one left out or doubted and why: :func:`qoslab.stats.fidelity.headline`) and the warnings;
    None when the campaign predates the monitor."""
    block = stats.get("fidelity")
    if not block:
        return None
    parts = []
    first = headline(block)
    if first:
        parts.append(first[0].upper() + first[1:] + ("." if not first.endswith(".") else ""))
    if block.get("warning"):
        parts.append(f"**Warning: emulation fidelity.** {block['warning']}.")
    if block.get("not_applied_reason"):
        parts.append(f"**Warning:** {block['not_applied_reason']}.")
    return "\n\n".join(parts) or None


def counts_rows(block: dict[str, Any], order: list[str]) -> list[dict[str, Any]]:
    """One row per condition (in ``order``, then any others): trials ok, degraded, invalid,
    unknown, not judged, and whether the invalid ones are in the main statistics."""
    counts = block.get("counts", {})
    names = [n for n in order if n in counts] + [n for n in counts if n not in order]
    return [{"condition": n, **{k: counts[n].get(k, 0) for k in ("ok", "degraded", "invalid", "unknown")},
             "not judged": counts[n].get("none", 0),
             "invalid in main statistics": "no" if block.get("excluded_applied") else "yes"} for n in names]


def excluded_rows(block: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per invalid trial: its index, condition, trial number and failed checks."""
    return [{"idx": e["idx"], "condition": e["condition"], "trial": e["trial"],
             "failed checks": "; ".join(r.get("text", r.get("check", "?")) for r in e.get("reasons", []))}
            for e in block.get("excluded", [])]
