"""The corpus cases of issue 48's rule 3b (make_corpus.py appends them after issue 51's playbook
cases, so earlier files keep their numbers): a ``derive:`` block's ``network_share`` outside (0, 1),
not a number or NaN, its ``rays`` candidates out of 1..16, not ascending, repeated, booleans, or given
without the share they must hold; a workload's ``rays`` out of range or given with a supersample.
Same tuple as make_corpus.py: (case name, old text, new text, marker on the defect's line, field)."""

from __future__ import annotations

_TRIALS = "trials: 3\n"
_REAL = "derive:\n  real: playbooks/scale/thesis-cluster-cpu.yaml\n"


def _derive(*lines: str) -> str:
    return _TRIALS + _REAL + "".join(f"  {line}\n" for line in lines)


_WL = "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}"

PLAYBOOK_CASES = [
    ("derive-share-zero", _TRIALS, _derive("network_share: 0"), "network_share", "derive.network_share"),
    ("derive-share-above-one", _TRIALS, _derive("network_share: 1.5"), "network_share", "derive.network_share"),
    ("derive-share-nan", _TRIALS, _derive("network_share: .nan"), "network_share", "derive.network_share"),
    ("derive-share-percent", _TRIALS, _derive("network_share: 0.6%"), "network_share", "derive.network_share"),
    ("derive-rays-descending", _TRIALS, _derive("network_share: 0.006", "rays: [2, 1]"), "rays:", "derive.rays"),
    ("derive-rays-zero", _TRIALS, _derive("network_share: 0.006", "rays: [0, 1]"), "rays:", "derive.rays"),
    ("derive-rays-17", _TRIALS, _derive("network_share: 0.006", "rays: [1, 17]"), "rays:", "derive.rays"),
    ("derive-rays-twice", _TRIALS, _derive("network_share: 0.006", "rays: [1, 1, 2]"), "rays:", "derive.rays"),
    ("derive-rays-boolean", _TRIALS, _derive("network_share: 0.006", "rays: [true, 2]"), "rays:", "derive.rays[0]"),
    ("derive-rays-without-share", _TRIALS, _derive("rays: [1, 2, 3]"), "rays:", "derive.rays"),
    ("derive-rays-empty", _TRIALS, _derive("network_share: 0.006", "rays: []"), "rays:", "derive.rays"),
    ("workload-rays-17", _WL, "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1, rays: 17}",
     "rays: 17", "workload.rays"),
    ("workload-rays-and-supersample", _WL,
     "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1, supersample: 2, rays: 4}", "rays: 4",
     "workload.rays"),
    ("workload-rays-float", _WL, "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1, rays: 2.5}",
     "rays: 2.5", "workload.rays"),
]
