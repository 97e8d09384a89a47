"""Ansible ``cisco.ios`` over ``ansible.netcommon.network_cli`` against the virtual Catalyst, run
with ``ansible-playbook`` as its users run it: become (enable) with ``show privilege``,
``ios_facts`` with every subset, ``ios_config`` with ``src``, ``lines``/``parents``, ``backup``
and ``save_when``, a second push that changes nothing, the resource modules ``ios_acls`` and
``ios_interfaces`` with ``state: gathered``, an invalid line, a wrong password."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ANSIBLE = Path(sys.executable).parent / "ansible-playbook"

PLAY = [{"hosts": "sw", "gather_facts": False, "tasks": [
    {"name": "facts", "cisco.ios.ios_facts": {"gather_subset": "all"}},
    {"name": "push", "cisco.ios.ios_config": {"src": "thesis.ios", "save_when": "modified", "backup": True}},
    {"name": "repush", "cisco.ios.ios_config": {"src": "thesis.ios", "save_when": "modified"}},
    {"name": "lines", "cisco.ios.ios_config": {"parents": "interface GigabitEthernet1/0/5",
                                                "lines": ["description jp-5"]}},
    {"name": "lines again", "cisco.ios.ios_config": {"parents": "interface GigabitEthernet1/0/5",
                                                      "lines": ["description jp-5"]}},
    {"name": "named acl", "cisco.ios.ios_config": {"parents": "ip access-list extended scavenger",
                                                    "lines": ["permit udp any any eq 9"]}},
    {"name": "acls", "cisco.ios.ios_acls": {"state": "gathered"}},
    {"name": "interfaces", "cisco.ios.ios_interfaces": {"state": "gathered"}},
    {"name": "bad line", "cisco.ios.ios_config": {
        "lines": ["mls qos srr-queue input priority-queue input 2 bandwidth 40"]}, "ignore_errors": True},
]}]


#: What cisco.ios over network_cli (libssh, ansible-pylibssh) needs for a 3750 on 12.2(55)SE: the
#: SHA-1 key exchanges and ssh-rsa host keys as inventory variables ...
LEGACY_VARS = {"ansible_network_cli_ssh_type": "libssh",
               "ansible_libssh_key_exchange_algorithms": "+diffie-hellman-group14-sha1,diffie-hellman-group1-sha1",
               "ansible_libssh_hostkeys": "+ssh-rsa"}
#: ... and CBC ciphers and hmac-sha1 in the ssh_config libssh reads (pylibssh has no option for them)
LEGACY_SSH_CONFIG = "Ciphers +aes128-cbc,aes256-cbc,3des-cbc\nMACs +hmac-sha1\n"


def ansible_env(tmp: Path) -> dict[str, str]:
    """ansible-playbook's environment for a test in ``tmp``: JSON output, no host key checks, its
    own home and temp folders."""
    return {**os.environ, "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json", "ANSIBLE_HOST_KEY_CHECKING": "False",
            "ANSIBLE_HOME": str(tmp / "home"), "ANSIBLE_LOCAL_TEMP": str(tmp / "tmp"),
            "ANSIBLE_PERSISTENT_CONNECT_TIMEOUT": "20", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_DEPRECATION_WARNINGS": "False"}


def run_play(sw, tmp: Path, play: list, password: str | None = None) -> dict:
    """Run ``play`` with ``ansible-playbook`` against ``sw`` (network_cli over libssh with the
    3750's algorithms, become enable) in ``tmp``: {task name: its result}."""
    inv = {"all": {"hosts": {"sw": {
        "ansible_host": sw.host, "ansible_port": sw.port, "ansible_user": sw.username,
        "ansible_password": password or sw.password, "ansible_connection": "ansible.netcommon.network_cli",
        "ansible_network_os": "cisco.ios.ios", "ansible_become": True, "ansible_become_method": "enable",
        "ansible_become_password": sw.secret, **LEGACY_VARS}}}}
    (tmp / "inv.yml").write_text(yaml.safe_dump(inv))
    os.chmod(tmp / "inv.yml", 0o600)
    (tmp / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    env = ansible_env(tmp)
    (tmp / "ssh_config").write_text(LEGACY_SSH_CONFIG)
    # libssh reads the ciphers and MACs only from an ssh_config (~/.ssh/config or /etc/ssh/ssh_config):
    # this machine's stays untouched, a private mount namespace shows the test's in its place
    cmd = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
           'mount --bind "$0" /etc/ssh/ssh_config && exec "$@"', str(tmp / "ssh_config"),
           str(ANSIBLE), "-i", "inv.yml", "play.yml"]
    p = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
    out = p.stdout[p.stdout.index("{"):]
    return {t["task"]["name"]: t["hosts"]["sw"] for t in json.loads(out)["plays"][0]["tasks"]}


def _run(sw, tmp: Path, password: str | None = None) -> dict:
    (tmp / "thesis.ios").write_text("\n".join(sw.thesis_lines()) + "\n")
    return run_play(sw, tmp, PLAY, password)


@pytest.fixture(scope="module")
def results(vswitch, tmp_path_factory):
    if not ANSIBLE.exists():
        pytest.fail(f"{ANSIBLE} missing: `make setup` installs the test extras (ansible)")
    tmp = tmp_path_factory.mktemp("ansible")
    yield _run(vswitch, tmp), tmp
    shutil.rmtree(tmp, ignore_errors=True)


def test_become_and_all_facts(results):
    r, _ = results
    f = r["facts"]["ansible_facts"]
    assert not r["facts"].get("failed")
    assert f["ansible_net_version"] == "12.2(55)SE12" and f["ansible_net_model"] == "WS-C3750G-24T"
    assert f["ansible_net_serialnum"].startswith("QSL") and f["ansible_net_hostname"] == "Switch"
    assert sorted(f["ansible_net_interfaces"]) == sorted(["Vlan1"] + [f"GigabitEthernet1/0/{i}" for i in range(1, 25)])
    assert f["ansible_net_filesystems"] == ["flash:"] and "hostname Switch" in f["ansible_net_config"]
    assert f["ansible_net_interfaces"]["GigabitEthernet1/0/1"]["operstatus"] == "up"


def test_config_push_backup_save_and_idempotence(results, vswitch):
    r, tmp = results
    assert r["push"]["changed"] is True and "policy-map police-jp" in r["push"]["updates"]
    assert Path(r["push"]["backup_path"]).read_text().count("hostname Switch") == 1
    assert r["repush"]["changed"] is False
    assert r["lines"]["changed"] is True and r["lines again"]["changed"] is False
    startup = (vswitch.state / "startup-config").read_text()
    assert "policy-map police-jp" in startup  # save_when: modified wrote it


def test_resource_modules_gathered(results):
    r, _ = results
    acls = {a["name"]: a for a in r["acls"]["gathered"][0]["acls"]}
    assert r["acls"]["gathered"][0]["afi"] == "ipv4" and {"100", "112", "scavenger"} <= set(acls)
    # cisco.ios parses ACEs from "ip access-list extended NAME" sections only; IOS 12.2 shows numbered
    # lists as "access-list N ..." lines, so they come back by name (from `show access-lists`), as on hardware
    ace = acls["scavenger"]["aces"][0]  # typed `eq 9`: IOS prints the keyword (`eq discard`)
    assert (ace["grant"], ace["protocol"], ace["destination"]["port_protocol"]) == ("permit", "udp", {"eq": "discard"})
    ifs = {i["name"]: i for i in r["interfaces"]["gathered"]}
    assert len(ifs) == 25 and "Vlan1" in ifs  # 24 ports and interface Vlan1, as a 3750 lists them
    assert ifs["GigabitEthernet1/0/5"]["description"] == "jp-5"


def test_invalid_line_fails_with_the_ios_error(results):
    r, _ = results
    assert r["bad line"]["failed"] is True and "Invalid input detected" in r["bad line"]["msg"]


def test_wrong_password_is_refused(vswitch, tmp_path):
    r = _run(vswitch, tmp_path, password="not-the-password")
    facts = r["facts"]
    assert facts.get("unreachable") or facts.get("failed")
    assert "auth" in json.dumps(facts).lower()
