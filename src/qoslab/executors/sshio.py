"""The plumbing under the ``ssh`` executor: one asyncio event loop in a daemon thread for all
SSH connections of this program, and TCP sockets opened from inside a network namespace.

asyncssh is asynchronous and the :class:`~qoslab.executors.base.Executor` contract is not: every
executor call hands a coroutine to the loop (:func:`call`) and blocks on its result, so any
number of threads (parallel starts on N nodes) share one loop and one connection per node.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import socket
import threading
from collections.abc import Coroutine
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from ..errors import QoslabError
from ..netplan import NETNS_DIR

T = TypeVar("T")

CLONE_NEWNET = 0x40000000  # <linux/sched.h>

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The shared event loop (started on first use in a daemon thread named ``qoslab-ssh``)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            lp = asyncio.new_event_loop()
            threading.Thread(target=lp.run_forever, name="qoslab-ssh", daemon=True).start()
            _loop = lp
        return _loop


def call(coro: Coroutine[Any, Any, T], timeout_s: float) -> T:
    """Run ``coro`` on the shared loop and wait at most ``timeout_s`` seconds for its result
    (the coroutine is cancelled when that passes). Raises what the coroutine raises, or
    TimeoutError."""
    fut = asyncio.run_coroutine_threadsafe(coro, loop())
    try:
        return fut.result(timeout_s)
    except FutureTimeout:
        fut.cancel()
        raise TimeoutError(f"no answer within {timeout_s:g} s") from None


def spawn(coro: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
    """Run ``coro`` on the shared loop in the background; returns its future (cancel it to stop)."""
    return asyncio.run_coroutine_threadsafe(coro, loop())


def netns_socket(namespace: str, host: str, port: int, timeout_s: float) -> socket.socket:
    """A TCP socket connected to ``host:port`` from inside the network namespace ``namespace``
    (``/run/netns/NAME``): a short-lived thread enters the namespace (``setns``, which changes only
    that thread) and creates the socket, which keeps the namespace for its whole life.
    Raises QoslabError when the namespace is missing or the connection fails."""
    out: dict[str, Any] = {}

    def work() -> None:
        try:
            fd = os.open(NETNS_DIR / namespace, os.O_RDONLY)
        except OSError as e:
            out["error"] = f"no network namespace {namespace}: {e.strerror}"
            return
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.setns(fd, CLONE_NEWNET) != 0:
                out["error"] = f"cannot enter network namespace {namespace}: {os.strerror(ctypes.get_errno())}"
                return
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(timeout_s)
            try:
                s.connect((host, port))
            except OSError as e:
                s.close()
                out["error"] = f"cannot connect to {host}:{port} from {namespace}: {e.strerror or e}"
                return
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # small control messages, no Nagle wait
            s.setblocking(False)
            out["sock"] = s
        finally:
            os.close(fd)

    t = threading.Thread(target=work, name=f"netns-{namespace}")
    t.start()
    t.join()
    if "sock" not in out:
        raise QoslabError(out.get("error", f"cannot connect to {host}:{port} from {namespace}"))
    return out["sock"]  # type: ignore[no-any-return]
