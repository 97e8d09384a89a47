"""The QoS meaning of a running-config of any IOS dialect (pure): the one entry point above the
Catalyst 3750 model (:mod:`.qos`, ``mls qos``) and the IOS-XE MQC model (:mod:`.mqc`, which
builds on the former's dataclasses). Kept apart from both so neither imports the other back."""

from __future__ import annotations

from .config import RunningConfig
from .mqc import mqc_model
from .qos import QosConfig, mls_qos_model


def qos_model(rc: RunningConfig) -> QosConfig:
    """The QoS meaning of ``rc``: an IOS-XE (``c9300``) config's through :func:`.mqc.mqc_model`,
    any other's through :func:`.qos.mls_qos_model` (Catalyst 3750 defaults filled in)."""
    if rc.dialect == "c9300":
        return mqc_model(rc)
    return mls_qos_model(rc)
