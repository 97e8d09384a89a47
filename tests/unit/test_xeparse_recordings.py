"""qoslab's IOS-XE ``show policy-map interface`` parser (qoslab.platforms.xeparse) over real
recordings: every ``show policy-map interface`` output in Cisco's genieparser test data
(tests/data/genie-policy-map-interface/, sources in its README), Catalyst 9000 and router
layouts. For each recording the parser either returns, for every output queuing class, the
counters Genie's own expected result gives (Genie is the parser operators use), or refuses with
the line number of what it cannot read (hierarchical policies, an older layout); never a 0 it
did not read. Every interface name in the recordings (TwentyFiveGigE, HundredGigE,
FiveGigabitEthernet, Port-channel subinterfaces ...) is read as Genie reads it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import REPO
from qoslab.errors import QoslabError
from qoslab.ios.names import interface_name
from qoslab.platforms.xeparse import parse_policy_map_interface_xe

DATA = REPO / "tests" / "data" / "genie-policy-map-interface"
RECORDINGS = sorted(p.name.removesuffix("_output.txt") for p in DATA.glob("*_output.txt"))

#: Recordings the parser refuses: (line number, why). Hierarchical policies are not a flat list
#: of queues; golden_output6 is an older CBWFQ layout (``(pkts matched/bytes matched)``, a
#: ``depth/total drops`` line without its parenthesis) that neither counter form matches.
REFUSED = {
    "ShowPolicyMapInterface-golden_output18": (43, "hierarchical"),
    "ShowPolicyMapInterface-golden_output21": (17, "hierarchical"),
    "ShowPolicyMapInterface-golden_output24": (17, "hierarchical"),
    "ShowPolicyMapInterface-golden_output25": (20, "hierarchical"),
    "ShowPolicyMapInterface-golden_output28": (17, "hierarchical"),
    "ShowPolicyMapInterface-golden_output6": (11, "a counter line of a form not read"),
}


def expected(name: str) -> dict:
    """Genie's expected parse of a recording (the literal in its ``*_expected.txt``)."""
    text = (DATA / f"{name}_expected.txt").read_text()
    return ast.literal_eval(text[text.index("=") + 1:].strip())


def genie_queues(exp: dict) -> dict[str, dict[str, tuple]]:
    """{interface: {class: (enqueued packets, enqueued bytes, drops, router layout)}} of the
    output queuing classes in Genie's parse (a priority class takes its level's block)."""
    out: dict[str, dict[str, tuple]] = {}
    for intf, d in exp.items():
        for pol in d.get("service_policy", {}).get("output", {}).get("policy_name", {}).values():
            blocks = pol.get("queue_stats_for_all_priority_classes", {}).get("priority_level", {})
            for cname, c in pol.get("class_map", {}).items():
                if "priority_level" in c:
                    q = blocks[str(c["priority_level"])]
                elif "priority" in c and "total_drops" not in c:
                    q = blocks["default"]
                else:
                    q = c
                if "total_drops" not in q:
                    continue
                router = "pkts_output" in q
                packets = q["pkts_output"] if router else c["packets"]
                out.setdefault(intf, {})[cname] = (packets, q["bytes_output"], q["total_drops"], router)
    return out


@pytest.mark.parametrize("name", RECORDINGS)
def test_every_recording_equals_genie_or_is_refused_with_its_line(name):
    text = (DATA / f"{name}_output.txt").read_text()
    if name in REFUSED:
        line, why = REFUSED[name]
        with pytest.raises(QoslabError, match=rf"line {line}: .*{why}"):
            parse_policy_map_interface_xe(text)
        return
    got = parse_policy_map_interface_xe(text)
    want = genie_queues(expected(name))
    assert set(got) == set(want)
    for intf, qc in got.items():
        router = want[intf][qc.queues[0]][3]
        drops = qc.dropped_packets if router else qc.dropped_bytes
        assert qc.enqueued_bytes is not None and qc.enqueued_packets is not None and drops is not None
        ours = {q: (qc.enqueued_packets[i][0], qc.enqueued_bytes[i][0], drops[i][0], router)
                for i, q in enumerate(qc.queues)}
        assert ours == want[intf]


