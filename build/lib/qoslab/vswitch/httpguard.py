"""Connection limits of the virtual switch's HTTPS endpoint (eAPI, :mod:`.eapiserver`): a guard
protocol around each of aiohttp's request handlers that

- refuses a connection beyond :attr:`Limits.connections` at once (``503``, closed);
- gives a request :attr:`Limits.header_s` seconds from its first byte (from the connection, for
  the first request) to complete its headers, and :attr:`Limits.body_s` more for its body: a
  client that sends its headers a byte a second (slowloris) gets ``408`` and is closed;
- leaves idle keep-alive connections to aiohttp's ``keepalive_timeout`` (:attr:`Limits.idle_s`)
  and pending TLS handshakes to asyncio's ``ssl_handshake_timeout`` (:attr:`Limits.handshake_s`).

It reads HTTP/1.1 framing only as far as it must: the header block's end and ``Content-Length``
(a chunked body ends the guard's bookkeeping for that connection; its later requests are limited
by aiohttp's own header size limits only). nginx, EOS's web front end, has the same kinds of
limits (``client_header_timeout``, ``client_body_timeout``, ``keepalive_timeout``); the values
here are qoslab's choices.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

#: The end of a request's header block; the Content-Length and Transfer-Encoding headers.
_END = b"\r\n\r\n"
_LENGTH = re.compile(rb"^content-length:[ \t]*(\d+)[ \t]*$", re.I | re.M)
_CHUNKED = re.compile(rb"^transfer-encoding:[^\r\n]*chunked", re.I | re.M)
#: The most header bytes the guard keeps while it looks for their end (aiohttp refuses far less).
_MAX_HEAD = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Per endpoint: connections at once; seconds for the TLS handshake, a request's headers, its
    body, and an idle keep-alive connection."""

    connections: int = 32
    handshake_s: float = 10.0
    header_s: float = 10.0
    body_s: float = 120.0
    idle_s: float = 60.0


#: The eAPI endpoint's limits.
LIMITS = Limits()


class Guards:
    """The guard protocols of one endpoint: ``protocol`` is the server's protocol factory (it
    wraps ``server``, aiohttp's ``web.Server``); ``open`` the guards of open connections."""

    def __init__(self, server: Any, limits: Limits, banner: str) -> None:
        self.server, self.limits, self.banner = server, limits, banner
        self.open: set[Guard] = set()

    def protocol(self) -> Guard:
        return Guard(self, self.server())


class Guard(asyncio.Protocol):
    """One connection: passes everything to aiohttp's handler (``inner``), watching the
    requests' framing against the time limits (see the module doc)."""

    def __init__(self, guards: Guards, inner: Any) -> None:
        self.guards, self.inner = guards, inner
        self.transport: Any = None
        self.state = "head"  # head | body | untracked
        self.head = b""
        self.left = 0  # body bytes still to come
        self.timer: asyncio.TimerHandle | None = None

    # -- the protocol: delegate, watch ---------------------------------------------------------------
    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        if len(self.guards.open) >= self.guards.limits.connections:
            self._reply_and_close(503, "Service Unavailable")
            return
        self.guards.open.add(self)
        self.inner.connection_made(transport)
        self._arm(self.guards.limits.header_s, "head")

    def data_received(self, data: bytes) -> None:
        if self not in self.guards.open:
            return
        self._watch(data)
        if not self.transport.is_closing():
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self in self.guards.open else None

    def connection_lost(self, exc: BaseException | None) -> None:
        self._disarm()
        if self in self.guards.open:
            self.guards.open.discard(self)
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    # -- the framing -----------------------------------------------------------------------------
    def _watch(self, data: bytes) -> None:
        """Follow request boundaries through ``data`` (several requests may share a packet)."""
        while data and self.state != "untracked":
            if self.state == "body":
                used = min(self.left, len(data))
                self.left -= used
                data = data[used:]
                if self.left == 0:
                    self.state = "idle"
                    self._disarm()  # the next request's header clock starts at its first byte
                continue
            if self.state == "idle":
                self.state = "head"
                self._arm(self.guards.limits.header_s, "head")
            self.head += data
            data = b""
            end = self.head.find(_END)
            if end < 0:
                if len(self.head) > _MAX_HEAD:
                    self.head = self.head[-len(_END):]  # aiohttp answers 431/400 for such headers
                continue
            block, data = self.head[:end], self.head[end + len(_END):]
            self.head = b""
            if _CHUNKED.search(block):
                self.state = "untracked"
                self._disarm()
                return
            m = _LENGTH.search(block)
            self.left = int(m.group(1)) if m else 0
            self.state = "body" if self.left else "idle"
            if self.left:
                self._arm(self.guards.limits.body_s, "body")
            else:
                self._disarm()

    def _arm(self, seconds: float, what: str) -> None:
        self._disarm()
        self.timer = asyncio.get_running_loop().call_later(seconds, self._expired, what)

    def _disarm(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _expired(self, what: str) -> None:
        """A request's headers (408) or body (closed) took longer than their limit."""
        self.timer = None
        if self.transport is None or self.transport.is_closing():
            return
        if what == "head":
            self._reply_and_close(408, "Request Timeout")
        else:
            self.transport.abort()

    def _reply_and_close(self, status: int, reason: str) -> None:
        body = f"{status} {reason}\n".encode()
        self.transport.write(b"HTTP/1.1 %d %s\r\nServer: %s\r\nConnection: close\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: %d\r\n\r\n" % (status, reason.encode(), self.guards.banner.encode(),
                                                              len(body)) + body)
        self.transport.close()
