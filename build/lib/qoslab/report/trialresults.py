"""The workload results of a campaign's counted trials, for the report's per-operation tables.

Reads ``trials.sqlite`` (:class:`~qoslab.trials.store.Store`, read-only) and each counted
trial's ``trials/NNNN/workload/workload-result.json`` (NNNN: the trial's index, zero-padded to 4;
the last attempt's folder). Counted = done, valid, not a warm-up (what the statistics count), less
the trials stats.json's ``fidelity`` block left out (``excluded``, when ``excluded_applied``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..trials.layout import workload_result
from ..trials.store import Store


def counted_results(camp: Path | None, stats: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Condition name -> the parsed workload results of its counted trials, in schedule order.
    {} for None (the thesis's own data) or a folder without ``trials.sqlite``; a trial whose result
    file is missing or not JSON is skipped (a slimmed result folder keeps only some)."""
    if camp is None or not (camp / "trials.sqlite").exists():
        return {}
    fid = stats.get("fidelity") or {}
    left_out = {int(e["idx"]) for e in fid.get("excluded", [])} if fid.get("excluded_applied") else set()
    out: dict[str, list[dict[str, Any]]] = {}
    with Store(camp / "trials.sqlite", readonly=True) as store:
        rows = [r for r in store.trials(counted=True) if r.idx not in left_out]
    for r in rows:
        path = workload_result(camp, r.idx)
        try:
            out.setdefault(r.condition, []).append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return out
