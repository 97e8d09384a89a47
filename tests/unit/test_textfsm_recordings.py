"""qoslab's ``show policy-map interface`` TextFSM template (switch-configs/textfsm/, read by
qoslab.platforms.counters.parse_policy_map_interface, the 3750's reader) over the same real
recordings as test_xeparse_recordings.py: every class of every interface Genie reads, with
Genie's packets, bytes, policer rate and conformed/exceeded bytes, and an output queuing class's
queue counters in both layouts; refusals carry the input line's number."""

from __future__ import annotations

import pytest
from test_xeparse_recordings import DATA, RECORDINGS, expected, genie_queues

from qoslab.errors import QoslabError
from qoslab.ios.show_qos import PortCounters, render_statistics
from qoslab.platforms.counters import parse_policy_map_interface, parse_statistics

#: Refused by the template, with the input line: hierarchical policies (input or output) and the
#: older CBWFQ layout.
REFUSED = {
    "ShowPolicyMapInterface-golden_output18": 18, "ShowPolicyMapInterface-golden_output21": 17,
    "ShowPolicyMapInterface-golden_output24": 17, "ShowPolicyMapInterface-golden_output25": 20,
    "ShowPolicyMapInterface-golden_output28": 17, "ShowPolicyMapInterface-golden_output35": 11,
    "ShowPolicyMapInterfaceInput-golden_output25": 18, "ShowPolicyMapInterface-golden_output6": 11,
}


def genie_classes(exp: dict) -> dict[tuple[str, str], dict]:
    """{(interface, class): Genie's class dict} over every policy of every interface."""
    out = {}
    for intf, d in exp.items():
        for direction in d.get("service_policy", {}).values():
            for pol in direction.get("policy_name", {}).values():
                for cname, c in pol.get("class_map", {}).items():
                    out[(intf, cname)] = c
    return out


def _input_queue(c: dict) -> tuple | None:
    """A router input class's queue counters (Genie: the class's own), as genie_queues gives them."""
    if "total_drops" not in c:
        return None
    router = "pkts_output" in c
    return (c["pkts_output"] if router else c["packets"], c["bytes_output"], c["total_drops"], router)


@pytest.mark.parametrize("name", RECORDINGS)
def test_template_reads_each_recording_as_genie_or_refuses_it_with_its_line(name):
    text = (DATA / f"{name}_output.txt").read_text()
    if name in REFUSED:
        with pytest.raises(QoslabError, match=rf"line {REFUSED[name]}: "):
            parse_policy_map_interface(text)
        return
    got = parse_policy_map_interface(text)
    exp = expected(name)
    want = genie_classes(exp)
    assert set(got) == set(want)
    queues = genie_queues(exp)
    for key, s in got.items():
        c = want[key]
        assert (s.packets, s.bytes) == (c.get("packets", 0), c.get("bytes")), key
        police = c.get("police", {})
        assert s.police_bps == police.get("rate_bps", police.get("cir_bps")), key
        assert (s.conformed_bytes, s.exceeded_bytes) == (police.get("conformed", {}).get("bytes", 0),
                                                          police.get("exceeded", {}).get("bytes", 0)), key
        q = queues.get(key[0], {}).get(key[1]) or _input_queue(c)
        if q is None:
            assert s.total_drops is None and s.bytes_output is None, key
        else:
            assert (s.pkts_output if q[3] else s.packets, s.bytes_output, s.total_drops) == q[:3], key


def test_statistics_template_takes_every_interface_name():
    """``show mls qos interface statistics`` headers of any kind (Port-channel, 25G, subinterface)."""
    names = ("TwentyFiveGigE1/1/1", "Port-channel10", "GigabitEthernet0/0/3.3001")
    text = "".join(render_statistics(n, PortCounters()) for n in names)
    assert list(parse_statistics(text)) == ["TwentyFiveGigE1/1/1", "Port-channel10", "GigabitEthernet0/0/3.3001"]


def test_statistics_template_refuses_with_the_line_number():
    with pytest.raises(QoslabError, match=r"line 3: 'what is this': not understood"):
        parse_statistics("GigabitEthernet1/0/1\ndscp: incoming\nwhat is this\n")
