"""The report's mechanisms section (pure): a seed's Java mechanisms asked again under congestion.

For a factorial campaign over ``workload.mechanism`` (``playbooks/mechanisms.yaml``: seed 000's
matmul over four Java mechanisms x two algorithms x flood x profile; ``playbooks/seed002-sort.yaml``:
seed 002's sort over socket, RMI and CORBA x flood x profile), one row per algorithm and mechanism:

- the uncongested FIFO time (mean, seconds) and its rank among the mechanisms of the same
  algorithm, beside the rank the workload's own seed published (:class:`SeedOrder`: seed 000 for
  ``matmul``, :data:`SEED000_ORDER`; seed 002 for ``sort``, its Figure 2 at the campaign's servers
  and size, :func:`seed002_order`) and, where the seed printed them, its numbers;
- the slowdown under congestion with FIFO (mean congested / mean uncongested); with trials that
  timed out and count at their bound (stats.json's ``censored`` block, ``censor_timeouts``) the
  congested mean, and so the slowdown, is a lower bound (shown as ">=");
- the share of that slowdown the QoS profile wins back (the factorial block's recovery, BCa 95 %;
  a lower bound too when only the congested FIFO cell was censored).

Inputs are stats.json's ``conditions`` (name -> {n, mean, ...}), ``factorial`` block and
``censored`` block (or None). Seed 003's message passing (``mpj``) has no mechanism factor: its
section is :mod:`.seedmpj`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

#: Seed 000 (Rahimi, Wainer and Lewis), section 4, Figs. 4.1 and 4.2 and Table 4.1: for both the
#: simple parallel algorithm and the modified Cannon's algorithm, fastest to slowest: sockets,
#: externalization, serialization, datagram sockets.
SEED000_ORDER: tuple[str, ...] = ("socket", "rmi-externalizable", "rmi-serializable", "datagram")
MECHANISM_FACTOR = "workload.mechanism"
ALGORITHM_FACTOR = "workload.algorithm"

#: Seed 002 (../shared/reference/002_*.txt), Figure 2 "Communication and computation time" (no unit
#: printed; milliseconds by their scale): servers -> integers sorted -> (socket, RMI, CORBA).
SEED002_MECHANISMS: tuple[str, ...] = ("socket", "rmi", "corba")
SEED002_FIG2: dict[int, dict[int, tuple[int, int, int]]] = {
    8: {20000: (1295, 1270, 1500), 40000: (2524, 2547, 2951), 60000: (3788, 3823, 4732),
        80000: (4998, 5103, 5800), 100000: (6285, 6357, 7313), 200000: (13184, 12954, 14870),
        400000: (25251, 25491, 29934)},
    4: {20000: (2441, 1616, 1652), 40000: (4698, 3301, 3225), 60000: (7294, 4900, 4817),
        80000: (9748, 6511, 6327), 100000: (12284, 8101, 6379), 200000: (24681, 15910, 16128),
        400000: (49108, 31543, 32251)},
    2: {20000: (4373, 2305, 2548), 40000: (8171, 4776, 5054), 60000: (12271, 7173, 7583),
        80000: (16357, 9242, 10032), 100000: (23232, 11460, 12529), 200000: (46181, 23506, 24829),
        400000: (95167, 46220, 49616)},
}


@dataclass(frozen=True)
class SeedOrder:
    """A seed's published ordering of the mechanisms: ``seed`` ("000"), ``source`` (where in the
    seed), ``order`` (mechanisms fastest first), ``published`` (mechanism -> the seed's number at
    the campaign's cell, in ``unit``; empty when the seed printed none that fits), ``note`` (the
    seed's own summary, "" when its ordering is the summary), ``slowest`` (the mechanism that summary
    calls slowest, "" for none)."""

    seed: str
    source: str
    order: tuple[str, ...]
    published: Mapping[str, float] = field(default_factory=dict)
    unit: str = ""
    note: str = ""
    slowest: str = ""


SEED000 = SeedOrder("000", "section 4, Table 4.1, both algorithms", SEED000_ORDER)


def seed002_order(servers: int | None, size: int | None) -> SeedOrder:
    """Seed 002's ordering of socket, RMI and CORBA from its Figure 2 (:data:`SEED002_FIG2`): at
    the cell of ``servers`` and ``size`` integers when the table has it, else the mean over the
    sizes of that server count, else over all 21 cells; ``published`` the (mean) times in ms."""
    cols = [servers] if servers in SEED002_FIG2 else sorted(SEED002_FIG2)
    cells = [SEED002_FIG2[c][n] for c in cols for n in SEED002_FIG2[c] if size not in SEED002_FIG2[c] or n == size]
    means = {m: sum(c[i] for c in cells) / len(cells) for i, m in enumerate(SEED002_MECHANISMS)}
    where = (f"{servers} servers" if servers in SEED002_FIG2 else "all server counts") + ", " + \
        (f"{size:,} integers" if size in SEED002_FIG2[cols[0]] else f"mean of {len(cells)} cells")
    return SeedOrder("002", f"Figure 2, {where}", tuple(sorted(means, key=lambda m: (means[m], m))), means, "ms",
                     "its summary over the whole table: RMI and sockets close, CORBA 17 % slower on average", "corba")


def seed_order(kind: str, workload: Mapping[str, Any] | None = None) -> SeedOrder | None:
    """The published ordering of the seed a workload ``kind`` reproduces (``matmul``: seed 000;
    ``sort``: seed 002 at the workload's ``servers`` and ``size``); None for any other kind."""
    wl = workload or {}
    if kind == "matmul":
        return SEED000
    if kind == "sort":
        servers, size = wl.get("servers"), wl.get("size")
        return seed002_order(servers if isinstance(servers, int) else None, size if isinstance(size, int) else None)
    return None


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
                   comparisons: Sequence[Mapping[str, Any]] = (), seed: SeedOrder = SEED000) -> list[dict[str, Any]]:
    """One dict per (algorithm, mechanism) recovery of the factorial block, in ``seed``'s order
    within each algorithm: ``algorithm``, ``mechanism``, ``published_rank`` (1 = the seed's fastest;
    None for a mechanism it did not measure), ``published`` (its number, or None), ``base_s`` (uncongested
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
                     "published_rank": seed.order.index(mech) + 1 if mech in seed.order else None,
                     "published": seed.published.get(mech),
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
    order = {m: i for i, m in enumerate(seed.order)}
    return sorted(rows, key=lambda x: (str(x["algorithm"]), order.get(x["mechanism"], len(order)), x["mechanism"]))


def _s(v: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if v is None else fmt.format(v)


def mechanism_table(rows: list[dict[str, Any]], seed: SeedOrder = SEED000) -> pd.DataFrame:
    """The rows of :func:`mechanism_rows` as the report's table (strings; ">=" marks a lower bound
    from trials that timed out): the seed's rank (and its number when it printed one) beside the
    measured rank; no algorithm column when the campaign has a single one ("-")."""
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
        pub = {f"seed {seed.seed} ({seed.unit})": _s(r["published"], "{:.0f}")} if seed.published else {}
        out.append({"algorithm": r["algorithm"], "mechanism": r["mechanism"], **pub,
                    f"seed {seed.seed} rank": _s(r["published_rank"], "{}"), "measured rank": _s(r.get("rank"), "{}"),
                    "no congestion (s)": _s(r["base_s"]) + f" (n {r['n_base']})",
                    "congestion, fifo (s)": cong, "slowdown": lower + _s(r["slowdown"], "{:.1f}x"),
                    f"congestion, {r['profile']} (s)": _s(r["treated_s"]), "won back": won})
    frame = pd.DataFrame(out)
    return frame.drop(columns="algorithm") if rows and {r["algorithm"] for r in rows} == {"-"} else frame


def measured_orders(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per algorithm: the mechanisms by measured uncongested rank, fastest first."""
    out = {}
    for alg in sorted({str(r["algorithm"]) for r in rows}):
        rs = [r for r in rows if str(r["algorithm"]) == alg and r.get("rank") is not None]
        out[alg] = [r["mechanism"] for r in sorted(rs, key=lambda r: r["rank"])]
    return out


def ordering_agrees(rows: list[dict[str, Any]], seed: SeedOrder = SEED000) -> dict[str, bool]:
    """Per algorithm: does the measured uncongested order equal the seed's (its mechanisms that
    were measured, in its order)?"""
    return {alg: m == [x for x in seed.order if x in m] for alg, m in measured_orders(rows).items()}
