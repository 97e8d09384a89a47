"""Congestion: flood definitions and the traffic-generator backends.

- :mod:`.definitions`: flood files, the safety interlock (:func:`check_target`);
  :mod:`.patterns`: a flood's flows on a topology (patterns expanded, :func:`resolve`);
- :mod:`.base`: the :class:`TrafficGenerator` contract, results, :func:`open_flood`;
- :mod:`.ditg`: the ``ditg`` backend (D-ITG, default); :mod:`.itgdec` decodes its logs and
  :mod:`.calibrate` measures its plain pacing into a :mod:`.calibration`; :mod:`.ditgsched`
  schedules its senders and :mod:`.ditgpacing` paces them;
- :mod:`.iperf3`: the ``iperf3`` backend (UDP).
"""

from __future__ import annotations

from .base import FloodResult, FlowResult, TrafficGenerator, open_flood
from .calibrate import calibrate
from .calibration import Calibration
from .definitions import (
           L2_OVERHEAD,
           FloodDefinition,
           Flow,
           ResolvedFlow,
           check_target,
           confirm_cluster_flood,
           load_flood,
)
from .patterns import resolve

__all__ = ["L2_OVERHEAD", "Calibration", "FloodDefinition", "FloodResult", "Flow", "FlowResult", "ResolvedFlow",
           "TrafficGenerator", "calibrate", "check_target", "confirm_cluster_flood", "load_flood", "open_flood",
           "resolve"]
