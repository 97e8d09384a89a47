"""The scale model derived on the machine of the run (issue 48): a playbook's ``derive:`` block
states the quantities the model holds (the real cluster's receive CPU share, time scale rules,
queue in time) by naming a real cluster's description (REAL.yaml, :class:`.derive.RealCluster`),
and the values that realise them on *this* machine are measured before the trials by the
pre-registered rules of docs/scale-model.md ("thesis-faithful-cpu: the rules", rules 2-4):

- **rule 2, host capacity** (``cpu.host_cores``): the CPU rule (:func:`.derive.host_cores_for`)
  with the real node's ``rx_cost_us`` and this machine's, the median ``rx_cost_us`` of
  ``rx_cost_trials`` congested trials at the topology's link rate, rounded to 3 digits and capped
  at ``max_host_cores``;
- **rule 3, workload**: ``supersample`` the largest of ``supersample`` (ascending) whose
  uncongested run stays under ``max_uncongested_s`` in a pilot of ``pilot_trials`` baseline trials
  at that capacity; T = that pilot's mean (seconds);
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

from pydantic import Field, field_validator

from ..yamlio import StrictModel
from .derive import Derived, RealCluster, derive, host_cores_for

#: A derived value differs from the committed one when they are further apart than this fraction
#: of the committed value (the pilot's own spread: 3 trials of 3.58-3.74 s, +-2 %, rounded up).
DIFFERS_ABOVE = 0.05


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

    @field_validator("supersample")
    @classmethod
    def _ascending(cls, v: list[int]) -> list[int]:
        if any(not 1 <= x <= 4 for x in v) or v != sorted(set(v)):
            raise ValueError(f"{v}: distinct supersample values of 1..4, ascending")
        return v


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


def derive_scale(real: RealCluster, rate_bps: int, rx_cost_us: float, uncongested_s: float) -> Derived:
    """Rule 4: :func:`.derive.derive` with this machine's link rate (bits/s), receive cost
    (microseconds per packet) and pilot time T (seconds). Raises FieldProblem as ``derive`` does."""
    tb = real.testbed.model_copy(update={"link_rate": rate_bps, "rx_cost_us": rx_cost_us,
                                         "uncongested_s": uncongested_s})
    return derive(real.model_copy(update={"testbed": tb}))


def derived_topology(data: Mapping[str, Any], cores: float, d: Derived | None = None) -> dict[str, Any]:
    """The topology (plain YAML data) with ``cpu.host_cores`` = ``cores`` and, given ``d``, its
    ``scale:`` knobs; a host's own ``cpu:`` is left as it is (the playbook's author set it)."""
    out = copy.deepcopy(dict(data))
    out["cpu"] = {**dict(out.get("cpu") or {}), "host_cores": cores}
    if d is not None:
        out["scale"] = d.knobs.model_dump(mode="json", exclude_none=True)
    return out


def values(topology: Mapping[str, Any], supersample: int) -> dict[str, Any]:
    """The values the rules set, as a topology and a workload hold them: host_cores (cores),
    supersample, rto_min_ms, quickack, switch_queue_ms (None where the topology sets none)."""
    scale = topology.get("scale") or {}
    return {"host_cores": (topology.get("cpu") or {}).get("host_cores"), "supersample": supersample,
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
