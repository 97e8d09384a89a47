"""Queueing-discipline and device byte counters of testbed namespaces over netlink, in-process.

A trial polls the switch ports' egress counters while its flood settles and the queues while they
drain after it (:mod:`.probes`). ``tc -s -j qdisc show`` costs a process start (3-10 ms, more on
a busy 2-core machine) per namespace and poll; one RTM_GETQDISC dump on a kept netlink socket costs
1-3 ms (measured on the embedded testbed: 19 qdiscs of the switch namespace).

The messages are built and parsed with pyroute2's codec (``tcmsg``, ``ifinfmsg``,
``MarshalRtnl``); the socket is ours. pyroute2's own ``IPRoute(netns=...)`` forks a helper
process (``multiprocessing``) to enter the namespace, and a fork of the campaign, whose other
threads hold locks (the progress display, SSH sessions), hung in a test run here. Instead a
short-lived thread enters the namespace (``setns`` moves only the calling thread), opens the
socket there and ends; the socket stays bound to that namespace.

Each dump is timed where the kernel takes its counts (:class:`QdiscSnapshot`): the kernel fills
a dump's first batch inside the ``send()`` of the request (``__netlink_dump_start``) and each
further batch inside the ``recv()`` that hands over the one before it (``netlink_recvmsg``), so
the counts lie between the moment before ``send()`` and the moment after the syscall that filled
the last data message's batch (``send()`` itself for a namespace whose qdiscs fit one batch, as
a host's do). Waiting for the module's lock, the GETLINK of new devices, the ``recv()`` and
pyroute2's parsing (milliseconds of pure Python, tens beside a busy loop and other threads) stay
outside.

One socket per namespace is kept (:func:`socket_for`) and checked against the namespace's inode
before use, so a testbed rebuilt under the same names gets fresh sockets; a missing namespace is
an error (nothing is created). :func:`close_all` closes them (the testbed's ``down`` calls it).
"""

from __future__ import annotations

import itertools
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..errors import QoslabError
from .nsproc import NETNS_DIR, call_in

#: Seconds a dump may take before the socket counts as dead.
DUMP_TIMEOUT_S = 2.0

_lock = threading.Lock()
_sockets: dict[str, tuple[int, socket.socket]] = {}  # namespace -> (inode of its /run/netns file, socket)
_names: dict[str, dict[int, str]] = {}  # namespace -> interface index -> name
_seq = itertools.count(1)


@dataclass(frozen=True)
class QdiscCounters:
    """One qdisc's counters: ``bytes`` and ``packets`` sent (dequeued), ``drops`` (packets),
    ``qlen`` (packets queued now) and ``backlog`` (bytes queued now)."""

    kind: str
    handle: int
    parent: int
    bytes: int
    packets: int
    drops: int
    qlen: int
    backlog: int

    @property
    def root(self) -> bool:
        """True for a device's root qdisc (parent TC_H_ROOT)."""
        return self.parent == 0xFFFFFFFF


class DumpInterval:
    """The interval of monotonic time (``t_from`` to ``t_to``, seconds) in which the kernel took a
    dump's counts (see the module doc), and what it says of their moment."""

    t_from: float
    t_to: float

    @property
    def at(self) -> float:
        """The midpoint of the interval (monotonic seconds): the counts' moment within +-``spread``."""
        return (self.t_from + self.t_to) / 2

    @property
    def spread(self) -> float:
        """Half the interval's length (seconds): the most the counts' moment is off :attr:`at`."""
        return (self.t_to - self.t_from) / 2


@dataclass(frozen=True)
class QdiscSnapshot(DumpInterval):
    """One RTM_GETQDISC dump of a namespace: ``counters`` by device name, and the interval of
    monotonic time (``time.monotonic()`` seconds) in which the kernel took them: ``t_from``
    (before the request was sent) to ``t_to`` (after the syscall in which the kernel filled the
    last data message: the request's ``send()``, or the ``recv()`` before the one returning it)."""

    counters: dict[str, list[QdiscCounters]]
    t_from: float
    t_to: float


