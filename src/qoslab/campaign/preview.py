"""A campaign's plan before it runs (``qoslab campaign plan``, ``campaign run --dry-run``).

:func:`make_plan` loads the playbook with every reference checked (:func:`.playbook.load_playbook`:
topology, the flood with the safety interlock, QoS profiles rendered for the workload hosts,
workload settings, the device file; a broken one raises ConfigError naming file and line), makes
the schedule the runner would make (:func:`.playbook.schedule`, the same seed gives the same
order) and estimates each condition's time from this machine's evidence (:mod:`.eta`).

It touches no testbed, switch, node, process or campaign folder: it only reads files.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qoslab.campaign.eta import evidence_means
from qoslab.campaign.folder import with_trials
from qoslab.campaign.trialplan import TrialPlan, plan_trial
from qoslab.profiles import load_profile
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood, resolve
from qoslab.trials.playbook import Playbook, ScheduledTrial, schedule

from .checks import load_playbook
from .snapshot import input_path


@dataclass(frozen=True)
class ConditionPlan:
    """One condition's part of a plan: warm-up trials, scheduled trials (the most a sequential
    playbook runs) and the fewest it may run (``min_trials``, None for a fixed number), the mean
    seconds per trial the estimate uses and the estimates for all its trials and for the fewest;
    ``bound``: the seconds are only an upper bound (no evidence: the workload's ``timeout_s``)."""

    name: str
    congestion: bool
    profile: str
    warmup: int
    trials: int
    min_trials: int | None
    trial_s: float
    eta_s: float
    eta_min_s: float | None
    trial: TrialPlan
    bound: bool = False


@dataclass(frozen=True)
class CampaignPlan:
    """What a campaign would do: the playbook, the seed (``seed_drawn``: the playbook has none, so
    a run draws its own unless given this one with ``--seed``), the schedule, the conditions'
    estimates, where the estimates come from and the references checked (what, description)."""

    playbook: Playbook
    path: Path
    seed: int
    seed_drawn: bool
    trials: list[ScheduledTrial]
    conditions: list[ConditionPlan]
    evidence: str
    references: list[tuple[str, str]]

    @property
    def eta_s(self) -> float:
        """Seconds all scheduled trials should take."""
        return sum(c.eta_s for c in self.conditions)

    @property
    def eta_min_s(self) -> float | None:
        """Seconds the fewest trials a sequential playbook may stop after should take (None for
        a fixed number of trials)."""
        mins = [c.eta_min_s for c in self.conditions]
        return None if any(m is None for m in mins) else sum(m for m in mins if m is not None)


def make_plan(path: Path, *, seed: int | None = None, trials: int | None = None,
              roots: list[Path] | None = None) -> CampaignPlan:
    """The plan of the playbook at ``path`` (``trials`` overrides its trials per condition as
    ``campaign run --trials`` does; ``seed`` its seed; ``roots``: where to look for evidence, see
    :func:`.eta.evidence_means`). Raises ConfigError/QoslabError for a broken reference."""
    pb = with_trials(load_playbook(path), trials)
    if seed is None:
        seed = pb.seed
    drawn = seed is None
    if seed is None:
        seed = random.SystemRandom().randrange(2**31)  # as folder.create draws one
    sched = schedule(pb, seed)
    ev = evidence_means(pb, roots)
    lo = pb.min_trials if pb.sequential is not None else None
    topo = load_topology(input_path(pb.topology, path.parent))  # derive/: the folder's own (load_playbook checked)
    floods = {ref: load_flood(input_path(ref, path.parent)) for ref in pb.floods()}
    profiles = {ref: load_profile(ref) for ref in dict.fromkeys(c.profile for c in pb.conditions)}
    conds = []
    for c in pb.conditions:
        n = sum(1 for t in sched if t.condition == c.name and not t.warmup)
        w = sum(1 for t in sched if t.condition == c.name and t.warmup)
        mean = ev.means[c.name]
        conds.append(ConditionPlan(c.name, c.congestion, c.profile, w, n, lo, mean, (w + n) * mean,
                                   None if lo is None else (w + lo) * mean,
                                   plan_trial(pb, c, topo, floods, profiles), c.name in ev.bounded))
    return CampaignPlan(pb, path, seed, drawn, sched, conds, ev.source, references(pb, conds, path))


def references(pb: Playbook, conds: list[ConditionPlan], path: Path) -> list[tuple[str, str]]:
    """What was checked, one line per reference of the playbook at ``path`` (loaded, so each
    holds); the profiles' line counts are those of the conditions' trial plans."""
    topo = load_topology(input_path(pb.topology, path.parent))
    out = [("topology", f"{pb.topology}: {topo.name}, {topo.environment}, {len(topo.host_names)} hosts, "
                        f"{topo.link.rate / 1e6:g} Mbit/s links")]
    for ref in pb.floods():
        defn = load_flood(input_path(ref, path.parent))
        flows = resolve(defn, topo, require_confirmation=False)
        dsts = sorted({f.dst for f in flows})
        out.append(("flood", f"{ref}: {len(flows)} flows ({pb.generator or defn.generator}), destinations "
                             f"{', '.join(dsts)}: all hosts of {topo.name} (interlock passed)"))
    rendered = []
    for ref in dict.fromkeys(c.profile for c in conds):
        trial = next(c.trial for c in conds if c.profile == ref)
        rendered.append(f"{ref} ({len(trial.profile_lines)} IOS lines)")
    out.append(("profiles", ", ".join(rendered) + " rendered for the workload hosts"))
    wl: Any = pb.workload
    what = (f"hosts {', '.join(wl.hosts)}, size {wl.size}, {wl.frames} frame(s), rows per call {wl.rows_per_call}"
            + (f", supersample {wl.supersample}" if wl.supersample > 1 else "")
            + (f", {wl.rays} ray(s) per pixel" if getattr(wl, "rays", None) is not None else "")
            if wl.kind == "raytracer" else wl.describe())
    what += ", JIT C1 only (-XX:TieredStopAtLevel=1)" if getattr(wl, "jit", "tiered") == "c1" else ""
    out.append(("workload", what + (f"; {sum(1 for c in pb.conditions if c.workload)} condition(s) "
                                                     "with overrides" if any(c.workload for c in pb.conditions)
                                                     else "")))
    out.append(("device", pb.device + ("" if pb.device in ("virtual", "testbed") else " (device file checked)")))
    if pb.derive is not None:
        d = pb.derive
        n = len([c for c in pb.conditions if c.congestion])
        rule3 = (f"supersample of {d.supersample} under {d.max_uncongested_s:g} s" if d.network_share is None else
                 f"candidate of rays per pixel {d.candidates}, ascending until the network share is <= "
                 f"{d.network_share:g} "
                 f"(rule 3b: the nearest in ratio; pilots under {d.max_uncongested_s:g} s)")
        out.append(("derive", f"from {d.real} before the trials: {d.rx_cost_trials} trial(s) of each of {n} congested "
                              f"condition(s) (rx_cost_us -> host_cores)"
                              + (f", again at each derived capacity until the receive share is within "
                                 f"{d.rx_share_tolerance:g} of the real node's (rule 2b, at most {d.rx_share_rounds} "
                                 "round(s))" if d.rx_share_tolerance is not None else "")
                              + f", then {d.pilot_trials} uncongested per "
                              f"{rule3}; the topology's and workload's values above are the committed ones, "
                              "replaced by what this machine gives"))
    return out
