"""The rtt meter (qoslab.meters.rtt): ping output parsed, argv, the columns, and the scale model's
base RTT taken from a campaign's baseline rows."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from qoslab.meters.base import MeterSet, TrialContext, meter_columns
from qoslab.meters.rtt import RttMeter, parse_ping, ping_argv
from qoslab.scale.measure import base_rtt_s

PING = """PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.
64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=0.412 ms
64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=0.078 ms
64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=9.900 ms (DUP!)
64 bytes from 198.18.0.2: icmp_seq=4 ttl=64 time=0.061 ms

--- 198.18.0.2 ping statistics ---
4 packets transmitted, 3 received, +1 duplicates, 25% packet loss, time 31ms
rtt min/avg/max/mdev = 0.061/0.183/0.412/0.162 ms
"""


def test_parse_ping_counts_replies_not_duplicates_and_takes_the_median():
    got = parse_ping(PING)
    assert got == {"replies": 3, "median_ms": pytest.approx(0.078), "min_ms": pytest.approx(0.061)}


def test_parse_ping_without_replies_gives_none():
    assert parse_ping("PING x\n\n--- x ping statistics ---\n5 packets transmitted, 0 received, 100% packet loss\n") \
        == {"replies": 0, "median_ms": None, "min_ms": None}
    assert parse_ping("64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=1.5 ms\n")["median_ms"] == pytest.approx(1.5)


def test_ping_argv_is_numeric_and_bounded():
    argv = ping_argv("198.18.0.2", count=5, interval_s=0.01)
    assert argv[0] == "ping" and "-n" in argv and argv[-1] == "198.18.0.2"
    assert argv[argv.index("-c") + 1] == "5" and argv[argv.index("-i") + 1] == "0.01"


class _Ex:
    def __init__(self, out: str) -> None:
        self.out, self.calls = out, []

    def run(self, argv, *, timeout=60.0, check=True, **kw):
        self.calls.append((list(argv), timeout, check))
        return SimpleNamespace(stdout=self.out, returncode=0)


def _ctx(hosts, ex, condition="c", playbook=None):
    topo = SimpleNamespace(host=lambda h: SimpleNamespace(ip={"jp-1": "198.18.0.1", "jp-2": "198.18.0.2"}[h]))
    return TrialContext(condition=condition, congestion=False, trial_dir=Path("."), local=True, switch=None, ports=[],
                        topology=topo, plan=SimpleNamespace(workload=SimpleNamespace(hosts=hosts)),
                        executor_of=lambda h: ex, playbook=playbook)


def _playbook(baseline):
    """A campaign playbook of the Table-5 matrix (qoslab.trials.playbook.Playbook, its own checks)."""
    from qoslab.trials.playbook import Playbook

    conds = [{"name": "no congestion fifo", "congestion": False, "profile": "fifo"},
             {"name": "congestion fifo", "congestion": True, "profile": "fifo"},
             {"name": "no congestion thesis", "congestion": False, "profile": "thesis"}]
    return Playbook.model_validate({"name": "p", "topology": "t.yaml", "flood": "f.yaml", "conditions": conds,
                                    "workload": {"hosts": ["jp-1", "jp-2"]},
                                    **({"baseline": baseline} if baseline else {})})


def test_meter_pings_from_the_first_workload_host_to_the_second():
    ex = _Ex(PING)
    ctx = _ctx(["jp-1", "jp-2", "jp-3"], ex)
    m = RttMeter(ctx)
    m.begin(ctx)
    assert ex.calls[0][0][-1] == "198.18.0.2" and ex.calls[0][2] is False
    assert m.columns(ctx) == {"base_rtt_ms": pytest.approx(0.078), "base_rtt_min_ms": pytest.approx(0.061),
                              "base_rtt_replies": 3}


@pytest.mark.parametrize("baseline, condition, pings", [
    ("no congestion fifo", "no congestion fifo", True),
    ("no congestion fifo", "congestion fifo", False),
    ("no congestion fifo", "no congestion thesis", False),
    ("no congestion thesis", "no congestion thesis", True),
    ("no congestion thesis", "no congestion fifo", False),
    (None, "no congestion fifo", True),  # no baseline: the first condition without congestion
    (None, "congestion fifo", False),
])
def test_only_the_baseline_conditions_trials_ping(baseline, condition, pings):
    ex = _Ex(PING)
    ctx = _ctx(["jp-1", "jp-2"], ex, condition, _playbook(baseline))
    m = RttMeter(ctx)
    m.begin(ctx)
    assert bool(ex.calls) is pings
    assert (m.columns(ctx)["base_rtt_replies"] == 3) is pings
    if not pings:
        assert m.columns(ctx) == dict.fromkeys(RttMeter.COLUMNS)


def test_meter_on_one_host_leaves_its_columns_null():
    ex = _Ex(PING)
    ctx = _ctx(["jp-1"], ex)
    m = RttMeter(ctx)
    m.begin(ctx)
    assert ex.calls == [] and m.columns(ctx) == dict.fromkeys(RttMeter.COLUMNS)


def test_meter_is_registered_and_its_columns_are_store_columns():
    cols = meter_columns()
    assert cols["base_rtt_ms"] == "REAL" and cols["base_rtt_replies"] == "INTEGER"
    ctx = _ctx(["jp-1", "jp-2"], _Ex(PING))
    ms = MeterSet(ctx, names=["rtt"])
    ms.begin()
    assert "rtt" in ms.meters and not ms.errors


def test_base_rtt_of_campaign_rows_is_the_median_in_seconds():
    rows = [{"base_rtt_ms": 0.1}, {"base_rtt_ms": None}, {"base_rtt_ms": 0.3}, {"base_rtt_ms": 0.2}, {}]
    assert base_rtt_s(rows) == pytest.approx(0.0002)
    assert math.isnan(base_rtt_s([{"base_rtt_ms": None}, {"base_rtt_ms": float("nan")}]))
