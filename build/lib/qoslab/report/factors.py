"""The report's factorial section (pure): stats.json's ``factorial`` block as tables, one row per
level of the other factors (the QoS factor's recovery with its intervals) and one per difference
between levels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

import pandas as pd


def stem(ref: Any) -> str:
    """A profile or flood file by its stem (``playbooks/examples/ef.yaml`` -> ``ef``); other values as text."""
    s = str(ref)
    return PurePosixPath(s).stem if "/" in s or s.endswith((".yaml", ".yml")) else s


def level_label(levels: Mapping[str, Any]) -> str:
    """``{flood: traffic-gen/incast.yaml, workload.frames: 2}`` -> ``flood incast, frames 2``."""
    return ", ".join(f"{k.removeprefix('workload.')} {stem(v)}" for k, v in levels.items()) or "(all)"


def _ci(v: Sequence[float] | None) -> str:
    return f"[{v[0]:.2f}, {v[1]:.2f}]" if v else "-"


def recovery_table(block: Mapping[str, Any]) -> pd.DataFrame:
    """One row per recovery: level, profile (against the reference), ratio and its BCa 95 %
    interval (the Java tool's, the one published interval of a recovery)."""
    return pd.DataFrame([{"level": level_label(r["levels"]),
                          "profile": f"{stem(r['profile'])} vs {stem(r['reference_profile'])}",
                          "recovery": "-" if r["ratio"] is None else f"{r['ratio']:.2f}", "BCa 95 %": _ci(r["ci95"])}
                         for r in block.get("recoveries", [])],
                        columns=["level", "profile", "recovery", "BCa 95 %"])


def difference_table(block: Mapping[str, Any]) -> pd.DataFrame:
    """One row per difference of recoveries between two levels, with its bootstrap interval."""
    rows = []
    for d in block.get("differences", []):
        verdict = "-" if d["excludes_zero"] is None else ("differ" if d["excludes_zero"] else "no evidence of a "
                                                                                               "difference")
        rows.append({"a": level_label(d["a"]), "b": level_label(d["b"]), "profile": stem(d["profile"]),
                     "recovery a - b": "-" if d["difference"] is None else f"{d['difference']:+.2f}",
                     "95 % interval": _ci(d["ci95"]), "verdict": verdict})
    return pd.DataFrame(rows, columns=["a", "b", "profile", "recovery a - b", "95 % interval", "verdict"])


def recovery_points(block: Mapping[str, Any]) -> list[tuple[str, float, float, float]]:
    """(label, ratio, lower, upper) of every recovery with a ratio and a BCa interval, for the figure."""
    return [(f"{level_label(r['levels'])}\n{stem(r['profile'])}", r["ratio"], r["ci95"][0], r["ci95"][1])
            for r in block.get("recoveries", []) if r["ratio"] is not None and r["ci95"]]
