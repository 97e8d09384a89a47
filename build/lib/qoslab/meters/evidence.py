"""Per-trial switch evidence: the QoS statistics of the trial's ports read through the switch's
own show command before and after the trial, stored as deltas with the trial.

``show mls qos interface X statistics`` is what a real Catalyst 3750 answers as well, and it is
parsed with the TextFSM template of :mod:`qoslab.platforms.counters`, so the same code reads a real
switch (device file) and the virtual one. The reader is an argument of :class:`TrialEvidence`
(default :func:`qoslab.platforms.counters.read_statistics`).

Stored (column ``switch_json`` of the trial row, see :func:`evidence_columns`)::

    {"ports": {"Gi1/0/1": {"enqueued": [q1, q2, q3, q4], "dropped": [..4], "policer_in": n,
                           "policer_out": n, "dscp_in": {"0": n, ...}, "dscp_out": {"40": n, ...}}},
     "reset": ["Gi1/0/3"]}          # ports whose counters went backwards (switch re-applied: no delta)

Counts are packets; queues 1-4 are the egress queues (IOS prints them as queue 0-3), summed over
the three WTD thresholds. Numeric summary columns for the report: ``switch_drops_q1..q4`` (sum
over the ports) and ``switch_policer_out``.

Platform-neutral (issue 36), every platform, column ``switch_queues_json``: per port the queue
names and the deltas of each counter the platform has, summed over its thresholds (any number of
queues; None for a counter it does not count)::

    {"ports": {"Gi1/0/1": {"queues": ["QOSLAB-Q1", ..., "class-default"], "enqueued_packets": [..],
                           "dropped_packets": null, "enqueued_bytes": [..], "dropped_bytes": [..]}},
     "platform": "catalyst9300", "reset": []}

On a 3750 it is the same reading as ``switch_json`` (queues ``1``-``4``, packets); on other
platforms (read with the platform's own command, :func:`qoslab.platforms.counters.read_queue_counters`)
it is the only record and ``switch_json`` and its summaries stay NULL (their queues and units are
the 3750's).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from qoslab.ios.show_qos import PortCounters
from qoslab.platforms.base import QueueCounters
from qoslab.platforms.counters import read_queue_counters, read_statistics
from qoslab.portnames import canonical_port, long_port

Reader = Callable[[Any, list[str]], dict[str, PortCounters]]


def _hist(before: list[int], after: list[int]) -> dict[str, int]:
    return {str(i): a - b for i, (b, a) in enumerate(zip(before, after, strict=True)) if a - b}


def deltas(before: dict[str, PortCounters], after: dict[str, PortCounters]) -> dict[str, Any]:
    """Per port (short name) the change from ``before`` to ``after`` (pure; see the module doc). A
    port whose counters went backwards (the switch re-applied its plan in between) is listed under
    ``reset`` instead of getting a wrong delta."""
    ports, reset = {}, []
    for p, a in after.items():
        b = before.get(p)
        if b is None:
            continue
        d = a.minus(b)
        enq, drop = [sum(r) for r in d.enqueued], [sum(r) for r in d.dropped]
        name = canonical_port(p)
        if min(enq + drop + [d.policer_in, d.policer_out]) < 0:
            reset.append(name)
            continue
        ports[name] = {"enqueued": enq, "dropped": drop, "policer_in": d.policer_in, "policer_out": d.policer_out,
                       "dscp_in": _hist(b.dscp_in, a.dscp_in), "dscp_out": _hist(b.dscp_out, a.dscp_out)}
    return {"ports": ports, "reset": reset}


def neutral_deltas(before: dict[str, QueueCounters], after: dict[str, QueueCounters], platform: str
                   ) -> dict[str, Any]:
    """``switch_queues_json`` (see the module doc) from two readings (pure): per-queue sums over the
    thresholds; a port whose counters went backwards or whose queues changed is under ``reset``."""
    ports, reset = {}, []
    for p, a in after.items():
        b = before.get(p)
        if b is None:
            continue
        name = canonical_port(p)
        try:
            d = a.minus(b)
        except ValueError:
            reset.append(name)
            continue
        row: dict[str, Any] = {"queues": d.queues}
        for key in ("enqueued_packets", "dropped_packets", "enqueued_bytes", "dropped_bytes"):
            m = getattr(d, key)
            row[key] = None if m is None else [sum(r) for r in m]
        if min([x for k in row if k != "queues" and row[k] is not None for x in row[k]] or [0]) < 0:
            reset.append(name)
            continue
        ports[name] = row
    return {"ports": ports, "platform": platform, "reset": reset}


def as_queue_counters(counters: dict[str, PortCounters]) -> dict[str, QueueCounters]:
    """A 3750 reading in neutral terms (queues 1-4, packets x 3 thresholds)."""
    return {p: QueueCounters(["1", "2", "3", "4"], enqueued_packets=c.enqueued, dropped_packets=c.dropped)
            for p, c in counters.items()}


def evidence_columns(ev: dict[str, Any] | None) -> dict[str, Any]:
    """The trial-row columns of an evidence record: ``switch_json`` and the numeric summaries
    ``switch_drops_q1..q4`` and ``switch_policer_out`` (None without evidence)."""
    if ev is None:
        return {"switch_json": None, **{f"switch_drops_q{q}": None for q in range(1, 5)}, "switch_policer_out": None}
    ports = ev["ports"].values()
    return {"switch_json": json.dumps(ev, sort_keys=True),
            **{f"switch_drops_q{q + 1}": sum(p["dropped"][q] for p in ports) for q in range(4)},
            "switch_policer_out": sum(p["policer_out"] for p in ports)}


#: Store columns (name -> SQL type) that :func:`evidence_columns` and ``switch_queues_json`` fill.
COLUMNS = {"switch_json": "TEXT", **{f"switch_drops_q{q}": "INTEGER" for q in range(1, 5)},
           "switch_policer_out": "INTEGER", "switch_queues_json": "TEXT"}


class TrialEvidence:
    """Before/after reading around one trial: ``start()`` after the push, ``finish()`` after the
    trial's traffic stopped; ``columns()`` for the store. A switch that cannot be read makes no
    evidence (``error`` says why), never a failed trial.

    With ``background=True`` a reading runs in a thread (over the switch's kept show session) while
    the trial goes on (capture start, capture stop); :meth:`wait` joins it. The caller makes sure
    the 'before' reading is complete (:meth:`wait`) before any trial traffic starts and starts the
    'after' reading only once all of it has stopped; ``columns()`` and ``close()`` wait too."""

    def __init__(self, switch: Any, ports: list[str], read: Reader = read_statistics) -> None:
        self.switch, self.ports, self.read = switch, [long_port(p) for p in ports], read
        #: the switch's platform: a 3750 is read as always; others with their own command
        self.platform = str(getattr(switch, "platform", None) or "catalyst3750")
        self.before: Any = None
        self.record: dict[str, Any] | None = None
        self.queues: dict[str, Any] | None = None
        self.error: str | None = None
        self.seconds = 0.0  # wall time of the two readings
        self._thread: threading.Thread | None = None

    def _run(self, step: Callable[[], None], background: bool) -> None:
        self.wait()
        if background:
            self._thread = threading.Thread(target=step, name="switch-evidence", daemon=True)
            self._thread.start()
        else:
            step()

    def wait(self) -> None:
        """Wait for a reading running in the background (none: returns at once)."""
        t, self._thread = self._thread, None
        if t is not None:
            t.join()

    def start(self, background: bool = False) -> None:
        """Read the counters before the trial (in a thread with ``background``)."""
        self._run(self._read_before, background)

    def _read_before(self) -> None:
        t = time.monotonic()
        try:
            self.before = self._reading()
        except Exception as e:  # noqa: BLE001 - any failure to read (SSH, parse) only loses the evidence
            self.error = f"switch statistics before the trial: {e}"
        self.seconds += time.monotonic() - t

    def finish(self, background: bool = False) -> None:
        """Read the counters after the trial and keep the deltas (in a thread with ``background``)."""
        self._run(self._read_after, background)

    def _read_after(self) -> None:
        if self.before is None:
            return
        t = time.monotonic()
        try:
            after = self._reading()
            if self.platform == "catalyst3750":
                self.record = deltas(self.before, after)
                self.queues = neutral_deltas(as_queue_counters(self.before), as_queue_counters(after), self.platform)
            else:
                self.queues = neutral_deltas(self.before, after, self.platform)
        except Exception as e:  # noqa: BLE001 - as in start()
            self.error = f"switch statistics after the trial: {e}"
        self.seconds += time.monotonic() - t

    def _reading(self) -> Any:
        if self.platform == "catalyst3750":
            return self.read(self.switch, self.ports)
        return read_queue_counters(self.switch, self.ports, self.platform)

    def columns(self) -> dict[str, Any]:
        """Trial-row columns (see :func:`evidence_columns`) and ``switch_queues_json``."""
        self.wait()
        q = json.dumps(self.queues, sort_keys=True) if self.queues is not None else None
        return {**evidence_columns(self.record), "switch_queues_json": q}
