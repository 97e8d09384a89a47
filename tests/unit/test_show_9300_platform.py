"""The 9300 is a 9300 everywhere (issue 49): its memory, file systems, flash, inventory, fans,
platform, stack, module, boot, license and redundancy displays from the 9300's facts, in the
layouts of public recordings of Catalyst 9000 switches (tests/data/show-recordings/, each named
beside its check and in the README there), read by Genie's parsers as the real ones are; the
operational shows both Catalysts answer (interfaces description, etherchannel, spanning tree, SSH,
users, logging, processes sorted) and NAPALM ``ios``'s getters' commands on a switch that routes
nothing; ``show policy-map interface PORT input|output``."""

from __future__ import annotations

import os
import re

import pytest
from test_show_recordings import shape

from conftest import ECENET, REPO
from genie_parse import genie_device, parse
from qoslab.platforms import get_platform
from qoslab.profiles import load_profile
from qoslab.topology import load_topology
from qoslab.vswitch import IosSession, VirtualSwitch

E9300 = REPO / "playbooks" / "topologies" / "ecenet9300.yaml"
REC = REPO / "tests" / "data" / "show-recordings"


def _session(topofile, platform: str) -> IosSession:
    topo = load_topology(topofile).model_copy(update={"name": f"plat{os.getpid()}"})
    s = IosSession(VirtualSwitch(topo, apply=False), "x", privileged=True)
    s.line("terminal width 511")
    s.line("configure terminal")
    for line in get_platform(platform).render(load_profile("police-flood"), topo):
        assert "%" not in s.line(line).text, line
    s.line("end")
    return s


@pytest.fixture(scope="module")
def c9300():
    return _session(E9300, "catalyst9300")


@pytest.fixture(scope="module")
def c3750():
    return _session(ECENET, "catalyst3750")


def _show(s: IosSession, cmd: str) -> str:
    out = s.line(cmd).text
    assert "% Invalid" not in out and "% Incomplete" not in out, cmd
    return out


#: command -> (the recording its layout is checked against, words of lines that carry the
#: virtual switch's own values and are not in the recording)
LAYOUTS = {
    "show inventory": ("iosxe-c9300-24t-stack-show-inventory.txt", ("QSL",)),  # genieparser c9300 test_show_platform
    "show environment fan": ("iosxe-show-environment-fan.txt", ()),
    "show file systems": ("iosxe-c9300-stack-show-file-systems.txt", ()),
    "show memory statistics": ("iosxe-show-memory-statistics.txt", ("Tracekey",)),
    "show platform": ("iosxe-c9200-show-platform.txt", ("C9300-24T",)),
    "show module": ("iosxe-c3850-show-module.txt", ("C9300-24T",)),
    "show switch": ("iosxe-cat9kv-show-switch.txt", ()),
    # the stack-port table (the member table above it is checked against the cat9kv recording)
    "show switch detail": ("iosxe-show-switch-detail.txt", ("H/W", "Role", "Active", "-" * 60)),
    "show boot": ("iosxe-c9300-show-boot.txt", ()),
    "show license summary": ("iosxe-c9300-show-license-summary.txt", ()),
}


@pytest.mark.parametrize("command", sorted(LAYOUTS))
def test_the_9300s_platform_displays_are_the_recorded_layouts(c9300, command):
    recording, own = LAYOUTS[command]
    real = {shape(x) for x in (REC / recording).read_text().splitlines()}
    ours = _show(c9300, command).splitlines()
    missing = [x for x in ours if shape(x) not in real and not any(w in x for w in own)]
    assert not missing, (recording, missing)


