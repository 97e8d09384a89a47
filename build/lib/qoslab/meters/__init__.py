"""Per-trial measurement as plug-ins (registered in :data:`qoslab.registry.meters`).

- :mod:`.base`: the :class:`Meter` protocol, the trial's view a meter gets (:class:`TrialContext`),
  :class:`BaseMeter` and :class:`MeterSet`, which runs every registered meter through a trial's
  phases;
- :mod:`.switch` (the ``switch`` meter) over :mod:`.evidence`: the switch's QoS counters of the
  trial's ports before and after;
- :mod:`.cpu` (``cpu``): CPU time of the trial's parts from /proc; :mod:`.drops` (``capture``):
  the capture's drops;
- :mod:`.calls`: per-call latency, the manager's and the wire's view;
- :mod:`.fidelity`: the fidelity sampler (10 Hz over the workload window) and
  :mod:`.fidelityjudge`, its pure verdict.
"""

from __future__ import annotations

from .base import BaseMeter, Meter, MeterSet, TrialContext, meter_columns

__all__ = ["BaseMeter", "Meter", "MeterSet", "TrialContext", "meter_columns"]
