"""Genie's parsers read what both virtual switches print, and return the switch's state (issue 43):
for every show command the 3750 (Genie ``ios``) and the 9300 (Genie ``iosxe``, platform ``cat9k``;
model ``c9300`` where genieparser has 9300-only parsers) answer, the parse equals the switch's
model, version, ports, classes, policers and queue settings, and the counters the kernel readings
gave (a switch object with canned tc/nft/link readings: the data path's numbers without a testbed;
tests/clients/test_genie_live.py reads a live switch over SSH). Where genieparser has no parser
for the platform, :data:`NO_PARSER` says why and the test checks that it really has none."""

from __future__ import annotations

import os

import pytest

from conftest import ECENET, REPO
from genie_parse import genie_device, parse
from qoslab.ios import qos_model
from qoslab.platforms import get_platform
from qoslab.profiles import load_profile
from qoslab.topology import load_topology
from qoslab.vswitch import IosSession, VirtualSwitch
from qoslab.vswitch.counters import NftCounters
from qoslab.vswitch.facts import ClassCounters, MacEntry
from qoslab.vswitch.session import device_facts
from qoslab.vswitch.tccompile import port_queue_limits

E9300 = REPO / "playbooks" / "topologies" / "ecenet9300.yaml"

#: What the data path counted (the kernel readings a switch object gives its dialect): Gi1/0/1
#: received 1000 IPv4 packets, 40 of them classified; its four egress queues sent and dropped;
#: Gi1/0/5 (the flood's ingress) policed: 3000 bytes conformed, 9000 exceeded.
LINKS = {"Gi1-0-1": {"rx": {"packets": 1000, "bytes": 1_200_000}, "tx": {"packets": 900, "bytes": 1_100_000}}}
QDISCS = {"Gi1-0-1": [{"kind": "htb", "handle": "1:", "bytes": 9, "packets": 9, "drops": 0},
                      {"kind": "bfifo", "handle": "11:", "bytes": 30_000, "packets": 20, "drops": 0,
                       "backlog": 0, "qlen": 0},
                      {"kind": "bfifo", "handle": "12:", "bytes": 60_000, "packets": 40, "drops": 2,
                       "backlog": 1514, "qlen": 1},
                      {"kind": "bfifo", "handle": "13:", "bytes": 0, "packets": 0, "drops": 0},
                      {"kind": "bfifo", "handle": "14:", "bytes": 1_514_000, "packets": 1000, "drops": 30,
                       "backlog": 3028, "qlen": 2}]}
NFT = NftCounters(dscp_in={"Gi1-0-1": [1000] + [0] * 63, "Gi1-0-5": [500] + [0] * 63},
                  classes={("GigabitEthernet1/0/1", "class112"): ClassCounters(40, 4000),
                           ("GigabitEthernet1/0/5", "flood"): ClassCounters(12, 12000, 3000, 9000)})
FDB = [MacEntry(1, "02aa.0000.0001", "Gi1/0/1"), MacEntry(1, "02aa.0000.0002", "Gi1/0/2")]


class Canned(VirtualSwitch):
    """The virtual switch with the kernel readings above (no testbed, nothing applied)."""

    def nft_counters(self) -> NftCounters:
        return NFT

    def qdiscs(self):
        return QDISCS

    def links(self):
        return LINKS

    def fdb(self):
        return FDB


def _session(topofile, platform: str, profile: str) -> IosSession:
    topo = load_topology(topofile)
    topo = topo.model_copy(update={"name": f"genie{os.getpid()}"})  # no state folder of its own
    s = IosSession(Canned(topo, apply=False), "x", privileged=True)
    s.line("terminal width 511")  # as Netmiko sets it
    s.line("configure terminal")
    for line in get_platform(platform).render(load_profile(profile), topo):
        assert "%" not in s.line(line).text, line
    s.line("end")
    return s


@pytest.fixture(scope="module")
def c3750():
    return _session(ECENET, "catalyst3750", "police-flood")


@pytest.fixture(scope="module")
def c9300():
    return _session(E9300, "catalyst9300", "police-flood")


@pytest.fixture(scope="module")
def ios():
    return genie_device("catalyst3750")


@pytest.fixture(scope="module")
def xe():
    return genie_device("catalyst9300")


@pytest.fixture(scope="module")
def xe9300():
    return genie_device("catalyst9300/c9300")


def _show(s: IosSession, cmd: str) -> str:
    out = s.line(cmd).text
    assert "% Invalid" not in out, cmd
    return out


