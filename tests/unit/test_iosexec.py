"""The EXEC parser: IOS abbreviations, case, interface names, carets, ambiguity, output modifiers."""

from __future__ import annotations

import pytest

from qoslab.ios import IosError
from qoslab.vswitch.dialects.catalyst3750.commands import C3750_TABLE
from qoslab.vswitch.execparse import apply_modifier, parse_exec, parse_port


def parse(line):
    """A line of the 3750's EXEC language."""
    return parse_exec(line, C3750_TABLE)


@pytest.mark.parametrize("line,name,args", [
    ("sh mls qos int gi1/0/1 stat", "show mls qos interface port statistics", {"port": "GigabitEthernet1/0/1"}),
    ("SHOW MLS QOS INTERFACE G1/0/2 QUEUEING", "show mls qos interface port queueing", {"port": "GigabitEthernet1/0/2"}),
    ("show mls qos interface GigabitEthernet 1/0/3 buffers", "show mls qos interface port buffers",
     {"port": "GigabitEthernet1/0/3"}),
    ("sh mls qos int gi1/0/4", "show mls qos interface port", {"port": "GigabitEthernet1/0/4"}),
    ("sh start", "show startup-config", {}),
    ("sh run", "show running-config", {}),
    ("show ip int br", "show ip interface brief", {}),
    ("sh int status", "show interfaces status", {}),
    ("sh class-map jp-1", "show class-map name", {"word": "jp-1"}),
    ("sh policy-map int gi1/0/1", "show policy-map interface port", {"port": "GigabitEthernet1/0/1"}),
    ("sh ip access-lists 101", "show ip access-lists name", {"word": "101"}),
    ("sh mls qos queue-set 2", "show mls qos queue-set n", {"n": 2}),
    ("sh priv", "show privilege", {}),
    ("term len 0", "terminal length", {"n": 0}),
    ("copy running-config flash:/rollback_config.txt", "copy",
     {"url": "running-config", "url2": "flash:/rollback_config.txt"}),
    ("configure replace flash:/candidate_config.txt force revert trigger error", "configure replace",
     {"url": "flash:/candidate_config.txt", "rest": "force revert trigger error"}),
    ("verify /md5 flash:/merge_config.txt", "verify md5", {"url": "flash:/merge_config.txt"}),
    ("wr mem", "write memory", {}),
    ("sh run int Gi1/0/1", "show running-config interface port", {"port": "GigabitEthernet1/0/1"}),
    ("show running-config interface GigabitEthernet1/0/1", "show running-config interface port",
     {"port": "GigabitEthernet1/0/1"}),
    ("sh ru p a", "show running-config partition access-list", {}),
    ("sh mls qos maps dscp-c", "show mls qos maps dscp-cos", {}),
    ("sh mls qos maps ip", "show mls qos maps ip-prec-dscp", {}),
    ("sh mon", "show monitor", {}),
    ("sh mon sess 3", "show monitor session n", {"n": 3}),
    ("tclsh", "tclsh", {}),
])
def test_abbreviations_case_and_ports(line, name, args):
    cmd = parse(line)
    assert (cmd.name, cmd.args) == (name, args)


def test_invalid_incomplete_ambiguous():
    with pytest.raises(IosError) as e:
        parse("show mls qos interface gi1/0/1 statz")
    assert e.value.kind == "invalid" and e.value.column == len("show mls qos interface gi1/0/1 ")
    with pytest.raises(IosError) as e:
        parse("show mls")
    assert e.value.kind == "incomplete"
    with pytest.raises(IosError) as e:
        parse("sh in")
    assert e.value.kind == "ambiguous" and "Ambiguous command" in e.value.render()
    with pytest.raises(IosError) as e:
        parse("show running-config | frobnicate x")
    assert e.value.kind == "invalid"


@pytest.mark.parametrize("text,long", [("gi1/0/1", "GigabitEthernet1/0/1"), ("g1/0/1", "GigabitEthernet1/0/1"),
                                       ("GIGABITETHERNET1/0/24", "GigabitEthernet1/0/24"),
                                       ("Gig 1/0/2", "GigabitEthernet1/0/2"), ("fa1/0/3", "FastEthernet1/0/3"),
                                       ("te1/0/1", "TenGigabitEthernet1/0/1"), ("vl10", "Vlan10"),
                                       ("gi1/0", None), ("t1/0/1", None), ("x1/0/1", None)])
def test_parse_port(text, long):
    assert parse_port(text) == long


RUN = "hostname s\n!\ninterface GigabitEthernet1/0/1\n srr-queue bandwidth share 1 2 3 4\n!\n" \
      "interface GigabitEthernet1/0/2\n!\naccess-list 101 permit ip any any\nip access-list extended x\n permit ip any any\n"


def test_modifiers():
    cmd = parse("show run | section ^interface")
    assert apply_modifier(RUN, cmd.modifier) == ("interface GigabitEthernet1/0/1\n srr-queue bandwidth share 1 2 3 4\n"
                                                 "interface GigabitEthernet1/0/2\n")
    assert apply_modifier(RUN, parse("show run | sec access-list").modifier) == \
        "access-list 101 permit ip any any\nip access-list extended x\n permit ip any any\n"
    assert apply_modifier(RUN, parse("sh run | i share|hostname").modifier) == \
        "hostname s\n srr-queue bandwidth share 1 2 3 4\n"
    assert "interface" not in apply_modifier(RUN, parse("sh run | exclude interface").modifier)
    assert apply_modifier(RUN, parse("sh run | begin access-list").modifier).startswith("access-list 101")
    assert apply_modifier(RUN, parse("sh run | count interface").modifier) == \
        "Number of lines which match regexp = 2\n"
    assert apply_modifier(RUN, parse("sh run | include nothing-matches").modifier) == ""
