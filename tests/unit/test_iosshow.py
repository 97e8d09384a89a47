"""Pure show renderers: the formats real clients parse (ntc-templates as netmiko's use_textfsm
uses them, NAPALM's regular expressions) and the 3750 formats and defaults."""

from __future__ import annotations

import re

from ntc_templates.parse import parse_output

from qoslab.ios import RunningConfig, load_config
from qoslab.ios.show_qos import (
    InputQueues,
    PortQos,
    input_queues_from_config,
    queue_sets_from_config,
    render_buffers,
    render_input_queue,
    render_port_qos,
    render_queueing,
)
from qoslab.vswitch.dialects.catalyst3750.show_mqc import (
    ClassMapView,
    PolicyView,
    render_class_map,
    render_policy_map,
)
from qoslab.vswitch.dialects.catalyst3750.show_sys import render_interfaces, render_inventory, render_version
from qoslab.vswitch.dialects.ioscommon.render import (
    render_access_lists,
    render_interfaces_status,
    render_ip_interface_brief,
    render_vlan_brief,
)
from qoslab.vswitch.facts import DeviceFacts, PortView, uptime_text
from qoslab.vswitch.flash import FileEntry, render_dir

FACTS = DeviceFacts("sw1", serial="QSL1A2B3C4D", uptime_s=2 * 86400 + 3 * 3600 + 4 * 60)
PORTS = [PortView("GigabitEthernet1/0/1", "jp-1", link_up=True, speed_mbps=50, mac="0200.5100.0001",
                  in_packets=5, out_packets=7, out_drops=3),
         PortView("GigabitEthernet1/0/2", mac="0200.5100.0002"),
         PortView("GigabitEthernet1/0/3", admin_up=False, mac="0200.5100.0003")]


def test_show_version_parses_with_ntc_templates_and_napalm_regexes():
    text = render_version(FACTS)
    v = parse_output(platform="cisco_ios", command="show version", data=text)[0]
    assert v["version"] == "12.2(55)SE12" and v["hostname"] == "sw1" and v["serial"] == ["QSL1A2B3C4D"]
    assert v["hardware"] == ["WS-C3750G-24T"] and v["config_register"] == "0xF"
    assert v["running_image"] == "c3750-ipservicesk9-mz.122-55.SE12.bin"
    assert "sw1 uptime is 2 days, 3 hours, 4 minutes" in text
    assert re.search(r"Cisco (.+?) .+bytes of", text, flags=re.IGNORECASE).group(1) == "WS-C3750G-24T"


def test_uptime_text():
    assert uptime_text(59) == "0 minutes" and uptime_text(3660) == "1 hour, 1 minute"
    assert uptime_text(8 * 86400) == "1 week, 1 day"


def test_inventory_and_interfaces_parse_with_ntc_templates():
    inv = parse_output(platform="cisco_ios", command="show inventory", data=render_inventory(FACTS))
    # "VID: V05  , SN:" as a real 3750 prints it (RANCID capture of a WS-C3750G-24TS: "VID: V02  , SN:")
    assert inv == [{"name": "1", "descr": "WS-C3750G-24T", "pid": "WS-C3750G-24T-S", "vid": "V05  ",
                    "sn": "QSL1A2B3C4D"}]
    st = parse_output(platform="cisco_ios", command="show interfaces status", data=render_interfaces_status(PORTS))
    assert [(r["port"], r["name"], r["status"], r["speed"]) for r in st] == [
        ("Gi1/0/1", "jp-1", "connected", "a-50"), ("Gi1/0/2", "", "notconnect", "auto"),
        ("Gi1/0/3", "", "disabled", "auto")]
    br = parse_output(platform="cisco_ios", command="show ip interface brief", data=render_ip_interface_brief(PORTS))
    assert [(r["interface"], r["status"], r["proto"]) for r in br] == [
        ("GigabitEthernet1/0/1", "up", "up"), ("GigabitEthernet1/0/2", "down", "down"),
        ("GigabitEthernet1/0/3", "administratively down", "down")]
    ifs = parse_output(platform="cisco_ios", command="show interfaces", data=render_interfaces(PORTS))
    one = ifs[0]
    assert (one["interface"], one["link_status"], one["protocol_status"], one["description"], one["bandwidth"],
            one["output_packets"], one["mac_address"]) == \
        ("GigabitEthernet1/0/1", "up", "up (connected)", "jp-1", "50000 Kbit", "7", "0200.5100.0001")
    assert ifs[2]["link_status"] == "administratively down"


def test_vlan_brief_parses_with_ntc_templates():
    rows = parse_output(platform="cisco_ios", command="show vlan brief", data=render_vlan_brief(PORTS))
    assert rows[0]["vlan_id"] == "1" and rows[0]["interfaces"] == ["Gi1/0/1", "Gi1/0/2", "Gi1/0/3"]
    assert [r["vlan_id"] for r in rows[1:]] == ["1002", "1003", "1004", "1005"]


