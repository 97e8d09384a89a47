"""Sequential stopping in a campaign: the runner's checks of the stopping rule on the store's data.

A sequential playbook's schedule comes in stages (:func:`qoslab.trials.playbook.schedule`): trials 1..min of
every condition, then ``every`` more of each, up to max. When every non-warm-up trial of the
stages up to checkpoint ``m`` is done (all conditions have ``m`` counted trials), the rule
(:func:`.sequential.evaluate`) is checked on trials 1..m of each condition (the render times,
``elapsed_s``). When it holds, all conditions stop at once: every trial after ``m`` that is not
done becomes ``skipped`` (:meth:`qoslab.trials.store.Store.skip`). A stage with a failed trial is not checked
(the campaign is incomplete; ``--resume`` runs the trial, then the check follows).

Every check and the stop are kept in the store's meta ``sequential`` (:func:`stopping_summary`),
which stats.json (``stopping``) and the CLI report.
"""

from __future__ import annotations

from typing import Any

from qoslab.stats.sequential import Decision, evaluate
from qoslab.trials.comparisons import plan_comparisons
from qoslab.trials.playbook import Playbook
from qoslab.trials.store import Store

META = "sequential"


def due_checkpoints(pb: Playbook, store: Store, checked: list[int]) -> list[int]:
    """The checkpoints (ascending, before max) not checked yet whose trials are all done and
    counted in every condition."""
    seq = pb.sequential
    if seq is None:
        return []
    rows = store.trials(warmup=False)
    out = []
    for m in seq.checkpoints()[:-1]:
        if m in checked:
            continue
        stage = [r for r in rows if r.trial <= m]
        if stage and all(r.counted for r in stage) and len(stage) == m * len(pb.conditions):
            out.append(m)
        else:
            break
    return out


def check(pb: Playbook, store: Store) -> list[int]:
    """Check the rule at every due checkpoint (ascending) and stop at the first where it holds;
    returns the indices of the trials skipped (empty when the campaign goes on). Records every
    check in the store's meta (see the module doc). The runner's stopping check
    (:data:`qoslab.campaign.runner.StopCheck`), which the CLI hands it."""
    seq = pb.sequential
    state = store.meta(META) or {}
    if seq is None or state.get("stopped"):
        return []
    checks: list[dict[str, Any]] = state.get("checks", [])
    recoveries = plan_comparisons(pb)[1]
    seed = int(store.meta("seed") or 0)
    for m in due_checkpoints(pb, store, [c["n"] for c in checks]):
        data: dict[str, list[float]] = {c.name: [] for c in pb.conditions}
        for r in store.trials(counted=True):
            if r.trial <= m and r.elapsed_s is not None:
                data[r.condition].append(r.elapsed_s)
        d = evaluate(seq.stop, data, recoveries, seed + m)
        checks.append(d.as_json())
        state.update(_base(pb), checks=checks)
        if d.stop:
            rest = [r.idx for r in store.trials(warmup=False) if r.trial > m and r.status != "done"]
            skipped = store.skip(rest)
            state["stopped"] = {"n": m, "reason": reason(d, seq.stop.metric), "skipped": len(skipped)}
            store.set_meta(META, state)
            return skipped
        store.set_meta(META, state)
    return []


def _base(pb: Playbook) -> dict[str, Any]:
    seq = pb.sequential
    assert seq is not None
    return {"rule": seq.stop.rule, "metric": seq.stop.metric, "half_width": seq.stop.half_width,
            "min": seq.min, "max": seq.max, "every": seq.every}


def reason(d: Decision, metric: str) -> str:
    """Why a check stopped the campaign, in words."""
    widest = max(d.half_widths.values())
    unit = " of the mean" if metric == "mean" else ""
    return (f"precision of the {metric}: 95 % interval half-width <= {d.target:g}{unit} (widest {widest:.3g}) "
            f"after {d.n} trials per condition")


def stopping_summary(pb: Playbook, store: Store) -> dict[str, Any] | None:
    """What stopped each condition and after how many trials (None for a fixed design): the rule,
    its checks, and per condition ``trials`` (counted) and ``stopped_by`` (the rule's reason, or
    ``max`` when it never held)."""
    if pb.sequential is None:
        return None
    state = store.meta(META) or _base(pb)
    stopped = state.get("stopped")
    per: dict[str, dict[str, Any]] = {}
    for c in pb.conditions:
        n = len(store.trials(counted=True, condition=c.name))
        by = stopped["reason"] if stopped else f"max: {pb.sequential.max} trials per condition (the rule never held)"
        per[c.name] = {"trials": n, "stopped_by": by}
    return {**_base(pb), "checks": state.get("checks", []), "stopped": stopped, "conditions": per}
