"""The virtual EOS switch without sockets or a testbed (issue 44): its CLI session (prompts,
enable, privilege, configuration sessions with commit/abort/diffs, EXEC commands in configuration
mode, errors), show output read by the parsers operators use (ntc-templates' arista_eos TextFSM
templates) and JSON with every field of NAPALM's vEOS recordings, eAPI's view of the same session, the queue
counters from tc readings through the platform's own parser, and the data path it compiles."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from conftest import ECENET, REPO
from qoslab.eos import EosConfig
from qoslab.platforms import get_platform
from qoslab.profiles import load_profile
from qoslab.topology import load_topology
from qoslab.vswitch.dialects import get_dialect
from qoslab.vswitch.dialects.eos.datapath import compile_eos_nft, compile_eos_tc, queue_rates, round_robin
from qoslab.vswitch.eapi import CommandFailed

EOS = get_platform("arista_eos")
DATA = REPO / "tests" / "data" / "platforms" / "arista_eos"


class Switch:
    """What the dialect needs of the switch: running-config, topology, state folder, boot time,
    the dialect, apply/save/factory; ``qdiscs`` a canned tc reading."""

    def __init__(self, tmp_path, qdiscs=None):
        self.topo = load_topology(ECENET, switch={"model": "DCS-7280SR3-48YC8", "hostname": "leaf1",
                                                  "ports": ["Gi1/0/1-24"], "span_destinations": ["Gi1/0/21"]})
        self.dialect = get_dialect("eos")
        self.running = self.factory()
        self.dir, self.booted, self.applied = tmp_path, time.time() - 300, 0
        self._qdiscs = qdiscs or {}

    def factory(self) -> EosConfig:
        return self.dialect.factory(self.topo.switch.hostname, self.topo.switch.ports)

    def apply(self) -> bool:
        self.applied += 1
        return True

    def save(self) -> None:
        (self.dir / "startup-config").write_text(self.running.render())

    def qdiscs(self):
        return self._qdiscs


@pytest.fixture
def sw(tmp_path):
    return Switch(tmp_path)


def _cli(sw, privileged=True):
    return sw.dialect.session(sw, "s3cret", privileged)


def _run(s, *lines):
    return [s.line(line).text for line in lines]


def test_prompts_enable_and_privilege(sw):
    s = _cli(sw, privileged=False)
    assert s.prompt == "leaf1>"
    assert s.line("configure").text == "% Invalid input (privileged mode required)\n"
    r = s.line("enable")
    assert r.secret and r.text == "Password: "
    assert s.secret_line("wrong").secret and s.secret_line("bad").secret
    assert s.secret_line("worse").text == "% Access denied\n" and s.prompt == "leaf1>"
    s.line("enable")
    assert s.secret_line("s3cret").text == "" and s.prompt == "leaf1#"
    _run(s, "configure", "interface et1", "tx-queue 5")
    assert s.prompt == "leaf1(config-if-Et1-txq-5)#"
    _run(s, "policy-map type qos pm", "class c1")
    assert s.prompt == "leaf1(config-pmap-c-qos-pm-c1)#"
    assert _run(s, "end", "terminal length 0", "terminal width 511") == ["", "Pagination disabled.\n",
                                                                         "Width set to 511 columns.\n"]


def test_configuration_session_commit_abort_and_diff(sw):
    s = _cli(sw)
    _run(s, "configure session napalm_77", "interface Ethernet1", "qos trust dscp")
    assert s.prompt == "leaf1(config-s-napalm-if-Et1)#"
    assert "qos trust dscp" not in sw.running.render()  # nothing reaches the running-config before commit
    diff = s.line("show session-config diffs").text
    assert diff.startswith("--- system:/running-config\n+++ session:/napalm_77-session-config\n@@")
    assert "\n+   qos trust dscp\n" in diff
    assert s.line("end").text == "" and s.prompt == "leaf1#"
    other = _cli(sw)  # sessions are the switch's: another login commits it
    assert json.loads(other.line("show configuration sessions | json").text)["sessions"]["napalm_77"]["state"] == \
        "pending"
    assert other.line("configure session napalm_77 commit").text == ""
    assert "   qos trust dscp" in sw.running.render() and sw.applied == 1
    assert other.line("configure session napalm_77").text == \
        "% Cannot enter session napalm_77 (session has already been completed)\n"
    _run(s, "configure session x", "rollback clean-config", "interface Ethernet2", "shutdown")
    assert "qos trust dscp" not in s.line("show session-config").text
    assert s.line("abort").text == "" and s.prompt == "leaf1#" and "Ethernet2\n   shutdown" not in sw.running.render()


def test_exec_commands_run_in_configuration_mode_and_errors_name_the_token(sw):
    s = _cli(sw)
    _run(s, "configure terminal", "interface Ethernet3")
    assert s.line("show hostname").text == "Hostname: leaf1\nFQDN:     leaf1\n"
    assert s.line("do show hostname").text.startswith("Hostname: leaf1")
    assert s.line("qos trust dscpp").text == "% Invalid input (at token 2: 'dscpp')\n"
    assert s.line("qos trust").text == "% Incomplete command\n"
    assert s.line("sh").text == "% Ambiguous command\n"
    assert s.line("end").text == "" and sw.applied == 1  # leaving configure terminal applies
    assert s.line("show interfaces Ethernet99").text == "% Invalid input (at token 2: 'Ethernet99')\n" or \
        s.line("show interfaces Ethernet99").text.startswith("% ")
    assert s.line("show running-config | json").text == "% This is an unconverted command\n"


def test_show_output_parses_with_ntc_templates(sw):
    from ntc_templates.parse import parse_output

    s = _cli(sw)
    ver = parse_output(platform="arista_eos", command="show version", data=s.line("show version").text)[0]
    assert ver["model"] == "DCS-7280SR3-48YC8" and ver["image"] == "4.32.2F" and ver["serial_number"].startswith("QSL")
    host = parse_output(platform="arista_eos", command="show hostname", data=s.line("show hostname").text)[0]
    assert host == {"hostname": "leaf1", "fqdn": "leaf1"}
    ifs = parse_output(platform="arista_eos", command="show interfaces", data=s.line("show interfaces").text)
    assert [i["interface"] for i in ifs][:2] == ["Ethernet1", "Ethernet2"] and ifs[0]["link_status"] == "up"
    assert ifs[0]["mtu"] == "9214" and ifs[0]["bandwidth"] == "10000 kbit" and ifs[8]["link_status"] == "down"
    st = parse_output(platform="arista_eos", command="show interfaces status",
                      data=s.line("show interfaces status").text)
    assert st[0]["port"] == "Et1" and st[0]["status"] == "connected" and st[10]["status"] == "notconnect"


def _keys(d: dict, prefix: str = "") -> set[str]:
    out = set()
    for k, v in d.items():
        out.add(prefix + k)
        if isinstance(v, dict) and k not in ("interfaces",):
            out |= _keys(v, f"{prefix}{k}.")
    return out


def test_json_models_have_every_field_of_napalms_vEOS_recordings(sw):
    """Every key (nested too) of the vEOS ``show version`` and an Ethernet port's ``show
    interfaces`` JSON that NAPALM's tests recorded (tests/data/platforms/arista_eos/README.md) is in
    the virtual switch's model, and NAPALM's getters read the same types from both."""
    s = _cli(sw)
    real_ver = json.loads((DATA / "napalm_show_version.json").read_text())
    ver = json.loads(s.line("show version | json").text)
    assert _keys(real_ver) <= _keys(ver), _keys(real_ver) - _keys(ver)
    assert all(type(ver[k]) is type(real_ver[k]) for k in real_ver)
    real_eth = json.loads((DATA / "napalm_show_interfaces.json").read_text())["interfaces"]["Ethernet2"]
    eth1 = json.loads(s.line("show interfaces | json").text)["interfaces"]["Ethernet1"]
    assert _keys(real_eth) <= _keys(eth1), _keys(real_eth) - _keys(eth1)
    assert all(type(eth1[k]) is type(real_eth[k]) or {type(eth1[k]), type(real_eth[k])} == {int, float}
               for k in real_eth)


def test_eapi_runs_the_same_session(sw):
    s = _cli(sw)
    assert s.run("show version", "json", None)["modelName"] == "DCS-7280SR3-48YC8"
    assert s.run("configure session e1", "json", None) == {}
    assert s.run("interface Ethernet4", "json", None) == {} and s.run("qos trust dscp", "text", None) == ""
    assert s.run("commit", "json", None) == {}
    assert "qos trust dscp" in sw.running.interfaces["Ethernet4"].lines
    assert s.run("write memory", "json", None) == {"messages": ["Copy completed successfully."]}
    with pytest.raises(CommandFailed) as e:
        s.run("show session-config diffs", "json", None)
    assert (e.value.code, e.value.why) == (1002, "invalid command")  # not in a session any more
    with pytest.raises(CommandFailed) as e:
        s.run("show qos maps", "json", None)
    assert (e.value.code, e.value.why) == (1003, "unconverted command")
    with pytest.raises(CommandFailed) as e:
        s.run("show vresion", "text", None)
    assert e.value.errors == ["Invalid input (at token 1: 'vresion')"]


def test_copy_and_configure_replace(sw):
    s = _cli(sw)
    assert s.line("copy startup-config flash:rollback-0").text == "Copy completed successfully.\n"
    _run(s, "configure", "interface Ethernet1", "qos trust dscp", "end")
    assert s.line("configure replace flash:rollback-0").text == "" and "qos trust" not in sw.running.render()
    assert s.line("configure replace flash:nope").text.startswith("% Error opening flash:nope")
    (sw.dir / "flash" / "bad").write_text("interface Ethernet1\n   qos trust dscpp\n")
    assert s.line("configure replace flash:bad").text.startswith("% Configuration replace failed: line 2")


def _qdisc(handle, packets, nbytes, drops):
    return {"kind": "bfifo", "handle": handle, "packets": packets, "bytes": nbytes, "drops": drops, "dev": "Gi1-0-1"}


def test_queue_counters_from_tc_through_the_platform_parser(tmp_path):
    """tc's bfifo 21: (TC1) and 25: (TC5) counters -> ``show interfaces Ethernet1 counters queue``
    (JSON and text) -> the platform's parser: enqueued = sent + dropped, dropped, per traffic class."""
    qd = {"Gi1-0-1": [{"kind": "htb", "handle": "1:", "root": True, "bytes": 9000, "packets": 9, "drops": 3},
                      _qdisc("21:", 100, 150000, 7), _qdisc("25:", 40, 3000, 0)]}
    sw = Switch(tmp_path, qd)
    s = _cli(sw)
    for cmd in ("show interfaces Ethernet1 counters queue | json", "show interfaces Ethernet1 counters queue detail",
                "show interfaces Ethernet1 counters queue detail | json"):
        got = EOS.parse_counters(s.line(cmd).text)["GigabitEthernet1/0/1"]
        assert got.enqueued_packets == [[0], [107], [0], [0], [0], [47 - 7], [0], [0]], cmd
        assert got.dropped_packets == [[0], [7], [0], [0], [0], [0], [0], [0]], cmd
        assert got.dropped_bytes is not None and got.dropped_bytes[1] == [7 * 1500], cmd
    ifc = json.loads(s.line("show interfaces Ethernet1 | json").text)["interfaces"]["Ethernet1"]["interfaceCounters"]
    assert (ifc["outOctets"], ifc["outUcastPkts"], ifc["outDiscards"]) == (9000, 9, 3)


