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


def proc_net_texts(ns: str, *names: str) -> list[str]:
    """The texts of ``/proc/net/<name>`` for each of ``names`` (e.g. ``udp``, ``udp6``) as namespace
    ``ns`` sees them, read by one thread in it. Raises QoslabError when the namespace or a file
    cannot be read."""
    def read() -> list[str]:
        out = []
        for name in names:
            with open(f"/proc/thread-self/net/{name}", encoding="ascii") as fh:
                out.append(fh.read())
        return out

    try:
        return call_in(ns, read)
    except OSError as e:
        where = str(e.filename).replace("/proc/thread-self/net", "/proc/net") if e.filename else "/proc/net"
        raise QoslabError(f"{where} of namespace {ns}: {e.strerror or e}") from None


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
    names = ("udp", "udp6")
    return sum(queued_bytes(text, f"/proc/net/{name} of {ns}")
               for name, text in zip(names, proc_net_texts(ns, *names), strict=True))


__all__ = ["call_in", "proc_net_texts", "queued_bytes", "udp_queued_bytes"]
