"""What all trials of a campaign share (:class:`TrialEnv`): the runner builds it once per run,
and a trial (:mod:`.trial`) and its workload's launch (:mod:`.launch`) read it."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..executors import Executor
from ..profiles import Profile, load_profile
from ..switch.backends import SwitchDevice
from ..testbed import Testbed
from ..topology import Topology
from ..trafficgen import Calibration, FloodDefinition
from ..trials.playbook import Condition, Playbook
from ..workloads.base import Pool
from .trialplan import TrialPlan, plan_trial


@dataclass
class TrialEnv:
    """What all trials of a campaign share: playbook, topology, campaign folder, the testbed (None
    on a real cluster), executors of the hosts, the switch device, the flood, D-ITG's calibration,
    the worker pool (None = workers per trial), a log callback, the config last pushed, the
    QoS profiles by the conditions' ``profile`` reference (the campaign's snapshot; a reference
    missing here is read from the working tree), and each condition's :class:`TrialPlan` (filled
    on first use by :meth:`plan_of`)."""

    pb: Playbook
    topo: Topology
    out: Path
    testbed: Testbed | None
    executor_of: Callable[[str], Executor]
    switch: SwitchDevice
    flood: FloodDefinition
    floods: dict[str, FloodDefinition] = field(default_factory=dict)
    calibration: Calibration | None = None
    pool: Pool | None = None
    log: Callable[[str], None] = lambda s: None
    current_config: str | None = None
    captured: set[str] = field(default_factory=set)
    profiles: dict[str, Profile] = field(default_factory=dict)
    plans: dict[str, TrialPlan] = field(default_factory=dict)
    _lanes: ThreadPoolExecutor | None = None

    def plan_of(self, cond: Condition) -> TrialPlan:
        """The condition's :class:`TrialPlan`, resolved once per campaign run (its flood from the
        campaign's definitions, its profile from the snapshot, else read from the working tree)."""
        if cond.name not in self.plans:
            if cond.profile not in self.profiles:
                self.profiles[cond.profile] = load_profile(cond.profile)
            ref = self.pb.flood_of(cond)
            floods = {ref: self.floods.get(ref, self.flood)} if ref is not None else {}
            self.plans[cond.name] = plan_trial(self.pb, cond, self.topo, floods, self.profiles)
        return self.plans[cond.name]

    def lanes(self) -> ThreadPoolExecutor:
        """Two threads that live as long as the campaign (created on first use, ended by
        :meth:`close`) for the trial's side work that starts processes: the flood's receivers
        and a gated workload. A process's parent-death signal (PR_SET_PDEATHSIG) fires when the
        thread that started it ends, so a thread of the trial's own would take them along."""
        if self._lanes is None:
            self._lanes = ThreadPoolExecutor(max_workers=2, thread_name_prefix="trial-lane")
        return self._lanes

    def close(self) -> None:
        """End the lanes (idempotent; waits for work still in them)."""
        lanes, self._lanes = self._lanes, None
        if lanes is not None:
            lanes.shutdown()
