"""Ansible's ``arista.eos`` collection against the virtual Arista 7280R3 (issue 44):
``eos_config`` over ``network_cli`` (SSH; a configuration session, its diff, commit) pushes the
thesis profile rendered for EOS and saves it, a second push changes nothing; ``eos_command`` over
``httpapi`` (eAPI over HTTPS) reads the switch back."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from .test_ansible import ANSIBLE, ansible_env

SWITCH_MODEL = "DCS-7280SR3-48YC8"
SSH_PROFILE = "modern"
EAPI = True
PLAY = [{"hosts": "cli", "gather_facts": False, "tasks": [
    {"name": "push", "arista.eos.eos_config": {"src": "thesis.eos", "save_when": "modified"}},
    {"name": "repush", "arista.eos.eos_config": {"src": "thesis.eos", "save_when": "modified"}}]},
    {"hosts": "api", "gather_facts": False, "tasks": [
        {"name": "read", "arista.eos.eos_command": {"commands": [
            "show version", {"command": "show interfaces Ethernet1 counters queue", "output": "json"},
            "show qos interfaces Ethernet1"]}}]}]


@pytest.fixture(scope="module")
def results(vswitch, tmp_path_factory):
    if not ANSIBLE.exists():
        pytest.fail(f"{ANSIBLE} missing: `make setup` installs the test extras (ansible)")
    tmp: Path = tmp_path_factory.mktemp("ansible-eos")
    common = {"ansible_host": vswitch.host, "ansible_user": vswitch.username, "ansible_password": vswitch.password,
              "ansible_network_os": "arista.eos.eos", "ansible_become": True, "ansible_become_method": "enable",
              "ansible_become_password": vswitch.secret}
    inv = {"all": {"hosts": {
        "cli": {**common, "ansible_port": vswitch.port, "ansible_connection": "ansible.netcommon.network_cli"},
        "api": {**common, "ansible_connection": "ansible.netcommon.httpapi", "ansible_httpapi_port": vswitch.eapi_port,
                "ansible_httpapi_use_ssl": True, "ansible_httpapi_validate_certs": False}}}}
    (tmp / "inv.yml").write_text(yaml.safe_dump(inv))
    os.chmod(tmp / "inv.yml", 0o600)
    (tmp / "play.yml").write_text(yaml.safe_dump(PLAY, sort_keys=False))
    (tmp / "thesis.eos").write_text("\n".join(vswitch.thesis_lines()) + "\n")
    p = subprocess.run([str(ANSIBLE), "-i", "inv.yml", "play.yml"], cwd=tmp, env=ansible_env(tmp), capture_output=True,
                       text=True, timeout=300)
    out = p.stdout[p.stdout.index("{"):]
    return {t["task"]["name"]: h for play in json.loads(out)["plays"] for t in play["tasks"]
            for h in t["hosts"].values()}


def test_eos_config_pushes_once_then_changes_nothing(results, vswitch):
    assert results["push"]["changed"] is True, results["push"]
    assert "policy-map type quality-of-service police-jp" in results["push"]["updates"]
    assert results["repush"]["changed"] is False, results["repush"]
    assert "   service-policy type qos input police-jp" in (vswitch.state / "startup-config").read_text()


def test_eos_command_reads_over_eapi(results):
    r = results["read"]
    assert not r.get("failed"), r
    assert r["stdout"][0].startswith("Arista DCS-7280SR3-48YC8")
    assert set(r["stdout"][1]["ingressVoqCounters"]["interfaces"]["Ethernet1"]["trafficClasses"]) == \
        {f"TC{n}" for n in range(8)}
    assert "Trust Mode:" in r["stdout"][2]
