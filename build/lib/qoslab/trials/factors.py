"""Factorial campaigns: a playbook's ``factors:`` expanded into conditions (pure).

::

    factors:
      flood: [none, thesis-flood, incast]      # flood files (traffic-gen/NAME.yaml or a path); none = no congestion
      profile: [fifo, thesis]                  # QoS profiles
      workload.frames: [1, 2]                  # any workload setting, dotted
      include:                                 # optional: only these cells (else the full product)
        - {flood: none, profile: fifo, workload.frames: 1}
    baseline: {flood: none, profile: fifo, workload.frames: 1}

Every cell becomes a condition named by its levels in factor order, joined by `` / ``
(``incast / thesis / frames 2``), with ``flood`` (None = no congestion), ``profile``, the
workload overrides and its ``levels`` (factor -> level, kept for the statistics). ``flood`` and
``profile`` default to ``none`` and ``fifo`` when they are not factors. ``conditions:`` and
``factors:`` exclude each other; a ``baseline:`` mapping names the cell by its levels.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from ..yamlio import SubFieldProblem

#: The level of the ``flood`` factor that means no congestion.
NO_FLOOD = "none"
#: YAML 1.1's boolean words: a flood or profile level spelled so is ambiguous (YAML 1.1 readers
#: take a boolean), refused rather than read as ``traffic-gen/no.yaml``.
_YAML11_BOOL = frozenset({"yes", "no", "on", "off", "y", "n"})
#: Most conditions a factorial design may make.
MAX_CELLS = 256


def flood_ref(level: Any) -> str | None:
    """The flood file a ``flood`` level names (None for ``none``/null/false): a bare name is
    ``traffic-gen/NAME.yaml``, anything with a ``/`` or ending in ``.yaml`` a path as given."""
    if level is None or level is False or str(level).lower() == NO_FLOOD:
        return None
    s = str(level)
    return s if "/" in s or s.endswith((".yaml", ".yml")) else f"traffic-gen/{s}.yaml"


def _label(factor: str, level: Any) -> str:
    """How a level appears in a condition name: flood and profile files by stem, workload
    settings as ``frames 2``, the rest as written."""
    if factor == "flood":
        return NO_FLOOD if flood_ref(level) is None else Path(str(level)).stem
    if factor.startswith("workload."):
        return f"{factor.removeprefix('workload.')} {level}"
    if factor == "profile" and ("/" in str(level) or str(level).endswith((".yaml", ".yml"))):
        return Path(str(level)).stem  # a profile file by its stem, as a flood file
    return str(level)


def cell_name(levels: dict[str, Any]) -> str:
    """A condition's generated name: its labels in factor order joined by `` / ``."""
    return " / ".join(_label(k, v) for k, v in levels.items())


def _factors(raw: Any) -> tuple[dict[str, list[Any]], list[Any] | None]:
    if not isinstance(raw, dict) or not raw:
        raise SubFieldProblem(("factors",), "a mapping factor -> list of levels")
    include = raw.get("include")
    levels: dict[str, list[Any]] = {}
    for k, v in raw.items():
        if k == "include":
            continue
        if k not in ("flood", "profile") and not (isinstance(k, str) and k.startswith("workload.") and len(k) > 9):
            raise SubFieldProblem(("factors", k), "a factor is flood, profile or a dotted workload setting "
                                                  "(workload.frames)")
        if not isinstance(v, list) or not v or any(isinstance(x, (dict, list)) for x in v):
            raise SubFieldProblem(("factors", k), "a non-empty list of levels (scalars)")
        if len({str(x) for x in v}) != len(v):
            raise SubFieldProblem(("factors", k), "a level is listed twice")
        if k in ("flood", "profile"):
            for i, x in enumerate(v):
                if isinstance(x, bool):  # an unquoted true/false
                    fix = "quote it, or write none for no flood" if k == "flood" else "quote it"
                    raise SubFieldProblem(("factors", k, i), f"{str(x).lower()} is a YAML boolean (an unquoted "
                                                             f"true/false), not a {k} name: {fix}")
                if isinstance(x, str) and x.lower() in _YAML11_BOOL:  # a boolean only to YAML 1.1
                    fix = "write none for no flood, or a file's path" if k == "flood" else "write a file's path"
                    raise SubFieldProblem(("factors", k, i), f"{x!r} reads as a boolean in YAML 1.1 and as a "
                                                             f"name in YAML 1.2: {fix}")
        levels[k] = v
    if not levels:
        raise SubFieldProblem(("factors",), "no factor")
    if include is not None and (not isinstance(include, list) or not include):
        raise SubFieldProblem(("factors", "include"), "a non-empty list of cells ({factor: level, ...})")
    return levels, include


