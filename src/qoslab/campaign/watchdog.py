"""The trial timeout: a deadline that interrupts the main thread wherever it waits.

:func:`deadline` arms a one-shot ``ITIMER_REAL`` timer; when it fires, :class:`TrialTimeout` is
raised in the main thread at whatever it is doing (waiting for a subprocess, a socket, a sleep),
so the trial's ``finally`` blocks stop its flood and capture and the runner records the trial as
failed. ``TrialTimeout`` is a BaseException, like KeyboardInterrupt: code that catches Exception
to clean up and go on (a switch push's rollback, say) cannot swallow it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


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
