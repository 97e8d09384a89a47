"""An SSH server's algorithm offer read off the wire, for the client tests."""

from __future__ import annotations

import socket


def kexinit(host: str, port: int) -> list[str]:
    """The server's KEXINIT name-lists (RFC 4253 section 7.1), read off the wire."""
    with socket.create_connection((host, port), timeout=5) as s:
        s.sendall(b"SSH-2.0-probe\r\n")
        buf = b""
        while b"\n" not in buf:
            buf += s.recv(4096)
        rest = buf.split(b"\n", 1)[1]
        while len(rest) < 4 or len(rest) < 4 + int.from_bytes(rest[:4], "big"):
            rest += s.recv(65536)
    pkt = rest[5:4 + int.from_bytes(rest[:4], "big")]
    pos, lists = 1 + 16, []
    for _ in range(10):
        n = int.from_bytes(pkt[pos:pos + 4], "big")
        lists.append(pkt[pos + 4:pos + 4 + n].decode())
        pos += 4 + n
    return lists
