"""The report's mechanisms section (pure): seed 000's question asked under congestion.

For a factorial campaign over ``workload.mechanism`` (``playbooks/mechanisms.yaml``: matmul over
four Java mechanisms x two algorithms x flood x profile), one row per algorithm and mechanism:

- the uncongested FIFO time (mean, seconds) and its rank among the mechanisms of the same
  algorithm, beside seed 000's rank (:data:`SEED000_ORDER`);
- the slowdown under congestion with FIFO (mean congested / mean uncongested); with trials that
  timed out and count at their bound (stats.json's ``censored`` block, ``censor_timeouts``) the
  congested mean, and so the slowdown, is a lower bound (shown as ">=");
- the share of that slowdown the QoS profile wins back (the factorial block's recovery, BCa 95 %;
  a lower bound too when only the congested FIFO cell was censored).

Inputs are stats.json's ``conditions`` (name -> {n, mean, ...}), ``factorial`` block and
``censored`` block (or None).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

#: Seed 000 (Rahimi, Wainer and Lewis), section 4, Figs. 4.1 and 4.2 and Table 4.1: for both the
#: simple parallel algorithm and the modified Cannon's algorithm, fastest to slowest: sockets,
#: externalization, serialization, datagram sockets.
SEED000_ORDER: tuple[str, ...] = ("socket", "rmi-externalizable", "rmi-serializable", "datagram")
MECHANISM_FACTOR = "workload.mechanism"
ALGORITHM_FACTOR = "workload.algorithm"


def applies(factorial: Mapping[str, Any] | None) -> bool:
    """True when the factorial block varies the matmul mechanism (the section is shown)."""
    return bool(factorial) and MECHANISM_FACTOR in factorial.get("factors", {})  # type: ignore[union-attr]


def _mean(conds: Mapping[str, Any], name: str) -> float | None:
    c = conds.get(name)
    return float(c["mean"]) if c and c.get("mean") is not None else None


def _ranks(values: Mapping[str, float | None]) -> dict[str, int]:
    known = sorted((v, k) for k, v in values.items() if v is not None)
    return {k: i + 1 for i, (_, k) in enumerate(known)}


def mechanism_rows(conditions: Mapping[str, Any], factorial: Mapping[str, Any],
                   censored: Mapping[str, Any] | None = None,
                   comparisons: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """One dict per (algorithm, mechanism) recovery of the factorial block, in seed 000's order
    within each algorithm: ``algorithm``, ``mechanism``, ``seed000_rank``, ``base_s`` (uncongested
    FIFO mean, seconds), ``rank`` (measured, 1 = fastest of its algorithm), ``n_base``,
    ``congested_s``, ``n_congested``, ``slowdown`` (the ratio of means congested / uncongested FIFO
    of stats.json's ``comparisons``, the Java tool's; None without that comparison), ``n_timed_out`` (trials of the
    congested cell counted at their bound: the slowdown is then a lower bound), ``censored_other``
    (the baseline or treated cell has censored trials too), ``treated_s``, ``recovery`` and
    ``recovery_ci95`` ([lo, hi] or None), ``profile``. Empty when the block does not vary the
    mechanism."""
    if not applies(factorial):
        return []
    cens = {c: int(v["n"]) for c, v in (censored or {}).get("conditions", {}).items()}
    ratio = {(c["a"], c["b"]): c.get("ratio") for c in comparisons}
    rows = []
    for r in factorial.get("recoveries", []):
        lv = r["levels"]
        mech, alg = lv.get(MECHANISM_FACTOR), lv.get(ALGORITHM_FACTOR, "-")
        if mech is None:
            continue
        base, cong = _mean(conditions, r["baseline"]), _mean(conditions, r["congested"])
        rows.append({"algorithm": alg, "mechanism": mech,
                     "seed000_rank": SEED000_ORDER.index(mech) + 1 if mech in SEED000_ORDER else None,
                     "base_s": base, "n_base": int(conditions.get(r["baseline"], {}).get("n") or 0),
                     "congested_s": cong, "n_congested": int(conditions.get(r["congested"], {}).get("n") or 0),
                     "slowdown": ratio.get((r["baseline"], r["congested"])),
                     "n_timed_out": cens.get(r["congested"], 0),
                     "censored_other": bool(cens.get(r["baseline"]) or cens.get(r["treated"])),
                     "treated_s": _mean(conditions, r["treated"]),
                     "recovery": r.get("ratio"), "recovery_ci95": r.get("ci95"), "profile": r.get("profile")})
    for alg in {row["algorithm"] for row in rows}:
        ranks = _ranks({row["mechanism"]: row["base_s"] for row in rows if row["algorithm"] == alg})
        for row in rows:
            if row["algorithm"] == alg:
                row["rank"] = ranks.get(row["mechanism"])
    order = {m: i for i, m in enumerate(SEED000_ORDER)}
    return sorted(rows, key=lambda x: (str(x["algorithm"]), order.get(x["mechanism"], len(order)), x["mechanism"]))


def _s(v: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if v is None else fmt.format(v)


def mechanism_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows of :func:`mechanism_rows` as the report's table (strings; ">=" marks a lower bound
    from trials that timed out)."""
    out = []
    for r in rows:
        lower = ">= " if r["n_timed_out"] else ""
        cong = lower + _s(r["congested_s"]) + f" (n {r['n_congested']}"
        cong += f", {r['n_timed_out']} timed out)" if r["n_timed_out"] else ")"
        ci = r["recovery_ci95"]
        won = _s(r["recovery"], "{:.1%}") + (f" [{ci[0]:.1%}, {ci[1]:.1%}]" if ci else "")
        if r["n_timed_out"] and not r["censored_other"] and r["recovery"] is not None:
            # a longer congested time raises the recovery while the treated cell is slower than the
            # baseline and lowers it (towards 100 %) while it is faster
            faster = r["treated_s"] is not None and r["base_s"] is not None and r["treated_s"] < r["base_s"]
            won = f"100% to {won}" if faster else ">= " + won  # (the interval is the censored data's)
        out.append({"algorithm": r["algorithm"], "mechanism": r["mechanism"],
                    "seed 000 rank": _s(r["seed000_rank"], "{}"), "measured rank": _s(r.get("rank"), "{}"),
                    "no congestion (s)": _s(r["base_s"]) + f" (n {r['n_base']})",
                    "congestion, fifo (s)": cong, "slowdown": lower + _s(r["slowdown"], "{:.1f}x"),
                    f"congestion, {r['profile']} (s)": _s(r["treated_s"]), "won back": won})
    return pd.DataFrame(out)


def ordering_agrees(rows: list[dict[str, Any]]) -> dict[str, bool]:
    """Per algorithm: does the measured uncongested order equal seed 000's?"""
    out = {}
    for alg in sorted({str(r["algorithm"]) for r in rows}):
        rs = [r for r in rows if str(r["algorithm"]) == alg and r.get("rank") is not None]
        measured = [r["mechanism"] for r in sorted(rs, key=lambda r: r["rank"])]
        out[alg] = measured == [m for m in SEED000_ORDER if m in measured]
    return out
