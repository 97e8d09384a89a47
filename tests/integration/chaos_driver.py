"""Runs ``qoslab`` (the real CLI entry point) and SIGKILLs it at a chosen moment of a campaign,
for the chaos test: ``python chaos_driver.py PHASE OCCURRENCE SEED -- qoslab-args...``.

PHASE is where the kill lands, at the OCCURRENCE-th time the campaign gets there (the moment
within it drawn from SEED):

- ``push``: in the middle of a switch push, after a random part of its lines went out (at its
  end when there was nothing to send);
- ``flood``: while the flood starts (receivers up, a random number of senders started);
- ``workload``: a random 0.1-1.0 s into the workload;
- ``capture``: a random 0-0.3 s after the capture started;
- ``commit``: after a trial ended, before its row is committed.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _later(seconds: float) -> None:
    threading.Thread(target=lambda: (time.sleep(seconds), _die()), daemon=True).start()


class _Occurrence:
    """Counts arrivals at a phase; true at the chosen one."""

    def __init__(self, occurrence: int) -> None:
        self.n, self.at = 0, occurrence

    def __call__(self) -> bool:
        self.n += 1
        return self.n == self.at


def _push(due: _Occurrence, rng: random.Random) -> None:
    """Kill after a random part of the push's lines went out; when the switch already had the
    profile (nothing to send), at the end of the push."""
    import qoslab.switch.push as switch

    real_push, real_send = switch.push, switch._send
    armed = {"on": False}

    def send(conn, lines):
        if armed["on"]:
            real_send(conn, lines[: rng.randint(0, max(0, len(lines) - 1))])
            _die()
        return real_send(conn, lines)

    def push(*a, **kw):
        armed["on"] = due()
        rep = real_push(*a, **kw)
        if armed["on"]:
            _die()
        return rep
    switch._send = send
    switch.push = push


def _flood(due: _Occurrence, rng: random.Random) -> None:
    import qoslab.trafficgen.ditg as ditg

    real_start, real_sender = ditg.DitgGenerator.start, ditg.DitgGenerator._start_sender

    def start(self, *a, **kw):
        if due():
            self._chaos_left = rng.randint(0, len(self.flows))  # senders started before the kill
            if self._chaos_left == 0:
                _later(rng.uniform(0.0, 0.2))  # receivers starting or listening
        return real_start(self, *a, **kw)

    def sender(self, f):
        real_sender(self, f)
        left = getattr(self, "_chaos_left", None)
        if left is not None:
            self._chaos_left = left - 1
            if left - 1 <= 0:
                _die()
    ditg.DitgGenerator.start = start
    ditg.DitgGenerator._start_sender = sender


def _workload(due: _Occurrence, rng: random.Random) -> None:
    import qoslab.campaign.launch as launch
    import qoslab.campaign.trial as trial

    real_backend = launch.backend

    def backend(kind):
        wl = real_backend(kind)
        real_run = wl.run

        def run(*a, **kw):
            if due():
                _later(rng.uniform(0.1, 1.0))
            return real_run(*a, **kw)
        wl.run = run  # the trial's launch calls this backend's run (any workload kind; a gated one's
        return wl     # starts with the congested trial, campaign/launch.py)
    launch.backend = trial.backend = backend


def _capture(due: _Occurrence, rng: random.Random) -> None:
    import qoslab.capture as capture

    real_cap = capture.LiveCapture.start

    def cap_start(self, *a, **kw):
        real_cap(self, *a, **kw)
        if due():
            _later(rng.uniform(0.0, 0.3))
    capture.LiveCapture.start = cap_start


def _commit(due: _Occurrence, rng: random.Random) -> None:
    import qoslab.trials.store as store

    real_record = store.Store.record

    def record(self, idx, **cols):
        if cols.get("status") == "done" and due():
            _die()
        return real_record(self, idx, **cols)
    store.Store.record = record


PHASES = {"push": _push, "flood": _flood, "workload": _workload, "capture": _capture, "commit": _commit}


if __name__ == "__main__":
    phase, occurrence, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    assert sys.argv[4] == "--"
    PHASES[phase](_Occurrence(occurrence), random.Random(seed))
    sys.argv = ["qoslab", *sys.argv[5:]]
    from qoslab.cli import main

    main()
