"""The Arista EOS platform (7280R3 family, EOS 4.3x): profiles rendered by
:func:`.render.render_eos` (switch-configs/arista-eos-qos.j2; the mapping from the profile's
3750 terms in :mod:`.mapping`), QoS lines :data:`.render.EOS_RULES` (hier-config's ``ARISTA_EOS``
driver), Netmiko ``arista_eos``, counters of the eight traffic classes from ``show interfaces
PORT counters queue`` (:func:`.counters.parse_eos_counters`). Ports: qoslab's neutral ``Gi1/0/N``
is EOS's ``EthernetN`` (:func:`qoslab.eos.eos_port`)."""

from __future__ import annotations

from ...eos import eos_port
from ...profiles.model import Profile
from ...topology import Topology
from ..base import Platform, QueueCounters
from .counters import TCS, parse_eos_counters
from .render import EOS_RULES, render_eos


class AristaEos(Platform):
    """``arista_eos``: Arista 7280R3 (DCS-7280SR3-48YC8 and the family), Netmiko ``arista_eos``."""

    name = "arista_eos"
    netmiko_device_type = "arista_eos"
    dialect = "eos"
    model = "DCS-7280SR3-48YC8"
    model_prefixes = ("DCS-7280", "ARISTA7280")
    qos_rules = EOS_RULES
    state_commands = ("show qos maps", "show qos interfaces")

    def render(self, profile: Profile, topology: Topology, groups: dict[str, list[str]] | None = None) -> list[str]:
        return render_eos(profile, topology, groups)

    def counters_commands(self, ports: list[str]) -> list[str]:
        """One ``show interfaces EthernetN counters queue | json`` per port (long neutral names)."""
        return [f"show interfaces {eos_port(p)} counters queue | json" for p in ports]

    def parse_counters(self, text: str, command: str | None = None) -> dict[str, QueueCounters]:
        """The output names its ports (``command`` is not needed)."""
        return parse_eos_counters(text)

    def no_queues(self) -> QueueCounters:
        """A port the output does not list: eight traffic classes, nothing counted."""
        return QueueCounters(list(TCS))
