"""The Catalyst 3750's EXEC command table: the IOS family's
(:mod:`qoslab.vswitch.dialects.ioscommon.commands`) and the ``show mls qos`` commands of the
3750's QoS model (Catalyst 3750 Command Reference 12.2(55)SE, ``show mls qos``; all privileged
EXEC)."""

from __future__ import annotations

from ....ios.show_qos import MAP_NAMES
from ..ioscommon.commands import IOS_TABLE

#: ``show mls qos ...``: name -> token specs.
MLS_COMMANDS: dict[str, str] = {
    "show mls qos": "show mls qos",
    "show mls qos interface": "show mls qos interface",
    "show mls qos interface port": "show mls qos interface {port}",
    "show mls qos interface queueing": "show mls qos interface queueing",
    "show mls qos interface statistics": "show mls qos interface statistics",
    "show mls qos interface buffers": "show mls qos interface buffers",
    "show mls qos interface port queueing": "show mls qos interface {port} queueing",
    "show mls qos interface port statistics": "show mls qos interface {port} statistics",
    "show mls qos interface port buffers": "show mls qos interface {port} buffers",
    "show mls qos queue-set": "show mls qos queue-set",
    "show mls qos queue-set n": "show mls qos queue-set {n:1-2}",
    "show mls qos maps": "show mls qos maps",
    **{f"show mls qos maps {m}": f"show mls qos maps {m}" for m in MAP_NAMES},
    "show mls qos input-queue": "show mls qos input-queue",
    # issue 49: no ``mls qos aggregate-policer`` is in the grammar, so the list is empty
    "show mls qos aggregate-policer": "show mls qos aggregate-policer",
}
#: Platform displays of the 3750 (issue 49).
PLATFORM_COMMANDS: dict[str, str] = {"show boot": "show boot"}

#: The 3750's table.
C3750_TABLE = IOS_TABLE.plus(MLS_COMMANDS).plus(PLATFORM_COMMANDS)
