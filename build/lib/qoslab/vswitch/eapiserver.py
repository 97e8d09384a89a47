"""The virtual switch's eAPI endpoint: HTTPS with HTTP basic auth on the management address,
``POST /command-api`` answered by :mod:`.eapi` through a fresh CLI session of the same switch
(aiohttp's server on the switch's asyncio loop, under the switch's lock: an eAPI request and an
SSH line never interleave, and both see one running-config and one set of configuration
sessions).

As EOS's ``management api http-commands`` answers (Arista Command API Guide): 401 with a
``WWW-Authenticate: Basic`` challenge without valid credentials; ``POST /command-api`` 200 with a
JSON-RPC response or error object, the whole body read whatever packets the client sent it in,
413 when it is larger than :data:`~qoslab.vswitch.eapi.MAX_BODY` (16 MiB; Content-Length
checked before anything is read); ``GET``/``HEAD /command-api`` 200 (ANTA checks every device with
``HEAD /command-api`` and wants a 2xx), the explorer at ``/explorer.html`` (``/`` redirects to it),
405 for another method on ``/command-api``, 404 elsewhere; ``Server: nginx`` (EOS's web front
end), no Python or aiohttp banner. Each connection is guarded (:mod:`.httpguard`): at most
:attr:`Limits.connections` at once, the TLS handshake, the request headers and the body within
their time limits, idle keep-alive connections closed; a client that disconnects cancels its
request if it has not run yet. The TLS
certificate is self-signed, generated per testbed into its state folder (key mode 0600 from the
first byte), as a switch's default ``management security`` certificate; clients do not verify it
(pyeapi's and Ansible's defaults for EOS's self-signed certificate).
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import json
import secrets
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import hdrs, web

from ..switch.device import Credentials, write_private
from .eapi import MAX_BODY, CliSession, parse_request, run_request
from .httpguard import LIMITS, Guards, Limits

PATH = "/command-api"
#: The ``Server`` header: EOS's web front end is nginx; no version, no Python or aiohttp banner.
SERVER = "nginx"
#: What ``GET``/``HEAD /command-api`` answer (a client checking the endpoint, as ANTA does).
ENDPOINT_TEXT = "Command API: POST a JSON-RPC 2.0 runCmds request here; the explorer is at /explorer.html\n"
#: The explorer page (``/`` redirects to it): one request editor that POSTs runCmds to /command-api.
EXPLORER_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Command API Explorer</title></head>
<body><h1>Command API Explorer</h1>
<p>Commands, one per line; the request runs them in order, as <code>runCmds</code> does.</p>
<textarea id="cmds" rows="8" cols="80">show version</textarea><br>
<select id="fmt"><option>json</option><option>text</option></select>
<button onclick="run()">Submit POST request</button>
<pre id="out"></pre>
<script>
async function run() {
  const cmds = document.getElementById("cmds").value.split("\\n").filter(c => c.trim());
  const body = {jsonrpc: "2.0", method: "runCmds", id: "explorer",
                params: {version: 1, cmds: cmds, format: document.getElementById("fmt").value}};
  const r = await fetch("/command-api", {method: "POST", body: JSON.stringify(body),
                                         headers: {"Content-Type": "application/json-rpc"}});
  document.getElementById("out").textContent = JSON.stringify(await r.json(), null, 2);
}
</script></body></html>
"""


