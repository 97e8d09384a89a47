"""The eAPI endpoint as HTTP (issue 49): bodies of 1 KB to 8 MB, written in pieces as a slow or
busy client sends them, parse every time (20 tries each size; before, one ``content.read(n)`` cut
them at random); a body over the limit gets 413; ``HEAD /command-api`` (ANTA's check) and the
explorer are answered; no Python/aiohttp banner; a client that sends its headers a byte at a time
gets 408 and is cut; connections beyond the limit get 503."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from contextlib import contextmanager

import pytest

from httpwire import read_response, tls
from qoslab.switch.device import Credentials
from qoslab.vswitch.eapi import MAX_BODY
from qoslab.vswitch.eapiserver import PATH, ensure_certificate, start_eapi
from qoslab.vswitch.httpguard import Limits

AUTH = "Basic " + base64.b64encode(b"admin:pw").decode()


class Echo:
    """A CLI session that takes comment lines (``! ...``) and ``show version``."""

    def run(self, command: str, fmt: str, answer: str | None):
        return {"modelName": "DCS-7280SR3-48YC8"} if command == "show version" else {}

    def close(self) -> None:
        pass


@contextmanager
def serving(tmp_path, limits: Limits = Limits()):
    cert, key = ensure_certificate(tmp_path, "leaf1")
    loop = asyncio.new_event_loop()
    started: dict = {}
    ready = threading.Event()

    async def main():
        ep = await start_eapi(Echo, Credentials("admin", "pw", "s"), "127.0.0.1", 0, cert, key, asyncio.Lock(),
                              limits)
        started.update(port=ep.addresses[0][1], ep=ep)
        ready.set()

    t = threading.Thread(target=lambda: (asyncio.set_event_loop(loop), loop.run_until_complete(main()),
                                         loop.run_forever()), daemon=True)
    t.start()
    assert ready.wait(10)
    try:
        yield started["port"]
    finally:
        asyncio.run_coroutine_threadsafe(started["ep"].cleanup(), loop).result(10)
        asyncio.run_coroutine_threadsafe(asyncio.sleep(0.3), loop).result(10)  # handlers' last callbacks
        loop.call_soon_threadsafe(loop.stop)
        t.join(10)


@pytest.fixture(scope="module")
def port(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("eapi-http")) as p:
        yield p


def request(port: int, method: str, path: str, body: bytes = b"", pieces: int = 1, auth: bool = True,
            extra: str = "") -> tuple[int, dict[str, str], bytes]:
    """Send one request, the body in ``pieces`` writes 5 ms apart (as a busy client's TCP does)."""
    with tls(port) as s:
        head = (f"{method} {path} HTTP/1.1\r\nHost: leaf1\r\nContent-Type: application/json-rpc\r\n"
                f"Content-Length: {len(body)}\r\n" + (f"Authorization: {AUTH}\r\n" if auth else "") + extra +
                "Connection: close\r\n\r\n")
        s.sendall(head.encode())
        step = max(1, -(-len(body) // pieces))
        for i in range(0, len(body), step):
            s.sendall(body[i:i + step])
            if pieces > 1:
                time.sleep(0.005)
        return read_response(s)


def run_cmds_body(size: int) -> bytes:
    """A valid runCmds request of about ``size`` bytes: comment lines of 1000 characters, as a
    pushed configuration's long lines are."""
    n = max(1, size // 1010)
    doc = {"jsonrpc": "2.0", "method": "runCmds", "id": "big", "params": {
        "version": 1, "cmds": ["show version"] + ["! " + "x" * 998] * n, "format": "json"}}
    return json.dumps(doc).encode()


@pytest.mark.parametrize("size", [1 << 10, 64 << 10, 1 << 20, 8 << 20])
def test_bodies_of_1kb_to_8mb_parse_every_time(port, size):
    body = run_cmds_body(size)
    for _ in range(20):
        status, headers, out = request(port, "POST", PATH, body, pieces=8)
        doc = json.loads(out)
        assert status == 200 and "error" not in doc, doc.get("error")
        assert doc["result"][0]["modelName"] == "DCS-7280SR3-48YC8" and len(doc["result"]) == len(
            json.loads(body)["params"]["cmds"])


def test_a_body_over_the_limit_gets_413_without_being_read(port):
    with tls(port) as s:
        s.sendall((f"POST {PATH} HTTP/1.1\r\nHost: leaf1\r\nAuthorization: {AUTH}\r\n"
                   f"Content-Length: {MAX_BODY + 1}\r\n\r\n").encode() + b"{" * 1000)
        status, headers, body = read_response(s)
    assert status == 413 and str(MAX_BODY) in body.decode() and headers["server"] == "nginx"
    # a chunked body (no Content-Length) is counted as it comes
    chunk = b"x" * (1 << 20)
    with tls(port) as s:
        s.sendall(f"POST {PATH} HTTP/1.1\r\nHost: leaf1\r\nAuthorization: {AUTH}\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n".encode())
        try:
            for _ in range(MAX_BODY // len(chunk) + 2):
                s.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        except OSError:
            pass  # the server answered and closed
        assert read_response(s)[0] == 413


def test_head_get_and_the_explorer_without_a_banner(port):
    status, headers, body = request(port, "HEAD", PATH)
    assert status == 200 and body == b""
    assert request(port, "HEAD", PATH, auth=False)[0] == 401
    status, headers, body = request(port, "GET", "/")
    assert status == 302 and headers["location"] == "/explorer.html"
    status, headers, body = request(port, "GET", "/explorer.html")
    assert status == 200 and b"Command API Explorer" in body and b"/command-api" in body
    for method, path, want in (("GET", PATH, 200), ("PUT", PATH, 405), ("GET", "/nowhere", 404),
                               ("POST", PATH, 200)):
        status, headers, _ = request(port, method, path, b"{}" if method in ("PUT", "POST") else b"")
        assert status == want, (method, path)
        assert headers["server"] == "nginx"
        assert not any("python" in v.lower() or "aiohttp" in v.lower() for v in headers.values())


def test_slow_headers_get_408_and_connections_beyond_the_limit_503(tmp_path):
    with serving(tmp_path, Limits(connections=2, header_s=1.0, body_s=1.0)) as p:
        slow = tls(p)
        t0 = time.monotonic()
        for ch in f"POST {PATH} HTTP/1.1\r\nHost: leaf1\r\n".encode():
            try:
                slow.sendall(bytes([ch]))
            except OSError:
                break
            time.sleep(0.1)
            if time.monotonic() - t0 > 5:
                break
        status, _, _ = read_response(slow)
        assert status == 408 and time.monotonic() - t0 < 3
        slow.close()
        a, b = tls(p), tls(p)  # two idle connections: the limit
        time.sleep(0.2)
        with tls(p) as c:
            c.sendall(f"HEAD {PATH} HTTP/1.1\r\nHost: leaf1\r\nAuthorization: {AUTH}\r\n\r\n".encode())
            assert read_response(c)[0] == 503
        a.close()
        b.close()
        time.sleep(0.2)
        status, _, _ = request(p, "HEAD", PATH)  # room again
        assert status == 200
        # a body that stops coming is cut after body_s
        with tls(p) as s:
            s.sendall(f"POST {PATH} HTTP/1.1\r\nHost: leaf1\r\nAuthorization: {AUTH}\r\nContent-Length: 100\r\n\r\n{{"
                      .encode())
            t0 = time.monotonic()
            s.settimeout(5)
            assert s.recv(100) == b"" and time.monotonic() - t0 < 3
