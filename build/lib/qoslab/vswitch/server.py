"""The virtual Catalyst's SSH server (asyncssh): the IOS CLI (:class:`.session.IosSession`) over an
interactive shell with ``terminal length`` paging (``--More--``), the exec channel (``ssh switch
show version`` answers and closes), and SCP into ``flash:`` (:mod:`.flash`).

Netmiko, NAPALM ``ios``, scrapli and Ansible ``cisco.ios`` talk to it as to hardware (tests in
tests/clients/). The running-config is compiled (:mod:`qoslab.vswitch.tccompile`) and applied to the
switch ports whenever a configuration session ends and the plan changed.

Credentials and host key are generated per testbed into its state folder (mode 0600 from the
first byte), never in the repository.
"""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path

import asyncssh

from ..switch.device import Credentials, generate_credentials, write_private
from ..testbed.statedir import private_dir
from ..testbedplan import vswitch_dir
from ..topology import Topology
from .core import VirtualSwitch
from .eapiserver import ensure_certificate, start_eapi
from .flash import sftp_factory
from .session import IosSession
from .sshprofile import MODERN, SshProfile, ssh_profile


def ensure_identity(d: Path, profile: SshProfile | None = None) -> Credentials:
    """Create (once) the credentials file and the SSH host key of a virtual switch in ``d`` (mode
    0700), both mode 0600 from the first byte; return the credentials. The host key is of the SSH
    profile's type (:mod:`.sshprofile`: RSA 2048 for the 3750, as ``crypto key generate rsa
    modulus 2048``; ed25519 for ``modern``, the default); a key of another type (the profile
    changed) is replaced, as a switch whose keys are regenerated."""
    private_dir(d)
    creds = generate_credentials(d / "credentials")
    key, kind = d / "ssh_host_key", (profile or MODERN).host_key_type
    if key.exists() and asyncssh.read_private_key(str(key)).get_algorithm() != kind:
        key.unlink()
    if not key.exists():
        k = asyncssh.generate_private_key(kind, key_size=2048) if kind == "ssh-rsa" else \
            asyncssh.generate_private_key(kind)
        write_private(key, k.export_private_key())
        (d / "ssh_host_key.pub").unlink(missing_ok=True)
        k.write_public_key(str(d / "ssh_host_key.pub"))
    return creds


def host_keypair(path: str, profile: SshProfile) -> asyncssh.SSHKeyPair:
    """The host key of ``path`` announced with the profile's host key algorithms only (an RSA key
    as ``ssh-rsa`` alone for the 3750, which signs with SHA-1 and knows no ``rsa-sha2-*``)."""
    kp = asyncssh.load_keypairs(path)[0]
    if profile.host_key_algs:
        kp.host_key_algorithms = [a.encode() for a in profile.host_key_algs]
    return kp


MORE = " --More-- "

#: How much of one typed line the SSH line editor keeps and echoes. asyncssh's default (1,024)
#: cut the echo of longer lines short: clients that wait for the echo of what they typed before
#: sending the newline (scrapli) or before reading the answer (netmiko) waited forever, and the
#: characters of the following commands were dropped into the full buffer. The IOS line limit
#: itself is :data:`.session.LINE_MAX` (a longer line is echoed in full and rejected whole).
EDITOR_MAX_LINE = 1 << 20


def _one_line_at_a_time(process: asyncssh.SSHServerProcess) -> None:
    """Make the shell read like an IOS tty: input typed ahead while a command runs is neither read
    nor echoed until the next prompt is out. asyncssh's line editor echoes each return as it
    arrives; a client that sent its next return before the previous prompt was written (libscrapli
    under load: open, then enable) saw both echoes first and then ``Switch>Switch>`` on one line.
    Delivery of channel data pauses as soon as the editor hands a line (or, while paging, a key)
    to the process; :func:`_next_input` resumes it when the shell is ready for more."""
    deliver = process.data_received

    def data_received(data, datatype) -> None:
        process.channel.pause_reading()
        deliver(data, datatype)

    process.data_received = data_received  # type: ignore[method-assign]


