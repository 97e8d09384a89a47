"""The scale model derived on the machine of the run (issue 48): a playbook's ``derive:`` block
states the quantities the model holds (the real cluster's receive CPU share, time scale rules,
queue in time) by naming a real cluster's description (REAL.yaml, :class:`.derive.RealCluster`),
and the values that realise them on *this* machine are measured before the trials by the
pre-registered rules of docs/scale-model.md ("thesis-faithful-cpu: the rules", rules 2-4):

- **rule 2, host capacity** (``cpu.host_cores``): the CPU rule (:func:`.derive.host_cores_for`)
  with the real node's ``rx_cost_us`` and this machine's, the median ``rx_cost_us`` of
  ``rx_cost_trials`` congested trials at the topology's link rate, rounded to 3 digits and capped
  at ``max_host_cores``;
- **rule 2b, the receive share held** (when ``rx_share_tolerance`` is given; pre-registered
  2026-12-01, docs/scale-model.md): rule 2 measures the receive cost at the committed capacity,
  but the cost per packet is not constant in the capacity (seed 57: 5.33 us at 0.162 cores, and
  at the 0.0924 cores it derived a receive share of 0.199 where 0.246 was aimed at). So the
  capacity is measured again where it was derived: ``rx_cost_trials`` congested trials per
  congested condition at that capacity give the flooded hosts' receive CPU share (median of the
  trials' ``rx_cpu_share``); held within ``rx_share_tolerance`` of the real node's
  (:func:`.derive.target_rx_share`), the rule stops; else the next capacity is
  :func:`next_host_cores` (the capacity scaled by measured / target share), at most
  ``rx_share_rounds`` measurements; the rule takes the measured capacity whose share is nearest
  the target in ratio (:func:`choose_host_cores`);
- **rule 3, workload**: ``supersample`` the largest of ``supersample`` (ascending) whose
  uncongested run stays under ``max_uncongested_s`` in a pilot of ``pilot_trials`` baseline trials
  at that capacity; T = that pilot's mean (seconds);
- **rule 3b, workload by the network share** (when ``network_share`` is given; pre-registered
  2026-11-29 after the four derived runs, docs/scale-model.md): the pilot tries the RayTracer's
  ``rays`` per pixel ascending and measures each candidate's uncongested run T (mean, seconds) and
  its bytes B (the manager's RMI socket bytes, both directions, mean); the candidate's network
  share is :func:`network_share` (wire time of B at the link rate / T); the pilot stops at the
  first candidate whose share is at or below the target (more rays: more compute, the same bytes,
  a smaller share) or whose T reaches ``max_uncongested_s`` (a guard on the pilot's cost), and the
  rule takes the candidate whose share is nearest the target in ratio (|ln(share / target)|, the
  fewer rays on a tie), T = its pilot's mean;
- **rule 4, timers and the queue**: :func:`.derive.derive` with the testbed's link rate, T and
  the measured ``rx_cost_us``: minimum RTO = s x the real one, quickack, the switch FIFO's depth
  in time floored at two full frames.

The link rate (rule 1) stays the topology's: ``qoslab testbed calibrate`` chooses it, once per
machine, because it takes minutes per rate. Pure: the measurements come in as numbers;
:mod:`qoslab.campaign.onmachine` runs the trials.
"""

from __future__ import annotations

import copy
import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field, field_validator, model_validator

from ..yamlio import StrictModel, SubFieldProblem
from .cpu import CpuBlock, period_for
from .derive import Derived, RealCluster, derive, host_cores_for
from .model import wire_time_s

#: A derived value differs from the committed one when they are further apart than this fraction
#: of the committed value (the pilot's own spread: 3 trials of 3.58-3.74 s, +-2 %, rounded up).
DIFFERS_ABOVE = 0.05
#: A topology's CFS period (ms) when its ``cpu:`` block sets none (:class:`.cpu.CpuBlock`).
DEFAULT_PERIOD_MS: float = CpuBlock.model_fields["period_ms"].default


