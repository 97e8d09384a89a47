"""How D-ITG's senders are scheduled and paced (the ``ditg`` generator, :mod:`.ditg`): the
real-time class and timer slack of ITGSend, and which ``-C``/``-poll`` a flow asks for.
"""

from __future__ import annotations

import functools
import subprocess

from ..errors import QoslabError
from ..executors import Executor
from .calibration import Calibration
from .definitions import FloodDefinition, ResolvedFlow

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
    return f"{' '.join(sender_prefix()) or 'normal priority'} slack={SENDER_TIMER_SLACK_NS}ns"


def pacing_for(defn: FloodDefinition, flow: ResolvedFlow, calibration: Calibration | None) -> tuple[int, bool]:
    """``(-C, poll)`` for ``flow``: ``poll`` pacing asks the wanted packets/s with ``-poll``;
    ``plain`` asks the calibrated -C; ``auto`` is plain when the calibration covers the rate.
    Raises QoslabError for ``plain`` without a covering calibration."""
    pacing = defn.pacing
    if pacing == "auto":
        pacing = "plain" if calibration and calibration.covers(flow.pps) else "poll"
    if pacing == "poll":
        return int(round(flow.pps)), True
    if calibration is None or not calibration.covers(flow.pps):
        raise QoslabError(f"flood {defn.name}: pacing 'plain' needs a calibration covering {flow.pps:.0f} "
                          "packets/s: run `qoslab flood calibrate`")
    return calibration.rate_for(flow.pps), False
