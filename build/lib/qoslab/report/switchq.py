"""The report's per-queue switch counters of any platform (issue 36; pure): stats.json's
``switch_queues`` block (:mod:`qoslab.stats.switchq`: mean counters per trial, per condition and
queue or egress class, summed over the trial's ports) as one table. The Catalyst 3750's own
section (queues 1-4, ``show mls qos interface statistics``) stays as it is; this table is what a
9300 campaign (``show policy-map interface``: classes, bytes and packets) shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

#: Counters in the table's order, with their column titles (means per trial).
COLUMNS = {"enqueued_packets": "enqueued packets", "dropped_packets": "dropped packets",
           "enqueued_bytes": "enqueued bytes", "dropped_bytes": "dropped bytes"}


def applies(block: Mapping[str, Any] | None) -> bool:
    """Whether the section is shown: a ``switch_queues`` block of a platform other than the 3750
    (whose queues the report's switch section already shows)."""
    return bool(block) and (block or {}).get("platform") not in (None, "catalyst3750")


def title(block: Mapping[str, Any]) -> str:
    """The section's Markdown heading, naming the platform."""
    return (f"## Switch evidence: egress queues of the {block.get('platform')} per condition (means per trial over "
            "the trial's ports)")


def queue_table(block: Mapping[str, Any], order: Sequence[str]) -> pd.DataFrame:
    """One row per (condition, queue): trials with evidence and the mean of every counter the
    platform counts (None where it does not), conditions in ``order`` (others after them)."""
    conds = block.get("conditions", {})
    names = [c for c in order if c in conds] + sorted(c for c in conds if c not in order)
    kept = [k for k in COLUMNS if any(k in q for c in conds.values() for q in c["queues"].values())]
    rows = [{"condition": c, "queue": q, "trials": conds[c]["n"], **{COLUMNS[k]: vals.get(k) for k in kept}}
            for c in names for q, vals in conds[c]["queues"].items()]
    return pd.DataFrame(rows, columns=["condition", "queue", "trials", *(COLUMNS[k] for k in kept)])
