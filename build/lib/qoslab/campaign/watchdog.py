"""The trial timeout, and the interrupt a trial must not lose.

A deadline interrupts the main thread wherever it waits:

:func:`deadline` arms a one-shot ``ITIMER_REAL`` timer; when it fires, :class:`TrialTimeout` is
raised in the main thread at whatever it is doing (waiting for a subprocess, a socket, a sleep),
so the trial's ``finally`` blocks stop its flood and capture and the runner records the trial as
failed. ``TrialTimeout`` is a BaseException, like KeyboardInterrupt: code that catches Exception
to clean up and go on (a switch push's rollback, say) cannot swallow it.

An interrupt (Ctrl-C, SIGTERM: :func:`request_interrupt`, called by the CLI's signal handler)
disarms the deadline, so a trial's timeout cannot replace it while the trial cleans up, and is
remembered (:func:`interrupt_requested`): whatever exception a trial's clean-up then raises, the
runner ends the campaign instead of retrying, and a trial waiting for its workload ends the
workload's processes instead of waiting for them to finish.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

_interrupt = threading.Event()


def request_interrupt() -> None:
    """Record an interrupt (Ctrl-C or SIGTERM) and disarm a running deadline. Safe in a signal
    handler."""
    _interrupt.set()
    if threading.current_thread() is threading.main_thread():
        signal.setitimer(signal.ITIMER_REAL, 0)


def interrupt_requested() -> bool:
    """Whether an interrupt was requested in this process (see :func:`request_interrupt`)."""
    return _interrupt.is_set()


def clear_interrupt() -> None:
    """Forget a recorded interrupt (tests, and a process that goes on after handling one)."""
    _interrupt.clear()


class TrialTimeout(BaseException):
    """A trial ran longer than its ``trial_timeout_s`` (``seconds``) and was ended."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"trial timed out: still running after trial_timeout_s = {seconds:g} s (ended)")


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise TrialTimeout in the main thread if the ``with`` body runs longer than ``seconds``.
    Outside the main thread (no signals there) the body runs unbounded. Raises ValueError for
    ``seconds`` <= 0."""
    if seconds <= 0:
        raise ValueError(f"a deadline must be > 0 s, got {seconds:g}")
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def fire(signum: int, frame: FrameType | None) -> None:
        raise TrialTimeout(seconds)

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
