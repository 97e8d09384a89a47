"""The Catalyst 9300's EXEC command table: the IOS family's
(:mod:`qoslab.vswitch.dialects.ioscommon.commands`; no ``show mls`` on IOS-XE, so those are
``% Invalid input`` here) and the UADP queue counters ``show platform hardware fed [switch]
active|N qos queue stats interface PORT`` (Catalyst 9300 command reference, IOS-XE 17.x;
privileged EXEC)."""

from __future__ import annotations

from ..ioscommon.commands import IOS_TABLE

#: The fed queue-stats commands: name -> token specs.
FED_COMMANDS: dict[str, str] = {
    "show platform hardware fed switch active qos queue stats interface port":
        "show platform hardware fed switch active qos queue stats interface {port}",
    "show platform hardware fed switch n qos queue stats interface port":
        "show platform hardware fed switch {n:1-8} qos queue stats interface {port}",
    "show platform hardware fed active qos queue stats interface port":
        "show platform hardware fed active qos queue stats interface {port}",
}

#: The 9300's platform shows (issue 49; :mod:`.show_plat`), privileged EXEC but ``show switch``.
PLATFORM_COMMANDS: dict[str, str] = {
    "show platform": "show platform", "show module": "show module", "show switch": "show switch",
    "show switch detail": "show switch detail", "show boot": "show boot",
    "show license summary": "show license summary", "show redundancy": "show redundancy",
}

#: The 9300's table.
C9300_TABLE = IOS_TABLE.plus(FED_COMMANDS).plus(PLATFORM_COMMANDS)