def _month(line: str) -> str:
    return re.sub(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b", "Mon", line)


def test_dir_flash_is_the_xe_layout_with_packages_conf(c9300):
    text = _month(_show(c9300, "dir flash:"))
    real = {shape(_month(x).rsplit("  ", 1)[0]) for x in (REC / "iosxe-c3850-dir-flash.txt").read_text().splitlines()}
    rows = [x for x in text.splitlines() if "-rw-" in x]  # the layout up to the file name
    assert rows and all(shape(x.rsplit("  ", 1)[0]) in real for x in rows), rows
    assert shape(text.splitlines()[-1]) in real  # N bytes total (N bytes free)
    d = parse(genie_device("catalyst9300"), "dir flash:", text)["dir"]
    assert "packages.conf" in d["flash:/"]["files"] and d["flash:/"]["bytes_total"] == "11353194496"


def test_memory_file_systems_and_flash_are_the_9300s(c9300):
    xe = genie_device("catalyst9300")
    mem = parse(xe, "show memory statistics", _show(c9300, "show memory statistics"))["name"]["processor"]
    assert mem["total"] == 1338934 * 1024  # show version: 1338934K/6147K bytes of memory
    fs = parse(xe, "show file systems", _show(c9300, "show file systems"))["file_systems"]
    flash = next(v for v in fs.values() if v["prefixes"].startswith("flash:"))
    assert flash["total_size"] == 11353194496 and 0 < flash["free_size"] < flash["total_size"]
    assert "System image file is \"flash:packages.conf\"" in _show(c9300, "show version")


def test_inventory_starts_with_the_stack_and_lists_the_stack_ports(c9300):
    text = _show(c9300, "show inventory")
    assert text.startswith('NAME: "c93xx Stack", DESCR: "c93xx Stack"\nPID: C9300-24T         , VID: V01  , SN: QSL')
    for dev in (genie_device("catalyst9300"), genie_device("catalyst9300/c9300")):
        inv = parse(dev, "show inventory", text)
        assert inv["main"]["chassis"]["C9300-24T"]["name"] == "c93xx Stack"
        assert inv["slot"]["1"]["rp"]["C9300-24T"]["name"] == "Switch 1"
        stack_ports = inv["slot"]["1"]["rp"]["C9300-24T"]["subslot"]
        assert [stack_ports[n]["STACK-T1-50CM"]["name"] for n in ("1", "2")] == ["StackPort1/1", "StackPort1/2"]


def test_genie_reads_the_fans_platform_stack_boot_license_redundancy(c9300):
    xe = genie_device("catalyst9300")
    fans = parse(xe, "show environment fan", _show(c9300, "show environment fan"))["switch"][1]
    assert fans["fan"][1]["airflow_direction"] == "Front to Back" and fans["fan_ps2"] == "NOT PRESENT"
    plat = parse(xe, "show platform", _show(c9300, "show platform"))
    assert plat["slot"]["1"]["rp"]["C9300-24T"]["sw_ver"] == "17.09.05" and plat["main"]["switch_mac_address"]
    sw = parse(xe, "show switch", _show(c9300, "show switch"))["switch"]["stack"]["1"]
    assert (sw["role"], sw["state"]) == ("active", "ready")
    assert parse(xe, "show module", _show(c9300, "show module"))["switch"]["1"]["sw_ver"] == "17.09.05"
    assert parse(xe, "show boot", _show(c9300, "show boot"))["current_boot_variable"] == "flash:packages.conf;"
    lic = parse(xe, "show license summary", _show(c9300, "show license summary"))["license_usage"]
    assert {v["license"] for v in lic.values()} == {"network-advantage", "dna-advantage"}
    red = parse(xe, "show redundancy", _show(c9300, "show redundancy"))["red_sys_info"]
    assert red["hw_mode"] == "Simplex"


@pytest.mark.parametrize("which", ["c3750", "c9300"])
def test_operational_shows_both_catalysts_answer(which, request):
    s = request.getfixturevalue(which)
    dev = genie_device("catalyst3750" if which == "c3750" else "catalyst9300")
    desc = parse(dev, "show interfaces description", _show(s, "show interfaces description"))["interfaces"]
    assert desc["GigabitEthernet1/0/1"]["status"] == "up" and len(desc) == 24
    stp = parse(dev, "show spanning-tree", _show(s, "show spanning-tree"))["pvst"]["vlans"][1]
    assert stp["root"]["address"] == stp["bridge"]["address"] and "GigabitEthernet1/0/1" in stp["interfaces"]
    assert parse(dev, "show etherchannel summary", _show(s, "show etherchannel summary"))["number_of_aggregators"] == 0
    users = parse(dev, "show users", _show(s, "show users"))["line"]
    assert next(iter(users.values()))["active"]
    assert parse(dev, "show logging", _show(s, "show logging"))["syslog_logging"]["enabled"]
    cpu = parse(dev, "show processes cpu sorted", _show(s, "show processes cpu sorted"))["sort"]
    assert cpu[1]["process"] == "SSH Process"
    for cmd, words in (("show ip bgp all summary", "% BGP not active"), ("show ntp associations", "%NTP is not enabled"),
                       ("show ip route 198.18.0.1 255.255.255.255", "% Network not in table")):
        assert words in _show(s, cmd)
    assert "Hostkey Algorithms:" in _show(s, "show ip ssh")


def test_policy_map_interface_input_and_output_on_both(c9300, c3750):
    xe = genie_device("catalyst9300")
    inp = parse(xe, "show policy-map interface Gi1/0/5 input", _show(c9300, "show policy-map interface Gi1/0/5 input"))
    assert "input" in inp["GigabitEthernet1/0/5"]["service_policy"]
    assert "output" not in inp["GigabitEthernet1/0/5"]["service_policy"]
    out = _show(c9300, "show policy-map interface Gi1/0/1 output")
    assert "Service-policy output:" in out and "Service-policy input:" not in out
    both = _show(c3750, "show policy-map interface Gi1/0/5")
    assert _show(c3750, "show policy-map interface Gi1/0/5 input") == both
    assert "Service-policy output" not in _show(c3750, "show policy-map interface Gi1/0/5 output")


def test_the_acl_and_line_forms_operators_write(c9300, c3750):
    for s in (c9300, c3750):
        for line in ("configure terminal", "ip access-list extended QOSLAB-T49", "deny ip any any fragments",
                     "permit ip any any tos max-reliability", "exit", "line vty 0 4"):
            assert "%" not in s.line(line).text, line
        assert s.prompt.endswith("(config-line)#")
        s.line("end")
        acl = _show(s, "show ip access-lists QOSLAB-T49")
        assert "deny ip any any fragments" in acl and "permit ip any any tos max-reliability" in acl


def test_the_3750s_boot_and_aggregate_policers(c3750):
    ios = genie_device("catalyst3750")
    text = _show(c3750, "show boot")
    real = {shape(x) for x in (REC / "ios-c3750e-show-boot.txt").read_text().splitlines()}
    own = ("c3750-", "Enable Break", "via DHCP")  # the image, break off; the recording's last line lost its ")"
    assert [x for x in text.splitlines() if shape(x) not in real and not any(w in x for w in own)] == []
    assert parse(ios, "show boot", text)["boot_path_list"] == "flash:c3750-ipservicesk9-mz.122-55.SE12.bin"
    assert _show(c3750, "show mls qos aggregate-policer") == ""  # none configured (not in the grammar)