class DeriveSpec(StrictModel):
    """A playbook's ``derive:`` block (see the module doc): the real cluster's description and the
    settings of rules 2-3."""

    real: str = Field(description="REAL.yaml: the real cluster whose quantities the testbed keeps "
                                  "(its `testbed:` block's values are replaced by this machine's)")
    rx_cost_trials: int = Field(3, ge=2, le=30, description="rule 2: congested trials measuring this machine's "
                                                            "rx_cost_us (microseconds per flood packet)")
    max_host_cores: float = Field(0.25, gt=0, le=64, description="rule 2: the cap of a host's capacity (cores)")
    supersample: list[int] = Field(default_factory=lambda: [1, 2, 3, 4], min_length=1, max_length=4,
                                   description="rule 3: the raytracer's supersample values the pilot tries, ascending")
    max_uncongested_s: float = Field(6.0, gt=0, le=3600, description="rule 3: seconds an uncongested run may "
                                                                     "take at most")
    pilot_trials: int = Field(3, ge=2, le=30, description="rule 3: baseline trials per supersample of the pilot")
    network_share: float | None = Field(None, gt=0, lt=1, description=(
        "rule 3b: the network share the workload must hold (wire time of the manager's RMI bytes at the link rate / "
        "uncongested run, dimensionless); given, rule 3b replaces rule 3: the pilot tries `rays` and takes the "
        "candidate whose share is nearest it; max_uncongested_s then only bounds the pilot's cost"))
    rx_share_tolerance: float | None = Field(None, gt=0, lt=1, description=(
        "rule 2b: the receive CPU share a flooded host must hold at the derived capacity, as a fraction of the real "
        "node's (|measured / target - 1|, dimensionless); given, rule 2 measures again at the capacity it derived, up "
        "to rx_share_rounds times; None: rule 2's one measurement at the committed capacity"))
    rx_share_rounds: int = Field(3, ge=1, le=6, description=(
        "rule 2b: congested measurements at a derived capacity at most (each rx_cost_trials trials per congested "
        "condition)"))
    rays: list[int] | None = Field(None, min_length=1, max_length=16, description=(
        "rule 3b: the raytracer's rays per pixel the pilot tries, ascending (1-16; k*k = supersample k); "
        "None: 1..16"))

    @field_validator("supersample")
    @classmethod
    def _ascending(cls, v: list[int]) -> list[int]:
        if any(not 1 <= x <= 4 for x in v) or v != sorted(set(v)):
            raise ValueError(f"{v}: distinct supersample values of 1..4, ascending")
        return v

    @field_validator("rays")
    @classmethod
    def _rays_ascending(cls, v: list[int] | None) -> list[int] | None:
        if v is not None and (any(isinstance(x, bool) or not 1 <= x <= 16 for x in v) or v != sorted(set(v))):
            raise ValueError(f"{v}: distinct rays-per-pixel values of 1..16, ascending")
        return v

    @model_validator(mode="after")
    def _rays_need_a_share(self) -> DeriveSpec:
        if self.rays is not None and self.network_share is None:
            raise SubFieldProblem(("rays",), "rays are rule 3b's candidates: give the network_share they must hold")
        return self

    @model_validator(mode="after")
    def _rounds_need_a_tolerance(self) -> DeriveSpec:
        if "rx_share_rounds" in self.model_fields_set and self.rx_share_tolerance is None:
            raise SubFieldProblem(("rx_share_rounds",), "rx_share_rounds are rule 2b's: give the rx_share_tolerance "
                                                        "they must reach")
        return self

    @property
    def candidates(self) -> list[int]:
        """Rule 3b's rays per pixel, ascending (``rays``, or 1..16)."""
        return self.rays if self.rays is not None else list(range(1, 17))


def host_cores(real: RealCluster, rate_bps: int, rx_cost_us: float, cap: float) -> float:
    """Rule 2: a testbed host's capacity (cores, 3 significant digits, at most ``cap``) for which a
    flood at ``real.flood_load`` of ``rate_bps`` takes the real node's receive CPU share, given this
    machine's ``rx_cost_us`` (microseconds per flood packet). Raises ValueError when ``real`` has no
    ``rx_cost_us`` or the measurement is not a positive number."""
    if not rx_cost_us > 0 or math.isinf(rx_cost_us):
        raise ValueError(f"rx_cost_us {rx_cost_us!r}: no positive receive cost was measured")
    r = real.model_copy(update={"testbed": real.testbed.model_copy(update={"link_rate": rate_bps,
                                                                           "rx_cost_us": rx_cost_us})})
    cores = host_cores_for(r)
    if cores is None:
        raise ValueError("the real cluster's file gives no rx_cost_us: the CPU rule needs it")
    return min(cores, cap)


def share_held(share: float, target: float, tolerance: float) -> bool:
    """Rule 2b's stop: the measured receive CPU share within ``tolerance`` of ``target`` (as a
    fraction of it)."""
    return abs(share / target - 1) <= tolerance + 1e-12


