"""``ping`` and ``traceroute`` typed at the testbed's virtual switch (issue 43): real ICMP from the
switch's namespace, sourced from the SVI address configured on ``interface Vlan1``, answered in
IOS's form and read by NAPALM's ``ping``/``traceroute`` getters as on a real switch; a host that
does not exist times out; a destination outside the testbed gets nothing sent."""

from __future__ import annotations

import json
import subprocess

import pytest
from napalm import get_network_driver

from qoslab.switch.legacyssh import paramiko_default_transport
from qoslab.testbedplan import vswitch_dir

from .test_switch import ERR, netmiko

SVI = "198.18.0.254"


@pytest.fixture(scope="module")
def conn(testbed):
    c = netmiko(testbed)
    c.enable()
    c.send_config_set(["interface Vlan1", f"ip address {SVI} 255.255.255.0"], error_pattern=ERR)
    yield c
    c.send_config_set(["interface Vlan1", "no ip address"], error_pattern=ERR)
    c.disconnect()


def test_the_svi_address_is_on_the_switch_namespace(conn, testbed):
    out = subprocess.run(["ip", "-n", testbed.switch_ns, "-j", "addr", "show", "dev", "br0"], capture_output=True,
                         text=True, check=True).stdout
    assert f"{SVI}" in {a["local"] for i in json.loads(out) for a in i["addr_info"]}


def test_ping_a_host_answers_and_one_that_does_not_exist_times_out(conn):
    out = conn.send_command("ping 198.18.0.1", read_timeout=30)
    assert "Sending 5, 100-byte ICMP Echos to 198.18.0.1, timeout is 2 seconds:" in out
    assert "\n!!!!!\n" in out and "Success rate is 100 percent (5/5), round-trip min/avg/max = " in out
    out = conn.send_command("ping 198.18.0.99 repeat 2 timeout 1", read_timeout=30)
    assert "Success rate is 0 percent (0/2)" in out and "!" not in out.split("seconds:")[1]
    out = conn.send_command("ping 9.9.9.9", read_timeout=30)
    assert "% No valid route for destination" in out


def test_traceroute_to_a_host_is_one_hop(conn):
    out = conn.send_command("traceroute 198.18.0.2", read_timeout=60)
    lines = out.strip().splitlines()
    assert lines[1] == "Tracing the route to 198.18.0.2" and lines[-1].startswith("  1 198.18.0.2 ")
    assert lines[-1].count("msec") == 3


def test_napalm_ping_and_traceroute_getters(conn, testbed):
    c = json.loads((vswitch_dir(testbed.topo.name) / "credentials").read_text())
    mg = testbed.topo.switch.management
    with paramiko_default_transport():
        d = get_network_driver("ios")(mg.host, c["username"], c["password"], timeout=20,
                                      optional_args={"port": mg.port, "secret": c["secret"]})
        d.open()
        try:
            p = d.ping("198.18.0.3", count=3)["success"]
            t = d.traceroute("198.18.0.3", ttl=5, timeout=2)["success"]
        finally:
            d.close()
    assert p["probes_sent"] == 3 and p["packet_loss"] == 0 and p["rtt_min"] >= 1
    assert list(t) == [1] and {t[1]["probes"][i]["ip_address"] for i in (1, 2, 3)} == {"198.18.0.3"}
