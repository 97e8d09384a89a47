"""The virtual Catalyst's SSH server (asyncssh): the IOS CLI over an interactive shell.

Netmiko's ``cisco_ios`` driver talks to it exactly as to hardware: user EXEC ``Switch>``,
``enable`` (secret) ``Switch#``, ``configure terminal`` and the config sub-modes, ``end``,
``write memory``, ``terminal length 0``/``width 511``, and the show commands of the QoS
workflow. Invalid input answers ``% Invalid input detected at '^' marker.`` with the caret under
the fault; the session survives. The running-config is compiled (:mod:`qoslab.tccompile`) and
applied to the switch ports whenever a configuration session ends and the plan changed.

Credentials and host key are generated per testbed into its state folder (mode 0600 from the
first byte), never in the repository.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import asyncssh

from ..device import Credentials, generate_credentials, write_private
from ..netplan import vswitch_dir
from ..topology import Topology
from .catalyst import VirtualCatalyst
from .session import IosSession


def ensure_identity(d: Path) -> Credentials:
    """Create (once) the credentials file and the SSH host key (ed25519) of a virtual switch in
    ``d`` (mode 0700), both mode 0600 from the first byte; return the credentials."""
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    creds = generate_credentials(d / "credentials")
    key = d / "ssh_host_key"
    if not key.exists():
        k = asyncssh.generate_private_key("ssh-ed25519")
        write_private(key, k.export_private_key())
        k.write_public_key(str(d / "ssh_host_key.pub"))
    return creds


async def _session(process: asyncssh.SSHServerProcess, switch: VirtualCatalyst, creds: Credentials) -> None:
    s = IosSession(switch, creds)
    out = process.stdout
    try:
        out.write("\n" + s.prompt)
        while True:
            try:
                line = await process.stdin.readline()
            except asyncssh.BreakReceived:
                continue
            except asyncssh.TerminalSizeChanged:
                continue
            if line == "":
                break
            line = line.rstrip("\r\n")
            if not line.strip():
                out.write(s.prompt)
                continue
            async with switch.lock:
                if s.mode is not None:
                    text = s.config_command(line)
                    close = False
                else:
                    w = line.split()
                    if w[0].lower() in ("en", "ena", "enab", "enabl", "enable"):
                        out.write("Password: ")
                        process.channel.set_echo(False)  # type: ignore[attr-defined]
                        secret = (await process.stdin.readline()).rstrip("\r\n")
                        process.channel.set_echo(True)  # type: ignore[attr-defined]
                        out.write("\n")
                        if secrets.compare_digest(secret, creds.secret):
                            s.privileged = True
                            text = ""
                        else:
                            text = "% Access denied\n\n"
                        close = False
                    else:
                        text, close = s.exec_command(line)
            if close:
                break
            out.write(text)
            out.write(s.prompt)
    except (asyncssh.ConnectionLost, BrokenPipeError, ConnectionResetError):
        pass
    finally:
        async with switch.lock:
            s.close()
        process.exit(0)


class _Server(asyncssh.SSHServer):
    """Password authentication against the switch's credentials (constant-time compare)."""

    def __init__(self, creds: Credentials) -> None:
        self.creds = creds

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return username == self.creds.username and secrets.compare_digest(password, self.creds.password)


async def serve(topology: Topology, apply: bool = True, ready: asyncio.Event | None = None) -> None:
    """Run the virtual Catalyst of ``topology`` on its management endpoint until cancelled."""
    d = vswitch_dir(topology.name)
    creds = ensure_identity(d)
    switch = VirtualCatalyst(topology, apply=apply)
    switch.apply()
    mg = topology.switch.management
    server = await asyncssh.create_server(
        lambda: _Server(creds), mg.host, mg.port, server_host_keys=[str(d / "ssh_host_key")],
        process_factory=lambda p: _session(p, switch, creds), line_editor=True, line_history=0,
        encoding="utf-8")
    if ready:
        ready.set()
    try:
        await asyncio.Event().wait()
    finally:
        server.close()
