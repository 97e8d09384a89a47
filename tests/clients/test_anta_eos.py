"""Arista's ANTA (``anta nrfu``, 1.10) against the virtual Arista 7280R3 over eAPI (issue 49):
the catalog of its hardware-independent tests (switch-configs/anta/catalog.yml: system,
interfaces, configuration, services, software) runs with no test in ``error``, the tests pass
but the three whose failures are properties of the testbed (switch-configs/README.md, "ANTA"):
no NTP server, no loopback, 10 Mbit/s links on 25G ports. Reference for the JSON models: ANTA's
unit-test data (aristanetworks/anta tests/units/anta_tests/test_*.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

SWITCH_MODEL = "DCS-7280SR3-48YC8"
SSH_PROFILE = "modern"
EAPI = True
CATALOG = REPO / "switch-configs" / "anta" / "catalog.yml"
#: test -> the words its failure message must hold (the testbed's property)
EXPECTED_FAILURES = {
    "VerifyNTP": "NTP is disabled",
    "VerifyLoopbackCount": "Expected 1 Actual: 0",
    "VerifyInterfacesSpeed": "Expected: 25.0Gbps Actual: 0.01Gbps",
}


def _nrfu(vswitch, tmp: Path) -> list[dict]:
    pytest.importorskip("anta")
    inv = tmp / "inventory.yml"
    inv.write_text(yaml.safe_dump({"anta_inventory": {"hosts": [
        {"host": vswitch.host, "port": vswitch.eapi_port, "name": "vswitch"}]}}))
    out = tmp / "results.json"
    anta = Path(sys.executable).with_name("anta")
    p = subprocess.run([str(anta), "nrfu", "-u", vswitch.username, "-p", vswitch.password, "--enable",
                        "--enable-password", vswitch.secret, "-i", str(inv), "-c", str(CATALOG), "--ignore-status",
                        "json", "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert out.exists(), p.stdout[-2000:] + p.stderr[-2000:]
    return json.loads(out.read_text())


def test_anta_nrfu_no_error_and_only_the_testbeds_failures(vswitch, tmp_path):
    results = _nrfu(vswitch, tmp_path)
    catalog = yaml.safe_load(CATALOG.read_text())
    assert len(results) == sum(len(v) for v in catalog.values()) == 32
    by = {r["test"]: r for r in results}
    errors = {t: r["messages"] for t, r in by.items() if r["result"] == "error"}
    assert not errors
    failures = {t: " ".join(r["messages"]) for t, r in by.items() if r["result"] == "failure"}
    assert set(failures) == set(EXPECTED_FAILURES), failures
    for test, words in EXPECTED_FAILURES.items():
        assert words in failures[test], failures[test]
    assert all(r["result"] in ("success", "failure") for r in results), [r for r in results if r["result"] == "skipped"]
