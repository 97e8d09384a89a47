"""Seed 002's own table measured (pure): a sort campaign over a grid of server counts and sizes
(``playbooks/seed002-sort-grid.yaml``) beside reference 002's Figure 2, cell by cell.

Conditions are named by their factor levels (:func:`qoslab.trials.factors.cell_name`), e.g.
``mechanism corba / servers 4 / size 100000 / none / fifo``; :func:`grid_rows` reads the
mechanism, server count and size back from those labels. A cell's measured time is the mean of
its condition's counted trials (``elapsed_s``, seconds: the client's distribute + sort + collect);
Figure 2's numbers are milliseconds of 2008 hardware, so only the orderings are compared, and the
ratio of each mechanism to the cell's socket time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from .mechanisms import SEED002_FIG2, SEED002_MECHANISMS

Cell = tuple[int, int]


def levels_of(condition: str) -> dict[str, str]:
    """``{"mechanism": "corba", "servers": "4", "size": "100000"}`` from a generated condition
    name (labels ``KEY VALUE`` joined by `` / ``; labels without a space are skipped)."""
    out = {}
    for label in condition.split(" / "):
        key, _, value = label.strip().partition(" ")
        if value:
            out[key] = value
    return out


def grid_rows(conditions: Mapping[str, Mapping[str, Any]], default_servers: int | None = None,
              default_size: int | None = None) -> dict[Cell, dict[str, float]]:
    """(servers, size) -> mechanism -> mean time (s) of the conditions that name a mechanism of
    seed 002 (socket, rmi, corba); a condition without a ``servers`` or ``size`` label takes the
    playbook's (``default_*``). Conditions with a flood other than ``none`` or a profile other than
    ``fifo`` are left out (Figure 2 was measured on an idle network without QoS)."""
    out: dict[Cell, dict[str, float]] = {}
    for name, c in conditions.items():
        lv = levels_of(name)
        bare = [p.strip() for p in name.split(" / ") if " " not in p.strip()]  # flood and profile levels
        if any(p not in ("none", "fifo") for p in bare) or c.get("mean") is None:
            continue
        mech = lv.get("mechanism")
        servers = int(lv["servers"]) if "servers" in lv else default_servers
        size = int(lv["size"]) if "size" in lv else default_size
        if mech in SEED002_MECHANISMS and servers is not None and size is not None:
            out.setdefault((servers, size), {})[mech] = float(c["mean"])
    return out


def _order(times: Mapping[str, float]) -> str:
    return " < ".join(sorted(times, key=lambda m: (times[m], m)))


def grid_table(rows: Mapping[Cell, Mapping[str, float]]) -> pd.DataFrame:
    """One row per (servers, size) with all three mechanisms: measured means (s), the measured
    and Figure 2's orderings (fastest first), whether the fastest agrees, and each mechanism's
    time / socket time measured and in Figure 2 ("-" where Figure 2 has no such cell)."""
    out = []
    for (servers, size), t in sorted(rows.items()):
        if set(t) != set(SEED002_MECHANISMS):
            continue
        fig = SEED002_FIG2.get(servers, {}).get(size)
        pub = dict(zip(SEED002_MECHANISMS, fig, strict=True)) if fig else None
        row: dict[str, Any] = {"servers": servers, "integers": f"{size:,}"}
        row.update({f"{m} (s)": f"{t[m]:.3f}" for m in SEED002_MECHANISMS})
        row["measured order"] = _order(t)
        row["Figure 2 order"] = _order(pub) if pub else "-"
        row["fastest agrees"] = ("yes" if min(t, key=t.__getitem__) == min(pub, key=pub.__getitem__) else "no") \
            if pub else "-"
        for m in ("rmi", "corba"):
            row[f"{m} / socket"] = f"{t[m] / t['socket']:.2f}" + (f" ({pub[m] / pub['socket']:.2f})" if pub else "")
        out.append(row)
    return pd.DataFrame(out)


def grid_summary(rows: Mapping[Cell, Mapping[str, float]]) -> str:
    """One paragraph: in how many cells the fastest mechanism and the whole ordering agree with
    Figure 2, and CORBA's mean time over the cell's mean of socket and RMI (seed 002's summary:
    CORBA about 17 % slower)."""
    cells = [(k, t) for k, t in rows.items() if set(t) == set(SEED002_MECHANISMS)
             and k[1] in SEED002_FIG2.get(k[0], {})]
    if not cells:
        return "No cell of this campaign is in Figure 2."
    fastest = whole = 0
    corba = []
    for (servers, size), t in cells:
        pub = dict(zip(SEED002_MECHANISMS, SEED002_FIG2[servers][size], strict=True))
        fastest += min(t, key=t.__getitem__) == min(pub, key=pub.__getitem__)
        whole += _order(t) == _order(pub)
        corba.append(t["corba"] / ((t["socket"] + t["rmi"]) / 2))
    return (f"Of {len(cells)} cells of Figure 2 measured, the fastest mechanism agrees in {fastest} and the whole "
            f"ordering in {whole}. CORBA takes {sum(corba) / len(corba):.2f}x the mean of socket and RMI on "
            f"average (seed 002's summary: about 1.17x).")
