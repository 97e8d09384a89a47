"""NAPALM ``ios`` against the virtual Catalyst, as its driver works on hardware: getters, merge
and replace candidates through SCP into flash: (``ip scp server enable``) or typed inline through
``tclsh`` (``inline_transfer``), ``show archive config incremental-diffs|differences``,
``copy``/``configure replace``, discard, rollback; a merge with an invalid line is rolled back
with IOS's caret; the running-config in IOS's order whatever the order of entry (no spurious moves
in a text diff, none in hier-config's remediation); a wrong password is refused."""

from __future__ import annotations

import difflib
import re
import time

import pytest
from napalm import get_network_driver
from napalm.base.exceptions import MergeConfigException
from netmiko.exceptions import NetmikoAuthenticationException

from qoslab.switch.legacyssh import paramiko_default_transport
from qoslab.topology import load_topology


def _driver(sw, password=None, **extra):
    return get_network_driver("ios")(sw.host, sw.username, password or sw.password, timeout=20,
                                     optional_args={"port": sw.port, "secret": sw.secret, **extra})


def _open(d):
    """NAPALM ``ios`` opens Netmiko's ConnectHandler itself (no transport option): the 3750's SHA-1
    algorithms through paramiko's default transport (replaced for the whole module: the SCP
    transfers of a merge open connections of their own)."""
    d.open()


@pytest.fixture(scope="module", autouse=True)
def _legacy_paramiko():
    with paramiko_default_transport():
        yield


@pytest.fixture(scope="module")
def dev(vswitch):
    d = _driver(vswitch)
    _open(d)
    d.device.send_config_set(["ip scp server enable"])  # NAPALM's documented requirement
    yield d
    d.close()


def test_facts_interfaces_config(dev):
    f = dev.get_facts()
    assert f["model"] == "WS-C3750G-24T" and f["hostname"] == "Switch" and f["serial_number"].startswith("QSL")
    assert "Version 12.2(55)SE12" in f["os_version"]
    assert f["interface_list"] == ["Vlan1"] + [f"GigabitEthernet1/0/{i}" for i in range(1, 25)]  # the SVI first
    ifs = dev.get_interfaces()
    assert ifs["GigabitEthernet1/0/1"]["is_up"] and not ifs["GigabitEthernet1/0/9"]["is_up"]
    assert ifs["GigabitEthernet1/0/1"]["speed"] == 1000.0  # a 3750's port; the scale-model rate is in show version
    rate = load_topology().link.rate / 1e6
    assert f"run at {rate:g} Mbit/s" in dev.cli(["show version"])["show version"]
    assert f["uptime"] >= 60  # counted from the virtual power-on, minutes as IOS prints them
    cfg = dev.get_config()
    assert "hostname Switch" in cfg["running"] and cfg["candidate"] == ""


def test_merge_thesis_commit_and_remerge_is_empty(dev, vswitch):
    thesis = "\n".join(vswitch.thesis_lines()) + "\n"
    dev.load_merge_candidate(config=thesis)
    diff = dev.compare_config()
    assert "+policy-map police-jp" in diff and "+mls qos" in diff
    dev.commit_config()
    assert "policy-map police-jp" in dev.get_config()["running"]
    assert "policy-map police-jp" in dev.get_config(retrieve="startup")["startup"]  # commit saves
    dev.load_merge_candidate(config=thesis)
    assert dev.compare_config() == ""
    dev.discard_config()


def test_replace_compare_commit_rollback(dev):
    running = dev.get_config()["running"]
    dev.load_replace_candidate(config=running)
    assert dev.compare_config() == ""
    dev.discard_config()
    dev.load_replace_candidate(config=running.replace("hostname Switch", "hostname qsl-sw"))
    assert dev.compare_config().splitlines() == ["+hostname qsl-sw", "-hostname Switch"]
    dev.commit_config()
    assert dev.get_facts()["hostname"] == "qsl-sw"
    dev.rollback()
    assert dev.get_facts()["hostname"] == "Switch"
    assert dev.get_config()["running"] == running


