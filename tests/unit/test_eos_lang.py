"""The EOS configuration language (qoslab.eos, issue 44): the running-config's form and order,
abbreviations, EOS's three errors naming the token at fault, ``no`` and ``default`` forms, modes,
access list sequence numbers, and hostile lines (never anything but EosError)."""

from __future__ import annotations

import random

import pytest

from conftest import REPO
from qoslab.eos import EosConfig, EosError, Mode, eos_port, interface_name, interpret, load_config, neutral_port

PORTS = [f"Ethernet{n}" for n in range(1, 25)]
GOLDEN = REPO / "switch-configs" / "rendered" / "arista_eos"


def _cfg(text: str = "") -> EosConfig:
    cfg = EosConfig.factory("leaf1", PORTS)
    assert load_config(text, cfg) == []
    return cfg


def _err(cfg: EosConfig, line: str, mode: Mode | None = None) -> EosError:
    with pytest.raises(EosError) as e:
        interpret(cfg, mode or Mode(), line)
    return e.value


def test_names_map_neutral_ports_to_front_panel_ports():
    assert eos_port("Gi1/0/7") == eos_port("GigabitEthernet1/0/7") == "Ethernet7"
    assert neutral_port("Et7") == neutral_port("ethernet 7") == neutral_port("Ethernet7") == "Gi1/0/7"
    assert interface_name("ma1") == "Management1" and interface_name("po10") == "Port-Channel10"
    assert neutral_port("Ethernet3/1/1") is None and neutral_port("Management1") is None
    assert interface_name("e1") is None  # one letter fits nothing EOS accepts
    with pytest.raises(ValueError, match="Gi1/0/N"):
        eos_port("Gi2/0/1")


def test_the_thesis_render_loads_and_prints_in_running_config_order():
    cfg = _cfg((GOLDEN / "thesis-ecenet.eos").read_text())
    text = cfg.render()
    order = [text.index(k) for k in ("hostname leaf1", "interface Ethernet1\n", "ip access-list QOSLAB-100",
                                     "monitor session 1 source", "qos map dscp", "class-map type qos", "policy-map type")]
    assert order == sorted(order)
    assert "interface Ethernet1\n   service-policy type qos input police-jp\n   !\n   tx-queue 1\n      no priority\n" \
           "      bandwidth percent 33\n" in text
    assert "   class class112\n      set dscp 40\n      set traffic-class 5\n   !\n   class class113\n" in text
    assert text.endswith("!\nend\n") and "tx-queue 5" not in text  # a default strict-priority queue prints nothing
    assert text.index("interface Ethernet2\n") < text.index("interface Ethernet10\n")


def test_keywords_abbreviate_and_interfaces_take_any_spelling():
    cfg = _cfg("int eth 3\n qos tr d\n tx 2\n  no pri\n  ban per 20\n  shape rate 30 percent\n")
    intf = cfg.interfaces["Ethernet3"]
    assert intf.lines == ["qos trust dscp"] and intf.txq[2] == ["no priority", "bandwidth percent 20",
                                                                "shape rate 30 percent"]


@pytest.mark.parametrize(("mode", "line", "kind", "token", "word"), [
    (Mode(), "qos map dscp 99 to traffic-class 1", "invalid", 3, "99"),
    (Mode(), "qos map dscp 8 to traffic-class 8", "invalid", 6, "8"),
    (Mode(), "interface Ethernet99", "invalid", 1, "Ethernet99"),
    (Mode(), "frobnicate", "invalid", 0, "frobnicate"),
    (Mode(), "monitor session 1 destination Ethernet77", "invalid", 4, "Ethernet77"),
    (Mode("if", "Ethernet1"), "qos trust", "incomplete", 0, ""),
    (Mode("if", "Ethernet1"), "qos trust dscpx", "invalid", 2, "dscpx"),
    (Mode("if", "Ethernet1"), "sh", "ambiguous", 0, ""),
    (Mode(), "e", "ambiguous", 0, ""),
    (Mode("txq", "Ethernet1", "1"), "bandwidth percent 0", "invalid", 2, "0"),
    (Mode("txq", "Ethernet1", "1"), "priority", "incomplete", 0, ""),
])
def test_errors_name_the_token_as_eos_does(mode, line, kind, token, word):
    e = _err(_cfg(), line, mode)
    assert (e.kind, e.token, e.word) == (kind, token, word)
    expected = {"invalid": f"% Invalid input (at token {token}: '{word}')\n", "incomplete": "% Incomplete command\n",
                "ambiguous": "% Ambiguous command\n"}[kind]
    assert e.render() == expected


