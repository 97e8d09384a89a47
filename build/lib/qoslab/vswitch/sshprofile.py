"""SSH algorithm profiles of the virtual switch: what its SSH server announces.

An :class:`SshProfile` is a server's algorithm lists and host key type. Each platform's profiles
live with its dialect (:attr:`qoslab.vswitch.dialects.Dialect.ssh_profiles`, the first its
default: the 3750's 12.2(55)SE lists in :mod:`qoslab.vswitch.dialects.catalyst3750`); here is
only ``modern``, what asyncssh offers by default (ed25519/RSA-SHA2 host keys, curve25519/ECDH key
exchange, CTR/GCM ciphers, SHA-2 MACs), and the lookup (:func:`ssh_profile`): a topology's
``switch.management.ssh_profile`` by name, else the dialect's default.

Which client settings connect to the 3750's profile: see src/qoslab/vswitch/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SshProfile:
    """The algorithm lists an SSH server announces (in order of preference) and its host key type
    (an asyncssh key algorithm name); empty lists: asyncssh's own defaults."""

    name: str
    host_key_type: str
    host_key_algs: tuple[str, ...]
    kex_algs: tuple[str, ...]
    encryption_algs: tuple[str, ...]
    mac_algs: tuple[str, ...]

    def server_options(self) -> dict[str, list[str]]:
        """Keyword arguments of :func:`asyncssh.create_server` that announce this profile
        (``()``: asyncssh's own defaults)."""
        opts = {"kex_algs": self.kex_algs, "encryption_algs": self.encryption_algs, "mac_algs": self.mac_algs,
                "signature_algs": self.host_key_algs}
        return {k: list(v) for k, v in opts.items() if v}


#: asyncssh's defaults: what a client of today expects.
MODERN = SshProfile(name="modern", host_key_type="ssh-ed25519", host_key_algs=(), kex_algs=(),
                    encryption_algs=(), mac_algs=())


def known_profiles() -> dict[str, SshProfile]:
    """Every profile by name: ``modern`` and each registered dialect's."""
    from ..registry import dialects

    out = {MODERN.name: MODERN}
    for name in dialects.names():
        for p in getattr(dialects.get(name)(), "ssh_profiles", ()):
            out.setdefault(p.name, p)
    return out


def ssh_profile(name: str | None, dialect: Any = None) -> SshProfile:
    """The profile called ``name``; None: ``dialect``'s default (the first of its
    ``ssh_profiles``), ``modern`` without a dialect. Raises KeyError for an unknown name (the
    topology's validator only lets known names through)."""
    if name is None:
        return dialect.ssh_profiles[0] if dialect is not None and dialect.ssh_profiles else MODERN
    mine = {p.name: p for p in (dialect.ssh_profiles if dialect is not None else ())}
    return mine[name] if name in mine else known_profiles()[name]
