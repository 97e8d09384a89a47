"""Per-trial switch evidence: the QoS statistics of the trial's ports read through the switch's
own show command before and after the trial, stored as deltas with the trial.

``show mls qos interface X statistics`` is what a real Catalyst 3750 answers as well, and it is
parsed with the TextFSM template of :mod:`qoslab.switch.counters`, so the same code reads a real
switch (device file) and the virtual one. The reader is an argument of :class:`TrialEvidence`
(default :func:`qoslab.switch.counters.read_statistics`).

Stored (column ``switch_json`` of the trial row, see :func:`evidence_columns`)::

    {"ports": {"Gi1/0/1": {"enqueued": [q1, q2, q3, q4], "dropped": [..4], "policer_in": n,
                           "policer_out": n, "dscp_in": {"0": n, ...}, "dscp_out": {"40": n, ...}}},
     "reset": ["Gi1/0/3"]}          # ports whose counters went backwards (switch re-applied: no delta)

Counts are packets; queues 1-4 are the egress queues (IOS prints them as queue 0-3), summed over
the three WTD thresholds. Numeric summary columns for the report: ``switch_drops_q1..q4`` (sum
over the ports) and ``switch_policer_out``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from qoslab.ios.show_qos import PortCounters
from qoslab.switch.counters import read_statistics
from qoslab.topology import canonical_port, long_port

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
    evidence (``error`` says why), never a failed trial.

    With ``background=True`` a reading runs in a thread (over the switch's kept show session) while
    the trial goes on (capture start, capture stop); :meth:`wait` joins it. The caller makes sure
    the 'before' reading is complete (:meth:`wait`) before any trial traffic starts and starts the
    'after' reading only once all of it has stopped; ``columns()`` and ``close()`` wait too."""

    def __init__(self, switch: Any, ports: list[str], read: Reader = read_statistics) -> None:
        self.switch, self.ports, self.read = switch, [long_port(p) for p in ports], read
        self.before: dict[str, PortCounters] | None = None
        self.record: dict[str, Any] | None = None
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
            self.before = self.read(self.switch, self.ports)
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
            self.record = deltas(self.before, self.read(self.switch, self.ports))
        except Exception as e:  # noqa: BLE001 - as in start()
            self.error = f"switch statistics after the trial: {e}"
        self.seconds += time.monotonic() - t

    def columns(self) -> dict[str, Any]:
        """Trial-row columns (see :func:`evidence_columns`)."""
        self.wait()
        return evidence_columns(self.record)
