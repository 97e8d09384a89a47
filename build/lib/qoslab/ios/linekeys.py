"""Which setting an IOS QoS line sets (pure): two lines with a key in common cannot both stand in
one configuration section, the later replaces the earlier (``srr-queue bandwidth share 97 1 1 1``
replaces ``srr-queue bandwidth share 10 20 30 40``; ``mls qos srr-queue output dscp-map queue 1
threshold 3 40`` moves DSCP 40 out of the queue another line put it in). The push
(:mod:`qoslab.switch.ownership`) uses it to refuse a profile line that would replace a line qoslab
did not make. Catalyst 3750 (12.2(55)SE) and Catalyst 9300 (IOS-XE 17.x) alike; the same rules as
the interpreter's (:func:`qoslab.ios.interpret._global_key`, ``_if_key``), with the DSCP and CoS
maps split per value (IOS keeps one queue, CoS or policed DSCP per value).
"""

from __future__ import annotations

import re

#: Interface lines by their leading words (one value per interface).
_IF_PREFIXES = ("srr-queue bandwidth share", "srr-queue bandwidth shape", "srr-queue bandwidth limit", "queue-set",
                "priority-queue", "mls qos trust", "mls qos cos", "mls qos dscp-mutation", "service-policy input",
                "service-policy output", "description")
#: Global lines by their leading words (one value per switch).
_GLOBAL = re.compile(r"^(mls qos queue-set output \d+ (buffers|threshold \d+)|mls qos srr-queue input "
                     r"(bandwidth|buffers|priority-queue \d+|threshold \d+)|mls qos map (cos-dscp|ip-prec-dscp)"
                     r"|qos queue-softmax-multiplier)\b")
#: Maps with one target per value: (prefix, values after the prefix's queue/threshold words).
_PER_VALUE = re.compile(r"^(?P<map>mls qos srr-queue (input|output) (dscp|cos)-map)( queue \d+)?( threshold \d+)?"
                        r" (?P<vals>[\d ]+)$|^(?P<map2>mls qos map (dscp-cos|policed-dscp)) (?P<vals2>[\d ]+) to \d+$")


def line_keys(line: str) -> frozenset[str]:
    """The settings ``line`` (a global or an interface line, stripped) sets: one key for a
    single-valued setting, one per value for the maps, the line itself otherwise."""
    text = " ".join(line.split())
    m = _PER_VALUE.match(text)
    if m:
        prefix, vals = (m.group("map"), m.group("vals")) if m.group("map") else (m.group("map2"), m.group("vals2"))
        return frozenset(f"{prefix} {v}" for v in vals.split())
    m = _GLOBAL.match(text)
    if m:
        return frozenset([m.group(1)])
    for p in _IF_PREFIXES:
        if text == p or text.startswith(p + " "):
            return frozenset([p])
    return frozenset([text])