def ensure_certificate(d: Path, hostname: str) -> tuple[Path, Path]:
    """(certificate, key) of the switch's eAPI in ``d``, created once: an EC P-256 key (mode 0600)
    and a self-signed certificate for ``hostname``, valid ten years."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    cert, key = d / "eapi.crt", d / "eapi.key"
    if cert.exists() and key.exists():
        return cert, key
    k = ec.generate_private_key(ec.SECP256R1())
    write_private(key, k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.datetime.now(datetime.UTC)
    c = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(k.public_key())
         .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
         .not_valid_after(now + datetime.timedelta(days=3650)).sign(k, hashes.SHA256()))
    cert.write_bytes(c.public_bytes(serialization.Encoding.PEM))
    return cert, key


def _authorized(header: str | None, creds: Credentials) -> bool:
    if not header or not header.startswith("Basic "):
        return False
    try:
        user, _, pw = base64.b64decode(header[6:], validate=True).decode("utf-8").partition(":")
    except (ValueError, UnicodeDecodeError):
        return False
    return secrets.compare_digest(user.encode(), creds.username.encode()) and \
        secrets.compare_digest(pw.encode(), creds.password.encode())


def app(session_factory: Callable[[], CliSession], creds: Credentials, lock: asyncio.Lock) -> web.Application:
    """The eAPI web application: ``session_factory()`` opens one CLI session per request."""

    async def command_api(request: web.Request) -> web.StreamResponse:
        if not _authorized(request.headers.get("Authorization"), creds):
            return web.Response(status=401, text="Unauthorized", headers={"WWW-Authenticate": 'Basic realm="eAPI"'})
        if request.method in ("GET", "HEAD"):  # HEAD: ANTA's reachability check (asynceapi check_api_endpoint)
            return web.Response(text=ENDPOINT_TEXT, content_type="text/plain")
        if request.method != "POST":
            return web.Response(status=405, text="Method Not Allowed", headers={"Allow": "GET, HEAD, POST"})
        if request.content_length is not None and request.content_length > MAX_BODY:
            return _too_large()
        try:
            body = await request.read()  # the whole body, however the client split it
        except web.HTTPRequestEntityTooLarge:
            return _too_large()
        req = parse_request(body)
        if isinstance(req, dict):
            return web.json_response(req)
        async with lock:
            out = run_request(req, session_factory())
        return web.Response(text=json.dumps(out), content_type="application/json")

    async def explorer(request: web.Request) -> web.StreamResponse:
        if not _authorized(request.headers.get("Authorization"), creds):
            return web.Response(status=401, text="Unauthorized", headers={"WWW-Authenticate": 'Basic realm="eAPI"'})
        if request.path == "/":
            raise web.HTTPFound("/explorer.html")
        return web.Response(text=EXPLORER_HTML, content_type="text/html")

    async def no_banner(request: web.Request, response: web.StreamResponse) -> None:
        response.headers[hdrs.SERVER] = SERVER

    a = web.Application(client_max_size=MAX_BODY)
    a.router.add_route("*", PATH, command_api)
    a.router.add_get("/", explorer)
    a.router.add_get("/explorer.html", explorer)
    a.on_response_prepare.append(no_banner)
    return a


def _too_large() -> web.Response:
    return web.Response(status=413, text=f"Request Entity Too Large: the body limit is {MAX_BODY} bytes",
                        headers={"Connection": "close"})


class Endpoint:
    """A running eAPI endpoint: its listening ``addresses``; :meth:`cleanup` stops it."""

    def __init__(self, runner: web.AppRunner, server: asyncio.base_events.Server) -> None:
        self.runner, self.server = runner, server

    @property
    def addresses(self) -> list[Any]:
        return [s.getsockname() for s in self.server.sockets]

    async def cleanup(self) -> None:
        self.server.close()
        await self.runner.cleanup()


async def start_eapi(session_factory: Callable[[], CliSession], creds: Credentials, host: str, port: int,
                     cert: Path, key: Path, lock: asyncio.Lock, limits: Limits = LIMITS) -> Endpoint:
    """Serve eAPI over HTTPS on ``host:port`` until the returned endpoint is cleaned up, each
    connection guarded by ``limits`` (:mod:`.httpguard`)."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    runner = web.AppRunner(app(session_factory, creds, lock), access_log=None, keepalive_timeout=limits.idle_s,
                           handler_cancellation=True, lingering_time=1.0)
    await runner.setup()
    server = runner.server
    assert server is not None
    guards = Guards(server, limits, SERVER)
    srv = await asyncio.get_running_loop().create_server(guards.protocol, host, port, ssl=ctx, backlog=128,
                                                         ssl_handshake_timeout=limits.handshake_s)
    return Endpoint(runner, srv)
