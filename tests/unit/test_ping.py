"""``ping`` and ``traceroute`` on the virtual switch (qoslab.vswitch.ping): IOS's output form
against real IOS-XE outputs (tests/data/ios-ping/, sources in its README), parsed by NAPALM's
``ios`` driver as it parses a real switch's, the options with IOS's carets, and the safety rule
(nothing is sent without a testbed, an SVI address or a destination in 198.18.0.0/15: IOS's
``% No valid route``). The real ICMP is in tests/integration/test_switch_ping.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conftest import REPO
from qoslab.ios import IosError, Mode, RunningConfig, interpret
from qoslab.portnames import expand_ports
from qoslab.vswitch.ping import Probe, ping, render_ping, render_traceroute, traceroute

DATA = REPO / "tests" / "data" / "ios-ping"


def test_ping_output_is_the_recorded_one():
    probes = [Probe("!", "10.229.1.1", 0.4)] * 10
    assert render_ping("10.229.1.1", 10, 100, 2, probes, "10.229.1.2") == \
        (DATA / "Ping-golden_output1_output.txt").read_text().rstrip("\n") + "\n"
    probes = [Probe("!", "10.229.1.1", ms) for ms in (1, 2, 3, 2, 2, 2, 2, 2, 2, 2)]
    assert render_ping("10.229.1.1", 10, 100, 2, probes, "10.229.1.2").splitlines()[-1] == \
        (DATA / "Ping-golden_output2_output.txt").read_text().splitlines()[-1]


def test_traceroute_lines_are_the_recorded_ones():
    hop = [Probe("!", "10.10.10.10", 1.2), Probe("!", "10.10.10.10", 0.9), Probe(".")]
    out = render_traceroute("10.4.1.1", [hop], vrf_info=True).splitlines()
    recorded = (DATA / "Traceroute-golden_output3_output.txt").read_text().splitlines()
    assert out[3] == recorded[5] and out[2] == recorded[4]
    hop = [Probe("!", "10.0.0.18", 351), Probe("."), Probe("!", "10.0.0.18", 8)]
    line = render_traceroute("10.151.22.22", [[Probe(".")] * 3, hop], vrf_info=False).splitlines()[4]
    assert line.strip() == (DATA / "Traceroute-golden_output6_output.txt").read_text().splitlines()[6].strip()


def _napalm(output: str, method: str, *args):
    """NAPALM ``ios`` driver's parse of ``output`` (its own code, the device call replaced)."""
    from napalm.ios.ios import IOSDriver

    d = IOSDriver.__new__(IOSDriver)
    d._send_command = lambda cmd: output
    d.device = SimpleNamespace(send_command=lambda cmd, read_timeout=None: output)
    return getattr(d, method)(*args)


def test_napalm_reads_the_answers():
    probes = [Probe("!", "198.18.0.1", 0.3), Probe("."), Probe("!", "198.18.0.1", 2.5), Probe("!", "198.18.0.1", 1.0),
              Probe("U", "198.18.0.254")]
    got = _napalm(render_ping("198.18.0.1", 5, 100, 2, probes, None), "ping", "198.18.0.1")["success"]
    assert (got["probes_sent"], got["packet_loss"], got["rtt_min"], got["rtt_avg"], got["rtt_max"]) == (5, 2, 1, 2, 3)
    hops = [[Probe("!", "198.18.0.1", 0.4), Probe("."), Probe("!", "198.18.0.1", 1.6)]]
    tr = _napalm(render_traceroute("198.18.0.1", hops, vrf_info=False), "traceroute", "198.18.0.1")["success"]
    assert [tr[1]["probes"][i]["ip_address"] for i in (1, 2, 3)] == ["198.18.0.1", "", "198.18.0.1"]
    assert tr[1]["probes"][3]["rtt"] == 2.0
    no_route = render_ping("8.8.8.8", 5, 100, 2, [], None, no_route=True)
    assert "error" in _napalm(no_route, "ping", "8.8.8.8")


def _switch(svi: str | None, apply: bool = True):
    rc = RunningConfig.factory("Switch", expand_ports("Gi1/0/1-4"))
    if svi:
        mode = interpret(rc, Mode(), "interface Vlan1")
        interpret(rc, mode, f"ip address {svi} 255.255.255.0")
    return SimpleNamespace(running=rc, apply_enabled=apply, topo=SimpleNamespace(name="nosuchtestbed"))


@pytest.mark.parametrize("sw,dest", [(_switch(None), "198.18.0.1"), (_switch("198.18.0.254", apply=False), "198.18.0.1"),
                                     (_switch("198.18.0.254"), "8.8.8.8"), (_switch("10.0.0.1"), "198.18.0.1")])
def test_nothing_is_sent_outside_the_testbed_or_without_a_source(sw, dest):
    out = ping(sw, f"ping {dest}", dest)
    assert "% No valid route for destination" in out and "Success rate is 0 percent" in out
    assert traceroute(sw, f"traceroute {dest}", dest, False).splitlines()[-1] == "  1  *  *  * "


def test_names_options_and_carets():
    sw = _switch("198.18.0.254", apply=False)
    assert ping(sw, "ping jp-1", "jp-1") == "% Unrecognized host or address, or protocol not running.\n"
    out = ping(sw, "ping 198.18.0.9 repeat 3 size 200 timeout 1 source 198.18.0.254", "198.18.0.9")
    assert "Sending 3, 200-byte ICMP Echos to 198.18.0.9, timeout is 1 seconds:" in out
    for line, at in [("ping 198.18.0.1 repeat x", "x"), ("ping 198.18.0.1 bogus 1", "bogus"),
                     ("ping 198.18.0.1 size 20", "20"), ("ping 198.18.0.1 repeat 1 repeat 2", "repeat 2")]:
        with pytest.raises(IosError) as e:
            ping(sw, line, "198.18.0.1")
        assert line[e.value.column:].startswith(at)
    with pytest.raises(IosError) as e:
        ping(sw, "ping 198.18.0.1 repeat", "198.18.0.1")
    assert e.value.kind == "incomplete"
    assert "Tracing the route to 198.18.0.9" in traceroute(sw, "traceroute 198.18.0.9 ttl 0 255 timeout 2", "198.18.0.9",
                                                           True)


def test_svi_address_replaces_and_is_refused_on_a_switch_port():
    rc = RunningConfig.factory("Switch", expand_ports("Gi1/0/1-4"))
    m = interpret(rc, Mode(), "interface Vlan1")
    for line in ("ip address 198.18.0.254 255.255.255.0", "ip address 198.18.0.253 255.255.255.0"):
        interpret(rc, m, line)
    assert rc.interfaces["Vlan1"].children == ["ip address 198.18.0.253 255.255.255.0"]
    interpret(rc, m, "no ip address")
    assert rc.interfaces["Vlan1"].children == ["no ip address"]
    with pytest.raises(IosError):
        interpret(rc, interpret(rc, Mode(), "interface Gi1/0/1"), "ip address 198.18.0.9 255.255.255.0")
