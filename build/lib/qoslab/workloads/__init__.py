"""Workloads as backends (issue 23): what a trial measures, registered by name in
:data:`qoslab.registry.workloads` (``raytracer``, ``matmul``, ``pingpong``, ``command``; more
through the entry-point group ``qoslab.workloads``). :mod:`.base` holds the protocol.

A playbook's ``workload:`` mapping names its backend with ``kind`` (default ``raytracer``, so
playbooks written before kinds existed keep their meaning); :func:`settings_of` validates it
with that backend's settings model.
"""

from __future__ import annotations

from typing import Any, cast

from ..registry import workloads
from .base import Workload, WorkloadBase, WorkloadRun

__all__ = ["Workload", "WorkloadBase", "WorkloadRun", "backend", "settings_of", "DEFAULT_KIND"]

#: The kind of a ``workload:`` mapping without ``kind`` (what every playbook meant before kinds).
DEFAULT_KIND = "raytracer"


def backend(kind: str) -> Workload:
    """The workload backend registered as ``kind``; ConfigError naming the known ones."""
    return cast(Workload, workloads.get(kind)())


def kind_of(data: Any) -> str:
    """The ``kind`` of a workload mapping or settings object (DEFAULT_KIND when absent)."""
    if isinstance(data, WorkloadBase):
        return data.kind
    if isinstance(data, dict):
        return str(data.get("kind") or DEFAULT_KIND)
    return DEFAULT_KIND


def settings_of(data: Any) -> WorkloadBase:
    """Validate a workload mapping with its backend's settings model (pydantic ValidationError
    on bad values; ConfigError for an unknown kind)."""
    if isinstance(data, WorkloadBase):
        return data
    model = backend(kind_of(data)).settings_model
    return model.model_validate({**data, "kind": kind_of(data)} if isinstance(data, dict) else data)