def test_a_refused_line_leaves_the_config_as_it_was():
    cfg = _cfg("ip access-list QOSLAB-a\n 10 permit ip any any\n")
    before = cfg.render()
    with pytest.raises(EosError) as e:
        interpret(cfg, Mode("acl", "QOSLAB-a"), "20 permit tcp any any eq 70000")
    assert (e.value.token, e.value.word) == (6, "70000")
    assert cfg.render() == before


def test_access_lists_number_entries_and_refuse_a_taken_sequence_number():
    cfg = _cfg("ip access-list QOSLAB-a\n permit tcp any any eq 1099\n permit udp 198.18.0.0/24 range 5000 5001 "
               "host 198.18.0.1\n 15 permit ip 198.18.0.5 0.0.0.255 any\n")
    assert cfg.acls["QOSLAB-a"] == {10: "permit tcp any any eq 1099", 15: "permit ip 198.18.0.0/24 any",
                                    20: "permit udp 198.18.0.0/24 range 5000 5001 host 198.18.0.1"}
    e = _err(cfg, "10 permit ip any any", Mode("acl", "QOSLAB-a"))
    assert e.render() == "% Duplicate sequence number\n"
    interpret(cfg, Mode("acl", "QOSLAB-a"), "10 permit tcp any any eq 1099")  # the same entry again: no change
    interpret(cfg, Mode("acl", "QOSLAB-a"), "no 15")
    assert sorted(cfg.acls["QOSLAB-a"]) == [10, 20]
    interpret(cfg, Mode("acl", "QOSLAB-a"), "no permit tcp any any eq 1099 extra")  # not an entry: nothing removed
    interpret(cfg, Mode("acl", "QOSLAB-a"), "no permit udp 198.18.0.9/24 range 5000 5001 host 198.18.0.1")
    assert sorted(cfg.acls["QOSLAB-a"]) == [10]  # ``no ENTRY`` as typed removes the entry as EOS printed it


def test_no_and_default_differ_where_eos_prints_the_no_form():
    cfg = _cfg("interface Ethernet1\n no qos trust\n tx-queue 3\n  no priority\n  bandwidth percent 40\n")
    assert cfg.interfaces["Ethernet1"].lines == ["no qos trust"] and "no priority" in cfg.interfaces["Ethernet1"].txq[3]
    assert load_config("interface Ethernet1\n default qos trust\n tx-queue 3\n  priority strict\n", cfg) == []
    assert cfg.interfaces["Ethernet1"].lines == [] and cfg.interfaces["Ethernet1"].txq[3] == ["bandwidth percent 40"]
    assert load_config("interface Ethernet1\n no tx-queue 3\n", cfg) == []
    assert cfg.interfaces["Ethernet1"].txq == {}


def test_qos_maps_print_one_line_per_traffic_class_and_no_resets_to_the_default():
    cfg = _cfg("qos map dscp 9 8 to traffic-class 1\nqos map dscp 10 to traffic-class 1\n"
               "qos map dscp 26 to traffic-class 3 drop-precedence 1\nqos map cos 0 to traffic-class 2\n")
    assert cfg.qos_map_lines() == ["qos map cos 0 to traffic-class 2", "qos map dscp 8 9 10 to traffic-class 1",
                                   "qos map dscp 26 to traffic-class 3 drop-precedence 1"]
    assert load_config("no qos map dscp 9 10 to traffic-class 1\n", cfg) == []
    assert cfg.dscp_tc_of(9) == 0 and cfg.dscp_tc_of(8) == 1


def test_a_line_of_a_parent_mode_leaves_the_sub_mode_and_exit_end_climb():
    cfg = _cfg()
    mode = interpret(cfg, Mode(), "interface Ethernet1")
    mode = interpret(cfg, mode, "tx-queue 1")
    assert mode == Mode("txq", "Ethernet1", "1")
    mode = interpret(cfg, mode, "qos trust dscp")  # an interface line: back in interface mode
    assert mode == Mode("if", "Ethernet1")
    mode = interpret(cfg, interpret(cfg, mode, "tx-queue 2"), "policy-map type qos p")
    assert mode == Mode("pmap", "p")
    mode = interpret(cfg, interpret(cfg, mode, "class c"), "exit")
    assert mode == Mode("pmap", "p", "")
    assert interpret(cfg, mode, "end") == Mode("exec")
    assert interpret(cfg, Mode(), "exit") == Mode("exec")


