"""A push owns only what it made (issue 49; qoslab.switch.ownership), on every platform, through
the virtual switches' own interpreters: a management access list, a VTY access-class (EOS: the
SSH service ACL), SNMP and a foreign policy-map attached to a port survive pushes of every
shipped profile in a row, the running-config changing by the profiles' lines and qoslab's record only;
a change to anything qoslab did not make is refused naming the line; the record round-trips."""

from __future__ import annotations

import pytest
from test_platforms import PLATFORMS, _Config

from conftest import ECENET
from pushdiff import changed_lines
from qoslab.ios.configdiff import normalized_config, record_remarks, remediation
from qoslab.platforms import get_platform
from qoslab.profiles import load_profile
from qoslab.switch.ownership import OwnershipError, plan, read_record, record_lines
from qoslab.topology import load_topology

TOPO = load_topology(ECENET)

#: What an operator configured before qoslab came (IOS: both Catalysts).
FOREIGN_IOS = [
    "ip access-list extended MGMT-EXT", " permit tcp 192.0.2.0 0.0.0.255 any eq 22", " deny ip any any log",
    "line vty 0 4", " access-class MGMT-EXT in", "snmp-server community public RO", "snmp-server location lab",
    "class-map match-any FOREIGN-CM", " match access-group name MGMT-EXT", "policy-map FOREIGN-PM",
    " class FOREIGN-CM", "  set dscp 46", "interface GigabitEthernet1/0/10", " service-policy input FOREIGN-PM"]
#: The same on EOS (its management access is ``management ssh`` / ``ip access-group``).
FOREIGN_EOS = [
    "ip access-list MGMT-EXT", " permit tcp 192.0.2.0 0.0.0.255 any eq 22", " deny ip any any log",
    "management ssh", " ip access-group MGMT-EXT in", "snmp-server community public ro", "snmp-server location lab",
    "class-map type qos match-any VOICE", " match dscp 46", "policy-map type quality-of-service FOREIGN-PM",
    " class VOICE", "  set traffic-class 5", "interface Ethernet10", " service-policy type qos input FOREIGN-PM"]


def _switch(platform: str, foreign: bool = True):
    p = get_platform(platform)
    cfg = _Config(p, TOPO)
    if foreign:
        assert cfg.load(FOREIGN_EOS if p.dialect == "eos" else FOREIGN_IOS) == []
    return p, cfg


def _push(p, cfg, profile: str, adopt: bool = False) -> list[str]:
    """What ``qoslab switch push`` does, on the interpreter: plan, remediation, check, send."""
    lines = p.render(load_profile(profile), TOPO)
    run = cfg.render()
    pl = plan(run, lines, p.qos_rules, adopt)
    rem = pl.record_first(remediation(run, pl.intended, p.qos_rules.hier_platform, p.qos_rules.negations))
    pl.check(rem, p.qos_rules)
    cfg.send(rem)
    assert normalized_config(cfg.render()) == normalized_config(pl.intended)
    assert remediation(cfg.render(), pl.intended, p.qos_rules.hier_platform, p.qos_rules.negations) == []
    return rem


@pytest.mark.parametrize("platform", PLATFORMS)
def test_foreign_config_survives_every_push_byte_for_byte(platform):
    p, cfg = _switch(platform)
    before = cfg.render()
    allowed = {"!"}
    for profile in ("thesis", "rmi-ports", "trust-dscp", "police-flood", "thesis", "fifo"):  # every shipped profile
        _push(p, cfg, profile)
        allowed |= {line.strip() for line in p.render(load_profile(profile), TOPO)}
        gone, added = changed_lines(before, cfg.render())
        assert gone == [], profile
        assert [a for a in added if a.strip() not in allowed and not a.startswith("interface ")] == [], profile
    # after the last push (fifo): only its SPAN sessions and the record are qoslab's
    assert read_record(cfg.render()) == {"monitor session 1", "monitor session 2"}
    assert "police-jp" not in cfg.render()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_second_push_sends_nothing_and_the_record_lists_what_the_push_made(platform):
    p, cfg = _switch(platform)
    _push(p, cfg, "thesis")
    rec = read_record(cfg.render())
    assert "policy-map police-jp" in rec and "monitor session 1" in rec
    assert not any("MGMT-EXT" in k or "FOREIGN" in k or "VOICE" in k for k in rec)
    if platform == "arista_eos":  # QOSLAB-* objects are qoslab's by name, not listed
        assert not any("QOSLAB-" in k for k in rec) and "ip access-list QOSLAB-112" in cfg.render()
    else:
        assert "acl 112" in rec and any(k.startswith("if GigabitEthernet1/0/1: ") for k in rec)
    assert _push(p, cfg, "thesis") == []


@pytest.mark.parametrize("platform", PLATFORMS)
def test_changing_a_foreign_object_of_the_profiles_name_is_refused_naming_it(platform):
    p, cfg = _switch(platform, foreign=False)
    eos = platform == "arista_eos"
    assert cfg.load(["policy-map type quality-of-service police-jp" if eos else "policy-map police-jp",
                     " class class-default" if not eos else " class class112", "  set dscp 8"]
                    if not eos else ["class-map type qos match-any class112", " match dscp 8",
                                     "policy-map type quality-of-service police-jp", " class class112",
                                     "  set dscp 8"]) == []
    before = cfg.render()
    with pytest.raises(OwnershipError, match=r"`policy-map (type quality-of-service )?police-jp`: the profile has"):
        _push(p, cfg, "thesis")
    assert cfg.render() == before


