"""How to reach a switch's CLI: endpoint, credentials, pinned host key.

Shared by the push (:mod:`qoslab.switch.push`, a Netmiko client) and the virtual Catalyst
(:mod:`qoslab.vswitch`, the server), so neither imports the other. Credentials never live in the
repository: a real switch's come from the environment (``QOSLAB_SWITCH_USERNAME``,
``QOSLAB_SWITCH_PASSWORD``, ``QOSLAB_SWITCH_SECRET``) or a mode-0600 JSON file; the virtual
switch generates its own per testbed into its state folder (0600 from the first byte).
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from ..errors import QoslabError
from ..yamlio import StrictModel

#: Environment variables that carry a real switch's login (all three or none).
CREDENTIAL_ENV = ("QOSLAB_SWITCH_USERNAME", "QOSLAB_SWITCH_PASSWORD", "QOSLAB_SWITCH_SECRET")


@dataclass(frozen=True)
class Credentials:
    """A switch login: username, password, enable secret (never logged or stored in results)."""

    username: str
    password: str
    secret: str

    def __repr__(self) -> str:  # keep secrets out of tracebacks and logs
        return f"Credentials(username={self.username!r}, password=***, secret=***)"

    @classmethod
    def load(cls, path: Path) -> Credentials:
        """Read a credentials file (JSON ``{username, password, secret}``, must be mode 0600).
        Raises QoslabError naming the file when it is missing, readable by others or malformed."""
        try:
            st = path.stat()
        except OSError:
            raise QoslabError(f"no switch credentials at {path} (is the virtual switch running?)") from None
        if not stat.S_ISREG(st.st_mode):
            raise QoslabError(f"{path} is not a regular file: a credentials file is JSON in a regular file")
        if st.st_mode & 0o077:
            raise QoslabError(f"{path} is readable by others (mode {oct(st.st_mode & 0o777)}): chmod 600 it")
        try:
            data = json.loads(path.read_text())
            return cls(**{k: str(data[k]) for k in ("username", "password", "secret")})
        except (ValueError, TypeError, KeyError, UnicodeDecodeError) as e:
            raise QoslabError(f"{path}: not a credentials file (JSON with username, password, secret): "
                              f"{type(e).__name__}") from None

    @classmethod
    def from_env(cls) -> Credentials | None:
        """Credentials from CREDENTIAL_ENV, or None when not all three are set."""
        vals = [os.environ.get(k) for k in CREDENTIAL_ENV]
        return cls(*vals) if all(vals) else None  # type: ignore[arg-type]


#: Largest known_hosts file read (bytes): a few thousand host keys.
MAX_KNOWN_HOSTS_BYTES = 1 << 20

_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _stat_problem(path: Path) -> tuple[os.stat_result | None, str | None]:
    try:
        st = path.stat()
    except OSError as e:
        return None, f"{path}: {e.strerror.lower() if e.strerror else 'cannot be read'}"
    if not stat.S_ISREG(st.st_mode):
        what = next((w for test, w in _KINDS if test(st.st_mode)), "not a regular file")
        return st, f"{path} is {what}, not a regular file"
    return st, None


def _private_file_problem(path: Path) -> str | None:
    """Why ``path`` is no credentials file the push would read (missing, not a regular file,
    readable by group or others), or None. Reads no byte of it."""
    st, why = _stat_problem(path)
    if why is None and st is not None and st.st_mode & 0o077:
        why = f"{path} is readable by others (mode {oct(st.st_mode & 0o777)}): chmod 600 it"
    return why


def _readable_file_problem(path: Path, limit: int) -> str | None:
    """Why ``path`` is not a regular readable file of at most ``limit`` bytes, or None."""
    st, why = _stat_problem(path)
    if why is None and st is not None:
        if st.st_size > limit:
            why = f"{path} is {st.st_size} bytes, more than {limit}: not a known_hosts file"
        elif not os.access(path, os.R_OK):
            why = f"{path}: not readable by this user"
    return why


def write_private(path: Path, data: bytes) -> None:
    """Create ``path`` with mode 0600 from the first byte (O_EXCL: an existing file is an error,
    FileExistsError) and write ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def generate_credentials(path: Path) -> Credentials:
    """Create a credentials file with a random password and secret (mode 0600) unless one
    exists; return the credentials in it."""
    if not path.exists():
        c = Credentials("qoslab", secrets.token_urlsafe(16), secrets.token_urlsafe(16))
        write_private(path, json.dumps(asdict(c)).encode())
    return Credentials.load(path)


def known_hosts_line(public_key_file: Path, host: str, port: int) -> str:
    """A known_hosts line pinning the host key in ``public_key_file`` (OpenSSH ``TYPE BASE64``
    format) for ``host:port``. Raises QoslabError when the file is missing or malformed."""
    try:
        pub = public_key_file.read_text().split()
    except OSError:
        raise QoslabError(f"no host key at {public_key_file}") from None
    if len(pub) < 2:
        raise QoslabError(f"{public_key_file}: not an OpenSSH public key")
    name = host if port == 22 else f"[{host}]:{port}"
    return f"{name} {pub[0]} {pub[1]}\n"


class Device(StrictModel):
    """How to reach a switch's SSH CLI. ``credentials_file``: JSON {username, password, secret},
    mode 0600 (or the environment, CREDENTIAL_ENV); ``known_hosts``: a file with the switch's
    host key (checked: an unknown or changed key refuses the connection); ``timeout_s``: seconds
    for connect, authentication and each command; ``ssh_profile``: ``c3750`` also offers the SHA-1
    key exchanges and ``ssh-rsa`` host keys a 3750 on 12.2(55)SE needs (qoslab.switch.legacyssh),
    ``modern`` offers paramiko's defaults only."""

    host: str
    port: int = Field(22, ge=1, le=65535)
    credentials_file: Path | None = None
    known_hosts: Path
    timeout_s: float = Field(20.0, gt=0, le=600)
    credentials_from_env: bool = True
    ssh_profile: Literal["c3750", "modern"] = "c3750"
    #: the switch platform (qoslab.registry.platforms): device type, QoS lines, counters
    platform: str = "catalyst3750"

    def file_problem(self) -> tuple[str, str] | None:
        """What the push would find wrong with the files this device reads, without reading a
        secret: (field, problem) for a credentials file that is missing, not a regular file or
        readable by others (checked even when the environment gives the login: a device file
        names only a private file), no credentials at all, or a known_hosts file that is missing,
        not a regular file (a named pipe would block the SSH client, ``/dev/zero`` never end),
        unreadable or larger than MAX_KNOWN_HOSTS_BYTES; None when both are fine."""
        if self.credentials_file is not None and (why := _private_file_problem(self.credentials_file)) is not None:
            return "credentials_file", why
        if self.credentials_file is None and not (self.credentials_from_env and Credentials.from_env() is not None):
            return "credentials_file", f"none given and {'/'.join(CREDENTIAL_ENV)} not all set"
        if (why := _readable_file_problem(self.known_hosts, MAX_KNOWN_HOSTS_BYTES)) is not None:
            return "known_hosts", why
        return None

    def credentials(self) -> Credentials:
        """The login: the environment's when set, else the credentials file's. Raises QoslabError."""
        env = Credentials.from_env() if self.credentials_from_env else None
        if env is not None:
            return env
        if self.credentials_file is None:
            raise QoslabError(f"switch {self.host}:{self.port}: no credentials: set "
                              f"{'/'.join(CREDENTIAL_ENV)} or credentials_file")
        return Credentials.load(self.credentials_file)
