"""How long a campaign's trials take: per-condition ETAs for a plan (before the run, from this
machine's evidence) and for the progress bar (during the run, from the trials measured so far).

Conditions differ by 100x (a congested fifo trial at 10 Mbit/s takes 20-90 s, an uncongested one
2-3 s), so one mean over all trials (rich's default ETA) is off by as much as their mix: every
estimate here is a sum over conditions of (that condition's mean trial time) x (its trials left).

Evidence for a plan, first found wins (:func:`evidence_means`):

1. the most recent campaign of the same playbook name under ``results/campaigns/`` (the working
   directory's and the checkout's), then in the checkout's ``docs/results/``: per condition the
   mean wall time of its done trials (``finished - started``, warm-ups included). A campaign that
   ended with failed trials, or was interrupted, counts by the trials it did (it used to be passed
   over: the committed mechanisms campaigns, 9 of 96 trials failed, left their playbooks to the
   default model, 1:38:58 predicted for a campaign whose trials took 0:13:45);
2. the same for a campaign of the same matrix (conditions, workloads, topology and flood: e.g.
   the fixed-design campaign of a sequential playbook);
3. the workload's own history: the most recent campaign of any playbook that ran the
   same workload settings, condition by condition of the same class (no congestion; congestion
   under the baseline's profile; congestion under another profile; :func:`workload_history`);
4. the default model (:func:`default_trial_s`), for conditions no evidence covers: the quick
   campaign's RayTracer times for a RayTracer, the workload's own ``timeout_s`` for any other
   workload (a command or mpi program's time says nothing of the RayTracer's: the quick
   campaign's 0:00:42 was predicted for a command campaign that took 4 min, issue 34). That is an
   upper bound, not an estimate (the committed mpi campaign: 1:31:16 by the bound, 0:10:24 of
   trials), and the plan shows it as one (:attr:`Evidence.bounded`).

A campaign folder is never opened in place: its ``trials.sqlite`` (and WAL) is copied to a
temporary folder first, so planning writes nothing into it (opening a store may migrate it).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..topology import repo_root
from ..trials.playbook import Condition, Playbook

#: The default model's seconds per trial, measured here on the quick campaign (``make run``,
#: 10 Mbit/s links, size A x 2 frames, README "make run"): render phase means 0.82 s (no
#: congestion), 4.0 s (congestion under the baseline's profile: fifo, retransmission timeouts
#: behind a full FIFO) and 0.92 s (congestion under a QoS profile); harness overhead per trial
#: (wall minus render time) 0.7 s without and 3.0 s with a flood (issue 26's medians). Render
#: times scale with the workload's frames.
DEFAULT_RENDER_S = {"quiet": 0.82, "congested_baseline_profile": 4.0, "congested_other_profile": 0.92}
DEFAULT_OVERHEAD_S = {False: 0.7, True: 3.0}
DEFAULT_FRAMES = 2


def condition_class(pb: Playbook, cond: Condition) -> str:
    """``quiet``, ``congested_baseline_profile`` or ``congested_other_profile``. Pure."""
    if not cond.congestion:
        return "quiet"
    if cond.profile == pb.baseline_condition().profile:
        return "congested_baseline_profile"
    return "congested_other_profile"


def own_bound(pb: Playbook) -> bool:
    """Whether ``pb``'s workloads are timed by their own ``timeout_s`` in the default model: every
    workload without the RayTracer's ``frames`` (command, mpi, matmul, ...). Pure."""
    return any(not hasattr(pb.workload_of(c), "frames") for c in pb.conditions)


def default_trial_s(pb: Playbook, cond: Condition) -> float:
    """Seconds one trial of ``cond`` takes by the default model. A RayTracer (a workload with
    ``frames``): the quick campaign's times (DEFAULT_RENDER_S) scaled by frames. Any other
    workload: its ``timeout_s``, the longest a trial's run may take (an upper bound), plus the
    harness overhead (DEFAULT_OVERHEAD_S). Pure."""
    w = pb.workload_of(cond)
    if not hasattr(w, "frames"):
        return float(w.timeout_s) + DEFAULT_OVERHEAD_S[cond.congestion]
    kind = condition_class(pb, cond)
    return DEFAULT_RENDER_S[kind] * w.frames / DEFAULT_FRAMES + DEFAULT_OVERHEAD_S[cond.congestion]


