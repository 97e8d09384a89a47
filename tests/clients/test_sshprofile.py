"""The virtual Catalyst's default SSH profile is a 3750 on 12.2(55)SE (qoslab.vswitch.sshprofile):
what it announces, what a stock paramiko 5 makes of it (refused), and which client settings
connect (qoslab's LegacyTransport, group1 alone included; qoslab's own push)."""

from __future__ import annotations

import subprocess
import sys

import paramiko
import pytest

from conftest import REPO
from qoslab.switch.legacyssh import LegacyTransport
from sshwire import kexinit


def test_announces_a_3750s_algorithms(vswitch):
    kex, hostkey, enc, _, mac, *_ = kexinit(vswitch.host, vswitch.port)
    assert kex.split(",")[:2] == ["diffie-hellman-group1-sha1", "diffie-hellman-group14-sha1"]
    assert "curve25519" not in kex and hostkey == "ssh-rsa"
    assert enc == "aes128-cbc,3des-cbc,aes192-cbc,aes256-cbc" and mac.startswith("hmac-sha1,")
    assert (vswitch.state / "ssh_host_key.pub").read_text().startswith("ssh-rsa ")


class _Recording(LegacyTransport):
    """LegacyTransport that keeps the name of the key exchange it agreed on."""

    agreed = ""

    def _parse_kex_init(self, m):
        super()._parse_kex_init(m)
        self.agreed = self.kex_engine.name


def _connect(sw, **kw) -> paramiko.SSHClient:
    c = paramiko.SSHClient()
    c.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    c.connect(sw.host, sw.port, sw.username, sw.password, allow_agent=False, look_for_keys=False, timeout=10, **kw)
    return c


def test_stock_paramiko_is_refused_legacy_transport_connects(vswitch):
    with pytest.raises(paramiko.SSHException, match="no acceptable kex"):
        _connect(vswitch)
    for disabled, kex in (({}, "diffie-hellman-group14-sha1"),
                          ({"kex": ["diffie-hellman-group14-sha1"]}, "diffie-hellman-group1-sha1")):
        c = _connect(vswitch, transport_factory=_Recording, disabled_algorithms=disabled)
        try:
            t = c.get_transport()
            assert t is not None and (t.agreed, t.host_key_type) == (kex, "ssh-rsa")
            assert (t.remote_cipher, t.remote_mac) == ("aes128-cbc", "hmac-sha1")
            _, out, _ = c.exec_command("show version", timeout=10)
            assert out.read().decode().startswith("Cisco IOS Software, C3750 Software")
        finally:
            c.close()


def test_qoslab_switch_push_connects(vswitch, tmp_path):
    """``qoslab switch push`` (Netmiko, device ``virtual``: ssh_profile c3750 from the topology,
    host key pinned) pushes, and a second push sends nothing."""
    cmd = [sys.executable, "-m", "qoslab", "switch", "push", "thesis", "-t", str(vswitch.topology), "--out",
           str(tmp_path)]
    first = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0 and "pushed" in first.stdout, first.stdout + first.stderr
    again = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "nothing sent" in again.stdout, again.stdout + again.stderr


def test_push_with_the_modern_profile_fails_in_one_line(vswitch, tmp_path):
    """A device file with ``ssh_profile: modern`` (stock paramiko) against a 3750: refused with a
    one-line error that names the setting, no traceback (paramiko's own log records silenced)."""
    kh = tmp_path / "known_hosts"
    kh.write_text(f"[{vswitch.host}]:{vswitch.port} " + (vswitch.state / "ssh_host_key.pub").read_text())
    dev = tmp_path / "dev.yaml"
    dev.write_text(f"device: catalyst\nhost: {vswitch.host}\nport: {vswitch.port}\n"
                   f"credentials_file: {vswitch.state / 'credentials'}\nknown_hosts: {kh}\nssh_profile: modern\n")
    p = subprocess.run([sys.executable, "-m", "qoslab", "switch", "push", "thesis", "--device", str(dev), "-t",
                        str(vswitch.topology), "--out", str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode != 0 and "Traceback" not in p.stderr + p.stdout
    assert "no SSH algorithm in common with ssh_profile modern" in p.stderr and "ssh_profile: c3750" in p.stderr
