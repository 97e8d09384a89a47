"""Switch counters as plain data: nft/tc JSON parsers, the 3750 statistics renderer and its
parser (round trip), per-trial deltas."""

from __future__ import annotations

import json

import pytest
from qoslab.campaign.evidence import TrialEvidence, deltas, evidence_columns, parse_statistics, read_stats
from qoslab.errors import QoslabError
from qoslab.vswitch.counters import PortCounters, combine, parse_nft, parse_tc
from qoslab.vswitch.show import render_statistics

# `nft -j -n list table bridge qoslab` and `tc -s -j qdisc show` as this machine printed them
# (nftables 1.0.6, iproute2 6.1), trimmed to the parts the parsers read.
NFT = {"nftables": [
    {"metainfo": {"version": "1.0.6"}},
    {"set": {"family": "bridge", "name": "dscp_in", "table": "qoslab", "type": ["ifname", "dscp"],
             "elem": [{"elem": {"val": {"concat": ["Gi1-0-1", 0]}, "counter": {"packets": 120, "bytes": 9000}}},
                      {"elem": {"val": {"concat": ["Gi1-0-2", 10]}, "counter": {"packets": 2, "bytes": 168}}}]}},
    {"set": {"family": "bridge", "name": "dscp_out", "table": "qoslab", "type": ["ifname", "dscp"],
             "elem": [{"elem": {"val": {"concat": ["Gi1-0-1", 40]}, "counter": {"packets": 77, "bytes": 9000}}}]}},
    {"rule": {"chain": "a_Gi1_0_5_1", "comment": "police-out|Gi1/0/5|flood",
              "expr": [{"limit": {}}, {"counter": {"packets": 30, "bytes": 1}}, {"drop": None}]}},
    {"rule": {"chain": "a_Gi1_0_5_1", "comment": "police-in|Gi1/0/5|flood",
              "expr": [{"counter": {"packets": 70, "bytes": 1}}]}},
    {"rule": {"chain": "a_Gi1_0_1_1", "comment": "class|Gi1/0/1|class112",
              "expr": [{"counter": {"packets": 5, "bytes": 1}}]}}]}
TC = [{"kind": "htb", "handle": "1:", "packets": 300, "drops": 0},
      {"kind": "bfifo", "handle": "12:", "parent": "1:12", "packets": 200, "drops": 41, "qlen": 3},
      {"kind": "bfifo", "handle": "11:", "parent": "1:11", "packets": 97, "drops": 0, "qlen": 0},
      {"kind": "clsact", "handle": "ffff:"}]


def test_nft_and_tc_counters_become_port_counters():
    nft = parse_nft(NFT)
    assert nft.dscp_in["Gi1-0-1"][0] == 120 and nft.dscp_out["Gi1-0-1"][40] == 77
    assert nft.policer == {"Gi1/0/5": [70, 30]}
    assert parse_tc(TC) == ([97, 203, 0, 0], [0, 41, 0, 0])  # enqueued = sent + still queued
    assert parse_tc([{"kind": "bfifo", "handle": "10:", "packets": 9, "drops": 2}]) == ([9, 0, 0, 0], [2, 0, 0, 0])
    c = combine("Gi1/0/1", nft, parse_tc(TC), {d: d // 8 for d in range(64)})
    assert c.cos_in == [120, 0, 0, 0, 0, 0, 0, 0] and c.cos_out[5] == 77  # DSCP 40 -> CoS 5
    assert c.enqueued[1] == [203, 0, 0] and c.dropped[1] == [41, 0, 0] and (c.policer_in, c.policer_out) == (0, 0)
    with pytest.raises(QoslabError, match="not an nftables JSON"):
        parse_nft({"error": "x"})


def test_statistics_render_and_parse_round_trip():
    c = PortCounters("Gi1/0/7", policer_in=70, policer_out=30)
    c.dscp_in[63], c.dscp_out[46], c.cos_in[0], c.cos_out[7] = 5, 6, 7, 8
    c.enqueued = [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]
    c.dropped[3] = [99, 0, 1]
    text = render_statistics(c)
    assert text.startswith("GigabitEthernet1/0/7 (All statistics are in packets)")
    assert " 60 - 64 :" in text and "  5 -  7 :" in text and " queue 3:          99           0           1 " in text
    s = parse_statistics(text)
    assert {k: v for k, v in s.items()} == {k: v for k, v in c.as_dict().items() if k != "port"}


def test_parse_rejects_other_output():
    with pytest.raises(QoslabError, match="not `show mls qos interface statistics`"):
        parse_statistics("% Invalid input detected at '^' marker.")


def _stats(drops, pol_out=0):
    c = PortCounters("Gi1/0/1", policer_out=pol_out)
    for q, d in enumerate(drops):
        c.dropped[q][0] = d
        c.enqueued[q][0] = 10 * d
    c.dscp_out[40] = sum(drops)
    return parse_statistics(render_statistics(c))


def test_deltas_per_port_and_queue_and_reset_detection():
    before = {"Gi1/0/1": _stats([0, 5, 0, 0]), "Gi1/0/2": _stats([0, 9, 0, 0])}
    after = {"Gi1/0/1": _stats([0, 25, 0, 1], pol_out=4), "Gi1/0/2": _stats([0, 1, 0, 0])}
    d = deltas(before, after)
    assert d["ports"]["Gi1/0/1"] == {"enqueued": [0, 200, 0, 10], "dropped": [0, 20, 0, 1], "policer_in": 0,
                                     "policer_out": 4, "dscp_in": {}, "dscp_out": {"40": 21}}
    assert d["reset"] == ["Gi1/0/2"]  # counters went backwards: the switch re-applied, no delta
    cols = evidence_columns(d)
    assert (cols["switch_drops_q2"], cols["switch_drops_q4"], cols["switch_policer_out"]) == (20, 1, 4)
    assert json.loads(cols["switch_json"]) == d
    assert evidence_columns(None)["switch_json"] is None


class FakeSwitch:
    """A switch device answering show commands from a list of texts (one per call)."""

    def __init__(self, answers):
        self.answers, self.calls = list(answers), []

    def show(self, commands):
        self.calls.append(commands)
        a = self.answers.pop(0)
        if isinstance(a, Exception):
            raise a
        return {c: a for c in commands}


def test_trial_evidence_reads_through_show_and_survives_an_unreachable_switch():
    sw = FakeSwitch([render_statistics(PortCounters("Gi1/0/1")), render_statistics(PortCounters("Gi1/0/1"))])
    assert read_stats(FakeSwitch([render_statistics(PortCounters("Gi1/0/1"))]), ["Gi1/0/1"])["Gi1/0/1"]["policer_in"] == 0
    ev = TrialEvidence(sw, ["Gi1/0/1", "Gi1/0/2"])
    ev.start()
    ev.finish()
    assert sw.calls[0] == ["show mls qos interface GigabitEthernet1/0/1 statistics",
                           "show mls qos interface GigabitEthernet1/0/2 statistics"]
    assert ev.columns()["switch_drops_q1"] == 0 and ev.error is None
    bad = TrialEvidence(FakeSwitch([QoslabError("switch unreachable")]), ["Gi1/0/1"])
    bad.start()
    bad.finish()
    assert bad.columns()["switch_json"] is None and "unreachable" in bad.error