@dataclass(frozen=True)
class Evidence:
    """Mean wall seconds per trial by condition name, and where they come from (a campaign
    folder and its time, or ``default model``); ``bounded``: the conditions whose seconds are only
    an upper bound (the default model's ``timeout_s`` of a workload other than the RayTracer)."""

    means: dict[str, float]
    source: str
    bounded: frozenset[str] = frozenset()


def plan_eta(remaining: Mapping[str, int], means: Mapping[str, float]) -> dict[str, float]:
    """Seconds per condition: its mean trial time x its trials left (``remaining``). Pure."""
    return {c: n * means[c] for c, n in remaining.items()}


def eta_s(remaining: list[str], wall: dict[str, list[float]], render: dict[str, list[float]],
          overhead_s: float = 0.0) -> float | None:
    """Seconds the ``remaining`` trials (their condition names, one per trial) should take: per
    condition the mean wall time of its trials measured in this run (``wall``: seconds from one
    trial's end to the next, retries included) times its trials left, summed over conditions; a
    condition not yet seen in this run counts its mean render time from ``render`` (earlier
    trials, seconds) plus ``overhead_s`` (this run's mean wall minus render time per trial: flood
    start, switch reads), or this run's mean wall time when it has no render times either. None
    before the first trial of this run ends. Pure."""
    seen = [t for v in wall.values() for t in v]
    if not seen:
        return None
    overall = sum(seen) / len(seen)
    left: dict[str, int] = {}
    for c in remaining:
        left[c] = left.get(c, 0) + 1
    means: dict[str, float] = {}
    for c in left:
        if wall.get(c):
            means[c] = sum(wall[c]) / len(wall[c])
        elif render.get(c):
            means[c] = sum(render[c]) / len(render[c]) + overhead_s
        else:
            means[c] = overall
    return sum(plan_eta(left, means).values())


def _finished_campaigns(pb: Playbook, roots: Iterable[Path], same: Callable[[Playbook, Path], bool]
                        ) -> list[tuple[str, Path]]:
    """(time, folder) of the campaign folders under ``roots`` whose resolved playbook is ``same``
    as ``pb`` (by their provenance time, else the store's modification time), newest first."""
    found: list[tuple[str, Path]] = []
    for root in roots:
        for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
            pbf, db = folder / "playbook.yaml", folder / "trials.sqlite"
            if not (pbf.is_file() and db.is_file()) or not same(pb, pbf):
                continue
            try:  # (a FIFO or device named provenance.json is never opened)
                prov = folder / "provenance.json"
                when = str(json.loads(prov.read_text()).get("time") or "") if prov.is_file() else ""
            except (OSError, ValueError, AttributeError):
                when = ""
            found.append((when or f"mtime {db.stat().st_mtime:020.3f}", folder))
    return sorted(found, key=lambda t: t[0], reverse=True)


def same_name(pb: Playbook, playbook_yaml: Path) -> bool:
    """Whether a campaign folder's resolved playbook has ``pb``'s name (its top-level ``name:``)."""
    try:
        for line in playbook_yaml.read_text().splitlines():
            if line.startswith("name:"):
                return line.split(":", 1)[1].strip().strip("'\"") == pb.name
    except OSError:
        pass
    return False


def same_matrix(pb: Playbook, playbook_yaml: Path) -> bool:
    """Whether a campaign folder's resolved playbook runs ``pb``'s conditions (names, congestion,
    profiles, workloads) on its topology with its flood (e.g. the fixed design of a sequential
    playbook); False for one this qoslab cannot read."""
    from ..errors import QoslabError
    from ..yamlio import load_model

    try:
        other = load_model(playbook_yaml, Playbook)
    except QoslabError:
        return False

    def matrix(p: Playbook) -> list[tuple[object, ...]]:
        return [(c.name, c.congestion, c.profile, p.workload_of(c)) for c in p.conditions]

    return (other.topology, other.flood, matrix(other)) == (pb.topology, pb.flood, matrix(pb))


