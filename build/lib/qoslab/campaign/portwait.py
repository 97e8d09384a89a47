"""What a crash leaves behind, between attempts (issue 34): ports in TIME-WAIT and a failure that
repeats.

- A worker killed with its trial (a ``kill -9`` of qoslab, a failed attempt's clean-up) leaves its
  accepted connections in TIME-WAIT on its listening port for 60 s (Linux's fixed
  ``TCP_TIMEWAIT_LEN``); a program that binds without ``SO_REUSEADDR`` then fails with ``errno 98
  Address already in use`` until they are gone. :func:`wait_ports_free` waits (at most
  ``limit_s``) until no TCP socket in TIME-WAIT holds a workload port on any workload host, read
  from ``/proc/net/tcp`` and ``tcp6`` inside each host's namespace through its executor, before a
  pool (re)starts its workers.
- :func:`same_failure` normalises error texts (numbers, addresses and paths vary between attempts)
  so the runner can stop a campaign whose every attempt fails the same way instead of burning
  every trial's retries.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence

from ..executors import Executor

TIME_WAIT = "06"  # the state column of /proc/net/tcp
#: Linux's TIME-WAIT lasts TCP_TIMEWAIT_LEN = 60 s; a little more covers the timer's granularity.
TIME_WAIT_LIMIT_S = 65.0


def time_wait_ports(proc_net_tcp: str, ports: Iterable[int]) -> dict[int, int]:
    """Port -> number of TIME-WAIT sockets whose *local* port is one of ``ports``, from the text
    of ``/proc/net/tcp`` (or ``tcp6``, or both concatenated; header lines are skipped). Pure."""
    want = set(ports)
    out: dict[int, int] = {}
    for line in proc_net_tcp.splitlines():
        f = line.split()
        if len(f) < 4 or ":" not in f[1] or f[3] != TIME_WAIT:
            continue
        try:
            port = int(f[1].rsplit(":", 1)[1], 16)
        except ValueError:
            continue
        if port in want:
            out[port] = out.get(port, 0) + 1
    return out


def wait_ports_free(executor_of: Callable[[str], Executor], hosts: Sequence[str], ports: Sequence[int],
                    log: Callable[[str], None] = lambda s: None, limit_s: float = TIME_WAIT_LIMIT_S,
                    poll_s: float = 1.0) -> float:
    """Wait until no socket in TIME-WAIT holds one of ``ports`` on any of ``hosts`` (at most
    ``limit_s`` seconds; one line to ``log`` when there is anything to wait for). Returns the
    seconds waited (0.0 when nothing was in TIME-WAIT). A host whose table cannot be read is not
    waited for."""
    if not ports or not hosts:
        return 0.0
    t0 = time.monotonic()
    said = False
    while True:
        busy: dict[str, dict[int, int]] = {}
        for h in hosts:
            r = executor_of(h).run(["cat", "/proc/net/tcp", "/proc/net/tcp6"], timeout=10, check=False)
            held = time_wait_ports(r.stdout, ports)
            if held:
                busy[h] = held
        waited = time.monotonic() - t0
        if not busy or waited >= limit_s:
            return waited if busy or said else 0.0
        if not said:
            log("waiting for the workload's ports to leave TIME-WAIT (a killed worker's connections): "
                + "; ".join(f"{h} " + ", ".join(f"{p} ({n})" for p, n in sorted(v.items())) for h, v in busy.items()))
            said = True
        time.sleep(poll_s)


#: Failures that are measurements, not a broken set-up: a trial or a call that ran out of time
#: (with ``censor_timeouts`` such trials count at their bound), never taken for a repeated failure.
TIMEOUTS = re.compile(r"timed out|did not finish|timeout", re.IGNORECASE)


def same_failure(msg: str) -> str | None:
    """An error text with what varies between attempts of the same failure (numbers, addresses,
    trial folders) replaced, for comparing failures; None for a timeout (:data:`TIMEOUTS`). Pure."""
    if TIMEOUTS.search(msg):
        return None
    return re.sub(r"\d+", "N", re.sub(r"/\S+", "PATH", msg)).strip()[:300]
