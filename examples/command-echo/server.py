#!/usr/bin/env python3
"""Echo server of the `command` workload example (stdlib only): accepts TCP connections on
--bind:--port and answers every request (4-byte big-endian length + payload) with the same
bytes. Runs until killed (qoslab stops it by PID; its lifetime bounds it otherwise)."""

from __future__ import annotations

import argparse
import socket
import socketserver
import struct
import sys


def recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return bytes(buf)


class Echo(socketserver.BaseRequestHandler):
    tos = 0

    def handle(self) -> None:
        sock = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tos:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, self.tos)
        try:
            while True:
                (n,) = struct.unpack("!I", recv_exact(sock, 4))
                if n == 0:  # the client's goodbye: this side closes first (and keeps the TIME-WAIT)
                    return
                sock.sendall(struct.pack("!I", n) + recv_exact(sock, n))
        except (EOFError, ConnectionError):
            return


class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bind", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--dscp", default="", help="DSCP (0-63) of the replies; empty = unmarked")
    ap.add_argument("--no-reuseaddr", action="store_true", help="bind without SO_REUSEADDR (as a naive server "
                    "does: a restart within 60 s of closed connections then fails with errno 98)")
    a = ap.parse_args()
    Server.allow_reuse_address = not a.no_reuseaddr
    Echo.tos = int(a.dscp) << 2 if a.dscp != "" else 0
    with Server((a.bind, a.port), Echo) as srv:
        print(f"echo server listening on {a.bind}:{a.port}", file=sys.stderr, flush=True)
        srv.serve_forever()


if __name__ == "__main__":
    main()
