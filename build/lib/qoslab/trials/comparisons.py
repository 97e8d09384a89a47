"""The comparisons a playbook's matrix calls for (pure): which condition the statistics hold
against which, and the recovery triples. The statistics (:mod:`qoslab.stats.campaign`) compute
them, and so does the runner's check of a sequential rule on the recovery: both read them here."""

from __future__ import annotations

from .playbook import Playbook


def plan_comparisons(pb: Playbook) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    """The comparisons a playbook's matrix calls for (pure), as condition names.

    With the baseline B (no congestion, reference profile P0 = B's profile) and conditions keyed by
    (flood, profile) among those with B's workload (flood None = no congestion; one flood file
    gives the thesis's congestion on/off): each flood vs none under each profile; each other
    profile vs P0 under the same flood; and the recovery of each congested non-reference profile
    X: (B, flood F under P0, flood F under X) for every flood F. A factorial playbook does the same
    within every level of its workload factors (each with its own uncongested P0 cell as the
    recovery's baseline). Conditions left out of all of them (e.g. a scaling series) are compared
    with B. Returns (pairs (a, b): b against a, triples)."""
    base = pb.baseline_condition()
    p0 = base.profile
    groups = [pb.workload_of(base)]
    for c in pb.conditions if pb.factors else []:
        if pb.workload_of(c) not in groups:  # settings are unhashable (lists): equality
            groups.append(pb.workload_of(c))
    compare: list[tuple[str, str]] = []
    recovery: list[tuple[str, str, str]] = []
    for g, wl in enumerate(groups):
        key: dict[tuple[str | None, str], str] = {}
        for c in pb.conditions:
            if pb.workload_of(c) == wl:
                key.setdefault((pb.flood_of(c), c.profile), c.name)
        b = base.name if g == 0 else key.get((None, p0))
        for (flood, prof), name in key.items():
            if flood is not None and (None, prof) in key:
                compare.append((key[(None, prof)], name))
            if prof != p0 and (flood, p0) in key:
                compare.append((key[(flood, p0)], name))
            if flood is not None and prof != p0 and (flood, p0) in key and b is not None:
                recovery.append((b, key[(flood, p0)], name))
    involved = {n for pair in compare for n in pair}
    compare += [(base.name, c.name) for c in pb.conditions if c.name != base.name and c.name not in involved]
    return compare, recovery
