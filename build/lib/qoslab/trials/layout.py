"""Where a campaign folder keeps a trial's files (pure paths, nothing read):

    trials/NNNN/                   the trial's last attempt (NNNN: its index, zero-padded to 4)
    trials/NNNN.attempt-K/         an earlier attempt, kept when it was retried
    trials/NNNN/workload/          the workload manager's files: workload-result.json (its result,
                                   :data:`qoslab.workloads.base.RESULT_FILE`), workload-calls.jsonl
                                   (its per-call times, :data:`qoslab.workloads.pool.CALLS_FILE`)
"""

from __future__ import annotations

from pathlib import Path

from ..workloads.base import RESULT_FILE


def trial_dir(folder: Path, idx: int) -> Path:
    """``folder/trials/NNNN``: trial ``idx``'s folder (its last attempt)."""
    return folder / "trials" / f"{idx:04d}"


def workload_dir(folder: Path, idx: int) -> Path:
    """``folder/trials/NNNN/workload``: the workload manager's files of trial ``idx``."""
    return trial_dir(folder, idx) / "workload"


def workload_result(folder: Path, idx: int) -> Path:
    """``folder/trials/NNNN/workload/workload-result.json``: the manager's result of trial ``idx``."""
    return workload_dir(folder, idx) / RESULT_FILE