def _cell(levels: dict[str, list[Any]], given: Any, loc: tuple[Any, ...]) -> dict[str, Any]:
    """A cell named by its levels (an ``include`` item or the ``baseline``), in factor order."""
    if not isinstance(given, dict) or set(given) != set(levels):
        raise SubFieldProblem(loc, f"a cell names one level of every factor ({', '.join(levels)})")
    for k, v in given.items():
        if str(v) not in {str(x) for x in levels[k]}:
            raise SubFieldProblem((*loc, k), f"{v!r} is not a level of {k} ({', '.join(map(str, levels[k]))})")
    return {k: next(x for x in levels[k] if str(x) == str(given[k])) for k in levels}


def condition_of(levels: dict[str, Any]) -> dict[str, Any]:
    """The condition (playbook data) of one cell."""
    flood = flood_ref(levels.get("flood", NO_FLOOD))
    workload = {k.removeprefix("workload."): v for k, v in levels.items() if k.startswith("workload.")}
    return {"name": cell_name(levels), "congestion": flood is not None, "flood": flood,
            "profile": str(levels.get("profile", "fifo")), "workload": workload,
            "levels": {k: str(v) if k in ("flood", "profile") else v for k, v in levels.items()}}


def expand_factors(data: Any) -> Any:
    """Playbook data with ``factors:`` turned into ``conditions:`` (and a ``baseline:`` mapping
    into its cell's name); data without factors comes back unchanged. Raises SubFieldProblem."""
    if not isinstance(data, dict) or data.get("factors") is None:
        return data
    levels, include = _factors(data["factors"])
    if include is not None:
        cells = [_cell(levels, c, ("factors", "include", i)) for i, c in enumerate(include)]
    else:
        cells = [dict(zip(levels, combo, strict=True)) for combo in itertools.product(*levels.values())]
    if len(cells) > MAX_CELLS:
        raise SubFieldProblem(("factors",), f"{len(cells)} conditions: at most {MAX_CELLS}")
    conditions = [condition_of(c) for c in cells]
    given = data.get("conditions")
    if given:  # a campaign folder's resolved playbook holds both: its conditions must be the expansion's
        if [c.get("name") if isinstance(c, dict) else None for c in given] != [c["name"] for c in conditions]:
            raise SubFieldProblem(("conditions",), "give conditions or factors, not both")
        conditions = given
    out = {**data, "conditions": conditions}
    if isinstance(data.get("baseline"), dict):
        out["baseline"] = cell_name(_cell(levels, data["baseline"], ("baseline",)))
    return out


def condition_flood(data: Any) -> Any:
    """Condition data with ``flood:`` given: ``congestion`` follows from it (``none`` = off) and
    must agree when also given; ``none`` is stored as null. Raises SubFieldProblem."""
    if not isinstance(data, dict) or data.get("flood") is None:  # null: the playbook's flood when congested
        return data
    ref = flood_ref(data["flood"])
    if "congestion" in data and data["congestion"] is not (ref is not None):
        raise SubFieldProblem(("congestion",), f"congestion: {data['congestion']} contradicts flood: {data['flood']}")
    return {**data, "congestion": ref is not None, "flood": None if ref is None else str(data["flood"])}
