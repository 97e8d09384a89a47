"""Arista AVD's output against the virtual Arista 7280R3 (issue 49): pyavd 6.4's
eos_cli_config_gen rendering of a leaf's QoS structured config (tests/data/eos/pyavd/:
qos-structured-config.yml, the input; pyavd-qos.cfg, pyavd's output; generate.py, how it was
made) pushed over eAPI in a configuration session as pyeapi does, with no line refused, reads
back in ``show running-config`` section for section as AVD wrote it, and a second push changes
nothing (an empty session diff)."""

from __future__ import annotations

import pytest

from conftest import REPO

SWITCH_MODEL = "DCS-7280SR3-48YC8"
SSH_PROFILE = "modern"
EAPI = True
FIXTURE = REPO / "tests" / "data" / "eos" / "pyavd" / "pyavd-qos.cfg"


def _sections(text: str) -> list[str]:
    """The sections of a configuration (``!``-separated), the factory's bare interfaces and the
    running-config's comment header left out."""
    out, cur = [], []
    for line in text.splitlines() + ["!"]:
        if line != "!":
            cur.append(line)
            continue
        s, cur = "\n".join(cur).strip("\n"), []
        if s and s != "end" and not s.startswith("! ") and not (s.startswith("interface Ethernet") and "\n" not in s):
            out.append(s)
    return out


def test_pyavds_qos_config_pushes_without_a_refused_line_and_reads_back_identical(vswitch):
    pyeapi = pytest.importorskip("pyeapi")
    node = pyeapi.connect(transport="https", host=vswitch.host, port=vswitch.eapi_port, username=vswitch.username,
                          password=vswitch.password, return_node=True, timeout=60)
    node.enable_authentication(vswitch.secret)
    lines = [x for x in FIXTURE.read_text().splitlines() if x.strip() not in ("!", "")]
    results = node.run_commands(["enable", "configure session avd1", *lines, "show session-config diffs",
                                 "commit"], encoding="text")
    assert all("%" not in r.get("output", "") for r in results), [r for r in results if "%" in r.get("output", "")]
    running = node.run_commands(["show running-config"], encoding="text")[0]["output"]
    want = [s for s in _sections(FIXTURE.read_text()) if not s.startswith("hostname ")]
    got = _sections(running)
    assert [s for s in got if s in want] == want, ([s for s in want if s not in got], running)
    again = node.run_commands(["enable", "configure session avd2", *lines, "show session-config diffs", "abort"],
                              encoding="text")
    assert again[-2]["output"].strip() == ""
