"""The virtual Catalyst 9300 (IOS-XE 17.x, MQC): the dialect ``c9300``.

- its EXEC table: the IOS family's (:mod:`qoslab.vcatalyst.dialects.ioscommon.commands`; no
  ``show mls`` on IOS-XE, so those are ``% Invalid input`` here);
- :mod:`.show`: its show dispatch; :mod:`.show_xe` (``show version``, ``show policy-map
  interface``), pure;
- :mod:`.counters`: the egress queue counters from the kernel readings.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...execparse import ExecCommand, ExecTable
from ...sshprofile import SshProfile
from ..base import Dialect, ShowContext
from ..catalyst3750 import SSH_3750
from ..ioscommon.commands import IOS_TABLE
from .show import show_9300


class Catalyst9300(Dialect):
    """``c9300``: C9300 (and the C9200, same MQC), IOS-XE 17.x."""

    name = "c9300"
    grammar = "c9300"
    model_prefixes = ("C9300", "C9200", "CATALYST9300")
    boot_seconds = 180
    ssh_profiles: ClassVar[tuple[SshProfile, ...]] = (SSH_3750,)
    commands: ClassVar[ExecTable] = IOS_TABLE

    def show(self, sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str:
        return show_9300(sw, cmd, ctx)
