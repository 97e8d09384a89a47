"""HTTP/1.1 over TLS by hand, for the eAPI endpoint's tests (tests/unit/test_eapi_http.py and
tests/clients/test_eapi_http_eos.py): a connection that skips certificate checks (the switch's
certificate is self-signed, as a real switch's default one), and one response read by its
Content-Length, so a test controls exactly how a request's bytes are written."""

from __future__ import annotations

import socket
import ssl


def tls(port: int) -> ssl.SSLSocket:
    ctx = ssl._create_unverified_context()
    return ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=30), server_hostname="leaf1")


def read_response(s: ssl.SSLSocket) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/1.1 response (status, headers in lower case, body by Content-Length)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    head, _, body = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    n = int(headers.get("content-length", 0))
    while len(body) < n:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), headers, body