def test_thesis_compiles_to_strict_tc5_and_round_robin_below(sw):
    topo = sw.topo
    cfg = sw.factory()
    from qoslab.eos import load_config

    assert load_config("\n".join(EOS.render(load_profile("thesis"), topo)), cfg) == []
    assert round_robin(cfg, "Ethernet1") == {0, 1, 2, 3, 4} and round_robin(cfg, "Ethernet5") == set()
    rates = queue_rates(cfg, "Ethernet1", topo.link.rate)
    assert rates[5] == (topo.link.rate * 99 // 100, topo.link.rate, 2)  # strict, the link less 1 %
    assert rates[1][0] == rates[2][0] == rates[4][0] and rates[1][2] == 7  # 33 % each of the 1 %
    plan = compile_eos_tc(cfg, topo)
    eth1 = plan.ports["Gi1-0-1"]
    assert eth1[0].endswith("htb default 21") and any("handle 21: bfifo limit 20971" in x for x in eth1)
    assert any("handle 25: bfifo limit 131072" in x for x in eth1)
    assert any("mirred egress mirror dev Gi1-0-21" in x for x in plan.ports["Gi1-0-1"])
    nft = compile_eos_nft(cfg, topo).text
    assert 'ip saddr 198.18.0.1/32 ip daddr 198.18.0.2/32 goto a_Gi1_0_1_1' in nft
    assert 'counter ip dscp set 40 meta priority set 1:25 accept comment "class|Gi1/0/1|class112"' in nft
    assert "chain t_Gi1_0_1 {\n    meta priority set 1:21 accept" in nft  # default trust cos: CoS 0 -> TC 1


def test_police_and_trust_dscp_in_the_ruleset(sw):
    from qoslab.eos import load_config

    cfg = sw.factory()
    assert load_config("\n".join(EOS.render(load_profile("police-flood"), sw.topo)), cfg) == []
    assert load_config("\n".join(EOS.render(load_profile("trust-dscp"), sw.topo)), cfg) == []
    nft = compile_eos_nft(cfg, sw.topo).text
    assert 'limit rate over 3125000 bytes/second burst 32000 bytes counter drop comment "police-out|Gi1/0/5|flood"' \
        in nft
    assert "meta protocol ip meta priority set ip dscp map { 0-15 : 1:21, 16-31 : 1:22" in nft


#: Each EOS access-list form the interpreter accepts (typed; stored as EOS prints it) and the nft match
#: the data path compiles it to, through the Catalysts' ``nftcompile.ace_match`` (i43's ``Ace``).
EOS_ACL_FORMS = [
    ("permit ip any any", "permit ip any any", "meta protocol ip"),
    ("permit ip host 198.18.0.1 any", "permit ip host 198.18.0.1 any", "ip saddr 198.18.0.1/32"),
    ("permit ip 198.18.0.0/24 host 198.18.0.2", "permit ip 198.18.0.0/24 host 198.18.0.2",
     "ip saddr 198.18.0.0/24 ip daddr 198.18.0.2/32"),
    ("permit ip 198.18.1.7 0.0.0.255 any", "permit ip 198.18.1.0/24 any", "ip saddr 198.18.1.0/24"),
    ("permit tcp any any eq 1099", "permit tcp any any eq 1099", "ip protocol tcp tcp dport 1099"),
    ("permit udp any range 5000 5001 any eq www", "permit udp any range 5000 5001 any eq 80",
     "ip protocol udp udp sport 5000-5001 udp dport 80"),
    ("permit tcp 198.18.0.0/15 eq ssh host 198.18.0.9 range 6000 6010", "permit tcp 198.18.0.0/15 eq 22 host 198.18.0.9 "
     "range 6000 6010", "ip saddr 198.18.0.0/15 ip daddr 198.18.0.9/32 ip protocol tcp tcp sport 22 tcp dport 6000-6010"),
]


def _acl_cfg(sw, *entries: str) -> EosConfig:
    from qoslab.eos import load_config

    cfg = sw.factory()
    text = ("ip access-list QOSLAB-t\n" + "".join(f"   {e}\n" for e in entries) +
            "class-map type qos match-any c\n   match ip access-group QOSLAB-t\n"
            "policy-map type quality-of-service p\n   class c\n      set dscp 40\n"
            "interface Ethernet1\n   service-policy type qos input p\n")
    assert load_config(text, cfg) == []
    return cfg


@pytest.mark.parametrize("typed,stored,match", EOS_ACL_FORMS)
def test_each_eos_acl_form_compiles_through_the_shared_ace_match(sw, typed, stored, match):
    cfg = _acl_cfg(sw, typed)
    assert cfg.acls["QOSLAB-t"] == {10: stored}
    nft = compile_eos_nft(cfg, sw.topo).text
    assert f"chain in_Gi1_0_1 {{\n    {match} goto a_Gi1_0_1_1\n" in nft


def test_eos_acl_deny_returns_and_a_non_prefix_wildcard_is_refused(sw):
    from qoslab.eos import load_config

    nft = compile_eos_nft(_acl_cfg(sw, "deny tcp any eq ssh any", "permit ip any any"), sw.topo).text
    assert "chain m_Gi1_0_1_1 {\n    ip protocol tcp tcp sport 22 return\n    meta protocol ip goto a_Gi1_0_1_1\n" in nft
    errors = load_config("ip access-list QOSLAB-w\n   permit ip 10.0.0.0 0.255.0.255 any\n", sw.factory())
    assert errors == ["line 2: % Invalid input (at token 3: '0.255.0.255'): 'permit ip 10.0.0.0 0.255.0.255 any'"]


@pytest.mark.skipif(shutil.which("nft") is None, reason="nft (Debian nftables) not installed: make setup")
def test_a_ruleset_with_every_eos_acl_form_is_accepted_by_nft(sw):
    cfg = _acl_cfg(sw, *(typed for typed, _, _ in EOS_ACL_FORMS), "deny udp any any eq 9")
    p = subprocess.run(["nft", "-c", "-f", "-"], input=compile_eos_nft(cfg, sw.topo).text, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr


def test_dialect_and_platform_agree(sw):
    assert get_dialect("eos").model_prefixes == EOS.model_prefixes and EOS.dialect == "eos"
    assert (REPO / "playbooks" / "topologies" / "eceneteos.yaml").exists()
