"""Deprecated alias of :mod:`qoslab.meters.base`, kept for one release (removed after 0.2) for third-party meters
that import ``qoslab.campaign.meters`` (the Meter protocol, BaseMeter, TrialContext). Import
:mod:`qoslab.meters` instead; this module only re-exports and warns."""

from __future__ import annotations

import warnings

from ..meters.base import BaseMeter, Meter, MeterSet, TrialContext, meter_columns
from ..meters.cpu import CpuMeter
from ..meters.drops import CaptureDropsMeter
from ..meters.switch import SwitchMeter

warnings.warn("qoslab.campaign.meters moved to qoslab.meters (this alias goes in the next release)",
              DeprecationWarning, stacklevel=2)

__all__ = ["BaseMeter", "CaptureDropsMeter", "CpuMeter", "Meter", "MeterSet", "SwitchMeter", "TrialContext",
           "meter_columns"]
