"""Ansible ``cisco.ios`` (which manages IOS-XE too) against the virtual Catalyst 9300 (issue 36):
facts from the IOS-XE ``show version``, the thesis profile rendered as MQC pushed with
``ios_config`` (``src``, ``save_when``), a second push that changes nothing. Run as
tests/clients/test_ansible.py runs the 3750's (libssh with the legacy algorithms)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO

from .test_ansible import ANSIBLE, LEGACY_SSH_CONFIG, LEGACY_VARS

SWITCH_MODEL = "C9300-24T"
PLAY = [{"hosts": "sw", "gather_facts": False, "tasks": [
    {"name": "facts", "cisco.ios.ios_facts": {"gather_subset": "min"}},
    {"name": "hardware", "cisco.ios.ios_facts": {"gather_subset": "hardware"}},
    {"name": "push", "cisco.ios.ios_config": {"src": "thesis.ios", "save_when": "modified"}},
    {"name": "repush", "cisco.ios.ios_config": {"src": "thesis.ios", "save_when": "modified"}},
]}]


@pytest.fixture(scope="module")
def results(vswitch, tmp_path_factory):
    if not ANSIBLE.exists():
        pytest.fail(f"{ANSIBLE} missing: `make setup` installs the test extras (ansible)")
    tmp: Path = tmp_path_factory.mktemp("ansible-xe")
    inv = {"all": {"hosts": {"sw": {
        "ansible_host": vswitch.host, "ansible_port": vswitch.port, "ansible_user": vswitch.username,
        "ansible_password": vswitch.password, "ansible_connection": "ansible.netcommon.network_cli",
        "ansible_network_os": "cisco.ios.ios", "ansible_become": True, "ansible_become_method": "enable",
        "ansible_become_password": vswitch.secret, **LEGACY_VARS}}}}
    (tmp / "inv.yml").write_text(yaml.safe_dump(inv))
    os.chmod(tmp / "inv.yml", 0o600)
    (tmp / "play.yml").write_text(yaml.safe_dump(PLAY, sort_keys=False))
    lines = subprocess.run([str(ANSIBLE.parent / "python"), "-m", "qoslab", "switch", "render", "thesis", "-t",
                            str(vswitch.topology)], cwd=REPO, capture_output=True, text=True, check=True).stdout
    (tmp / "thesis.ios").write_text(lines)
    (tmp / "ssh_config").write_text(LEGACY_SSH_CONFIG)
    env = {**os.environ, "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json", "ANSIBLE_HOST_KEY_CHECKING": "False",
           "ANSIBLE_HOME": str(tmp / "home"), "ANSIBLE_LOCAL_TEMP": str(tmp / "tmp"),
           "ANSIBLE_PERSISTENT_CONNECT_TIMEOUT": "20", "ANSIBLE_NOCOLOR": "1", "ANSIBLE_DEPRECATION_WARNINGS": "False"}
    cmd = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
           'mount --bind "$0" /etc/ssh/ssh_config && exec "$@"', str(tmp / "ssh_config"),
           str(ANSIBLE), "-i", "inv.yml", "play.yml"]
    p = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
    out = p.stdout[p.stdout.index("{"):]
    return {t["task"]["name"]: t["hosts"]["sw"] for t in json.loads(out)["plays"][0]["tasks"]}


def test_facts_push_and_idempotent_repush(results, vswitch):
    f = results["facts"]["ansible_facts"]
    assert f["ansible_net_model"] == "C9300-24T" and f["ansible_net_version"] == "17.09.05"
    assert results["push"]["changed"] is True and "policy-map QOSLAB-QUEUING" in results["push"]["updates"]
    assert results["repush"]["changed"] is False, results["repush"]
    assert " service-policy output QOSLAB-QUEUING" in (vswitch.state / "startup-config").read_text()


def test_hardware_facts_are_the_9300s(results):
    """Issue 49: ios_facts' hardware subset reads the 9300's memory (its processor pool, not the
    3750's 128 MB) and its flash (11,353,194,496 bytes) from show memory statistics and dir."""
    f = results["hardware"]["ansible_facts"]
    assert f["ansible_net_memtotal_mb"] == 1338934 / 1024, f.get("ansible_net_memtotal_mb")  # 1307.6 MB
    assert "flash:" in f["ansible_net_filesystems"]
    assert f["ansible_net_filesystems_info"]["flash:"]["spacetotal_kb"] == 11353194496 / 1024
