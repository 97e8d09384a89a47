"""The virtual switch's eAPI endpoint: HTTPS with HTTP basic auth on the management address,
``POST /command-api`` answered by :mod:`.eapi` through a fresh CLI session of the same switch
(aiohttp's server on the switch's asyncio loop, under the switch's lock: an eAPI request and an
SSH line never interleave, and both see one running-config and one set of configuration
sessions).

As EOS's ``management api http-commands`` answers (Arista Command API Guide): 401 with a
``WWW-Authenticate: Basic`` challenge without valid credentials, 405 for another method on
``/command-api``, 404 elsewhere, 200 with a JSON-RPC response or error object otherwise. The TLS
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

from aiohttp import web

from ..switch.device import Credentials, write_private
from .eapi import MAX_BODY, CliSession, parse_request, run_request

PATH = "/command-api"


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

    async def command_api(request: web.Request) -> web.Response:
        if not _authorized(request.headers.get("Authorization"), creds):
            return web.Response(status=401, text="Unauthorized", headers={"WWW-Authenticate": 'Basic realm="eAPI"'})
        if request.method != "POST":
            return web.Response(status=405, text="Method Not Allowed", headers={"Allow": "POST"})
        body = await request.content.read(MAX_BODY + 1)
        req = parse_request(body)
        if isinstance(req, dict):
            return web.json_response(req)
        async with lock:
            out = run_request(req, session_factory())
        return web.Response(text=json.dumps(out), content_type="application/json")

    a = web.Application(client_max_size=MAX_BODY + 1)
    a.router.add_route("*", PATH, command_api)
    return a


async def start_eapi(session_factory: Callable[[], CliSession], creds: Credentials, host: str, port: int,
                     cert: Path, key: Path, lock: asyncio.Lock) -> web.AppRunner:
    """Serve eAPI over HTTPS on ``host:port`` until the returned runner is cleaned up."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    runner = web.AppRunner(app(session_factory, creds, lock), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port, ssl_context=ctx).start()
    return runner
