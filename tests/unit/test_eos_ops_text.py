"""The virtual EOS switch's operational shows as text (issue 49), read by ntc-templates'
arista_eos templates as a real switch's are (their recordings: networktocode/ntc-templates
tests/arista_eos/show_interfaces_description, show_vlan, dir (arista_eos_dir_flash), bash_df_-h,
show_processes_top_once (…_once5, the ``MiB Mem :`` form of EOS 4.2x+), show_lldp_neighbors,
show_mac_address-table, show_vrf (…_vrf-no-rd)); the commands ANTA and NAPALM send answer
over the CLI too (``| json``), a refused bash command names itself on one line."""

from __future__ import annotations

import json

import pytest
from test_eos_switch import Switch, _cli


@pytest.fixture
def s(tmp_path):
    return _cli(Switch(tmp_path))


def _ntc(s, command: str, sent: str | None = None) -> list[dict]:
    from ntc_templates.parse import parse_output

    text = s.line(sent or command).text
    assert not text.startswith("%"), text
    return parse_output(platform="arista_eos", command=command, data=text)


def test_ntc_templates_read_the_operational_shows(s):
    desc = _ntc(s, "show interfaces description")
    assert len(desc) == 24 and desc[0]["port"] == "Et1" and desc[0]["status"] == "up" and desc[8]["status"] == "down"
    vlan = _ntc(s, "show vlan")
    assert vlan[0]["vlan_id"] == "1" and vlan[0]["status"] == "active" and vlan[0]["interfaces"][:2] == ["Et1", "Et2"]
    files = _ntc(s, "dir", "dir flash:")
    assert files[0]["name"] == "EOS-4.32.2F.swi" and files[0]["total_size"] == "3957878784"
    df = _ntc(s, "bash df -h", "bash timeout 10 df -h")
    assert any(r["mounted_on"] == "/mnt/flash" for r in df)
    top = _ntc(s, "show processes top once")
    assert top == []  # no process rows (the template records one per process)
    assert _ntc(s, "show lldp neighbors") == [] and _ntc(s, "show mac address-table") == []
    vrf = _ntc(s, "show vrf")
    assert {r["vrf"] for r in vrf} == {"default"}


def test_anta_and_napalm_commands_answer_json_over_the_cli(s):
    for cmd, key in (("show uptime", "upTime"), ("show reload cause", "resetCauses"), ("show file systems", "fileSystems"),
                     ("show interfaces counters errors", "interfaceErrorCounters"), ("show vlan", "vlans"),
                     ("show interfaces counters queue drops", "interfaces"), ("show users accounts", "users"),
                     ("show system environment cooling", "fanTraySlots"), ("show ip route vrf default", "vrfs")):
        assert key in json.loads(s.line(f"{cmd} | json").text), cmd
    assert s.line("show ntp status").text == "NTP is disabled.\n"
    assert s.line("show running-config diffs").text == ""
    s.line("configure")
    s.line("hostname leaf2")
    s.line("end")
    assert "+hostname leaf2" in s.line("show running-config diffs").text
    refused = s.line("bash timeout 10 rm -rf /").text
    assert refused.startswith("% bash: rm: not emulated") and refused.count("\n") == 1
    assert s.line("ping 198.18.0.1").text == "connect: Network is unreachable\n"
