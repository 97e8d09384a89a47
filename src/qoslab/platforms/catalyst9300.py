"""The Catalyst 9300 platform (IOS-XE 17.x, MQC on the UADP ASIC): profiles rendered by
:func:`qoslab.platforms.render9300.render_9300` (switch-configs/catalyst9300-qos.j2), QoS lines
:data:`~qoslab.platforms.render9300.C9300_RULES`, Netmiko ``cisco_xe``, counters from ``show
policy-map interface PORT`` (:func:`qoslab.platforms.xeparse.parse_policy_map_interface_xe`: one
queue per egress class, bytes output and dropped bytes)."""

from __future__ import annotations

from ..profiles.model import Profile
from ..topology import Topology
from .base import Platform, QueueCounters
from .render9300 import C9300_RULES, render_9300
from .xeparse import parse_policy_map_interface_xe


class Catalyst9300(Platform):
    """``catalyst9300``: C9300 (and the C9200, same MQC), Netmiko ``cisco_xe``."""

    name = "catalyst9300"
    netmiko_device_type = "cisco_xe"
    dialect = "c9300"
    model = "C9300-24T"
    model_prefixes = ("C9300", "C9200", "CATALYST9300")
    qos_rules = C9300_RULES

    def render(self, profile: Profile, topology: Topology, groups: dict[str, list[str]] | None = None) -> list[str]:
        return render_9300(profile, topology, groups)

    def counters_commands(self, ports: list[str]) -> list[str]:
        return [f"show policy-map interface {p}" for p in ports]

    def parse_counters(self, text: str) -> dict[str, QueueCounters]:
        return parse_policy_map_interface_xe(text)
