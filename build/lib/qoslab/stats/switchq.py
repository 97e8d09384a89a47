"""stats.json's ``switch_queues`` block (issue 36): the switch meter's per-queue counters of any
platform (``switch_queues_json``: a 3750's queues 1-4 in packets, a 9300's egress classes in
bytes and packets), as means per trial per condition, summed over the trial's ports. Pure apart
from reading the store's rows."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from qoslab.trials.store import Store

COUNTERS = ("enqueued_packets", "dropped_packets", "enqueued_bytes", "dropped_bytes")


def summarize(rows: Iterable[tuple[str, str | None]]) -> dict[str, Any] | None:
    """(condition, switch_queues_json) of counted trials -> {"platform", "conditions": {condition:
    {"n": trials with evidence, "queues": {queue: {counter: mean per trial}}}}}; counters the
    platform does not count are left out. None when no trial has the record. Pure."""
    sums: dict[str, dict[str, dict[str, float]]] = {}
    n: dict[str, int] = {}
    platform = None
    for cond, text in rows:
        if not text:
            continue
        rec = json.loads(text)
        platform = rec.get("platform", platform)
        n[cond] = n.get(cond, 0) + 1
        per = sums.setdefault(cond, {})
        for port in rec["ports"].values():
            for i, q in enumerate(port["queues"]):
                acc = per.setdefault(str(q), {})
                for c in COUNTERS:
                    if port.get(c) is not None:
                        acc[c] = acc.get(c, 0.0) + port[c][i]
    if not n:
        return None
    return {"platform": platform, "conditions": {
        c: {"n": n[c], "queues": {q: {k: round(v / n[c], 1) for k, v in acc.items()} for q, acc in sums[c].items()}}
        for c in sums}}


def switch_queues_block(store: Store) -> dict[str, Any] | None:
    """:func:`summarize` over the store's counted trials (None without the column's records)."""
    return summarize((r.condition, r.measurements.get("switch_queues_json")) for r in store.trials(counted=True))
