"""``qoslab campaign status FOLDER``: a campaign's trials by status, the running means, a
sequential campaign's stop, and the processes its trials left behind. It only reads: the store
is opened read-only (:class:`qoslab.trials.store.Store`), nothing in the folder changes.

Leftovers (issue 45): a trial marked ``running`` is really running only while the run that marked
it is alive (:func:`qoslab.campaign.folder.live_run`); after a ``kill -9`` of that run its
``running`` trial is the killed one, and its cgroup (and the campaign's pool cgroup) is listed
with the finished trials' (:func:`qoslab.executors.cgroups.leftovers`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import QoslabError
from ..workloads.metrics import DEFAULT, decimals, fmt
from .common import console


def _say(text: str, style: str | None = None) -> None:
    """One line as it is (names from a folder are data, never rich markup)."""
    console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)


def print_status(folder: Path) -> None:
    """Print the status of the campaign in ``folder`` (see the module doc). Raises QoslabError
    for a folder that holds no campaign store."""
    from ..campaign.folder import live_run
    from ..campaign.submit import status_line
    from ..executors import cgroups
    from ..trials.store import Store

    if not (folder / "trials.sqlite").exists():
        raise QoslabError(f"{folder} holds no campaign (no trials.sqlite)")
    with Store(folder / "trials.sqlite", readonly=True) as st:  # a reader changes no byte of the folder
        _say(f"{folder}: {st.counts()}")
        print_means(st)
        _print_sequential(st.meta("sequential"))
        rows = st.trials()
    jobs = status_line(folder)  # a submitted campaign's batch jobs, as Slurm tells their states
    if jobs is not None:
        _say(jobs)
    pid = live_run(folder)
    running = [r.idx for r in rows if r.status == "running"]
    if running and pid is None:
        _say(f"trial(s) {', '.join(map(str, running))} marked running by a run that is no longer alive (killed?): "
             "`qoslab campaign run --resume` runs them again")
    cg = cgroups.campaign_cgroup(folder)
    finished = [r.idx for r in rows if r.status != "running" or pid is None]
    left = cgroups.leftovers(cg, finished, pool=pid is None)
    for name, procs in left.items():
        _say(f"leftovers of {name} (cgroup {cg}/{name}): "
             + ", ".join(f"{p.comm} (pid {p.pid}: {p.cmdline[:80]})" for p in procs), style="yellow")
    if not left:
        _say("leftovers: " + ("none (no process in a finished trial's cgroup)" if cg is not None
                              else "not tracked (no writable cgroup v2 mount on this machine)"))


def _print_sequential(seq: Any) -> None:
    """A sequential campaign's state from the store's meta ``sequential`` (ignored when malformed)."""
    if not isinstance(seq, dict):
        return
    try:
        stop = seq.get("stopped")
        checks = seq.get("checks") or []
        last = checks[-1] if checks else None
        _say("sequential: " + (f"stopped: {stop['reason']}" if stop else
                               f"{len(checks)} check(s), the rule has not held"
                               + (f" (after {last['n']}: {last['half_widths']})" if last else "")))
    except (KeyError, TypeError, IndexError):
        _say("sequential: (its record in the store's meta is not readable)")


def print_means(st: Any) -> None:
    """Running means per condition of the primary metric (declared, else elapsed_s in seconds)."""
    from ..stats.metrics import declared_metrics

    try:
        ms = declared_metrics(st)
    except QoslabError as e:
        _say(str(e), style="yellow")
        ms = None
    m = ms.primary if ms else DEFAULT.primary
    per: dict[str, list[float]] = {}
    for row in st.trials(counted=True):
        v = row.metric(m.name)
        if v is not None:
            per.setdefault(row.condition, []).append(v)
    places = decimals(m, [sum(v) / len(v) for v in per.values()])
    for c, v in per.items():
        _say(f"  {c:<24} n={len(v):3d} mean {fmt(sum(v) / len(v), places, m.unit)}")