async def _next_input(process: asyncssh.SSHServerProcess, n: int | None = None) -> str:
    """The next line (or ``n`` characters while paging) of the shell's input; '' at EOF."""
    process.channel.resume_reading()
    return await (process.stdin.readline() if n is None else process.stdin.read(n))


async def _write_paged(process: asyncssh.SSHServerProcess, session: IosSession, text: str) -> bool:
    """Write ``text``; with ``terminal length N`` (N > 0) stop every N-1 lines at ``--More--``:
    space = next page, return = next line, anything else = stop. False if the client went away."""
    lines = text.split("\n")
    if session.length == 0 or len(lines) <= session.length:
        process.stdout.write(text)
        return True
    i, page = 0, session.length - 1
    process.channel.set_line_mode(False)  # type: ignore[attr-defined]
    try:
        while i < len(lines):
            chunk = lines[i:i + page]
            i += len(chunk)
            process.stdout.write("\n".join(chunk) + ("\n" if i < len(lines) else ""))
            if i >= len(lines):
                break
            process.stdout.write(MORE)
            key = await _next_input(process, 1)
            process.stdout.write("\b" * len(MORE) + " " * len(MORE) + "\b" * len(MORE))
            if key == "":
                return False
            if key in ("\r", "\n"):
                page = 1
            elif key == " ":
                page = session.length - 1
            else:
                break
    finally:
        process.channel.set_line_mode(True)  # type: ignore[attr-defined]
    return True


def register_hot_keys(process: asyncssh.SSHServerProcess, session: IosSession, state: dict) -> None:
    """IOS's keys on the line editor (Cisco IOS Configuration Fundamentals Configuration Guide
    12.2, "Using the Cisco IOS Command-Line Interface"): ``?`` context help, Ctrl-Z (``^Z``) ends
    configuration mode, Ctrl-C discards the typed line. Each is delivered to :func:`run_shell` as
    a signal named after the key, the typed line in ``state["line"]``; while a password is typed
    (``state["secret"]``) or a question or Tcl line waits, ``?`` is text and Ctrl-Z rings."""
    def hot(name: str):
        def handler(line: str, pos: int):
            if state.get("secret"):
                return ("", 0) if name == "ctrl-c" else name == "help"
            if name == "help" and not session.takes_help():
                return True
            if name == "ctrl-z" and (session.mode is None or not session.takes_help()):
                return False  # ^Z only ends configuration mode
            state["line"] = line
            return (name, -1)
        return handler

    if process.get_terminal_type() is None:  # no pty: no line editor
        return
    for key, name in (("?", "help"), ("\x1a", "ctrl-z"), ("\x03", "ctrl-c")):
        process.channel.register_key(key, hot(name))  # type: ignore[attr-defined]


def hot_key(process: asyncssh.SSHServerProcess, session: IosSession, name: str, line: str) -> None:
    """What a hot key (:func:`register_hot_keys`) does: help below the line (the typed line stays),
    ``^Z`` runs the typed line and ends configuration mode, ``^C`` drops the typed line."""
    out = process.stdout
    if name == "help":
        out.write("?\n" + session.help(line) + session.prompt)
        return
    process.channel.clear_input()  # type: ignore[attr-defined]
    if name == "ctrl-c":
        session.interrupt()
        out.write(line + "^C\n" + session.prompt)
        return
    out.write(line + "^Z\n")
    if line.strip():
        out.write(session.line(line).text)
    if session.mode is not None:
        out.write(session.line("end").text)
    out.write(session.prompt)


