"""The Catalyst 3750 platform (IOS 12.2(55)SE, ``mls qos``, SRR, queue-sets): qoslab's behaviour
before platforms existed, byte for byte. Rendering: :func:`qoslab.profiles.render.render`
(switch-configs/catalyst3750-qos.j2); QoS lines: :data:`qoslab.ios.qoswalk.C3750_RULES`;
counters: ``show mls qos interface PORT statistics`` through TextFSM
(:func:`qoslab.platforms.counters.parse_statistics`), 4 queues x 3 thresholds of packets."""

from __future__ import annotations

from ..ios.qoswalk import C3750_RULES
from ..profiles.model import Profile
from ..profiles.render import render
from ..topology import Topology
from .base import Platform, QueueCounters
from .counters import parse_statistics


class Catalyst3750(Platform):
    """``catalyst3750``: WS-C3750 (and the 3560, same QoS model), Netmiko ``cisco_ios``."""

    name = "catalyst3750"
    netmiko_device_type = "cisco_ios"
    dialect = "c3750"
    model = "WS-C3750G-24T"
    model_prefixes = ("WS-C3750", "WS-C3560", "CATALYST3750")
    qos_rules = C3750_RULES
    state_commands = ("show mls qos", "show mls qos queue-set", "show access-lists", "show class-map",
                      "show policy-map")
    ssh_profile = "c3750"

    def render(self, profile: Profile, topology: Topology, groups: dict[str, list[str]] | None = None) -> list[str]:
        return render(profile, topology, groups)

    def counters_commands(self, ports: list[str]) -> list[str]:
        return [f"show mls qos interface {p} statistics" for p in ports]

    def parse_counters(self, text: str, command: str | None = None) -> dict[str, QueueCounters]:
        return {port: QueueCounters(["1", "2", "3", "4"], enqueued_packets=c.enqueued, dropped_packets=c.dropped)
                for port, c in parse_statistics(text).items()}