def test_invalid_merge_line_is_rolled_back_with_the_caret(dev):
    before = dev.get_config()["running"]
    dev.load_merge_candidate(config="hostname broken\nmls qos srr-queue input priority-queue input 2 bandwidth 40\n")
    with pytest.raises(MergeConfigException, match=r"(?s)\^.*% Invalid input detected at '\^' marker"):
        dev.commit_config()
    assert dev.get_config()["running"] == before


def _filtered(cfg: str) -> list[str]:
    """A config text as NAPALM's get_config returns it, without the byte count."""
    return [l for l in cfg.splitlines() if not l.startswith(("Building configuration", "Current configuration"))]


def test_running_config_in_ios_order_no_spurious_moves(dev):
    """Two pushes in either order (``access-list 150`` and class-map ``zz-ssh`` first, or
    ``access-list 120`` and ``aa-discard`` first): IOS lists 120 before 150, class-maps by name,
    interfaces by port, so both running-configs are the same text: no spurious moves in a text
    diff, none in hier-config's remediation, an empty NAPALM replace diff."""
    from hier_config import Platform, WorkflowRemediation, get_hconfig

    a = "access-list 150 permit tcp any any eq 22\nclass-map match-all zz-ssh\n match access-group 150\n"
    b = "access-list 120 permit udp any any eq 9\nclass-map match-all aa-discard\n match access-group 120\n"
    before = dev.get_config()["running"]
    runs = []
    for first, second in ((a, b), (b, a)):
        for push in (first, second):
            dev.load_merge_candidate(config=push)
            dev.commit_config()
        runs.append(dev.get_config()["running"])
        dev.load_replace_candidate(config=before)
        dev.commit_config()
    one, two = runs
    assert one.index("access-list 120 ") < one.index("access-list 150 ")
    assert one.index("class-map match-all aa-discard") < one.index("class-map match-all zz-ssh")
    ports = re.findall(r"^interface (\S+)$", one, re.M)
    assert ports[-1] == "Vlan1"  # IOS lists the VLAN interfaces after the ports
    assert ports[:-1] == sorted(ports[:-1], key=lambda p: int(p.rsplit("/", 1)[1]))
    diff = list(difflib.unified_diff(_filtered(one), _filtered(two), lineterm="", n=0))
    assert diff == [], "\n".join(diff)
    rem = WorkflowRemediation(get_hconfig(Platform.CISCO_IOS, two), get_hconfig(Platform.CISCO_IOS, one))
    assert not list(rem.remediation_config.all_children())
    for push in (b, a):
        dev.load_merge_candidate(config=push)
        dev.commit_config()
    dev.load_replace_candidate(config=one)
    assert dev.compare_config() == ""
    dev.discard_config()
    dev.load_replace_candidate(config=before)
    dev.commit_config()
    assert dev.get_config()["running"] == before


def test_inline_transfer_through_tclsh(vswitch):
    """``inline_transfer=True``: netmiko's InLineTransfer types ``tclsh``, ``puts [open
    "flash:candidate_config.txt" w+] {...}`` (lines split by CR inside the braces) and
    ``tclquit``; the file's MD5 (``verify /md5``) matches, the merge and its rollback work."""
    d = _driver(vswitch, inline_transfer=True)
    _open(d)
    try:
        before = d.get_config()["running"]
        d.load_merge_candidate(config="interface GigabitEthernet1/0/7\n description via-tclsh\n")
        assert d.compare_config().splitlines() == ["+interface GigabitEthernet1/0/7", "+ description via-tclsh"]
        d.commit_config()
        assert " description via-tclsh" in d.get_config()["running"]
        d.rollback()
        assert d.get_config()["running"] == before
        out = d.device.send_command("tclsh", expect_string=r"\(tcl\)#")
        assert "Invalid" not in out
        assert d.device.send_command('puts "hello"', expect_string=r"\(tcl\)#").strip() == "hello"
        assert "Switch" in d.device.send_command("show version | include uptime", expect_string=r"\(tcl\)#")
        d.device.send_command("tclquit", expect_string=r"Switch#")
        assert d.device.find_prompt() == "Switch#"
    finally:
        d.close()


