"""Campaign playbooks (``playbooks/*.yaml``) and the trial schedule (pure).

A playbook names the topology, the switch device (``virtual`` or a device file), the executor
backend, the workload, the flood (and optionally its generator), the conditions (congestion
on/off x QoS profile, optional workload overrides), the statistics baseline, trials per
condition, the order (``interleaved``: shuffled with a recorded seed; ``blocked``: one condition
after another as in the thesis), warm-up rounds, the per-trial timeout, the capture policy and
retries. :func:`qoslab.campaign.load_playbook` reads one and checks everything it references,
with file, line and field; this module is the model alone (statistics and the report read it
without the runner's package).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SerializeAsAny, ValidationError, field_validator, model_validator

from qoslab.meters.fidelityjudge import FidelityThresholds

from ..errors import ConfigError
from ..portnames import canonical_port
from ..registry import executors, generators
from ..scale.onmachine import DeriveSpec
from ..topology import repo_root
from ..workloads import WorkloadBase, kind_of, settings_of
from ..yamlio import FieldProblem, StrictModel, SubFieldProblem, error_loc, problem_text
from .factors import condition_flood, expand_factors, flood_ref

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def folder_name(kind: str, v: str) -> str:
    """``v`` when it can name a folder (1-64 letters, digits, '.', '_', '-'; no '..'), else
    ValueError naming ``kind`` (e.g. "campaign name")."""
    if not _NAME.match(v) or ".." in v:
        raise ValueError(f"{kind} {v!r}: 1-64 letters, digits, '.', '_', '-' (it names a folder)")
    return v


class Condition(StrictModel):
    """One cell of the matrix: congestion on/off and a QoS profile (plus workload overrides, any
    field of the playbook's ``workload``). ``flood`` names the condition's own flood file (a bare
    name is ``traffic-gen/NAME.yaml``; ``none`` = no congestion); without it ``congestion: true``
    means the playbook's ``flood``. ``levels``: the factor levels of a factorial cell."""

    name: str = Field(..., min_length=1, max_length=80)
    congestion: bool
    profile: str
    workload: dict[str, Any] = Field(default_factory=dict)
    flood: str | None = None
    levels: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _flood(cls, data: Any) -> Any:
        return condition_flood(data)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if any(c in v for c in ",|\n\r\t\"") or v != v.strip():
            raise ValueError(f"condition name {v!r}: no commas, '|', quotes, tabs, newlines or outer spaces "
                             "(it is a CSV value and a statistics argument)")
        return v


class StopRule(StrictModel):
    """When a sequential campaign stops: ``rule: precision`` = when the primary estimate's 95 %
    interval is narrow enough. ``metric: recovery``: every recovery ratio of the matrix (see
    :func:`qoslab.trials.comparisons.plan_comparisons`), its percentile-bootstrap interval's half-width <=
    ``half_width`` (ratio units: 0.05 = +-5 points); ``metric: mean``: every condition's mean, its
    t interval's half-width <= ``half_width`` x the mean (0.05 = +-5 %). Precision, not a test's
    verdict, decides, so a later test's type I error stays near nominal (:mod:`.seqsim`)."""

    rule: Literal["precision"] = "precision"
    metric: Literal["recovery", "mean"] = "recovery"
    half_width: float = Field(..., gt=0, le=10)


class SequentialTrials(StrictModel):
    """``trials: {min, max, every, stop}``: at least ``min`` and at most ``max`` trials per
    condition; after ``min`` and then every ``every`` more (all conditions advance together: the
    schedule is shuffled stage by stage), the ``stop`` rule is checked on the done trials and, when
    it holds, every condition stops at once (the remaining trials are ``skipped``)."""

    min: int = Field(10, ge=2, le=100_000)
    max: int = Field(50, ge=2, le=100_000)
    every: int = Field(5, ge=1, le=100_000)
    stop: StopRule

    @model_validator(mode="after")
    def _range(self) -> SequentialTrials:
        if self.min > self.max:
            raise SubFieldProblem(("min",), f"min {self.min} is above max {self.max}")
        return self

    def checkpoints(self) -> list[int]:
        """The trial counts per condition after which the rule is checked: min, min + every, ...,
        max (the last one is the end)."""
        out = list(range(self.min, self.max, self.every))
        return out + [self.max]


class Playbook(StrictModel):
    """A campaign (see the module doc). Paths are relative to the repository."""

    name: str
    description: str = ""
    topology: str = "playbooks/topologies/ecenet.yaml"
    device: str = Field("virtual", description="switch device: `virtual` (the testbed's virtual switch) or a "
                                               "device file (`device: catalyst`, host, port, credentials, known_hosts)")
    executor: str = Field("netns", description="how commands reach the hosts (qoslab.registry.executors)")
    workload: SerializeAsAny[WorkloadBase] = Field(
        ..., description="what a trial measures: `kind` names the backend (qoslab.registry.workloads; default "
                         "raytracer), the other keys are that backend's settings")
    flood: str = "traffic-gen/thesis-flood.yaml"
    generator: str | None = Field(None, description="traffic generator; default: the flood file's `generator:`")
    conditions: list[Condition] = Field(default_factory=list)
    factors: dict[str, Any] | None = Field(None, description="factorial design: factor -> levels (flood, profile, "
                                                            "workload.X), optional include: [cells] (trials.factors)")
    baseline: str | None = Field(None, description="the condition every effect is measured against (congestion "
                                                   "off, reference profile); default: the first without congestion")
    equivalence_margin: float = Field(0.02, gt=0, lt=1, description="TOST margin as a fraction of the baseline "
                                                                    "mean: smaller differences count as none")
    trials: Annotated[int, Field(ge=2, le=100_000)] | SequentialTrials = Field(
        50, description="trials per condition, or {min, max, every, stop} for sequential stopping")
    order: Literal["interleaved", "blocked"] = "interleaved"
    seed: int | None = Field(None, ge=0, lt=2**63)
    warmup: int = Field(0, ge=0, le=100)
    trial_timeout_s: float = Field(600.0, gt=0, le=86_400)
    capture: Literal["off", "first", "every"] = "off"
    capture_port: str = "Gi1/0/21"
    capture_host: str | None = None
    retries: int = Field(2, ge=0, le=100)
    censor_timeouts: bool = Field(
        False, description="a trial whose last attempt ended in a call timeout (a right-censored time) "
                           "counts at its lower bound instead of leaving the campaign incomplete: "
                           "stats.json is then computed on trials-censored.csv (successful trials plus "
                           "one row per timed-out trial at its bound) and its `censored` block says so; "
                           "means, slowdowns and recoveries become lower bounds where trials were censored")
    settle: Literal["saturated", "fixed"] = Field(
        "saturated", description="when the workload starts after the flood: `saturated` = as soon as every "
                                 "flooded switch port sends >= 95 % of the link rate (the flood is established), "
                                 "at most settle_s; `fixed` = after settle_s")
    settle_s: float = Field(1.0, ge=0, le=600, description="seconds: the longest wait (saturated) or the wait "
                                                           "(fixed) between flood start and workload start")
    workers: Literal["per-campaign", "per-trial"] = Field(
        "per-campaign", description="worker JVMs kept up across trials (warm JIT, one JVM start per trial) "
                                    "or started fresh for every trial (as the thesis's JavaParty runs)")
    fidelity: FidelityThresholds = Field(default_factory=FidelityThresholds,
                                         description="thresholds of the fidelity monitor (qoslab.campaign."
                                                     "fidelitycheck): which trials count as emulated faithfully")
    keep_ditg_logs: bool = Field(False, description="keep the binary ITGSend/ITGRecv logs (144 bytes per packet "
                                                    "each) after ITGDec decoded them; kept anyway when decoding failed")
    derive: DeriveSpec | None = Field(None, description="the scale model derived on the machine of the run before "
                                                        "its trials (qoslab.scale.onmachine): host capacity, "
                                                        "supersample, timers and queue from a real cluster's file")

    @model_validator(mode="before")
    @classmethod
    def _factorial(cls, data: Any) -> Any:
        return expand_factors(data)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return folder_name("campaign name", v)

    @field_validator("trials", mode="before")
    @classmethod
    def _trials(cls, v: object) -> object:
        """A mapping is the sequential design: its errors name its own field (trials.min, ...)."""
        if not isinstance(v, dict):
            return v
        return _sub_model(SequentialTrials, v)

    @field_validator("workload", mode="before")
    @classmethod
    def _workload(cls, v: object) -> object:
        """Validate with the backend's settings model (``kind``; none = raytracer); errors name the
        nested field (workload.mechanism, ...)."""
        return _workload_settings(v)

    @field_validator("fidelity", mode="before")
    @classmethod
    def _fidelity(cls, v: object) -> object:
        """A mapping of thresholds: its errors name their own field (fidelity.min_flood_ratio, ...)."""
        if v is None:
            return FidelityThresholds()
        if not isinstance(v, dict):
            raise ValueError("fidelity must be a mapping of thresholds, e.g. {min_flood_ratio: 0.9}")
        return _sub_model(FidelityThresholds, v)

    @field_validator("capture", mode="before")
    @classmethod
    def _capture_off(cls, v: object) -> object:
        return "off" if v is False else v  # YAML 1.1 reads a bare `off` as false

    @field_validator("capture_port")
    @classmethod
    def _capture_port(cls, v: str) -> str:
        return canonical_port(v)

    @field_validator("executor")
    @classmethod
    def _executor(cls, v: str) -> str:
        if v not in executors.names():
            raise ValueError(f"unknown executor {v!r} (known: {', '.join(executors.names())})")
        return v

    @field_validator("generator")
    @classmethod
    def _generator(cls, v: str | None) -> str | None:
        if v is not None and v not in generators.names():
            raise ValueError(f"unknown generator {v!r} (known: {', '.join(generators.names())})")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Playbook:
        names = [c.name for c in self.conditions]
        if not names:
            raise FieldProblem(("conditions",), "a campaign needs at least one condition")
        for i, c in enumerate(self.conditions):
            if c.name in names[:i]:
                raise FieldProblem(("conditions", i, "name"), f"condition name {c.name!r} is used twice")
            self._check_overrides(i, c)
        if self.baseline is not None and self.baseline not in names:
            raise FieldProblem(("baseline",), f"no condition {self.baseline!r} (conditions: {', '.join(names)})")
        return self

    def _check_overrides(self, i: int, c: Condition) -> None:
        if "kind" in c.workload and c.workload["kind"] != self.workload.kind:
            raise FieldProblem(("conditions", i, "workload", "kind"),
                               f"a condition cannot change the workload kind ({self.workload.kind})")
        try:
            settings_of({**self.workload.model_dump(), **c.workload})
        except ValidationError as e:
            err = e.errors()[0]
            loc = error_loc(err)
            factor = f"workload.{loc[0]}" if loc else ""
            if self.factors and factor in self.factors:  # a generated condition: name the factor's line
                raise FieldProblem(("factors", factor), f"level {c.workload.get(loc[0])!r}: "
                                                        f"{problem_text(err)}") from None
            raise FieldProblem(("conditions", i, "workload", *loc), problem_text(err)) from None

    # -- derived ------------------------------------------------------------------------------
    @property
    def sequential(self) -> SequentialTrials | None:
        """The sequential design, or None for a fixed number of trials."""
        return self.trials if isinstance(self.trials, SequentialTrials) else None

    @property
    def max_trials(self) -> int:
        """Trials per condition scheduled (a sequential campaign's most)."""
        return self.trials.max if isinstance(self.trials, SequentialTrials) else self.trials

    @property
    def min_trials(self) -> int:
        """Trials per condition at least run (a fixed campaign's all)."""
        return self.trials.min if isinstance(self.trials, SequentialTrials) else self.trials

    def condition(self, name: str) -> Condition:
        """The condition called ``name``; raises KeyError."""
        for c in self.conditions:
            if c.name == name:
                return c
        raise KeyError(name)

    def workload_of(self, cond: Condition) -> Any:
        """The workload settings of a condition (the playbook's with the condition's overrides):
        an instance of the backend's settings model (``kind``, ``hosts``, ``timeout_s``, ...)."""
        return settings_of({**self.workload.model_dump(), **cond.workload}) if cond.workload else self.workload

    def flood_of(self, cond: Condition) -> str | None:
        """The flood file of a condition (None: no congestion): its own, else the playbook's."""
        if not cond.congestion:
            return None
        return flood_ref(cond.flood) if cond.flood is not None else self.flood

    def floods(self) -> list[str]:
        """Every flood file the conditions use, in order of first use."""
        return list(dict.fromkeys(f for c in self.conditions if (f := self.flood_of(c)) is not None))

    def baseline_condition(self) -> Condition:
        """``baseline``, or the first condition without congestion, or the first condition."""
        if self.baseline is not None:
            return self.condition(self.baseline)
        return next((c for c in self.conditions if not c.congestion), self.conditions[0])


def _sub_model(model: type[BaseModel], v: dict[str, Any]) -> BaseModel:
    """``v`` validated by ``model``; its first error raised as a SubFieldProblem naming the nested
    field (``trials.min``, ``fidelity.min_flood_ratio``, ...)."""
    try:
        return model.model_validate(v)
    except ValidationError as e:
        err = e.errors()[0]
        raise SubFieldProblem(error_loc(err), problem_text(err)) from None


def _workload_settings(v: object) -> object:
    if not isinstance(v, dict):
        return v
    try:
        return settings_of(v)
    except ConfigError as e:  # unknown kind
        raise SubFieldProblem(("kind",), str(e)) from None
    except ValidationError as e:
        err = e.errors()[0]
        hint = f" (kind {kind_of(v)})" if err["type"] == "extra_forbidden" else ""
        raise SubFieldProblem(error_loc(err), problem_text(err) + hint) from None


def resolve_path(ref: str) -> Path:
    """A path named in a playbook: absolute as given, else relative to the repository."""
    p = Path(ref)
    return p if p.is_absolute() else repo_root() / p


@dataclass(frozen=True)
class ScheduledTrial:
    """One trial of the schedule: its position, condition, 1-based number within its condition
    (warm-up trials are 0, -1, ...) and whether it is a warm-up."""

    idx: int
    condition: str
    trial: int
    warmup: bool


def schedule(pb: Playbook, seed: int) -> list[ScheduledTrial]:
    """The order of all trials (pure): warm-ups first (one round over the conditions each), then
    ``trials`` per condition, interleaved = shuffled with ``seed``, blocked = condition by condition.
    A sequential playbook's trials come in stages (trials 1..min, then ``every`` more per
    condition up to max), each shuffled (or blocked) on its own, so all conditions have the same
    number of trials at every check of the stopping rule."""
    out: list[tuple[str, int, bool]] = []
    for w in range(pb.warmup):
        out += [(c.name, -w, True) for c in pb.conditions]
    seq = pb.sequential
    bounds = [0, *seq.checkpoints()] if seq is not None else [0, pb.max_trials]
    rng = random.Random(seed)
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        stage = [(c.name, t, False) for c in pb.conditions for t in range(lo + 1, hi + 1)]
        if pb.order == "interleaved":
            rng.shuffle(stage)
        out += stage
    return [ScheduledTrial(i, c, t, w) for i, (c, t, w) in enumerate(out)]