def _inode(ns: str) -> int:
    try:
        return os.stat(f"{NETNS_DIR}/{ns}").st_ino
    except FileNotFoundError:
        raise QoslabError(f"network namespace {ns} does not exist (is the testbed up?)") from None


def _open_in(ns: str) -> socket.socket:
    """A NETLINK_ROUTE socket in namespace ``ns``, opened by a thread that entered it."""
    sock = call_in(ns, lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, socket.NETLINK_ROUTE))
    sock.bind((0, 0))
    sock.settimeout(DUMP_TIMEOUT_S)
    return sock


def socket_for(ns: str) -> socket.socket:
    """The kept netlink socket of namespace ``ns`` (opened on first use). Raises QoslabError when
    the namespace does not exist or the socket cannot be opened."""
    ino = _inode(ns)
    with _lock:
        kept = _sockets.get(ns)
        if kept is not None and kept[0] == ino:
            return kept[1]
        if kept is not None:
            kept[1].close()
        _names.pop(ns, None)
        try:
            sock = _open_in(ns)
        except OSError as e:
            raise QoslabError(f"netlink socket in namespace {ns}: {e}") from None
        _sockets[ns] = (ino, sock)
        return sock


def _dump(sock: socket.socket, request: Any, mtype: int, stamp: list[float] | None = None) -> list[Any]:
    """One RTM_GET* dump on ``sock``: the parsed messages (pyroute2's codec). With ``stamp``
    (a list), its contents become ``[t_from, t_to]``: monotonic seconds before the request was
    sent and after the syscall in which the kernel filled the last data message's batch (the
    ``send()`` for the first batch, the previous ``recv()`` for a later one: see the module doc).
    Raises OSError (also for a netlink error reply) or socket.timeout."""
    from pyroute2.netlink import NLM_F_DUMP, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR
    from pyroute2.netlink.rtnl.marshal import MarshalRtnl

    seq = next(_seq)
    request["header"]["type"] = mtype
    request["header"]["flags"] = NLM_F_REQUEST | NLM_F_DUMP
    request["header"]["sequence_number"] = seq
    request.encode()
    t_from = time.monotonic()
    sock.send(request.data)
    t_made = t_to = time.monotonic()  # the batch being read was filled before t_made
    marshal = MarshalRtnl()
    out: list[Any] = []
    while True:
        data = sock.recv(1 << 16)
        t_recv = time.monotonic()  # this recv() filled the next batch
        for msg in marshal.parse(data):
            if msg["header"]["sequence_number"] != seq:
                continue  # the rest of an interrupted earlier dump
            if msg["header"]["type"] == NLMSG_DONE:
                if stamp is not None:
                    stamp[:] = [t_from, t_to]
                return out
            if msg["header"]["type"] == NLMSG_ERROR:
                raise OSError(-int(msg["error"] or 0), f"netlink dump {mtype} refused")
            out.append(msg)
            t_to = t_made
        t_made = t_recv


def qdisc_counters(ns: str) -> dict[str, list[QdiscCounters]]:
    """Every qdisc of namespace ``ns`` by device name (``{dev: [QdiscCounters, ...]}``, in the
    kernel's order). Raises QoslabError when the namespace is gone or the dump fails."""
    return qdisc_snapshot(ns).counters


def qdisc_snapshot(ns: str) -> QdiscSnapshot:
    """:func:`qdisc_counters` of namespace ``ns`` with the interval in which the kernel took them
    (:class:`QdiscSnapshot`). Raises QoslabError when the namespace is gone or the dump fails."""
    from pyroute2.netlink.rtnl import RTM_GETLINK, RTM_GETQDISC
    from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg
    from pyroute2.netlink.rtnl.tcmsg import tcmsg

    sock = socket_for(ns)
    stamp: list[float] = []
    try:
        with _lock:
            msgs = _dump(sock, tcmsg(), RTM_GETQDISC, stamp)
            names = _names.get(ns, {})
            if any(m["index"] not in names for m in msgs):  # first dump, or a device added since
                names = _names[ns] = {m["index"]: m.get_attr("IFLA_IFNAME") for m in _dump(sock, ifinfmsg(),
                                                                                           RTM_GETLINK)}
    except OSError as e:  # a dead socket: drop it, the next call opens a new one
        drop(ns)
        raise QoslabError(f"netlink qdisc dump in namespace {ns}: {e}") from None
    out: dict[str, list[QdiscCounters]] = {}
    for m in msgs:
        dev = names.get(m["index"])
        if dev is not None:
            out.setdefault(dev, []).append(counters_of(m))
    return QdiscSnapshot(out, stamp[0], stamp[1])


