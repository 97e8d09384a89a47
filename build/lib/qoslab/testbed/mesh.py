"""The testbed's full-mesh ping (``qoslab testbed ping``), in one process at any size up to the /24.

One raw ICMP socket per host, opened inside the host's namespace (``setns`` in a short-lived
thread; a socket stays in the namespace it was made in), all driven from this process: round
``r`` sends host ``i``'s echo to host ``(i + r) mod n``, one echo per host per round, ``PACE_S``
apart (at most ``n`` ARP requests in flight at once), then every unanswered pair is asked again
every ``RETRY_S`` until ``timeout_s`` after the last round. An answer to any attempt counts; the
RTT is that attempt's. It replaced one ``ip netns exec HOST ping`` process per pair (2256 processes
at 48 hosts, 9120 at 96, started at once on two cores).

Why the old self-test reported 1024 of 2256 pairs at 48 hosts while every pair answered by hand:
not the pings but the kernel's ARP cache, which is one table for all network namespaces of the
machine, limited to ``gc_thresh3`` = 1024 entries by default. The mesh needs n(n-1) = 2256
entries: exactly 1024 pairs resolved, the rest were refused ("neighbour: arp_cache: neighbor
table overflow!" in dmesg); a pair tried by hand later found room. This module measured the same
1024 of 2256 (and 1024 of 9120 at 96 hosts) until :func:`qoslab.testbed.neigh.ensure_neighbour_capacity`
raised the limit at ``testbed up``.
"""

from __future__ import annotations

import ctypes
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Sequence

from ..errors import QoslabError

#: Seconds between rounds (one echo per host per round).
PACE_S = 0.004
#: Seconds between attempts at a pair that has not answered.
RETRY_S = 0.5
_CLONE_NEWNET = 0x40000000


def checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of ``data``. Pure."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def echo_request(ident: int, seq: int, payload: bytes) -> bytes:
    """An ICMP echo request (type 8) with its checksum. Pure."""
    head = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    return struct.pack("!BBHHH", 8, 0, checksum(head + payload), ident, seq) + payload


def parse_reply(packet: bytes) -> tuple[str, int, int, bytes] | None:
    """(source address, identifier, sequence, payload) of an IPv4 ICMP echo reply as a raw socket
    receives it (IP header first), or None for anything else. Pure."""
    if len(packet) < 28 or packet[0] >> 4 != 4:
        return None
    ihl = (packet[0] & 0x0F) * 4
    if len(packet) < ihl + 8 or packet[ihl] != 0:
        return None
    ident, seq = struct.unpack("!HH", packet[ihl + 4:ihl + 8])
    return socket.inet_ntoa(packet[12:16]), ident, seq, packet[ihl + 8:]


def _sockets_in(namespaces: Sequence[str]) -> list[socket.socket]:
    """A raw ICMP socket in each named namespace (made in a throwaway thread that enters them)."""
    libc = ctypes.CDLL(None, use_errno=True)
    out: list[socket.socket] = []
    err: list[BaseException] = []

    def work() -> None:
        try:
            for ns in namespaces:
                fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
                try:
                    if libc.setns(fd, _CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), f"setns {ns}")
                finally:
                    os.close(fd)
                s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
                s.setblocking(False)
                out.append(s)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            err.append(e)

    t = threading.Thread(target=work, name="mesh-setns")  # its namespace dies with it
    t.start()
    t.join()
    if err:
        for s in out:
            s.close()
        raise QoslabError(f"cannot open ICMP sockets in the testbed's namespaces: {err[0]}")
    return out


class _Mesh:
    def __init__(self, hosts: Sequence[tuple[str, str, str]], count: int) -> None:
        self.hosts, self.count = hosts, count
        self.socks = _sockets_in([ns for _, ns, _ in hosts])
        self.ident = os.getpid() & 0xFFFF
        self.rtts: dict[tuple[int, int], list[float]] = {}
        self.by_ip = {ip: j for j, (_, _, ip) in enumerate(hosts)}
        self.done = 0  # pairs with ``count`` answers

    def send(self, i: int, j: int) -> None:
        payload = struct.pack("!d", time.monotonic()) + b"qoslab-mesh"
        try:
            self.socks[i].sendto(echo_request(self.ident, j, payload), (self.hosts[j][2], 0))
        except (BlockingIOError, InterruptedError):
            pass  # a full socket buffer: the retry sends it again

    def drain(self, wait_s: float) -> None:
        ready, _, _ = select.select(self.socks, [], [], max(wait_s, 0.0))
        for s in ready:
            i = self.socks.index(s)
            while True:
                try:
                    pkt = s.recv(2048)
                except (BlockingIOError, InterruptedError):
                    break
                r = parse_reply(pkt)
                if r is None or r[1] != self.ident or self.by_ip.get(r[0]) != r[2] or len(r[3]) < 8:
                    continue
                rtt = (time.monotonic() - struct.unpack("!d", r[3][:8])[0]) * 1000
                got = self.rtts.setdefault((i, r[2]), [])
                got.append(rtt)
                self.done += len(got) == self.count

    def missing(self) -> list[tuple[int, int]]:
        n = len(self.hosts)
        return [(i, j) for i in range(n) for j in range(n) if i != j and len(self.rtts.get((i, j), [])) < self.count]

    def close(self) -> None:
        for s in self.socks:
            s.close()


def icmp_mesh(hosts: Sequence[tuple[str, str, str]], count: int = 1,
              timeout_s: float = 2.0) -> dict[tuple[str, str], float | None]:
    """Every ordered pair of ``hosts`` ((name, namespace, address) each) pinged as the module doc
    says; ``{(src, dst): mean RTT in ms of its answers, or None}``. Raises QoslabError when the
    sockets cannot be opened (not root, a namespace missing)."""
    n = len(hosts)
    m = _Mesh(hosts, max(1, count))
    try:
        for r in range(1, n):
            for i in range(n):
                m.send(i, (i + r) % n)
            m.drain(PACE_S)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            left = m.missing()
            if not left:
                break
            for i, j in left:
                m.send(i, j)
            end = min(deadline, time.monotonic() + RETRY_S)
            while time.monotonic() < end and m.done < n * (n - 1):
                m.drain(end - time.monotonic())
    finally:
        m.close()
    names = [h[0] for h in hosts]
    return {(names[i], names[j]): (sum(v) / len(v) if (v := m.rtts.get((i, j))) else None)
            for i in range(n) for j in range(n) if i != j}
