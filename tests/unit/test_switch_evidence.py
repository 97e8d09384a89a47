"""Switch counters as plain data: nft/tc JSON parsers into the show renderers' counters, and the
per-trial evidence (read through show + TextFSM, deltas per port and queue)."""

from __future__ import annotations

import json

import pytest

from qoslab.errors import QoslabError
from qoslab.ios.show_qos import PortCounters, render_statistics
from qoslab.meters.evidence import TrialEvidence, deltas, evidence_columns
from qoslab.platforms.counters import parse_statistics
from qoslab.vswitch.counters import parse_nft
from qoslab.vswitch.dialects.catalyst3750.counters import combine, parse_tc
from qoslab.vswitch.facts import ClassCounters

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
    assert nft.classes[("GigabitEthernet1/0/5", "flood")] == ClassCounters(100, 2, 1, 1)
    assert nft.classes[("GigabitEthernet1/0/1", "class112")].packets == 5
    assert parse_tc(TC) == ([97, 203, 0, 0], [0, 41, 0, 0])  # enqueued = sent + still queued
    assert parse_tc([{"kind": "bfifo", "handle": "10:", "packets": 9, "drops": 2}]) == ([9, 0, 0, 0], [2, 0, 0, 0])
    c = combine("Gi1/0/1", nft, parse_tc(TC), {d: d // 8 for d in range(64)})
    assert c.cos_in == [120, 0, 0, 0, 0, 0, 0, 0] and c.cos_out[5] == 77  # DSCP 40 -> CoS 5
    assert c.enqueued[1] == [203, 0, 0] and c.dropped[1] == [41, 0, 0] and (c.policer_in, c.policer_out) == (0, 0)
    # queues count under the WTD threshold their tc limit emulates (tccompile.wtd_limits)
    c2 = combine("Gi1/0/1", nft, parse_tc(TC), {d: d // 8 for d in range(64)}, [1, 2, 3, 1])
    assert c2.enqueued[1] == [0, 203, 0] and c2.dropped[1] == [0, 41, 0] and c2.enqueued[0] == [97, 0, 0]
    with pytest.raises(QoslabError, match="not an nftables JSON"):
        parse_nft({"error": "x"})


def test_counters_render_and_parse_back_through_textfsm():
    c = combine("Gi1/0/1", parse_nft(NFT), parse_tc(TC), {d: d // 8 for d in range(64)})
    c.policer_in, c.policer_out = 70, 30
    got = parse_statistics(render_statistics("GigabitEthernet1/0/1", c))
    assert got == {"GigabitEthernet1/0/1": c}


def _stats(drops, pol_out=0):
    c = PortCounters(policer_out=pol_out)
    for q, d in enumerate(drops):
        c.dropped[q][0] = d
        c.enqueued[q][0] = 10 * d
    c.dscp_out[40] = sum(drops)
    return c


def test_deltas_per_port_and_queue_and_reset_detection():
    before = {"GigabitEthernet1/0/1": _stats([0, 5, 0, 0]), "GigabitEthernet1/0/2": _stats([0, 9, 0, 0])}
    after = {"GigabitEthernet1/0/1": _stats([0, 25, 0, 1], pol_out=4), "GigabitEthernet1/0/2": _stats([0, 1, 0, 0])}
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
    text = render_statistics("GigabitEthernet1/0/1", PortCounters()) + render_statistics("GigabitEthernet1/0/2",
                                                                                       PortCounters(policer_out=3))
    sw = FakeSwitch([text, text])
    ev = TrialEvidence(sw, ["Gi1/0/1", "Gi1/0/2"])
    ev.start()
    ev.finish()
    assert sw.calls[0] == ["show mls qos interface GigabitEthernet1/0/1 statistics",
                           "show mls qos interface GigabitEthernet1/0/2 statistics"]
    assert ev.columns()["switch_drops_q1"] == 0 and ev.error is None
    assert set(json.loads(ev.columns()["switch_json"])["ports"]) == {"Gi1/0/1", "Gi1/0/2"}
    bad = TrialEvidence(FakeSwitch([QoslabError("switch unreachable")]), ["Gi1/0/1"])
    bad.start()
    bad.finish()
    assert bad.columns()["switch_json"] is None and "unreachable" in bad.error
    odd = TrialEvidence(FakeSwitch(["% Invalid input detected at '^' marker."]), ["Gi1/0/1"])
    odd.start()
    assert "rejected" in odd.error


def test_show_strips_a_stray_prompt_and_logs_in_again_once_after_a_broken_session(monkeypatch):
    """The kept show session of NetmikoSwitch: a stray prompt before the output is dropped (it made
    TextFSM reject one trial's statistics); a session that breaks is replaced once; a login that
    fails is the QoslabError of connect, not retried."""
    import qoslab.switch.push as switch_mod
    from qoslab.errors import QoslabError
    from qoslab.switch.backends import NetmikoSwitch, strip_prompt_echo

    assert strip_prompt_echo("Switch#GigabitEthernet1/0/1 (All statistics are in packets)", "Switch") == \
        "GigabitEthernet1/0/1 (All statistics are in packets)"
    assert strip_prompt_echo("Switch>x", "Switch") == "x"
    assert strip_prompt_echo("GigabitEthernet1/0/1", "Switch") == "GigabitEthernet1/0/1"
    assert strip_prompt_echo("Switch#x", "") == "Switch#x"

    class Conn:
        base_prompt = "Switch"

        def __init__(self, fail: bool) -> None:
            self.fail, self.closed = fail, False

        def send_command(self, c: str) -> str:
            if self.fail:
                raise OSError("Socket is closed")
            return f"Switch#out of {c}"

        def disconnect(self) -> None:
            self.closed = True

    made: list[Conn] = []
    logins = iter(["broken", "good", "broken", "refused"])

    def connect(dev):
        what = next(logins)
        if what == "refused":
            raise QoslabError("switch sw: authentication failed")
        made.append(Conn(fail=what == "broken"))
        return made[-1]

    monkeypatch.setattr(switch_mod, "connect", connect)
    sw = NetmikoSwitch("sw", None)  # type: ignore[arg-type]
    assert sw.show(["show a"]) == {"show a": "out of show a"}  # first session broke: one new login
    assert len(made) == 2 and made[0].closed and not made[1].closed
    assert sw.show(["show b"]) == {"show b": "out of show b"}  # the kept session, no new login
    assert len(made) == 2
    made[1].fail = True  # the kept session breaks, and so does the one after it: the error names the switch
    with pytest.raises(QoslabError, match=r"switch sw: show failed: OSError: Socket is closed"):
        sw.show(["show c"])
    assert len(made) == 3 and all(c.closed for c in made)
    with pytest.raises(QoslabError, match="authentication failed"):  # a refused login is not retried
        sw.show(["show d"])
    sw.close()