@dataclass(frozen=True)
class LinkSnapshot(DumpInterval):
    """One RTM_GETLINK dump of a namespace: every device's byte counters (``rx_bytes`` and
    ``tx_bytes`` by device name, IFLA_STATS64) and, as :class:`QdiscSnapshot`, the interval of
    monotonic time in which the kernel took them (``t_from`` to ``t_to``, seconds)."""

    rx_bytes: dict[str, int]
    tx_bytes: dict[str, int]
    t_from: float
    t_to: float


def link_snapshot(ns: str) -> LinkSnapshot:
    """The byte counters of every device of namespace ``ns`` (a veth counts a frame from its
    Ethernet header on) with the interval in which the kernel took them (:class:`LinkSnapshot`):
    a rate over a window read without a process start's delay between the count and its time
    stamp. Raises QoslabError when the namespace is gone or the dump fails."""
    from pyroute2.netlink.rtnl import RTM_GETLINK
    from pyroute2.netlink.rtnl.ifinfmsg import ifinfmsg

    sock = socket_for(ns)
    stamp: list[float] = []
    try:
        with _lock:
            msgs = _dump(sock, ifinfmsg(), RTM_GETLINK, stamp)
    except OSError as e:
        drop(ns)
        raise QoslabError(f"netlink link dump in namespace {ns}: {e}") from None
    rx: dict[str, int] = {}
    tx: dict[str, int] = {}
    for m in msgs:
        name, st = m.get_attr("IFLA_IFNAME"), m.get_attr("IFLA_STATS64") or {}
        if name is not None:
            rx[name], tx[name] = int(st.get("rx_bytes", 0)), int(st.get("tx_bytes", 0))
    return LinkSnapshot(rx, tx, stamp[0], stamp[1])


def counters_of(msg: Any) -> QdiscCounters:
    """The counters of one RTM_NEWQDISC message (pure over pyroute2's parsed message: the
    TCA_STATS2 basic and queue blocks, else the legacy TCA_STATS block)."""
    basic: dict[str, int] = {}
    queue: dict[str, int] = {}
    s2 = msg.get_attr("TCA_STATS2")
    if s2 is not None:
        basic = s2.get_attr("TCA_STATS_BASIC") or {}
        queue = s2.get_attr("TCA_STATS_QUEUE") or {}
    legacy = msg.get_attr("TCA_STATS") or {}
    return QdiscCounters(kind=str(msg.get_attr("TCA_KIND") or ""), handle=int(msg["handle"]),
                         parent=int(msg["parent"]),
                         bytes=int(basic.get("bytes", legacy.get("bytes", 0))),
                         packets=int(basic.get("packets", legacy.get("packets", 0))),
                         drops=int(queue.get("drops", legacy.get("drop", 0))),
                         qlen=int(queue.get("qlen", legacy.get("qlen", 0))),
                         backlog=int(queue.get("backlog", legacy.get("backlog", 0))))


def drop(ns: str) -> None:
    """Close and forget the kept socket of ``ns`` (none: nothing happens)."""
    with _lock:
        kept = _sockets.pop(ns, None)
        _names.pop(ns, None)
    if kept is not None:
        kept[1].close()


def close_all() -> None:
    """Close every kept socket (idempotent)."""
    with _lock:
        kept = list(_sockets.values())
        _sockets.clear()
        _names.clear()
    for _, sock in kept:
        sock.close()
