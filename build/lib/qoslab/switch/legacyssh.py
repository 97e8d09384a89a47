"""SHA-1 era SSH for paramiko, so qoslab's Netmiko push reaches a Catalyst 3750 on 12.2(55)SE.

Such a switch offers only ``diffie-hellman-group1-sha1`` / ``diffie-hellman-group14-sha1`` key
exchange and an ``ssh-rsa`` (RSA with SHA-1) host key. paramiko 4/5 removed both (no option
re-enables them: ``disabled_algorithms`` only takes away), so Netmiko over a stock paramiko fails
with "Incompatible ssh peer (no acceptable kex algorithm)". :class:`LegacyTransport` is a
paramiko Transport that, *after* paramiko's own preferences, also offers:

- ``diffie-hellman-group14-sha1``: paramiko's group-14 exchange with SHA-1 as the hash
  (RFC 4253 section 8.2; the group of RFC 3526 section 3);
- ``diffie-hellman-group1-sha1``: the same with the 1024-bit Oakley group 2 (RFC 2409 section
  6.2, RFC 4253 section 8.1);
- ``ssh-rsa`` host keys verified with SHA-1 (RFC 4253 section 6.6).

The CBC ciphers (``aes128-cbc``, ``3des-cbc``) and ``hmac-sha1`` are still in paramiko's lists.
A modern server is still negotiated with modern algorithms (the client's order wins, RFC 4253
section 7.1), so the device setting ``ssh_profile: c3750`` costs nothing against one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from hashlib import sha1
from typing import Any

import paramiko
from cryptography.hazmat.primitives import hashes
from paramiko.kex_group14 import KexGroup14SHA256


class KexGroup14SHA1(KexGroup14SHA256):
    """``diffie-hellman-group14-sha1`` (RFC 4253 section 8.2, group of RFC 3526 section 3)."""

    name = "diffie-hellman-group14-sha1"
    hash_algo = sha1


class KexGroup1SHA1(KexGroup14SHA256):
    """``diffie-hellman-group1-sha1``: the 1024-bit MODP group of RFC 2409 section 6.2 (Oakley
    group 2), generator 2 (RFC 4253 section 8.1)."""

    P = int(
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
        "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
        "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF", 16)
    name = "diffie-hellman-group1-sha1"
    hash_algo = sha1


class SshRsaSha1Key(paramiko.RSAKey):
    """An RSA host key that also verifies ``ssh-rsa`` (SHA-1) signatures (RFC 4253 section 6.6)."""

    HASHES = {**paramiko.RSAKey.HASHES, "ssh-rsa": hashes.SHA1}


class LegacyTransport(paramiko.Transport):
    """paramiko's Transport with the SHA-1 key exchanges and ``ssh-rsa`` host keys appended to its
    preferences (see the module doc)."""

    _preferred_kex = (*paramiko.Transport._preferred_kex, KexGroup14SHA1.name, KexGroup1SHA1.name)
    _kex_info = {**paramiko.Transport._kex_info, KexGroup14SHA1.name: KexGroup14SHA1,
                 KexGroup1SHA1.name: KexGroup1SHA1}
    _preferred_keys = (*paramiko.Transport._preferred_keys, "ssh-rsa")
    _key_info = {**paramiko.Transport._key_info, "ssh-rsa": SshRsaSha1Key}


def connect_kwargs(profile: str) -> dict[str, Any]:
    """Extra keyword arguments of ``paramiko.SSHClient.connect`` for an SSH profile
    (``c3750``: ``transport_factory=LegacyTransport``; ``modern``: none)."""
    return {"transport_factory": LegacyTransport} if profile == "c3750" else {}


def netmiko_class(profile: str) -> type:
    """The Netmiko ``cisco_ios`` connection class for an SSH profile: Netmiko's own for
    ``modern``; for ``c3750`` its subclass whose paramiko client uses :class:`LegacyTransport`
    (Netmiko 4.x has no option for a transport; its ``_connect_params_dict`` is the hook)."""
    from netmiko.cisco.cisco_ios import CiscoIosSSH

    if profile != "c3750":
        return CiscoIosSSH

    class CiscoIosLegacySSH(CiscoIosSSH):
        def _connect_params_dict(self) -> dict[str, Any]:
            return {**super()._connect_params_dict(), **connect_kwargs(profile)}

    return CiscoIosLegacySSH


@contextmanager
def paramiko_default_transport() -> Iterator[None]:
    """While in the block, every ``paramiko.SSHClient.connect`` that names no transport uses
    :class:`LegacyTransport`: the route for clients that build their own paramiko client and take
    no transport option (NAPALM ``ios``, which opens Netmiko's ``ConnectHandler``; keep the block
    open for the driver's whole session: its SCP transfers open connections of their own).
    Process-wide while it lasts; sessions opened inside keep their transport afterwards."""
    import paramiko.client

    saved = paramiko.client.Transport
    paramiko.client.Transport = LegacyTransport
    try:
        yield
    finally:
        paramiko.client.Transport = saved


def quiet_paramiko() -> None:
    """Keep paramiko's own log records (a failed key exchange logs its whole traceback at ERROR)
    off the terminal: the caller reports the failure in one line. Records still reach handlers an
    application configures on the root logger."""
    log = logging.getLogger("paramiko")
    if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
        log.addHandler(logging.NullHandler())
