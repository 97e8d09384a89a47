"""The ACL forms that classify QoS traffic, on real packets (issue 43): an ICMP message, a port
comparison with a DSCP, a deny before a port range, compiled to nftables and counted per class as
``show policy-map interface`` shows them (the 3750's TextFSM reader)."""

from __future__ import annotations

import subprocess

import pytest

from qoslab.platforms.counters import parse_policy_map_interface
from qoslab.testbedplan import host_namespace

from .conftest import DATAPATHS, datapath_variant, module_testbed
from .test_switch import ERR, netmiko


@pytest.fixture(scope="module", params=DATAPATHS)
def testbed(request):
    """The 8-host ecenet topology, up for this module, on each switch data path."""
    yield from module_testbed(datapath_variant("a", request.param))

CONFIG = ["mls qos",
          "ip access-list extended echo-acl", "permit icmp any any echo",
          "ip access-list extended af41-high", "permit udp any any gt 6000 dscp af41",
          "ip access-list extended not7000", "deny udp any any eq 7000", "permit udp any any range 7000 7100",
          "class-map c-echo", "match access-group name echo-acl",
          "class-map c-af41", "match access-group name af41-high",
          "class-map c-range", "match access-group name not7000",
          "policy-map pm", "class c-echo", "set dscp 10", "class c-af41", "set dscp 12", "class c-range", "set dscp 14",
          "interface Gi1/0/2", "service-policy input pm"]

#: UDP datagrams jp-2 sends to jp-1: (port, TOS byte, count).
SENDS = [(6500, 34 << 2, 4), (6500, 0, 2), (7000, 0, 3), (7050, 0, 5)]
SCRIPT = """
import socket, sys
for port, tos, n in {sends}:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    for _ in range(n):
        s.sendto(b"x" * 64, ("198.18.0.1", port))
    s.close()
"""


def test_acl_forms_classify_real_packets(testbed):
    conn = netmiko(testbed)
    try:
        conn.enable()
        conn.send_config_set(CONFIG, error_pattern=ERR)
        ns = host_namespace(testbed.topo.name, "jp-2")
        subprocess.run(["ip", "netns", "exec", ns, "ping", "-n", "-c", "3", "-i", "0.2", "198.18.0.1"],
                       capture_output=True, check=True, timeout=30)
        subprocess.run(["ip", "netns", "exec", ns, "python3", "-c", SCRIPT.format(sends=SENDS)], check=True, timeout=30)
        got = parse_policy_map_interface(conn.send_command("show policy-map interface Gi1/0/2"))
    finally:
        conn.send_config_set(["interface Gi1/0/2", "no service-policy input pm", "no policy-map pm"], error_pattern=ERR)
        conn.disconnect()
    counts = {c: got[("GigabitEthernet1/0/2", c)].packets for c in ("c-echo", "c-af41", "c-range")}
    # echo requests only (the replies enter on Gi1/0/1); UDP > 6000 only with DSCP af41; the range
    # without the denied port 7000
    assert counts == {"c-echo": 3, "c-af41": 4, "c-range": 5}