# -- version, inventory, environment --------------------------------------------------------------

def test_version_both(c3750, c9300, ios, xe):
    f = device_facts(c3750.sw)
    v = parse(ios, "show version", _show(c3750, "show version"))["version"]
    assert (v["version"], v["chassis"], v["chassis_sn"], v["hostname"]) == ("12.2(55)SE12", f.model, f.serial, "Switch")
    sw1 = v["switch_num"]["1"]
    assert (sw1["ports"], sw1["model"], sw1["sw_ver"], sw1["sw_image"]) == ("24", f.model, "12.2(55)SE12",
                                                                            "C3750-IPSERVICESK9-M")
    f9 = device_facts(c9300.sw)
    v = parse(xe, "show version", _show(c9300, "show version"))["version"]
    assert (v["xe_version"], v["chassis"], v["chassis_sn"], v["os"]) == ("17.09.05", "C9300-24T", f9.serial, "IOS-XE")
    sw1 = v["switch_num"]["1"]
    assert (sw1["ports"], sw1["model"], sw1["sw_ver"], sw1["sw_image"], sw1["mode"]) == \
        ("24", "C9300-24T", "17.09.05", "CAT9K_IOSXE", "INSTALL")


def test_inventory_both(c3750, c9300, ios, xe, xe9300):
    f = device_facts(c3750.sw)
    inv = parse(ios, "show inventory", _show(c3750, "show inventory"))
    assert inv["slot"]["1"]["rp"][f"{f.model}-S"]["sn"] == f.serial
    f9 = device_facts(c9300.sw)
    for dev in (xe, xe9300):  # the IOS-XE parser and genieparser's C9300 one
        inv = parse(dev, "show inventory", _show(c9300, "show inventory"))["slot"]["1"]
        assert inv["rp"]["C9300-24T"]["name"] == "Switch 1" and inv["rp"]["C9300-24T"]["sn"] == f9.serial
        assert "PWR-C1-350WAC-P" in inv["other"]


def test_environment_9300_stack_member_with_fans_sensors_power(c9300, xe, xe9300):
    text = _show(c9300, "show environment all")
    env = parse(xe9300, "show environment all", text)["switch"]["1"]
    assert [env["fan"][n]["state"] for n in ("1", "2", "3")] == ["OK"] * 3
    assert env["power_supply"]["1"]["pid"] == "PWR-C1-350WAC-P" and env["power_supply"]["2"]["state"] == "NOT PRESENT"
    assert env["system_temperature_state"] == "OK" and env["inlet_temperature"]["state"] == "GREEN"
    assert parse(xe, "show environment all", text)["switch"]["1"]["fan"]["1"]["state"] == "ok"


# -- interfaces -----------------------------------------------------------------------------------

@pytest.mark.parametrize("which", ["c3750", "c9300"])
def test_interfaces_with_vlan1_and_kernel_counters(which, request, ios, xe):
    s, dev = request.getfixturevalue(which), ios if which == "c3750" else xe
    got = parse(dev, "show interfaces", _show(s, "show interfaces"))
    assert list(got)[0] == "Vlan1" and got["Vlan1"]["oper_status"] == "up"
    assert len(got) == 25
    g1 = got["GigabitEthernet1/0/1"]
    assert (g1["counters"]["in_pkts"], g1["counters"]["in_octets"]) == (1000, 1_200_000)
    assert (g1["counters"]["out_pkts"], g1["counters"]["out_octets"]) == (900, 1_100_000)
    assert g1["queues"]["total_output_drop"] == 32  # the port's egress queues' drops
    assert got["GigabitEthernet1/0/9"]["oper_status"] == "down"  # no testbed host on it
    brief = parse(dev, "show ip interface brief", _show(s, "show ip interface brief"))["interface"]
    assert list(brief)[0] == "Vlan1" and brief["Vlan1"]["status"] == "up" and len(brief) == 25
    status = parse(dev, "show interfaces status", _show(s, "show interfaces status"))["interfaces"]
    assert status["GigabitEthernet1/0/1"]["status"] == "connected" and status["GigabitEthernet1/0/9"]["status"] == \
        "notconnect"


def test_interfaces_summary_gives_napalm_its_discards(c9300, xe):
    got = parse(xe, "show interfaces summary", _show(c9300, "show interfaces summary"))["interfaces"]
    assert got["GigabitEthernet1/0/1"]["oqd"] == 32 and got["Vlan1"]["up"]