def test_policy_maps_keep_class_order_and_replace_set_actions():
    cfg = _cfg("policy-map type quality-of-service pm\n class b\n  set dscp af41\n  set dscp 40\n"
               "  police rate 1000000 bps burst-size 8000 bytes\n class a\n  set traffic-class 3\n")
    assert cfg.policy_maps["pm"] == {"b": ["set dscp 40", "police rate 1000000 bps burst-size 8000 bytes"],
                                     "a": ["set traffic-class 3"]}
    assert load_config("policy-map type qos pm\n no class b\nno class-map type qos x\n", cfg) == []
    assert list(cfg.policy_maps["pm"]) == ["a"]


def test_monitor_sessions_and_their_removal():
    cfg = _cfg("monitor session s1 source Ethernet1 rx\nmonitor session s1 source et2\n"
               "monitor session s1 destination Ethernet21\n")
    assert cfg.monitor_lines() == ["monitor session s1 source Ethernet1 rx", "monitor session s1 source Ethernet2",
                                   "monitor session s1 destination Ethernet21"]
    assert load_config("no monitor session s1 source Ethernet1\n", cfg) == [] and list(cfg.monitor["s1"].sources) == \
        ["Ethernet2"]
    assert load_config("no monitor session s1\n", cfg) == [] and cfg.monitor == {}


def test_load_config_names_each_refused_line():
    errors = load_config("interface Ethernet1\n qos trust dscp\n bogus\nqos map dscp 64 to traffic-class 1\n",
                         EosConfig.factory("s", PORTS))
    assert errors == ["line 3: % Invalid input (at token 0: 'bogus'): 'bogus'",
                      "line 4: % Invalid input (at token 3: '64'): 'qos map dscp 64 to traffic-class 1'"]


HOSTILE = ["\x00interface Ethernet1", "interface Ethernet1\x1b[2J", "qos map dscp " + "1 " * 5000 + "to",
           "ip access-list " + "A" * 300, "ＩＮＴＥＲＦＡＣＥ Ethernet1", "no", "default", "   ", "interface",
           "police rate 99999999999999999999 bps burst-size 1 bytes", "qos map dscp -1 to traffic-class 1",
           "interface Ethernet1-", "monitor session 1 source Ethernet1 sideways", "10 10 10", "!", "! comment"]


@pytest.mark.parametrize("line", HOSTILE)
def test_hostile_lines_are_refused_cleanly(line):
    cfg = _cfg()
    for mode in (Mode(), Mode("if", "Ethernet1"), Mode("acl", "x"), Mode("pmapc", "p", "c")):
        cfg.acls.setdefault("x", {})
        cfg.policy_maps.setdefault("p", {"c": []})
        try:
            interpret(cfg, mode, line)
        except EosError as e:
            assert e.render().startswith("% ") and e.render().endswith("\n")


def test_random_word_salad_only_ever_raises_eos_errors():
    """2000 lines of shuffled keywords, values and junk in every mode: each is taken or refused
    with an EosError, nothing else (a hostile-input property test with a fixed seed)."""
    rng = random.Random(44)
    words = ("qos map dscp cos to traffic-class tx-queue interface Ethernet1 et ethernet 2 trust no default "
             "priority strict bandwidth percent shape rate random-detect drop minimum-threshold bytes 100 "
             "permit deny ip tcp any host 198.18.0.1 eq range 5 1 65536 class set police bps burst-size "
             "monitor session source destination rx - / : x").split()
    cfg = _cfg()
    cfg.acls["x"], cfg.policy_maps["p"] = {}, {"c": []}
    for _ in range(2000):
        line = " ".join(rng.choice(words) for _ in range(rng.randint(1, 9)))
        mode = rng.choice([Mode(), Mode("if", "Ethernet1"), Mode("txq", "Ethernet1", "3"), Mode("acl", "x"),
                           Mode("cmap", "c"), Mode("pmap", "p"), Mode("pmapc", "p", "c")])
        cfg.class_maps.setdefault("c", [])
        try:
            interpret(cfg, mode, line)
        except EosError:
            pass
    assert cfg.render().endswith("end\n")
