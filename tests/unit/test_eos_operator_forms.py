"""Configurations operators and Arista's AVD write, taken by the virtual EOS switch (issue 49):
``shape rate N kbps|mbps|percent`` on a port and on a tx-queue, access list remarks, standard
access lists, ``dscp`` and ``log`` in entries, ``monitor session ... source EthernetN both|rx``,
SNMP, ``management ssh`` with its service ACL. The fixture (tests/data/eos/operator-qos.cfg,
written by hand in the form AVD's eos_cli_config_gen renders such structured config: three-space
indents, entries with sequence numbers, the units as written; not pyavd's own output) loads without a refused line, reads back as it was
written (line for line, in the switch's section order), a second load changes nothing, and the
data path compiles it (``nft -c`` accepts the ruleset). Control bytes (ESC, OSC, BEL, NUL) in a
description or a remark, typed or sent over eAPI, are dropped, on EOS and on both Catalysts."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import ECENET, REPO
from qoslab.eos import EosConfig, load_config
from qoslab.ios import RunningConfig
from qoslab.ios import load_config as ios_load
from qoslab.topology import load_topology
from qoslab.vswitch.dialects.eos.datapath import compile_eos_nft, compile_eos_tc

FIXTURE = REPO / "tests" / "data" / "eos" / "operator-qos.cfg"
TOPO = load_topology(ECENET, switch={"model": "DCS-7280SR3-48YC8", "hostname": "leaf1", "ports": ["Gi1/0/1-24"],
                                     "span_destinations": ["Gi1/0/24"]})


def _loaded() -> EosConfig:
    cfg = EosConfig.factory("leaf1", [f"Ethernet{n}" for n in range(1, 25)])
    assert load_config(FIXTURE.read_text(), cfg) == []
    return cfg


def _sections(text: str) -> list[str]:
    """The non-empty sections of a running-config, in order (factory interfaces aside)."""
    return [s.strip("\n") for s in text.split("!\n") if s.strip() and not s.strip().startswith("interface Ethernet")
            or s.strip().count("\n")]


def test_the_operators_config_loads_and_reads_back_as_written():
    cfg = _loaded()
    text = cfg.render()
    written = [s for s in _sections(FIXTURE.read_text()) if s != "end"]
    got = [s for s in _sections(text) if s != "end"]
    assert got == written
    again = cfg.copy()
    assert load_config(FIXTURE.read_text(), again) == [] and again.render() == text  # a second load: no change


def test_the_data_path_takes_it():
    cfg = _loaded()
    tc = compile_eos_tc(cfg, TOPO)
    nft = compile_eos_nft(cfg, TOPO).text
    assert "ip dscp 46" in nft and "udp dport 16384-32767" in nft  # dscp ef and the range, remarks skipped
    one, two = "\n".join(tc.ports["Gi1-0-1"]), "\n".join(tc.ports["Gi1-0-2"])  # the link: 10 Mbit/s
    assert "classid 1:1 htb rate 5000000bit ceil 5000000bit" in one  # port: shape rate 5000 kbps
    assert "classid 1:20 htb rate 50000bit ceil 2000000bit" in one  # tx-queue 0: shape rate 2000 kbps
    assert "classid 1:23 htb rate 750000bit ceil 750000bit" in one  # tx-queue 3: 15 percent of the port
    assert "classid 1:25 htb rate 4950000bit ceil 5000000bit" in one  # tx-queue 5: 100 mbps, above the port
    assert "classid 1:1 htb rate 4000000bit ceil 4000000bit" in two  # port: 40 percent of the link
    assert "ingress" in one and "egress protocol all" in one  # SPAN source both: both directions
    assert "ingress" in two and "egress protocol all" not in two  # rx only
    if shutil.which("nft"):
        p = subprocess.run(["nft", "-c", "-f", "-"], input=nft, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr


def test_shape_rate_units_and_the_monitor_direction_as_written():
    cfg = EosConfig.factory("s", ["Ethernet1", "Ethernet2"])
    assert load_config("interface Ethernet1\n   shape rate 5000 kbps\n   tx-queue 2\n      shape rate 100 mbps\n"
                       "interface Ethernet2\n   shape rate 40088888\n"
                       "monitor session 1 source Ethernet1 both\nmonitor session 1 source Ethernet2\n"
                       "monitor session 1 destination Ethernet2\n", cfg) == []
    text = cfg.render()
    assert "   shape rate 5000 kbps\n" in text and "      shape rate 100 mbps\n" in text
    assert "   shape rate 40088888\n" in text
    assert "monitor session 1 source Ethernet1 both\nmonitor session 1 source Ethernet2\n" in text
    assert load_config("interface Ethernet1\n   shape rate 5000 gbps\n", cfg)  # not a unit EOS takes


CONTROL = "\x1b[31mUPLINK\x1b[0m\x07 to\x00 spine\x1b]0;owned\x07"


def test_control_bytes_are_dropped_from_descriptions_and_remarks_on_eos():
    cfg = EosConfig.factory("s", ["Ethernet1"])
    assert load_config(f"interface Ethernet1\n   description {CONTROL}\nip access-list A\n   remark x\x1b[2Jy\x00\n",
                       cfg) == []
    text = cfg.render()
    assert "   description UPLINK to spine\n" in text and "   10 remark xy\n" in text
    assert not any(ord(c) < 32 and c != "\n" or 0x7f <= ord(c) <= 0x9f for c in text)


@pytest.mark.parametrize("dialect", ["c3750", "c9300"])
def test_control_bytes_are_dropped_from_descriptions_on_the_catalysts(dialect):
    rc = RunningConfig.factory("Switch", ["Gi1/0/1"], dialect)
    assert ios_load(f"interface Gi1/0/1\n description {CONTROL}\nip access-list extended A\n remark a\x07b\n", rc) == []
    text = rc.render()
    assert " description UPLINK to spine\n" in text and "remark ab\n" in text
    assert not any(ord(c) < 32 and c != "\n" or 0x7f <= ord(c) <= 0x9f for c in text)