def test_vlans_list_every_port(c3750, c9300, ios, xe):
    got = parse(ios, "show vlan", _show(c3750, "show vlan"))["vlans"]["1"]["interfaces"]
    assert got == [f"GigabitEthernet1/0/{n}" for n in range(1, 25)]
    got = parse(xe, "show vlan brief", _show(c9300, "show vlan brief"))["vlan"]["vlan1"]["vlan_port"]
    assert got == [f"Gi1/0/{n}" for n in range(1, 25)]  # one line at terminal width 511


def test_mac_table_and_cpu(c3750, c9300, ios, xe):
    for s, dev in ((c3750, ios), (c9300, xe)):
        macs = parse(dev, "show mac address-table", _show(s, "show mac address-table"))["mac_table"]["vlans"]["1"]
        assert set(macs["mac_addresses"]) == {"02aa.0000.0001", "02aa.0000.0002"}
        cpu = parse(dev, "show processes cpu", _show(s, "show processes cpu"))
        assert 0 <= cpu["five_sec_cpu_total"] <= 100
        assert any(p["process"] == "SSH Process" for p in cpu["sort"].values())


# -- MQC (9300) ----------------------------------------------------------------------------------

def test_class_map_dscp_names_with_values_and_named_acls(c9300, xe):
    """Genie's IOS-XE class-map parser reads DSCP and named-ACL matches; numbered-ACL ones
    (``Match access-group  112``, as IOS-XE prints them too) it does not (no ``index``): parsed
    here for the class-maps it reads, the thesis's numbered ones are :data:`NO_PARSER`'s."""
    from genie.metaparser.util.exceptions import SchemaMissingKeyError

    text = _show(c9300, "show class-map QOSLAB-Q3")
    assert "   Match   dscp cs2 (16) 17 af21 (18) 19 af22 (20) 21 af23 (22) 23" in text.splitlines()
    got = parse(xe, "show class-map", text)["class_maps"]["QOSLAB-Q3"]
    assert got["match_criteria"] == "match-any" and len(got["index"]) == 2
    flood = parse(xe, "show class-map", _show(c9300, "show class-map flood"))["class_maps"]["flood"]
    assert flood["match_criteria"] == "match-all" and flood["index"][1]["match"] == {"access_group": ["flood"]}
    numbered = _show(c9300, "show class-map class112")
    assert "   Match access-group  112 " in numbered.splitlines()
    with pytest.raises(SchemaMissingKeyError):  # genieparser 26.9 reads no numbered-ACL match
        parse(xe, "show class-map", numbered)


def test_policy_map_policer_priority_bandwidth(c9300, xe):
    got = parse(xe, "show policy-map", _show(c9300, "show policy-map"))["policy_map"]
    police = load_profile("police-flood").rules[-1].police  # the profile's flood policer
    flood = got["police-jp"]["class"]["flood"]
    assert flood["police"] == {"cir_bps": police.rate_bps, "cir_bc_bytes": police.burst_bytes,
                               "conform_action": ["transmit"], "exceed_action": ["drop"]}
    assert flood["set"] == "dscp default" and got["police-jp"]["class"]["class112"]["set"] == "dscp cs5"
    q = got["QOSLAB-QUEUING"]["class"]
    assert q["QOSLAB-Q1"]["priority_levels"] == 1 and "bandwidth_remaining_percent" in q["QOSLAB-Q3"]


def test_policy_map_interface_input_and_output_with_data_path_counters(c9300, xe):
    text = _show(c9300, "show policy-map interface")
    got = parse(xe, "show policy-map interface", text)
    g5 = got["GigabitEthernet1/0/5"]["service_policy"]["input"]["policy_name"]["police-jp"]["class_map"]
    assert g5["flood"]["match"] == ["access-group name flood"] and g5["flood"]["packets"] == 12
    pol = g5["flood"]["police"]
    assert (pol["conformed"]["bytes"], pol["exceeded"]["bytes"]) == (3000, 9000)
    assert g5["class-default"]["packets"] == 500 - 12  # the port's other IPv4 packets
    g1 = got["GigabitEthernet1/0/1"]["service_policy"]
    assert g1["input"]["policy_name"]["police-jp"]["class_map"]["class-default"]["packets"] == 1000 - 40
    out = g1["output"]["policy_name"]["QOSLAB-QUEUING"]["class_map"]
    assert len(out["QOSLAB-Q3"]["match"]) == 2  # one Match: line per match
    assert out["class-default"]["queueing"] is True and out["class-default"]["bytes_output"] == 1_514_000
    assert out["class-default"]["total_drops"] == 30 * 1514  # dropped packets x mean size


