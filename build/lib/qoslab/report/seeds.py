"""The report's seed section (pure): which seed's question a campaign asks again, and its tables.

The workload names the seed: ``matmul`` seed 000 (four Java mechanisms), ``sort`` seed 002
(socket, RMI, CORBA), both from a factorial over ``workload.mechanism`` (:mod:`.mechanisms`);
``mpj`` seed 003 (MPJ message passing, per operation, :mod:`.seedmpj`). A ``sort`` campaign over
several (servers, size) cells without congestion is seed 002's own table (:mod:`.seedgrid`). Each section shows the
seed's published ordering beside the measured one, the slowdown under FIFO and the share won back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from . import mechanisms as mech
from . import seedgrid, seedmpj
from .texts import mechanisms_intro

#: Section titles per workload kind.
TITLES = {"matmul": "The Java mechanisms under congestion (seed 000's Table 4.1, asked again)",
          "sort": "Sockets, RMI and CORBA under congestion (seed 002's Figure 2, asked again)",
          "sort-grid": "Sockets, RMI and CORBA over seed 002's grid of servers and sizes (its Figure 2, measured)",
          "mpj": "MPJ message passing under congestion (seed 003's ping-pong, and the collectives it did not time)"}


def sections(main: Mapping[str, Any], playbook: Mapping[str, Any] | None,
             results: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[tuple[str, str, pd.DataFrame]]:
    """(title, Markdown explanation, table) for the campaign's seed; [] when the campaign asks no
    seed's question (another workload, no factorial block, or no rows). ``main``: stats.json (its
    ``conditions``, ``factorial``, ``censored``, ``comparisons``); ``playbook``: the parsed
    playbook.yaml (its ``workload``); ``results``: condition -> counted trials' workload results
    (``report.trialresults``; only the ``mpj`` section reads them)."""
    wl = (playbook or {}).get("workload") or {}
    kind, fac = str(wl.get("kind") or ""), main.get("factorial")
    if kind == "mpj":
        rows = seedmpj.mpj_rows(results, fac)
        return [(TITLES[kind], seedmpj.mpj_intro(rows), seedmpj.mpj_table(rows))] if rows else []
    if kind == "sort":
        grid = seedgrid.grid_rows(main.get("conditions", {}), _int(wl.get("servers")), _int(wl.get("size")))
        if len(grid) > 1:  # a grid of cells: seed 002's own table (playbooks/seed002-sort-grid.yaml)
            return [(TITLES["sort-grid"], seedgrid.grid_summary(grid), seedgrid.grid_table(grid))]
    seed = mech.seed_order(kind, wl)
    if seed is None or fac is None or not mech.applies(fac):
        return []
    rows = mech.mechanism_rows(main["conditions"], fac, main.get("censored"), main.get("comparisons", []), seed)
    if not rows:
        return []
    return [(TITLES[kind], mechanisms_intro(seed, mech.measured_orders(rows)), mech.mechanism_table(rows, seed))]


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None
