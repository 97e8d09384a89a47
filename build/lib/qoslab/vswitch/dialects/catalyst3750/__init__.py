"""The virtual Catalyst 3750 (IOS 12.2(55)SE on a WS-C3750G-24T): the dialect ``c3750``.

- :mod:`.commands`: its EXEC table (the IOS family's and ``show mls qos ...``);
- :mod:`.show`: its show dispatch; :mod:`.show_sys` (version, inventory, interfaces, VLANs,
  environment) and :mod:`.show_mqc` (class-map, policy-map, policy-map interface), pure;
  ``show mls qos ...`` from :mod:`qoslab.ios.show_qos`;
- :mod:`.counters`: ``show mls qos interface statistics`` from the kernel readings;
- :data:`SSH_3750`: the SSH algorithms of a 3750 on 12.2(55)SE.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...execparse import ExecCommand, ExecTable
from ...sshprofile import SshProfile
from ..base import Dialect, ShowContext
from .commands import C3750_TABLE
from .show import show_3750

#: A Catalyst 3750 on 12.2(55)SE: SSH version 2 with an RSA host key (``crypto key generate rsa``)
#: signed with ``ssh-rsa`` (SHA-1), Diffie-Hellman key exchange with SHA-1
#: (``diffie-hellman-group1-sha1``; ``diffie-hellman-group14-sha1`` once ``ip ssh dh min size
#: 2048``), CBC ciphers (AES and 3DES) and HMAC-SHA1/MD5 (Catalyst 3750 Software Configuration
#: Guide 12.2(55)SE, "Configuring Secure Shell"; the lists match what OpenSSH reports as such a
#: switch's "Their offer: ..."). Nothing of today's (curve25519, CTR/GCM, ed25519, SHA-2) is
#: offered: a client that only speaks those fails here as it fails against the hardware.
SSH_3750 = SshProfile(
    name="c3750", host_key_type="ssh-rsa", host_key_algs=("ssh-rsa",),
    kex_algs=("diffie-hellman-group1-sha1", "diffie-hellman-group14-sha1"),
    encryption_algs=("aes128-cbc", "3des-cbc", "aes192-cbc", "aes256-cbc"),
    mac_algs=("hmac-sha1", "hmac-sha1-96", "hmac-md5", "hmac-md5-96"))


class Catalyst3750(Dialect):
    """``c3750``: WS-C3750 (and the 3560, same CLI), IOS 12.2(55)SE."""

    name = "c3750"
    grammar = "c3750"
    model_prefixes = ("WS-C3750", "WS-C3560", "CATALYST3750")
    #: a WS-C3750G's power-on to its first CLI prompt (POST, image decompression, config load:
    #: about three minutes)
    boot_seconds = 180
    ssh_profiles: ClassVar[tuple[SshProfile, ...]] = (SSH_3750,)
    commands: ClassVar[ExecTable] = C3750_TABLE

    def show(self, sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str:
        return show_3750(sw, cmd, ctx)
