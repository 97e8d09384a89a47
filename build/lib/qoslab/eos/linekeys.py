"""Which setting an EOS QoS line sets (pure): two lines with a key in common cannot both stand in
one configuration section, the later replaces the earlier (``shape rate 50 percent`` replaces
``shape rate 1000000``; ``qos map dscp 40 to traffic-class 4`` takes DSCP 40 from the traffic
class another line gave it). The push (:mod:`qoslab.switch.ownership`) uses it to refuse a
profile line that would replace a line qoslab did not make. The same identities as the
interpreter's (its ``qos trust``, ``service-policy`` and ``shape rate`` slots), with the ``qos
map`` lines split per value (EOS keeps one traffic class per DSCP or CoS and one tx-queue per
traffic class: EOS User Manual, QoS chapter).
"""

from __future__ import annotations

import re

_MAP = re.compile(r"^qos map (?P<what>dscp|cos|traffic-class) (?P<vals>[\w ]+?) to (?P<to>traffic-class|tx-queue)"
                  r" \d+( drop-precedence \d+)?$")
#: Interface lines by their leading words (one value per interface).
_IF_PREFIXES = (("no qos trust", "qos trust"), ("qos trust", "qos trust"), ("qos cos", "qos cos"),
                ("qos dscp", "qos dscp"), ("service-policy type qos input", "service-policy type qos input"),
                ("service-policy input", "service-policy type qos input"), ("shape rate", "shape rate"),
                ("description", "description"))


def line_keys(line: str) -> frozenset[str]:
    """The settings ``line`` (a global or an interface line, stripped) sets: one key for a
    single-valued setting, one per value for the ``qos map`` lines, the line itself otherwise
    (``tx-queue 1``: a block, compared whole)."""
    text = " ".join(line.split())
    m = _MAP.match(text)
    if m:
        return frozenset(f"qos map {m.group('what')} {v} to {m.group('to')}" for v in m.group("vals").split())
    for prefix, key in _IF_PREFIXES:
        if text == prefix or text.startswith(prefix + " "):
            return frozenset([key])
    return frozenset([text])