def test_uptime_advances(dev, vswitch):
    """``show version``'s uptime counts from the switch's (virtual) power-on and advances."""
    def up() -> int:
        v = dev.cli(["show version"])["show version"]
        return dev.parse_uptime(re.search(r" uptime is (.*)", v).group(1))

    first = up()
    assert first >= 60
    time.sleep(1)
    assert up() >= first


def test_wrong_password_is_refused(vswitch):
    with pytest.raises(NetmikoAuthenticationException):  # NAPALM lets netmiko's error through
        _open(_driver(vswitch, password="not-the-password"))


def test_state_getters(dev, vswitch):
    """The getters of issue 35: ARP (no SVI address: empty, as a layer-2 3750's), SNMP from the
    running-config (chassis ID: the serial), environment (CPU from the table, memory), LLDP (on
    with ``lldp run``, no neighbour: testbed hosts send none), MAC table (the CPU's static
    entries; the bridge's learned ones on a testbed that applies its config)."""
    assert dev.get_arp_table() == []
    snmp = dev.get_snmp_information()
    assert snmp["chassis_id"] == dev.get_facts()["serial_number"] and snmp["community"] == {}
    dev.device.send_config_set(["snmp-server community qoslab-ro RO 10", "snmp-server location lab-3",
                                "snmp-server contact ops", "lldp run"])
    snmp = dev.get_snmp_information()
    assert snmp["community"] == {"qoslab-ro": {"mode": "ro", "acl": "10"}}
    assert (snmp["location"], snmp["contact"]) == ("lab-3", "ops")
    env = dev.get_environment()
    assert 0 <= env["cpu"][0]["%usage"] <= 100 and env["memory"]["available_ram"] > env["memory"]["used_ram"] > 0
    assert dev.get_lldp_neighbors() == {} and dev.get_lldp_neighbors_detail() == {}
    macs = dev.get_mac_address_table()
    assert len(macs) == 20 and all(m["static"] and m["vlan"] == 0 and m["interface"] == "" for m in macs)
    assert "FF:FF:FF:FF:FF:FF" in {m["mac"] for m in macs}
    counters = dev.get_interfaces_counters()
    assert set(counters) >= {"GigabitEthernet1/0/1", "Vlan1"}
    # the discards from `show interface summary` (issue 43: it was refused, so NAPALM read -1)
    assert counters["GigabitEthernet1/0/1"]["tx_discards"] == 0 == counters["GigabitEthernet1/0/1"]["rx_discards"]


#: the getters NAPALM's ios driver raises NotImplementedError for (hardware too)
NOT_IMPLEMENTED = {"get_firewall_policies", "get_probes_results"}


def every_getter(d) -> tuple[dict, set]:
    """Each ``get_*`` of an open NAPALM ``ios`` driver, ping and traceroute (issue 49): (the
    results, the getters that raised NotImplementedError). Any other exception fails."""
    out, missing = {}, set()
    for name in sorted(n for n in dir(d) if n.startswith("get_")):
        args = ("198.18.0.1/32",) if name == "get_route_to" else ()
        try:
            out[name] = getattr(d, name)(*args)
        except NotImplementedError:
            missing.add(name)
    out["ping"], out["traceroute"] = d.ping("198.18.0.1"), d.traceroute("198.18.0.1")
    return out, missing


def test_every_getter_returns_data_or_not_implemented(vswitch):
    """No getter meets "Invalid input" on the 3750 (BGP not active, no NTP, no VRF, ...)."""
    d = _driver(vswitch)
    _open(d)
    try:
        out, missing = every_getter(d)
    finally:
        d.close()
    assert missing == NOT_IMPLEMENTED
    assert out["get_environment"]["memory"]["available_ram"] > 0 and out["get_bgp_neighbors"] == {}
    assert out["get_ntp_stats"] == [] and out["get_network_instances"]["default"]["type"] == "DEFAULT_INSTANCE"
    assert len(out["get_vlans"]["1"]["interfaces"]) == 24
