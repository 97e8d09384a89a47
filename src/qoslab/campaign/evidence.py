"""Per-trial switch evidence: the QoS statistics of the trial's ports read through the switch's
own show command before and after the trial, stored as deltas with the trial.

``show mls qos interface X statistics`` is what a real Catalyst 3750 answers as well, so the same
code reads a real switch (device file) and the virtual one. The parser is a plain function
(:func:`parse_statistics`) so a TextFSM template can take its place; :func:`read_stats` takes it
as an argument.

Stored (column ``switch_json`` of the trial row, see :func:`evidence_json`)::

    {"ports": {"Gi1/0/1": {"enqueued": [q1, q2, q3, q4], "dropped": [..4], "policer_in": n,
                           "policer_out": n, "dscp_in": {"0": n, ...}, "dscp_out": {"40": n, ...}}},
     "reset": ["Gi1/0/3"]}          # ports whose counters went backwards (switch re-applied: no delta)

Counts are packets; queues 1-4 are the egress queues (IOS prints them as queue 0-3), summed over
the three WTD thresholds. Numeric summary columns for the report: ``switch_drops_q1..q4`` (sum
over the ports) and ``switch_policer_out``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from ..errors import QoslabError
from ..topology import Topology, long_port

Stats = dict[str, Any]
Parser = Callable[[str], Stats]

_ROW = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*:((?:\s+\d+)+)\s*$")
_QUEUE = re.compile(r"^\s*queue\s+(\d):((?:\s+\d+)+)\s*$")
_POLICER = re.compile(r"Policer:\s*Inprofile:\s*(\d+)\s+OutofProfile:\s*(\d+)")


def parse_statistics(text: str) -> Stats:
    """``show mls qos interface X statistics`` (Catalyst 3750 format) -> ``{"dscp_in": [64],
    "dscp_out": [64], "cos_in": [8], "cos_out": [8], "enqueued": [[3] x 4], "dropped": [[3] x 4],
    "policer_in": n, "policer_out": n}`` in packets (pure). Tables a switch does not print stay
    zero. Raises QoslabError when the text has no output-queue tables (an error message, another
    command's output)."""
    out: Stats = {"dscp_in": [0] * 64, "dscp_out": [0] * 64, "cos_in": [0] * 8, "cos_out": [0] * 8,
                  "enqueued": [[0] * 3 for _ in range(4)], "dropped": [[0] * 3 for _ in range(4)],
                  "policer_in": 0, "policer_out": 0}
    table, seen = None, 0
    for line in text.splitlines():
        head = line.strip().rstrip(":").strip()
        if head in ("dscp: incoming", "dscp: outgoing", "cos: incoming", "cos: outgoing"):
            table = head.replace(": incoming", "_in").replace(": outgoing", "_out")
        elif head.startswith("output queues enqueued"):
            table, seen = "enqueued", seen + 1
        elif head.startswith("output queues dropped"):
            table, seen = "dropped", seen + 1
        elif (m := _ROW.match(line)) and table in ("dscp_in", "dscp_out", "cos_in", "cos_out"):
            for i, v in enumerate(m.group(3).split()):
                if int(m.group(1)) + i < len(out[table]):
                    out[table][int(m.group(1)) + i] = int(v)
        elif (m := _QUEUE.match(line)) and table in ("enqueued", "dropped") and int(m.group(1)) < 4:
            vals = [int(v) for v in m.group(2).split()][:3]
            out[table][int(m.group(1))][: len(vals)] = vals
        elif m := _POLICER.search(line):
            out["policer_in"], out["policer_out"] = int(m.group(1)), int(m.group(2))
    if seen < 2:
        raise QoslabError(f"not `show mls qos interface statistics` output: {text.strip()[:80]!r}")
    return out


def trial_ports(topo: Topology, hosts: list[str]) -> list[str]:
    """Switch ports (short names) of ``hosts`` in topology order, without repeats."""
    wanted = set(hosts)
    return [h.port for h in topo.hosts if h.name in wanted]


def read_stats(switch: Any, ports: list[str], parse: Parser = parse_statistics) -> dict[str, Stats]:
    """Statistics of ``ports`` through ``switch.show`` (one session for all ports). Raises
    QoslabError when the switch is unreachable or answers with something else."""
    cmds = {p: f"show mls qos interface {long_port(p)} statistics" for p in ports}
    outs = switch.show(list(cmds.values()))
    return {p: parse(outs[c]) for p, c in cmds.items()}


def _hist(before: list[int], after: list[int]) -> dict[str, int]:
    return {str(i): a - b for i, (b, a) in enumerate(zip(before, after)) if a - b}


def deltas(before: dict[str, Stats], after: dict[str, Stats]) -> dict[str, Any]:
    """Per port the change from ``before`` to ``after`` (pure; see the module doc). A port whose
    counters went backwards (the switch re-applied its plan in between) is listed under
    ``reset`` instead of getting a wrong delta."""
    ports, reset = {}, []
    for p, a in after.items():
        b = before.get(p)
        if b is None:
            continue
        enq = [sum(a["enqueued"][q]) - sum(b["enqueued"][q]) for q in range(4)]
        drop = [sum(a["dropped"][q]) - sum(b["dropped"][q]) for q in range(4)]
        pin, pout = a["policer_in"] - b["policer_in"], a["policer_out"] - b["policer_out"]
        if min(enq + drop + [pin, pout]) < 0:
            reset.append(p)
            continue
        ports[p] = {"enqueued": enq, "dropped": drop, "policer_in": pin, "policer_out": pout,
                    "dscp_in": _hist(b["dscp_in"], a["dscp_in"]), "dscp_out": _hist(b["dscp_out"], a["dscp_out"])}
    return {"ports": ports, "reset": reset}


def evidence_columns(ev: dict[str, Any] | None) -> dict[str, Any]:
    """The trial-row columns of an evidence record: ``switch_json`` and the numeric summaries
    ``switch_drops_q1..q4`` and ``switch_policer_out`` (None without evidence)."""
    if ev is None:
        return {"switch_json": None, **{f"switch_drops_q{q}": None for q in range(1, 5)}, "switch_policer_out": None}
    ports = ev["ports"].values()
    return {"switch_json": json.dumps(ev, sort_keys=True),
            **{f"switch_drops_q{q + 1}": sum(p["dropped"][q] for p in ports) for q in range(4)},
            "switch_policer_out": sum(p["policer_out"] for p in ports)}


#: Store columns (name -> SQL type) that :func:`evidence_columns` fills.
COLUMNS = {"switch_json": "TEXT", **{f"switch_drops_q{q}": "INTEGER" for q in range(1, 5)},
           "switch_policer_out": "INTEGER"}


class TrialEvidence:
    """Before/after reading around one trial: ``start()`` after the push, ``finish()`` after the
    trial's traffic stopped; ``columns()`` for the store. A switch that cannot be read makes no
    evidence (``error`` says why), never a failed trial."""

    def __init__(self, switch: Any, ports: list[str], parse: Parser = parse_statistics) -> None:
        self.switch, self.ports, self.parse = switch, ports, parse
        self.before: dict[str, Stats] | None = None
        self.record: dict[str, Any] | None = None
        self.error: str | None = None
        self.seconds = 0.0  # wall time of the two readings

    def start(self) -> None:
        """Read the counters before the trial."""
        t = time.monotonic()
        try:
            self.before = read_stats(self.switch, self.ports, self.parse)
        except Exception as e:  # noqa: BLE001 - any failure to read (SSH, parse) only loses the evidence
            self.error = f"switch statistics before the trial: {e}"
        self.seconds += time.monotonic() - t

    def finish(self) -> None:
        """Read the counters after the trial and keep the deltas."""
        if self.before is None:
            return
        t = time.monotonic()
        try:
            self.record = deltas(self.before, read_stats(self.switch, self.ports, self.parse))
        except Exception as e:  # noqa: BLE001 - as in start()
            self.error = f"switch statistics after the trial: {e}"
        self.seconds += time.monotonic() - t

    def columns(self) -> dict[str, Any]:
        """Trial-row columns (see :func:`evidence_columns`)."""
        return evidence_columns(self.record)