def test_the_recordings_hold_output_queues_in_both_layouts_and_several_ports():
    layouts, multi = set(), 0
    for name in RECORDINGS:
        if name in REFUSED:
            continue
        got = parse_policy_map_interface_xe((DATA / f"{name}_output.txt").read_text())
        layouts |= {qc.dropped_bytes is None for qc in got.values()}
        multi += len(got) > 1
    assert layouts == {True, False} and multi >= 1  # router and Catalyst layouts; a multi-port output


def _header_names(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if re.match(r"^\s*[A-Za-z][A-Za-z-]*\d[\d/.:]*\s*$", line)]


@pytest.mark.parametrize("name", RECORDINGS)
def test_every_interface_name_is_read_as_genie_reads_it(name):
    text = (DATA / f"{name}_output.txt").read_text()
    heads = _header_names(text)
    ours = [interface_name(h) for h in heads]
    assert None not in ours
    assert set(ours) <= set(expected(name)), (ours, set(expected(name)))


def test_ports_of_a_multi_port_output_get_their_own_classes():
    """The issue's case: a HundredGigE port's classes were added to the Gi port before it."""
    a = (DATA / "ShowPolicyMapInterfaceOutput-golden_output24_output.txt").read_text()
    b = (DATA / "ShowPolicyMapInterface-golden_output27_output.txt").read_text()
    hu = a.replace("GigabitEthernet1/0/16", "HundredGigE1/0/3")
    got = parse_policy_map_interface_xe(b + "\n" + hu)
    assert got["FiveGigabitEthernet1/0/48"].queues == ["CWRED", "class-default"]
    assert got["HundredGigE1/0/3"].queues == ["AutoQos-4.0-Output-Multimedia-Conf-Queue"]


@pytest.mark.parametrize("text,line", [
    ("  Service-policy output: x\n    Class-map: c (match-any)\n      0 packets\n      (total drops) 0\n", 2),
    ("Gi1/0/1\n  Service-policy output: x\n    Class-map: c (match-any)\n      (total drops) 0\n"
     "      (bytes output) 9\n    Class-map: d (match-any)\n      Queueing\n", 6),
    ("Gi1/0/1\n  Service-policy output: x\n    Class-map: c (match-any)\n      (total drops) x/1\n", 4),
])
def test_what_cannot_be_read_is_refused_with_its_line_not_counted_as_zero(text, line):
    with pytest.raises(QoslabError, match=rf"line {line}:"):
        parse_policy_map_interface_xe(text)


def test_interface_names_every_kind():
    for short, long in [("Gi1/0/1", "GigabitEthernet1/0/1"), ("Te1/1/1", "TenGigabitEthernet1/1/1"),
                        ("Twe1/1/1", "TwentyFiveGigE1/1/1"), ("Fo1/1/1", "FortyGigabitEthernet1/1/1"),
                        ("Hu1/0/3", "HundredGigE1/0/3"), ("Ap1/0/1", "AppGigabitEthernet1/0/1"),
                        ("Tw1/0/1", "TwoGigabitEthernet1/0/1"), ("Fi1/0/48", "FiveGigabitEthernet1/0/48"),
                        ("Po10.2001", "Port-channel10.2001"), ("Gi0/0/3.3001", "GigabitEthernet0/0/3.3001"),
                        ("GigabitEthernet4", "GigabitEthernet4"), ("serial3/1", "serial3/1")]:
        assert interface_name(short) == long
    assert interface_name("Class-map: c") is None and interface_name("1/0/1") is None


def test_recordings_readme_names_every_file():
    readme = (DATA / "README.md").read_text()
    for p in Path(DATA).glob("*_output.txt"):
        assert p.name.split("-")[0] in readme