def next_host_cores(cores: float, share: float, target: float, cap: float) -> float:
    """Rule 2b's next capacity (cores, 3 significant digits, at most ``cap``): ``cores`` x
    ``share`` / ``target``, the capacity at which the receive CPU time measured at ``cores`` would
    be the target share of it (a fixed-point step: the time is measured again there). Raises
    ValueError unless ``share`` and ``target`` are positive and finite."""
    for name, v in (("receive CPU share", share), ("target share", target), ("capacity", cores)):
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"{name} {v!r}: rule 2b needs a positive measurement")
    return min(float(f"{cores * share / target:.3g}"), cap)


def choose_host_cores(rounds: Sequence[tuple[float, float]], target: float) -> tuple[float, float]:
    """Rule 2b's choice: the (cores, receive CPU share) of the measured ``rounds`` (in the order
    measured) whose share is nearest ``target`` in ratio (|ln(share / target)|; the later on a tie).
    Raises ValueError without a round or with a share that is not positive."""
    if not rounds:
        raise ValueError("rule 2b measured no capacity")
    best: tuple[float, float, float] | None = None
    for cores, share in rounds:
        if not share > 0:
            raise ValueError(f"receive CPU share {share!r} at {cores:g} cores: rule 2b needs a positive measurement")
        dist = abs(math.log(share / target))
        if best is None or dist <= best[0]:
            best = (dist, cores, share)
    assert best is not None
    return best[1], best[2]


def choose_supersample(pilots: Mapping[int, Sequence[float]], max_s: float) -> tuple[int, float]:
    """Rule 3: (supersample, T) for the largest supersample whose pilot's mean uncongested time
    (seconds) is under ``max_s``; ``pilots`` maps the supersample values tried, ascending, to their
    trial times. Raises ValueError when even the first is not under ``max_s`` or a pilot is empty."""
    best: tuple[int, float] | None = None
    for ss in sorted(pilots):
        times = list(pilots[ss])
        if not times:
            raise ValueError(f"the pilot of supersample {ss} has no trial time")
        mean = statistics.mean(times)
        if mean >= max_s:
            break
        best = (ss, mean)
    if best is None:
        first = min(pilots)
        raise ValueError(f"supersample {first} already takes {statistics.mean(pilots[first]):.3g} s uncongested, "
                         f"not under max_uncongested_s {max_s:g} s: a faster machine, a smaller workload or a "
                         "larger host capacity is needed")
    return best


def next_pilot(pilots: Mapping[int, Sequence[float]], spec: DeriveSpec) -> int | None:
    """The next supersample the pilot must try, or None when rule 3 is decided (the last pilot was
    over the limit, or every value was tried)."""
    for ss in spec.supersample:
        if ss not in pilots:
            return ss
        if statistics.mean(pilots[ss]) >= spec.max_uncongested_s:
            return None
    return None


def network_share(run_bytes: float, rate_bps: float, uncongested_s: float) -> float:
    """The network share of a run (dimensionless): the wire time of ``run_bytes`` (bytes, as full
    frames, :func:`.model.wire_time_s`) on a link of ``rate_bps`` bits/s over the uncongested run
    time ``uncongested_s`` (seconds). Raises ValueError unless all three are positive and finite."""
    for name, v in (("run bytes", run_bytes), ("link rate", rate_bps), ("uncongested run", uncongested_s)):
        if not (v > 0 and math.isfinite(v)):
            raise ValueError(f"{name} {v!r}: a positive number is needed for the network share")
    return wire_time_s(run_bytes, rate_bps) / uncongested_s


#: One rule-3b pilot: (uncongested run times in seconds, the run's bytes per trial).
Pilot = tuple[Sequence[float], Sequence[float]]


def pilot_share(pilot: Pilot, rate_bps: float) -> tuple[float, float, float]:
    """(mean T in seconds, mean bytes, network share) of one rule-3b pilot at ``rate_bps``. Raises
    ValueError when it has no time or no byte count."""
    times, nbytes = list(pilot[0]), list(pilot[1])
    if not times or not nbytes:
        raise ValueError("a pilot without " + ("trial times" if not times else "byte counts (workload-result.json)"))
    t, b = statistics.mean(times), statistics.mean(nbytes)
    return t, b, network_share(b, rate_bps, t)


def next_rays(pilots: Mapping[int, Pilot], spec: DeriveSpec, rate_bps: float) -> int | None:
    """The next rays per pixel rule 3b's pilot must try, ascending, or None when it is decided: the
    last pilot's share is at or below ``spec.network_share``, its T reached ``max_uncongested_s``,
    or every candidate was tried."""
    assert spec.network_share is not None
    for n in spec.candidates:
        if n not in pilots:
            return n
        t, _, share = pilot_share(pilots[n], rate_bps)
        if share <= spec.network_share or t >= spec.max_uncongested_s:
            return None
    return None


