"""The Catalyst 9300 platform (IOS-XE 17.x, MQC on the UADP ASIC): profiles rendered by
:func:`qoslab.platforms.render9300.render_9300` (switch-configs/catalyst9300-qos.j2), QoS lines
:data:`~qoslab.platforms.render9300.C9300_RULES`, Netmiko ``cisco_xe``, counters from ``show
platform hardware fed switch active qos queue stats interface PORT``
(:func:`qoslab.platforms.fedparse.parse_fed_queue_stats`: UADP queues 0-7 x WTD thresholds 0-2,
enqueued and dropped bytes, or frames with ``qos queue-stats-frame-count``: how a 9300 reports
queue drops with or without an output policy), ``show policy-map interface PORT`` the second
source (:func:`qoslab.platforms.xeparse.parse_policy_map_interface_xe`: one queue per egress
class of an output policy, bytes output and dropped bytes)."""

from __future__ import annotations

from ..profiles.model import Profile
from ..topology import Topology
from .base import Platform, QueueCounters
from .fedparse import parse_fed_queue_stats
from .render9300 import C9300_RULES, render_9300
from .xeparse import parse_policy_map_interface_xe

#: The fed queue stats of one port (Catalyst 9300 command reference, IOS-XE 17.x).
FED_COMMAND = "show platform hardware fed switch active qos queue stats interface {port}"


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
        return [FED_COMMAND.format(port=p) for p in ports]

    def parse_counters(self, text: str, command: str | None = None) -> dict[str, QueueCounters]:
        """The fed queue stats of the port ``command`` names; ``show policy-map interface`` output
        (any number of ports, named in it) through :mod:`.xeparse`."""
        if "Hardware Enqueue Counters" in text:
            if not command:
                raise ValueError("fed queue stats name no port: pass the command")
            port = command.rsplit(None, 1)[1]
            return {port: parse_fed_queue_stats(text, port)}
        return parse_policy_map_interface_xe(text)