@pytest.mark.parametrize("platform", PLATFORMS)
def test_replacing_a_foreign_line_is_refused_naming_it(platform):
    p, cfg = _switch(platform, foreign=False)
    eos = platform == "arista_eos"
    line = {"catalyst3750": "srr-queue bandwidth share 10 20 30 40", "catalyst9300": "service-policy input OPS",
            "arista_eos": "service-policy type qos input OPS"}[platform]
    pre = (["policy-map OPS"] if platform == "catalyst9300" else
           ["policy-map type quality-of-service OPS"] if eos else [])
    assert cfg.load(pre + ["interface Ethernet1" if eos else "interface GigabitEthernet1/0/1", " " + line]) == []
    profile = "thesis" if platform != "catalyst9300" else "police-flood"
    with pytest.raises(OwnershipError, match=f"/ {line}`: the profile's .* would replace it"):
        _push(p, cfg, profile)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_removing_an_object_a_foreign_line_uses_is_refused_naming_the_line(platform):
    p, cfg = _switch(platform)
    _push(p, cfg, "thesis")
    eos = platform == "arista_eos"
    user = ["policy-map type quality-of-service OPS", " class class112", "  set traffic-class 2"] if eos else \
        ["policy-map OPS", " class class112", "  set dscp 8"]
    assert cfg.load(user) == []
    with pytest.raises(OwnershipError, match=r"`policy-map .*OPS / class class112` uses class-map class112"):
        _push(p, cfg, "fifo")
    if not eos:  # a VTY access-class on one of qoslab's numbered lists
        assert cfg.load(["no policy-map OPS", "line vty 5 15", " access-class 112 in"]) == []
        with pytest.raises(OwnershipError, match=r"`line vty 5 15 / access-class 112 in` uses access list 112"):
            _push(p, cfg, "fifo")


def test_without_the_record_qoslab_objects_by_name_only_and_nothing_else():
    p, cfg = _switch("arista_eos")
    _push(p, cfg, "thesis")
    cfg.send(["no ip access-list standard QOSLAB-OWNED"])  # someone removed the record
    with pytest.raises(OwnershipError, match="uses access list QOSLAB-112, which the push would remove"):
        _push(p, cfg, "fifo")


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_remediation_is_checked_before_anything_is_sent(platform):
    p, cfg = _switch(platform)
    eos = platform == "arista_eos"
    run = cfg.render()
    pl = plan(run, p.render(load_profile("thesis"), TOPO), p.qos_rules)
    for bad in (["no policy-map type quality-of-service FOREIGN-PM" if eos else "no policy-map FOREIGN-PM"],
                ["hostname other"],
                ["interface Ethernet10" if eos else "interface GigabitEthernet1/0/10", " description x"],
                ["interface Ethernet10" if eos else "interface GigabitEthernet1/0/10",
                 " no service-policy type qos input FOREIGN-PM" if eos else " no service-policy input FOREIGN-PM"]):
        with pytest.raises(OwnershipError):
            pl.check(bad, p.qos_rules)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_adopt_takes_over_identical_items_only(platform):
    p, cfg = _switch(platform)
    assert cfg.load(p.render(load_profile("thesis"), TOPO)) == []  # an earlier qoslab (no record)
    assert _push(p, cfg, "thesis") == []
    assert record_remarks(cfg.render()) is None  # nothing made, nothing recorded
    _push(p, cfg, "thesis", adopt=True)
    assert "policy-map police-jp" in read_record(cfg.render())
    _push(p, cfg, "fifo")
    assert "police-jp" not in cfg.render() and "FOREIGN-PM" in cfg.render()


def test_record_round_trip_ranges_and_limits():
    keys = {"acl 112", "acl rmi", "class-map c1", "policy-map p", "monitor session 1", "global mls qos",
            *{f"if GigabitEthernet1/0/{n}: queue-set 2" for n in (1, 2, 3, 4, 7)},
            "if Ethernet12: shape rate 50 percent"}
    lines = record_lines(keys)
    assert " remark if GigabitEthernet1/0/1-4,GigabitEthernet1/0/7: queue-set 2" in lines
    assert all(len(line) <= len(" remark ") + 100 for line in lines)
    assert read_record("\n".join(lines)) == keys
    assert read_record("ip access-list standard QOSLAB-OWNED\n 10 remark acl 5\n 10 remark someone's note\n") == \
        {"acl 5"}
    with pytest.raises(OwnershipError, match="longer than a remark"):
        record_lines({"global " + "x" * 100})
    assert record_lines(set()) == []


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_push_cut_halfway_without_rollback_leaves_what_it_made_recorded(platform):
    """The record is written first when a push makes new items: a push cut halfway whose rollback
    failed too leaves its half-made objects recorded, and the next push finishes the job."""
    p, cfg = _switch(platform)
    _push(p, cfg, "trust-dscp")
    lines = p.render(load_profile("thesis"), TOPO)
    run = cfg.render()
    pl = plan(run, lines, p.qos_rules)
    rem = pl.record_first(remediation(run, pl.intended, p.qos_rules.hier_platform, p.qos_rules.negations))
    assert rem[0].startswith(("ip access-list standard QOSLAB-OWNED", "no ip access-list standard QOSLAB-OWNED"))
    half = len(rem) // 2
    while rem[half].startswith(" "):  # cut between blocks, as a dropped session would leave it
        half += 1
    cfg.send(rem[:half])
    assert "policy-map police-jp" in read_record(cfg.render())
    _push(p, cfg, "thesis")
    _push(p, cfg, "fifo")
    assert "police-jp" not in cfg.render() and "FOREIGN-PM" in cfg.render()
