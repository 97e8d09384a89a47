"""``qos profile NAME`` and ``service-profile NAME`` (issue 49: how AVD 6 writes tx-queue
scheduling): the profile holds an interface's QoS lines and tx-queues, prints after the hostname
as AVD does, and an interface with ``service-profile`` is compiled with the profile's lines under
its own (its own shape or tx-queue wins); a missing profile adds nothing; ``no qos profile``
removes it; the prompts of its modes."""

from __future__ import annotations

from test_eos_switch import Switch, _cli

from conftest import ECENET
from qoslab.eos import EosConfig, load_config
from qoslab.topology import load_topology
from qoslab.vswitch.dialects.eos.datapath import compile_eos_tc

TOPO = load_topology(ECENET, switch={"model": "DCS-7280SR3-48YC8", "hostname": "leaf1", "ports": ["Gi1/0/1-24"],
                                     "span_destinations": ["Gi1/0/24"]})
PROFILE = """qos profile QP-HOST
   qos trust dscp
   shape rate 8000 kbps
   !
   tx-queue 1
      no priority
      bandwidth percent 10
      shape rate 2000 kbps
!
interface Ethernet1
   service-profile QP-HOST
interface Ethernet2
   service-profile QP-HOST
   shape rate 4000 kbps
interface Ethernet3
   service-profile NONE
"""


def _cfg() -> EosConfig:
    cfg = EosConfig.factory("leaf1", [f"Ethernet{n}" for n in range(1, 25)])
    assert load_config(PROFILE, cfg) == []
    return cfg


def test_a_profile_prints_after_the_hostname_and_applies_under_the_interfaces_own_lines():
    cfg = _cfg()
    text = cfg.render()
    assert text.index("hostname leaf1") < text.index("qos profile QP-HOST") < text.index("interface Ethernet1")
    assert "   service-profile QP-HOST\n" in text and "      shape rate 2000 kbps\n" in text
    tc = compile_eos_tc(cfg, TOPO)
    one, two, three = ("\n".join(tc.ports[f"Gi1-0-{n}"]) for n in (1, 2, 3))
    assert "classid 1:1 htb rate 8000000bit ceil 8000000bit" in one  # the profile's port shape (link: 10 Mbit/s)
    assert "classid 1:21 htb" in one and "ceil 2000000bit" in one  # tx-queue 1 shaped by the profile
    assert "classid 1:1 htb rate 4000000bit ceil 4000000bit" in two  # its own shape rate wins
    assert "ceil 2000000bit" not in three  # a profile that does not exist adds nothing
    assert load_config("no qos profile QP-HOST\n", cfg) == [] and "qos profile" not in cfg.render()


def test_the_profile_modes_prompts(tmp_path):
    s = _cli(Switch(tmp_path))
    s.line("configure")
    s.line("qos profile QP")
    assert s.prompt == "leaf1(config-qos-profile-QP)#"
    s.line("tx-queue 3")
    assert s.prompt == "leaf1(config-qos-profile-QP-txq-3)#"
    assert s.line("bandwidth percent 20").text == ""
    s.line("end")
    assert "qos profile QP\n   !\n   tx-queue 3\n      bandwidth percent 20\n" in s.line("show running-config").text