def campaign_wall_means(folder: Path) -> dict[str, float] | None:
    """Mean wall seconds per done trial by condition of a campaign (finished or not: failed,
    pending and skipped trials are left out), read from a copy of its store; None when no trial is
    done or the store is unreadable."""
    from ..errors import QoslabError
    from ..trials.store import Store

    with tempfile.TemporaryDirectory(prefix="qoslab-eta-") as tmp:
        for suffix in ("", "-wal"):
            src = folder / f"trials.sqlite{suffix}"
            if src.exists():
                shutil.copyfile(src, Path(tmp) / src.name)
        try:
            with Store(Path(tmp) / "trials.sqlite", columns={}) as st:
                walls: dict[str, list[float]] = {}
                for r in st.trials(status="done"):
                    if r.started is not None and r.finished is not None and r.finished >= r.started:
                        walls.setdefault(r.condition, []).append(r.finished - r.started)
        except QoslabError:
            return None
    return {c: sum(v) / len(v) for c, v in walls.items()} or None


def evidence_roots() -> list[Path]:
    """Where campaign evidence is looked for, in order (see the module doc)."""
    roots = [Path("results/campaigns").resolve(), repo_root() / "results" / "campaigns"]
    return list(dict.fromkeys(roots)) + [repo_root() / "docs" / "results"]


def _readable(playbook_yaml: Path) -> Playbook | None:
    from ..errors import QoslabError
    from ..yamlio import load_model

    try:
        return load_model(playbook_yaml, Playbook)
    except QoslabError:
        return None


def workload_history(pb: Playbook, roots: Iterable[Path]) -> tuple[dict[str, float], str] | None:
    """Mean wall seconds per trial of ``pb``'s conditions from the most recent campaign
    (any playbook name; under ``roots`` in order, newest first within each) that ran one of them's
    workload settings in a condition of the same :func:`condition_class`, and that folder; None
    when none did."""
    mine = {c.name: (pb.workload_of(c), condition_class(pb, c)) for c in pb.conditions}

    def same(_: Playbook, playbook_yaml: Path) -> bool:
        other = _readable(playbook_yaml)
        return other is not None and any(other.workload_of(o) == w for o in other.conditions
                                         for w, _k in mine.values())

    for root in roots:
        for when, folder in _finished_campaigns(pb, [root], same):
            other, walls = _readable(folder / "playbook.yaml"), campaign_wall_means(folder) or {}
            if other is None:
                continue
            known: dict[str, float] = {}
            for c, (w, k) in mine.items():
                vals = [walls[o.name] for o in other.conditions if o.name in walls
                        and other.workload_of(o) == w and condition_class(other, o) == k]
                if vals:
                    known[c] = sum(vals) / len(vals)
            if known:
                return known, f"{folder} (same workload, {when})"
    return None


def _bounded(pb: Playbook, by_default: set[str]) -> frozenset[str]:
    """The conditions of ``by_default`` (timed by the default model) whose time is an upper bound."""
    return frozenset(c.name for c in pb.conditions if c.name in by_default and not hasattr(pb.workload_of(c), "frames"))


def evidence_means(pb: Playbook, roots: Iterable[Path] | None = None) -> Evidence:
    """Mean wall seconds per trial of every condition of ``pb``: from the first campaign
    of the same playbook name under ``roots`` (default :func:`evidence_roots`, searched in order,
    newest first within each), else of the same matrix (:func:`same_matrix`), else (and for
    conditions it lacks) the default model."""
    means = {c.name: default_trial_s(pb, c) for c in pb.conditions}
    search = list(roots) if roots is not None else evidence_roots()
    for same in (same_name, same_matrix):
        for root in search:
            for when, folder in _finished_campaigns(pb, [root], same):
                known = {c: v for c, v in (campaign_wall_means(folder) or {}).items() if c in means}
                if not known:
                    continue
                means.update(known)
                missing = len(means) - len(known)
                how = "same playbook" if same is same_name else "same conditions, workload, topology and flood"
                extra = f"; default model for {missing} condition(s)" if missing else ""
                return Evidence(means, f"{folder} ({how}, {when}){extra}", _bounded(pb, set(means) - set(known)))
    if (hist := workload_history(pb, search)) is not None:
        means.update(hist[0])
        missing = len(means) - len(hist[0])
        return Evidence(means, hist[1] + (f"; default model for {missing} condition(s)" if missing else ""),
                        _bounded(pb, set(means) - set(hist[0])))
    if own_bound(pb):
        return Evidence(means, "default model: at most the workload's own timeout_s per trial, an upper bound (no "
                               f"campaign of {pb.name}, its matrix or its workload found; `campaign run --smoke` "
                               "measures one trial per condition)", _bounded(pb, set(means)))
    return Evidence(means, "default model (quick campaign's means here, scaled by frames; no campaign "
                           f"of {pb.name} or its matrix found)")
