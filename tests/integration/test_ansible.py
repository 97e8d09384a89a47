"""``qoslab inventory`` + ``ansible-playbook playbooks/ansible/provision.yml`` against the
testbed's per-namespace sshd: the first run succeeds, the second changes nothing. (Limited to
two hosts, head/receiver jp-1 and sender jp-5, to stay fast: the packages are already installed
here, so the run verifies them, copies the jars and records the NIC and clock facts.)"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ECENET

from .conftest import qoslab

ANSIBLE = Path(sys.executable).parent / "ansible-playbook"
pytestmark = pytest.mark.skipif(not ANSIBLE.exists(), reason="ansible-core not installed (make setup)")


def _recap(out: str) -> dict[str, dict[str, int]]:
    rows = re.findall(r"^(\S+)\s+:\s+(.+)$", out.split("PLAY RECAP", 1)[-1], re.M)
    return {h: {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", rest)} for h, rest in rows}


def test_provision_twice_second_run_changes_nothing(testbed, tmp_path):
    testbed.sshd_up()
    topo = tmp_path / "topo.yaml"
    topo.write_text(yaml.safe_dump(testbed.topo.model_dump(mode="json"), sort_keys=False))
    inv = tmp_path / "inventory.yml"
    r = qoslab("inventory", "-t", str(topo), "-o", str(inv))
    assert r.returncode == 0, r.stderr
    assert oct(inv.stat().st_mode & 0o777) == "0o600"
    dest, facts = tmp_path / "opt-qoslab", tmp_path / "facts"
    argv = [str(ANSIBLE), "-i", str(inv), str(ECENET.parents[1] / "ansible" / "provision.yml"),
            "--limit", "jp-1,jp-5", "-e", f"qoslab_dir={dest}", "-e", f"qoslab_facts_dir={facts}"]
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_SSH_CONTROL_PATH_DIR": str(tmp_path / "cp"),
           "ANSIBLE_LOCAL_TEMP": str(tmp_path / "atmp")}
    runs = [subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    first, second = (_recap(run.stdout) for run in runs)
    assert set(first) == set(second) == {"jp-1", "jp-5"}
    assert all(v["failed"] == 0 and v["unreachable"] == 0 for v in first.values())
    assert sum(v["changed"] for v in first.values()) > 0  # jars copied, facts recorded
    assert all(v["changed"] == 0 and v["failed"] == 0 for v in second.values()), second
    assert (dest / "java-workload" / "target" / "qoslab-workload-0.1.0.jar").read_bytes() == \
        (ECENET.parents[2] / "java-workload" / "target" / "qoslab-workload-0.1.0.jar").read_bytes()
    nic = json.loads((facts / "jp-5-nic.json").read_text())
    assert nic["iface"] == "eth0" and nic["tcp-segmentation-offload"] == "off" and nic["duplex"] == "Full"
    shutil.rmtree(dest)
