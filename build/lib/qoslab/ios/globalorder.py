"""The global QoS lines of a Catalyst 3750 in the order and form ``show running-config`` prints
them, whatever the order of entry (pure).

Evidence (real configurations, the order identical in both): the thesis's Appendix B (a 3750:
``srr-queue input bandwidth``, ``input buffers``, ``input priority-queue``, ``queue-set output 2
threshold 1``, ``threshold 2``, ``buffers``, then ``mls qos`` last) and an AutoQoS-configured
3560 running-config on 12.2(55)SE published on GitHub (``map policed-dscp``, ``srr-queue input
bandwidth``, ``input threshold``, ``input buffers``, ``input cos-map``, ``input dscp-map``, ``output
cos-map``, ``output dscp-map``, the ``queue-set output`` thresholds of set 1 then set 2, then the
buffers of set 1 and 2, ``mls qos`` last). There the DSCP maps are printed from the map's state,
not as typed: only DSCPs that differ from the default, grouped by (queue, threshold) in queue
order, ascending, eight per line (``dscp-map queue 1 threshold 3 0 1 2 3 4 5 6 7`` then ``... 32``).
Not in that evidence, placed by this module's choice: ``mls qos map cos-dscp`` and ``dscp-cos``
after ``policed-dscp`` (the order of ``show mls qos maps``), ``no mls qos rewrite ip dscp`` just
before ``mls qos``; lines it does not know keep their order after the known ones.
"""

from __future__ import annotations

import re

from .show_qos import (
    default_dscp_input_q,
    default_dscp_output_q,
    dscp_input_q_from_config,
    dscp_output_q_from_config,
)

#: (pattern, rank): where a global line goes; within a rank the sort key of :func:`_within`.
_RANKS: list[tuple[re.Pattern[str], int]] = [(re.compile(p), r) for p, r in (
    (r"^mls qos map policed-dscp\b", 0), (r"^mls qos map dscp-cos\b", 1), (r"^mls qos map cos-dscp\b", 2),
    (r"^mls qos srr-queue input bandwidth\b", 10), (r"^mls qos srr-queue input threshold\b", 11),
    (r"^mls qos srr-queue input buffers\b", 12), (r"^mls qos srr-queue input priority-queue\b", 13),
    (r"^mls qos srr-queue input cos-map\b", 14), (r"^mls qos srr-queue input dscp-map\b", 15),
    (r"^mls qos srr-queue output cos-map\b", 16), (r"^mls qos srr-queue output dscp-map\b", 17),
    (r"^mls qos queue-set output \d+ threshold\b", 20), (r"^mls qos queue-set output \d+ buffers\b", 21),
    (r"^no mls qos rewrite ip dscp$", 30), (r"^mls qos$", 31))]
_UNKNOWN = 40


def _rank(line: str) -> int:
    return next((r for p, r in _RANKS if p.match(line)), _UNKNOWN)


def _within(line: str) -> tuple[int, ...]:
    """The numbers of a line in order (queue-set, queue, threshold, DSCP ...)."""
    return tuple(int(x) for x in re.findall(r"\b\d+\b", line))


def dscp_map_lines(direction: str, m: dict[int, tuple[int, int]], default: dict[int, tuple[int, int]]) -> list[str]:
    """``mls qos srr-queue DIRECTION dscp-map`` lines of map ``m``: the DSCPs that differ from
    ``default``, grouped by (queue, threshold), ascending, eight per line (the module doc)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for d in range(64):
        if m[d] != default[d]:
            groups.setdefault(m[d], []).append(d)
    out = []
    for (q, t), dscps in sorted(groups.items()):
        for i in range(0, len(dscps), 8):
            out.append(f"mls qos srr-queue {direction} dscp-map queue {q} threshold {t} "
                       + " ".join(str(d) for d in dscps[i:i + 8]))
    return out


def ordered_globals(lines: list[str]) -> list[str]:
    """``lines`` (global configuration lines in entry order) as ``show running-config`` prints
    them: in IOS's order, the DSCP-to-queue maps regenerated from their state. Pure."""
    out = [line for line in lines if "dscp-map" not in line]
    out += dscp_map_lines("input", dscp_input_q_from_config(lines), default_dscp_input_q())
    out += dscp_map_lines("output", dscp_output_q_from_config(lines), default_dscp_output_q())
    return sorted(out, key=lambda line: (_rank(line), _within(line) if _rank(line) < _UNKNOWN else ()))
