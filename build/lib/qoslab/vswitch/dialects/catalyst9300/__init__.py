"""The virtual Catalyst 9300 (IOS-XE 17.9 on a C9300-24T): the dialect ``c9300``.

- :mod:`.commands`: its EXEC table (the IOS family's, no ``show mls``, and the fed queue stats);
- :mod:`.show`: its show dispatch; :mod:`.show_sys` (version, inventory, environment, interfaces,
  CPU), :mod:`.show_mqc` (class-map, policy-map, policy-map interface) and :mod:`.show_fed` (UADP
  queue counters), pure;
- :mod:`.counters`: the egress queue counters from the kernel readings;
- :data:`SSH_XE17`: the SSH algorithms of IOS-XE 17.x.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ...execparse import ExecCommand, ExecTable
from ...sshprofile import SshProfile
from ..base import Dialect, ShowContext
from .commands import C9300_TABLE
from .flash_xe import XeFlash
from .show import show_9300

#: What an IOS-XE 17.x switch offers (Cisco IOS XE 17 Security Configuration Guide, "Configuring
#: Secure Shell", ``ip ssh server algorithm``): an RSA host key signed with SHA-2
#: (``rsa-sha2-512``, ``rsa-sha2-256``), ECDH over the NIST curves and Diffie-Hellman groups 14/16
#: with SHA-2, AES-GCM and AES-CTR, SHA-2 MACs (encrypt-then-MAC first). No SHA-1, no CBC, no
#: curve25519: stock Netmiko ``cisco_xe`` (paramiko 5) connects as to the hardware.
SSH_XE17 = SshProfile(
    name="iosxe17", host_key_type="ssh-rsa", host_key_algs=("rsa-sha2-512", "rsa-sha2-256"),
    kex_algs=("ecdh-sha2-nistp256", "ecdh-sha2-nistp384", "ecdh-sha2-nistp521", "diffie-hellman-group14-sha256",
              "diffie-hellman-group16-sha512"),
    encryption_algs=("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes192-ctr", "aes256-ctr"),
    mac_algs=("hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com", "hmac-sha2-256", "hmac-sha2-512"))


class Catalyst9300(Dialect):
    """``c9300``: C9300 (and the C9200, same MQC), IOS-XE 17.x."""

    name = "c9300"
    grammar = "c9300"
    model_prefixes = ("C9300", "C9200", "CATALYST9300")
    boot_seconds = 180
    ssh_profiles: ClassVar[tuple[SshProfile, ...]] = (SSH_XE17,)
    commands: ClassVar[ExecTable] = C9300_TABLE

    def flash(self, sw: Any) -> XeFlash:
        return XeFlash(sw.dir / "flash", sw.dir / "startup-config", sw.booted)

    def show(self, sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str:
        return show_9300(sw, cmd, ctx)