def test_fed_queue_stats_bytes_and_frames(c9300, xe):
    qos = qos_model(c9300.sw.running)
    th = [x.threshold - 1 for x in port_queue_limits(qos, c9300.sw.topo, "Gi1/0/1")]
    cmd = "show platform hardware fed switch active qos queue stats interface Gi1/0/1"
    got = parse(xe, cmd, _show(c9300, cmd))
    assert got["enqueue_counters"][3][f"enqueue_th{th[3]}"] == 1_514_000 + 3028  # sent + queued
    assert got["enqueue_counters"][1][f"enqueue_th{th[1]}"] == 60_000 + 1514
    assert got["drop_counters"][3][f"drop_th{th[3]}"] == 30 * 1514
    assert got["enqueue_counters"][3]["buffers_count"] == 2 and set(got["enqueue_counters"]) == set(range(8))
    c9300.line("configure terminal")
    c9300.line("qos queue-stats-frame-count")
    c9300.line("end")
    try:
        frames = parse(xe, cmd, _show(c9300, cmd))
    finally:
        c9300.line("configure terminal")
        c9300.line("no qos queue-stats-frame-count")
        c9300.line("end")
    assert frames["enqueue_counters"][3][f"enqueue_th{th[3]}"] == 1002 and frames["drop_counters"][3][
        f"drop_th{th[3]}"] == 30


#: Commands a virtual switch answers that genieparser 26.9 has no parser for on that platform.
NO_PARSER = {
    ("catalyst3750", "show class-map"): "genieparser has no ios class-map parser (IOS-XE only)",
    ("catalyst3750", "show policy-map"): "genieparser has no ios policy-map parser (IOS-XE only)",
    ("catalyst3750", "show policy-map interface"): "genieparser has no ios policy-map interface parser",
    ("catalyst3750", "show environment all"): "genieparser's ios `show environment` reads a router's sensor "
                                              "table; a 3750 prints status words only",
    ("catalyst3750", "show interfaces summary"): "genieparser has no ios interfaces summary parser",
    ("catalyst3750", "show vlan brief"): "genieparser has no ios vlan brief parser (its ios `show vlan` one reads the "
                                         "3750's VLANs: test_vlans_list_every_port)",
    ("catalyst3750", "show mls qos interface Gi1/0/1 statistics"): "no Genie (nor ntc-templates) parser of "
                                                                    "`show mls qos`: qoslab's TextFSM only",
    ("catalyst3750", "show mls qos maps dscp-output-q"): "no Genie parser of `show mls qos maps`",
}


@pytest.mark.parametrize("platform, command", sorted(NO_PARSER))
def test_commands_genie_has_no_parser_for(platform, command, request):
    from genie.metaparser.util.exceptions import SchemaEmptyParserError

    s = request.getfixturevalue("c3750" if platform == "catalyst3750" else "c9300")
    _show(s, command)  # the virtual switch answers it
    with pytest.raises((Exception, SchemaEmptyParserError)) as e:
        parse(genie_device(platform), command, _show(s, command))
    assert "Could not find parser" in str(e.value) or isinstance(e.value, SchemaEmptyParserError), NO_PARSER[
        (platform, command)]


def test_ntc_templates_read_the_9300_as_netmiko_cisco_xe_does(c9300):
    """Netmiko ``cisco_xe`` with ``use_textfsm`` retries with ntc-templates' ``cisco_ios``
    templates (ntc-templates has few ``cisco_xe`` ones): they read the 9300's outputs too."""
    from ntc_templates.parse import parse_output

    def ntc(cmd: str) -> list[dict]:
        return parse_output(platform="cisco_ios", command=cmd, data=_show(c9300, cmd))

    f = device_facts(c9300.sw)
    v = ntc("show version")[0]
    assert (v["version"], v["hardware"], v["serial"]) == ("17.9.5", ["C9300-24T"], [f.serial])
    assert [i["pid"] for i in ntc("show inventory")] == ["C9300-24T", "C9300-24T", "STACK-T1-50CM", "STACK-T1-50CM",
                                                       "PWR-C1-350WAC-P"]  # the stack, switch 1, its stack cables
    intf = ntc("show interfaces")
    assert intf[0]["interface"] == "Vlan1" and len(intf) == 25
    assert intf[1]["input_packets"] == "1000" and intf[1]["output_packets"] == "900"
    assert len(ntc("show ip interface brief")) == 25 and len(ntc("show interfaces status")) == 24
    assert len(ntc("show vlan")[0]["interfaces"]) == 24