async def run_shell(process: asyncssh.SSHServerProcess, session: IosSession, lock: asyncio.Lock) -> None:
    """An interactive shell session on an asyncssh server process (line editor on). The first
    prompt was written by the process factory (:func:`start_server`), before any typed input."""
    out = process.stdout
    state: dict = {}
    register_hot_keys(process, session, state)
    try:
        while True:
            try:
                line = await _next_input(process)
            except asyncssh.SignalReceived as sig:
                async with lock:
                    hot_key(process, session, sig.signal, state.pop("line", ""))
                continue
            except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged):
                continue
            if line == "":
                break
            async with lock:
                reply = session.line(line.rstrip("\r\n"))
            while reply.secret:
                out.write(reply.text)
                process.channel.set_echo(False)  # type: ignore[attr-defined]
                state["secret"] = True
                secret = await _next_input(process)
                state["secret"] = False
                process.channel.set_echo(True)  # type: ignore[attr-defined]
                out.write("\n")
                if secret == "":
                    return
                reply = session.secret_line(secret.rstrip("\r\n"))
            if reply.close:
                break
            if not await _write_paged(process, session, reply.text):
                break
            out.write(reply.prompt if reply.prompt is not None else session.prompt)
    except (asyncssh.ConnectionLost, BrokenPipeError, ConnectionResetError):
        pass
    finally:
        async with lock:
            session.close()
        process.exit(0)


async def run_exec(process: asyncssh.SSHServerProcess, session: IosSession, lock: asyncio.Lock) -> None:
    """``ssh switch COMMAND``: run one EXEC command at the login's privilege level, print its
    output, close (exit status 0)."""
    async with lock:
        reply = session.line((process.command or "").strip())
        session.close()
    process.stdout.write(reply.text if not reply.secret else "% Enable not available on an exec channel\n")
    process.exit(0)


async def start_server(switch: VirtualSwitch, creds: Credentials, host: str, port: int, host_key: str,
                       lock: asyncio.Lock, profile: str | None = None) -> asyncssh.SSHAcceptor:
    """The virtual switch's SSH server: password login, interactive shell (:func:`run_shell`),
    exec channel (:func:`run_exec`), SCP into flash: when ``ip scp server enable`` is configured;
    announcing the algorithms of SSH profile ``profile`` (:mod:`.sshprofile`; None: the switch's
    dialect's default)."""
    prof = ssh_profile(profile, switch.dialect)

    class Server(asyncssh.SSHServer):
        def begin_auth(self, username: str) -> bool:
            return True

        def password_auth_supported(self) -> bool:
            return True

        def validate_password(self, username: str, password: str) -> bool:
            return username == creds.username and secrets.compare_digest(password.encode(), creds.password.encode())

    def process(p):
        s = switch.dialect.session(switch, creds.secret) or IosSession(switch, creds.secret)
        if p.command:
            return run_exec(p, s, lock)
        # The first prompt is written here, synchronously, when the shell starts: the line editor
        # echoes input as it arrives, so a client that types a return at once (libscrapli under
        # load) would otherwise see that echo before the prompt and "Switch>Switch>" after it.
        p.stdout.write("\n" + s.prompt)
        _one_line_at_a_time(p)
        return run_shell(p, s, lock)

    enabled = lambda: "ip scp server enable" in getattr(switch.running, "kept", ())  # noqa: E731
    return await asyncssh.create_server(
        Server, host, port, server_host_keys=[host_keypair(host_key, prof)], **prof.server_options(),
        process_factory=process, line_editor=True,
        line_history=0, max_line_length=EDITOR_MAX_LINE, encoding="utf-8",
        sftp_factory=sftp_factory(switch.dir / "flash", enabled), allow_scp=True)


async def serve(topology: Topology, apply: bool = True, ready: asyncio.Event | None = None) -> None:
    """Run the virtual switch of ``topology`` on its management endpoint until cancelled."""
    d = vswitch_dir(topology.name)
    mg = topology.switch.management
    switch = VirtualSwitch(topology, apply=apply)
    creds = ensure_identity(d, ssh_profile(mg.ssh_profile, switch.dialect))
    switch.apply()
    eapi = None
    if switch.dialect.eapi and mg.eapi_port:  # before SSH: a listening SSH port means both are up
        cert, key = ensure_certificate(d, topology.switch.hostname)
        eapi = await start_eapi(lambda: switch.dialect.session(switch, creds.secret, privileged=True), creds,
                                mg.host, mg.eapi_port, cert, key, switch.lock)
    server = await start_server(switch, creds, mg.host, mg.port, str(d / "ssh_host_key"), switch.lock,
                                mg.ssh_profile)
    if ready:
        ready.set()
    try:
        await asyncio.Event().wait()
    finally:
        server.close()
        if eapi is not None:
            await eapi.cleanup()
