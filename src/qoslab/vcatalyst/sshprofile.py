"""SSH algorithm profiles of the virtual Catalyst: what its SSH server announces, per IOS dialect.

``c3750`` (the default) is a Catalyst 3750 on 12.2(55)SE: SSH version 2 with an RSA host key
(``crypto key generate rsa``) signed with ``ssh-rsa`` (SHA-1), Diffie-Hellman key exchange with
SHA-1 (``diffie-hellman-group1-sha1``; ``diffie-hellman-group14-sha1`` once
``ip ssh dh min size 2048``), CBC ciphers (AES and 3DES) and HMAC-SHA1/MD5 (Catalyst 3750 Software
Configuration Guide 12.2(55)SE, "Configuring Secure Shell"; the lists match what OpenSSH reports
as such a switch's "Their offer: ..."). Nothing of today's (curve25519, CTR/GCM, ed25519, SHA-2)
is offered: a client that only speaks those fails here as it fails against the hardware.

``modern`` is what an IOS-XE switch of today offers (and what asyncssh offers by default):
ed25519/RSA-SHA2 host keys, curve25519/ECDH key exchange, CTR/GCM ciphers, SHA-2 MACs.

Which client settings connect to the ``c3750`` profile: see src/qoslab/vcatalyst/README.md.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The profile the virtual Catalyst uses when the topology names none.
DEFAULT_PROFILE = "c3750"


@dataclass(frozen=True)
class SshProfile:
    """The algorithm lists an SSH server announces (in order of preference) and its host key type
    (an asyncssh key algorithm name)."""

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


PROFILES: dict[str, SshProfile] = {
    "c3750": SshProfile(
        name="c3750", host_key_type="ssh-rsa", host_key_algs=("ssh-rsa",),
        kex_algs=("diffie-hellman-group1-sha1", "diffie-hellman-group14-sha1"),
        encryption_algs=("aes128-cbc", "3des-cbc", "aes192-cbc", "aes256-cbc"),
        mac_algs=("hmac-sha1", "hmac-sha1-96", "hmac-md5", "hmac-md5-96")),
    "modern": SshProfile(name="modern", host_key_type="ssh-ed25519", host_key_algs=(), kex_algs=(),
                         encryption_algs=(), mac_algs=()),
}


def ssh_profile(name: str | None) -> SshProfile:
    """The profile called ``name`` (None: :data:`DEFAULT_PROFILE`). Raises KeyError for another
    name (the topology's validator only lets :data:`PROFILES`' names through)."""
    return PROFILES[name or DEFAULT_PROFILE]
