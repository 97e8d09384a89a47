"""Executors: run commands on cluster nodes (contract in :mod:`qoslab.executors.base`).

Backends, registered by name in :data:`qoslab.registry.executors`: ``local``
(:class:`LocalExecutor`), ``netns`` (:class:`NetnsExecutor`).
"""

from __future__ import annotations

from .base import BackgroundProcess, CommandResult, Executor, budgeted, emulation
from .local import LocalExecutor, NetnsExecutor, SubprocessExecutor, listens_tcp, offline

__all__ = ["BackgroundProcess", "CommandResult", "Executor", "LocalExecutor", "NetnsExecutor", "SubprocessExecutor",
           "budgeted", "emulation", "listens_tcp", "offline"]
