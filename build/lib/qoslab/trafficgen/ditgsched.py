"""How D-ITG's senders are scheduled (the ``ditg`` generator, :mod:`.ditg`): ITGSend's real-time
class and timer slack, and :func:`sender_id`, what a calibration (:mod:`.calibration`) measured
them under."""

from __future__ import annotations

import functools
import os
import subprocess

from ..errors import QoslabError
from ..executors import Executor

#: ITGSend runs in the real-time FIFO class at the lowest priority (``chrt -f 1``): the flood's rate
#: is the experiment's independent variable and must not bend to the workload's CPU demand. On a
#: real cluster the flooders are other machines; on the embedded testbed they share two cores
#: with the JVMs, and at ``nice 19`` the senders fell to 78-90 % of the asked rate while a
#: workload ran, so the ports were not even full (measured here: loss 0.5-3 % instead of ~9 %).
#: A sender sleeps between packets (about 5-10 % of a core at 1.1x of 50 Mbit/s) and the kernel's
#: real-time throttling (95 %) bounds it anyway. Busy-waiting ``-poll`` senders never get it (four
#: of them would own both cores): they run at normal priority.
#: Where the real-time class is not allowed (a container without CAP_SYS_NICE or RT runtime),
#: senders run at normal priority: see :func:`sender_prefix`.
SENDER_PREFIX = ["chrt", "-f", "1"]
#: Timer slack given to ITGSend (nanoseconds). ITGSend without -poll sleeps between packets; with
#: the kernel's default 50 us slack each sleep overshoots, so the achieved rate falls far below -C
#: and swings with load (measured here, 4 flows at -C 6500: 4640 packets/s sent with the default,
#: 6050 with 1 ns). 1 ns makes plain pacing nearly linear and the calibration stable.
SENDER_TIMER_SLACK_NS = 1
#: Environment variable that replaces SENDER_TIMER_SLACK_NS (nanoseconds, 1..10^9): the
#: reproducibility bench's "another machine keeps timers differently" perturbation (bench/repro_bench.py
#: sets the kernel's default 50,000). A kernel-paced flood's rate must not move with it.
TIMER_SLACK_ENV = "QOSLAB_SENDER_TIMER_SLACK_NS"


def sender_timer_slack_ns() -> int:
    """The timer slack ITGSend runs with (nanoseconds): TIMER_SLACK_ENV when set to an integer in
    1..10^9, else SENDER_TIMER_SLACK_NS. Raises QoslabError naming the variable for another value."""
    raw = os.environ.get(TIMER_SLACK_ENV)
    if raw is None or raw == "":
        return SENDER_TIMER_SLACK_NS
    if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= 10**9:
        raise QoslabError(f"{TIMER_SLACK_ENV}={raw[:40]!r}: give the senders' timer slack in nanoseconds, "
                          "1..1000000000")
    return int(raw)


@functools.lru_cache(maxsize=1)
def sender_prefix() -> tuple[str, ...]:
    """SENDER_PREFIX when this machine lets us use it (``chrt -f 1 true`` succeeds), else ()."""
    try:
        ok = subprocess.run([*SENDER_PREFIX, "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return tuple(SENDER_PREFIX) if ok else ()


def sender_prefix_on(ex: Executor) -> tuple[str, ...]:
    """SENDER_PREFIX when the node of ``ex`` permits the real-time class: asked of the executor
    when it can tell (``permits("realtime")``, a remote node), else this machine's answer."""
    permits = getattr(ex, "permits", None)
    if permits is None:
        return sender_prefix()
    return tuple(SENDER_PREFIX) if permits("realtime") else ()


def sender_id() -> str:
    """What a calibration's measurements depend on besides kernel and payload (a change
    invalidates it): the sender's scheduling prefix and timer slack."""
    return f"{' '.join(sender_prefix()) or 'normal priority'} slack={sender_timer_slack_ns()}ns"