def test_access_lists_parse_with_ntc_templates_and_name_argument():
    rc = RunningConfig.factory("Switch", ["Gi1/0/1"])
    assert load_config("\n".join(["access-list 101 permit ip host 198.18.0.1 host 198.18.0.2",
                                   "ip access-list extended scavenger", " 15 permit udp any any eq 9",
                                   " 5 deny udp any any eq 7", "access-list 10 permit 10.0.0.0 0.0.0.255"]), rc) == []
    acls = {k: (v.show_header(), v.show_entries()) for k, v in rc.acls.items()}
    text = render_access_lists(acls)
    rows = parse_output(platform="cisco_ios", command="show access-list", data=text)
    # sequence numbers as entered (5 before 15), ports by IOS's names, the standard list in its own form
    assert [(r["type"], r["name"], r["sn"], r["action"], r["protocol"]) for r in rows] == [
        ("Extended", "101", "10", "permit", "ip"), ("Extended", "scavenger", "5", "deny", "udp"),
        ("Extended", "scavenger", "15", "permit", "udp"), ("Standard", "10", "10", "permit", "")]
    assert "    5 deny udp any any eq echo\n    15 permit udp any any eq discard\n" in text
    assert rows[3]["source"] == "10.0.0.0, wildcard bits 0.0.0.255"
    assert render_access_lists(acls, "scavenger").startswith("Extended IP access list scavenger\n")
    assert render_access_lists(acls, "nope") is None


def test_class_map_has_class_default_and_policy_map_by_name():
    cms = [ClassMapView("jp-1", "match-all", ["match access-group 101"])]
    text = render_class_map(cms)
    assert " Class Map match-all jp-1 (id 1)\n   Match access-group  101 \n" in text
    assert " Class Map match-any class-default (id 0)\n   Match any \n" in text
    assert render_class_map(cms, "class-default").startswith(" Class Map match-any class-default")
    assert render_class_map(cms, "x") is None
    pms = [PolicyView("p", [("jp-1", ["set ip dscp 40"])]), PolicyView("q", [])]
    assert render_policy_map(pms, "p") == "  Policy Map p\n    Class jp-1\n      set dscp 40\n\n"
    assert render_policy_map(pms, "zz") is None


def test_port_qos_family():
    p = PortQos("GigabitEthernet1/0/1", trust="dscp", policy_in="police-jp", share=[97, 1, 1, 1],
                priority_queue=True, queue_set=2)
    assert "Attached policy-map for Ingress: police-jp\ntrust state: trust dscp\n" in render_port_qos(p)
    assert "not trusted" in render_port_qos(PortQos("GigabitEthernet1/0/2"))
    q = render_queueing(p)
    assert "Egress Priority Queue : enabled" in q and "Shared queue weights  :  97 1 1 1" in q
    assert "The port is mapped to qset : 2" in q
    sets = queue_sets_from_config(["mls qos queue-set output 2 buffers 10 20 30 40"])
    assert render_buffers(p, sets) == ("GigabitEthernet1/0/1\nThe port is mapped to qset : 2\n"
                                       "The allocations between the queues are : 10 20 30 40\n\n")


def test_input_queue_defaults_and_config():
    assert input_queues_from_config([]) == InputQueues()
    iq = input_queues_from_config(["mls qos srr-queue input buffers 80 20", "mls qos srr-queue input bandwidth 70 30",
                                   "mls qos srr-queue input priority-queue 2 bandwidth 40"])
    text = render_input_queue(iq)
    assert "buffers   :      80      20" in text and "priority  :       0      40" in text
    assert "bandwidth :      70      30" in text and "threshold1:     100     100" in text


def test_dir_listing_is_what_netmiko_and_napalm_read():
    text = render_dir("flash:", [FileEntry("candidate_config.txt", 5592, 0)], 32514048)
    assert re.search(r"Directory of (.*)/", text).group(1) == "flash:"
    assert re.search(r"(\d+) \w+ free", text).group(1) == str(32514048 - 5592)
    line = next(l for l in text.splitlines() if "candidate_config.txt" in l)
    assert line.split()[2] == "5592"  # netmiko remote_file_size takes the third field
    one = render_dir("flash:", [FileEntry("candidate_config.txt", 5592, 0)], 32514048, "candidate_config.txt", 9000)
    assert one.startswith("Directory of flash:/candidate_config.txt\n") and "(32505048 bytes free)" in one


def test_qos_maps_and_monitor_render():
    from qoslab.ios.show_qos import MAP_NAMES, QosMaps, render_qos_map, render_qos_maps
    from qoslab.vswitch.dialects.ioscommon.render import MonitorSession, port_list, render_monitor
    all_maps = render_qos_maps(QosMaps())
    assert all(render_qos_map(QosMaps(), n) in all_maps for n in MAP_NAMES)
    assert "queue-threshold: 2-1 2-1 3-1 3-1 4-1 1-1 4-1 4-1" in render_qos_map(QosMaps(), "cos-output-q")
    assert port_list(["Gi1/0/1", "Gi1/0/2", "Gi1/0/3", "Gi1/0/5", "Gi2/0/6"]) == "Gi1/0/1-3,Gi1/0/5,Gi2/0/6"
    out = render_monitor([MonitorSession(2, tx=["Gi1/0/3"], destinations=["Gi1/0/9"], encapsulation="dot1q")])
    assert "    TX Only            : Gi1/0/3" in out and "    Encapsulation      : DOT1Q" in out
    assert render_monitor([]) == ""
