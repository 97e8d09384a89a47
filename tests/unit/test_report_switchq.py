"""The report's per-queue switch table (qoslab.report.switchq) over stats.json's switch_queues
block as qoslab.stats.switchq makes it from the switch meter's records (issue 36)."""

from __future__ import annotations

import json

from qoslab.report.switchq import applies, queue_table
from qoslab.stats.switchq import summarize


def _rec(dropped: int, platform: str = "catalyst9300") -> str:
    """One trial's switch_queues_json: two ports, the 9300's three classes, bytes and packets."""
    port = {"queues": ["priority", "QOSLAB-Q2", "class-default"], "enqueued_packets": [100, 10, 900],
            "dropped_packets": [0, 0, dropped], "enqueued_bytes": [150_000, 1_000, 1_300_000],
            "dropped_bytes": [0, 0, dropped * 1442]}
    return json.dumps({"platform": platform, "ports": {"Gi1/0/1": port, "Gi1/0/2": port}})


def test_the_9300_table_gives_mean_counters_per_condition_and_class():
    block = summarize([("congestion thesis", _rec(50)), ("congestion thesis", _rec(150)),
                       ("no congestion fifo", _rec(0)), ("no congestion fifo", None)])
    assert applies(block)
    t = queue_table(block, ["no congestion fifo", "congestion thesis"])
    assert list(t.columns) == ["condition", "queue", "trials", "enqueued packets", "dropped packets",
                               "enqueued bytes", "dropped bytes"]
    assert list(t.condition) == ["no congestion fifo"] * 3 + ["congestion thesis"] * 3  # the given order
    row = t[(t.condition == "congestion thesis") & (t.queue == "class-default")].iloc[0]
    assert row["trials"] == 2 and row["dropped packets"] == 200.0  # (2 x 50 + 2 x 150) / 2 trials, two ports
    assert row["dropped bytes"] == 200.0 * 1442
    assert t[(t.condition == "no congestion fifo") & (t.queue == "priority")].iloc[0]["trials"] == 1


def test_no_section_for_a_3750_or_without_records():
    assert not applies(None) and not applies(summarize([("a", None)]))
    assert not applies(summarize([("a", _rec(1, platform="catalyst3750"))]))
