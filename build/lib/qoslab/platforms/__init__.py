"""Switch platforms behind one driver class (:class:`Platform`), registered by name
(:data:`qoslab.registry.platforms`): ``catalyst3750`` (IOS, ``mls qos``) and ``catalyst9300``
(IOS-XE MQC). Modules: :mod:`.base` (Platform, QueueCounters, lookup), :mod:`.neutral` (profiles
in platform-neutral queue terms, pure), :mod:`.render9300` (IOS-XE MQC rendering, pure),
:mod:`.xeparse` (IOS-XE ``show policy-map interface``, pure), :mod:`.counters` (IOS show output
through the TextFSM templates of ``switch-configs/textfsm/``; any platform's queue counters read
through a device), one module per platform.
"""

from __future__ import annotations

from .base import ALIASES, Platform, QueueCounters, get_platform, platform_for_model

__all__ = ["ALIASES", "Platform", "QueueCounters", "get_platform", "platform_for_model"]
