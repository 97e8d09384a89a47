"""Reading a testbed namespace's kernel state from this process: a short-lived thread enters the
namespace (``setns`` moves only the calling thread) and does the one thing that needs it there
(open a netlink socket, read a file of its ``/proc/thread-self/net``), so no process is started
and no fork of a multi-threaded campaign is made (see :mod:`.netlink`).

The UDP receive queues of a namespace (:func:`udp_queued_bytes`) tell a flood's drain whether its
receivers have read what reached them (:func:`qoslab.testbed.probes.wait_drained`)."""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from typing import TypeVar

from ..errors import QoslabError

NETNS_DIR = "/run/netns"
#: setns(2) flag of a network namespace (linux/sched.h).
CLONE_NEWNET = 0x40000000

T = TypeVar("T")


def call_in(ns: str, fn: Callable[[], T]) -> T:
    """``fn()`` run by a thread that entered network namespace ``ns`` (/run/netns/``ns``); its
    result, or the exception it raised. Raises QoslabError when the namespace does not exist,
    OSError when ``setns`` fails."""
    try:
        fd = os.open(f"{NETNS_DIR}/{ns}", os.O_RDONLY)
    except FileNotFoundError:
        raise QoslabError(f"network namespace {ns} does not exist (is the testbed up?)") from None
    got: dict[str, object] = {}

    def enter_and_call() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            got["error"] = OSError(ctypes.get_errno(), f"setns into {ns}")
            return
        try:
            got["value"] = fn()
        except BaseException as e:  # handed to the caller's thread
            got["error"] = e

    try:
        t = threading.Thread(target=enter_and_call, name=f"netns-{ns}")
        t.start()
        t.join()
    finally:
        os.close(fd)
    if "error" in got:
        raise got["error"]  # type: ignore[misc]
    return got["value"]  # type: ignore[return-value]


def proc_net_text(ns: str, name: str) -> str:
    """The text of ``/proc/net/<name>`` (e.g. ``udp``) as namespace ``ns`` sees it. Raises
    QoslabError when the namespace or the file cannot be read."""
    def read() -> str:
        with open(f"/proc/thread-self/net/{name}", encoding="ascii") as fh:
            return fh.read()

    try:
        return call_in(ns, read)
    except OSError as e:
        raise QoslabError(f"/proc/net/{name} of namespace {ns}: {e.strerror or e}") from None


def queued_bytes(text: str, source: str = "/proc/net/udp") -> int:
    """The bytes waiting in every socket's receive queue of a ``/proc/net/udp`` (or ``udp6``)
    table ``text``: the sum of its ``rx_queue`` column (hexadecimal, the socket's allocated receive
    memory: 0 when nothing is left to read). Pure. Raises QoslabError naming ``source`` and the
    line when the table is not one."""
    lines = text.splitlines()
    if not lines or "rx_queue" not in lines[0].split():
        raise QoslabError(f"{source}: not a socket table (no rx_queue column in its first line)")
    total = 0
    for n, line in enumerate(lines[1:], start=2):
        cols = line.split()
        if not cols:
            continue
        try:
            _, rx = cols[4].split(":")  # "tx_queue:rx_queue", both hexadecimal
            total += int(rx, 16)
        except (IndexError, ValueError):
            raise QoslabError(f"{source} line {n}: no tx_queue:rx_queue field in {line.strip()[:80]!r}") from None
    return total


def udp_queued_bytes(ns: str) -> int:
    """Bytes waiting to be read in the UDP (IPv4 and IPv6) sockets of namespace ``ns``. Raises
    QoslabError when the namespace cannot be read."""
    return sum(queued_bytes(proc_net_text(ns, name), f"/proc/net/{name} of {ns}") for name in ("udp", "udp6"))


__all__ = ["call_in", "proc_net_text", "queued_bytes", "udp_queued_bytes"]
