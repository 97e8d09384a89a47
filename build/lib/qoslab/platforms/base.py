"""The platform driver: what differs between switch families, behind one base class (as
NAPALM's ``NetworkDriver``), registered by name in :data:`qoslab.registry.platforms`.

A :class:`Platform` renders a profile to the platform's config lines, says which config lines are
QoS lines (:class:`~qoslab.ios.qoswalk.QosRules`: the push's diff and rollback), names the
Netmiko device type and the hier-config platform, the virtual switch's config dialect and
``show version`` model, and reads egress queue counters into the neutral :class:`QueueCounters`
(n queues x m thresholds; enqueued and dropped packets and bytes, None where the platform does not
count). Built in: ``catalyst3750`` and ``catalyst9300``; a third is one module and one
registration (src/qoslab/README.md, "Adding a platform").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import ConfigError
from ..ios.qoswalk import C3750_RULES, QosRules
from ..profiles.model import Profile
from ..registry import PLATFORM_ALIASES, platform_of_model, platforms
from ..topology import Topology

Matrix = list[list[int]]


def _sub(a: Matrix | None, b: Matrix | None) -> Matrix | None:
    if a is None or b is None:
        return None
    return [[x - y for x, y in zip(ra, rb, strict=True)] for ra, rb in zip(a, b, strict=True)]


@dataclass
class QueueCounters:
    """One port's egress queue counters, platform-neutral: ``queues`` names the n queues as the
    platform does (``1``..``4`` on a 3750, class names on a 9300); each matrix is [queue][threshold]
    (m thresholds; 1 where the platform counts per queue only), None when not counted."""

    queues: list[str]
    enqueued_packets: Matrix | None = None
    dropped_packets: Matrix | None = None
    enqueued_bytes: Matrix | None = None
    dropped_bytes: Matrix | None = None

    def __post_init__(self) -> None:
        for name in ("enqueued_packets", "dropped_packets", "enqueued_bytes", "dropped_bytes"):
            m = getattr(self, name)
            if m is not None and len(m) != len(self.queues):
                raise ValueError(f"QueueCounters.{name}: {len(self.queues)} queues expected, got {len(m)}")

    @property
    def n_thresholds(self) -> int:
        """m: thresholds per queue (of the first matrix that is counted)."""
        for m in (self.enqueued_packets, self.dropped_packets, self.enqueued_bytes, self.dropped_bytes):
            if m:
                return len(m[0])
        return 0

    def minus(self, before: QueueCounters) -> QueueCounters:
        """Deltas ``self - before`` (same queues)."""
        if before.queues != self.queues:
            raise ValueError(f"queues differ: {before.queues} then {self.queues}")
        return QueueCounters(list(self.queues), _sub(self.enqueued_packets, before.enqueued_packets),
                             _sub(self.dropped_packets, before.dropped_packets),
                             _sub(self.enqueued_bytes, before.enqueued_bytes),
                             _sub(self.dropped_bytes, before.dropped_bytes))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the store keeps it as text: any n x m)."""
        return {"queues": self.queues, "enqueued_packets": self.enqueued_packets,
                "dropped_packets": self.dropped_packets, "enqueued_bytes": self.enqueued_bytes,
                "dropped_bytes": self.dropped_bytes}


class Platform:
    """A switch platform (see the module doc). Subclasses set the class attributes and implement
    :meth:`render` and :meth:`parse_counters`."""

    name: ClassVar[str] = ""
    #: Netmiko's device_type and the hier-config platform (``hier_config.Platform`` member)
    netmiko_device_type: ClassVar[str] = "cisco_ios"
    #: the virtual switch's config dialect (:mod:`qoslab.ios.xe`) and ``show version`` model
    dialect: ClassVar[str] = "c3750"
    model: ClassVar[str] = ""
    #: topology ``switch.model`` values that mean this platform (prefixes, upper case)
    model_prefixes: ClassVar[tuple[str, ...]] = ()
    qos_rules: ClassVar[QosRules] = C3750_RULES
    #: the show commands ``qoslab switch show`` prints (the switch's QoS state)
    state_commands: ClassVar[tuple[str, ...]] = ("show access-lists", "show class-map", "show policy-map")
    #: the client's SSH settings for this platform's switches (:mod:`qoslab.switch.legacyssh`):
    #: ``c3750`` (also the SHA-1/CBC algorithms of 12.2(55)SE) or ``modern`` (paramiko's own)
    ssh_profile: ClassVar[str] = "modern"

    def render(self, profile: Profile, topology: Topology, groups: dict[str, list[str]] | None = None) -> list[str]:
        """Profile -> this platform's config lines. Raises QoslabError naming file, line, field."""
        raise NotImplementedError

    def counters_commands(self, ports: list[str]) -> list[str]:
        """The show commands that give the egress queue counters of ``ports`` (long names)."""
        raise NotImplementedError

    def parse_counters(self, text: str, command: str | None = None) -> dict[str, QueueCounters]:
        """Output of one of :meth:`counters_commands` -> {long port name: QueueCounters};
        ``command``: the command that printed it (for outputs that do not name their port)."""
        raise NotImplementedError

    def no_queues(self) -> QueueCounters:
        """The counters of a port the output does not list (no egress queuing configured)."""
        return QueueCounters([])


def get_platform(name: str) -> Platform:
    """The platform registered as ``name`` (an instance). Raises ConfigError listing the known ones."""
    factory = platforms.get(name)
    p = factory()
    if not isinstance(p, Platform):
        raise ConfigError(f"platform {name!r} is not a qoslab.platforms.Platform")
    return p


#: Device-file ``platform:`` values of earlier releases (Netmiko device types) -> platform names.
ALIASES = PLATFORM_ALIASES


def platform_for_model(model: str) -> str:
    """The platform of a topology's ``switch.model`` (``WS-C3750G-24T`` -> ``catalyst3750``,
    ``C9300-24T`` or ``catalyst9300`` -> ``catalyst9300``; :func:`qoslab.registry.platform_of_model`).
    Raises ConfigError for a model no registered platform claims."""
    name = platform_of_model(model)
    if name is None:
        raise ConfigError(f"switch model {model!r}: no platform claims it (platforms: {', '.join(platforms.names())})")
    return name