def choose_rays(pilots: Mapping[int, Pilot], rate_bps: float, target: float,
                max_s: float) -> tuple[int, float, float]:
    """Rule 3b: (rays per pixel, T in seconds, its network share) of the pilot whose share is
    nearest ``target`` in ratio (|ln(share / target)|; the fewer rays on a tie), among those whose
    mean T is under ``max_s``. Raises ValueError when no pilot is under ``max_s`` or one is empty."""
    best: tuple[float, int, float, float] | None = None
    for n in sorted(pilots):
        t, _, share = pilot_share(pilots[n], rate_bps)
        if t >= max_s:
            continue
        dist = abs(math.log(share / target))
        if best is None or dist < best[0]:
            best = (dist, n, t, share)
    if best is None:
        raise ValueError(f"no pilot ran under max_uncongested_s {max_s:g} s (rays {sorted(pilots)}): a faster "
                         "machine, a smaller workload or a larger host capacity is needed")
    return best[1], best[2], best[3]


def derive_scale(real: RealCluster, rate_bps: int, rx_cost_us: float, uncongested_s: float) -> Derived:
    """Rule 4: :func:`.derive.derive` with this machine's link rate (bits/s), receive cost
    (microseconds per packet) and pilot time T (seconds). Raises FieldProblem as ``derive`` does."""
    tb = real.testbed.model_copy(update={"link_rate": rate_bps, "rx_cost_us": rx_cost_us,
                                         "uncongested_s": uncongested_s})
    return derive(real.model_copy(update={"testbed": tb}))


def derived_topology(data: Mapping[str, Any], cores: float, d: Derived | None = None) -> dict[str, Any]:
    """The topology (plain YAML data) with ``cpu.host_cores`` = ``cores`` and, given ``d``, its
    ``scale:`` knobs; a host's own ``cpu:`` is left as it is (the playbook's author set it).
    ``cpu.period_ms`` is lengthened (:func:`.cpu.period_for`) when at the topology's period the
    host's quota would be under the kernel's 1 ms (a machine whose receive path is cheap: 5.47 us a
    packet here on 2026-12-01 gave 0.0948 cores, 0.948 ms at 10 ms)."""
    out = copy.deepcopy(dict(data))
    cpu = {**dict(out.get("cpu") or {}), "host_cores": cores}
    period = cpu.get("period_ms", DEFAULT_PERIOD_MS)
    longer = period_for(cores, period)
    if longer != period:  # a quota under the kernel's 1 ms: a longer period
        cpu["period_ms"] = longer
    out["cpu"] = cpu
    if d is not None:
        out["scale"] = d.knobs.model_dump(mode="json", exclude_none=True)
    return out


def values(topology: Mapping[str, Any], supersample: int, rays: int | None = None) -> dict[str, Any]:
    """The values the rules set, as a topology and a workload hold them: host_cores (cores),
    period_ms (the CFS period, ms: the topology's, or the one rule 2 lengthened),
    supersample (rule 3) or, given ``rays``, rays per pixel (rule 3b), rto_min_ms, quickack,
    switch_queue_ms (None where the topology sets none)."""
    scale = topology.get("scale") or {}
    work: dict[str, Any] = {"supersample": supersample} if rays is None else {"rays": rays}
    cpu = topology.get("cpu") or {}
    return {"host_cores": cpu.get("host_cores"), "period_ms": cpu.get("period_ms", DEFAULT_PERIOD_MS), **work,
            "rto_min_ms": scale.get("rto_min_ms"), "quickack": scale.get("quickack"),
            "switch_queue_ms": scale.get("switch_queue_ms")}


def differences(committed: Mapping[str, Any], derived: Mapping[str, Any],
                above: float = DIFFERS_ABOVE) -> list[str]:
    """One text per value the run derived that differs from the playbook's committed one (numbers:
    by more than ``above`` of the committed value; others: not equal), e.g. ``host_cores 0.171
    (committed 0.162, +5.6 %)``."""
    out = []
    for k, new in derived.items():
        old = committed.get(k)
        if isinstance(new, bool) or isinstance(old, bool) or not isinstance(new, (int, float)) \
                or not isinstance(old, (int, float)):
            if new != old:
                out.append(f"{k} {new} (committed {old})")
        elif old == 0 or abs(new - old) > above * abs(old):
            rel = f", {(new - old) / old * 100:+.1f} %" if old else ""
            out.append(f"{k} {new:g} (committed {old:g}{rel})")
    return out
