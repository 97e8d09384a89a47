"""The link-rate sweep (campaign/sweep.py): file validation, topology variants, folder set-up and
the table from a campaign's statistics. Pure or on temporary files: no testbed."""

from __future__ import annotations

import json
import sqlite3

import pytest
import yaml

from conftest import ECENET, REPO
from qoslab.campaign import Store
from qoslab.campaign.sweep import (
    ensure_rate_campaign,
    load_sweep,
    prepare,
    rate_label,
    rate_rows,
    summarize_sweep,
    sweep_markdown,
    variant_name,
    variant_topology,
)
from qoslab.errors import ConfigError, QoslabError
from qoslab.topology import load_topology

SWEEP = REPO / "playbooks" / "sweeps" / "rate.yaml"


def test_shipped_sweep_loads():
    sw = load_sweep(SWEEP)
    assert sw.rates[:3] == [10_000_000, 20_000_000, 50_000_000] and sw.playbook == "playbooks/quick.yaml"
    assert sw.overrides["capture"] == "off"


def test_labels_and_variant_names():
    assert [rate_label(r) for r in (10**7, 25 * 10**5, 10**9, 500_000, 999)] == \
        ["10Mbit", "2.5Mbit", "1Gbit", "500kbit", "999bit"]
    assert variant_name("ecenet", 20_000_000) == "ecenet20m" and variant_name("ecenet", 2_500_000) == "ecenet2500k"
    with pytest.raises(QoslabError, match="over 12 characters"):
        variant_name("ecenetlonger", 10**8)


def test_variant_topology_changes_only_name_rate_and_description(tmp_path):
    data = yaml.safe_load(ECENET.read_text())
    v = variant_topology(data, 20_000_000)
    assert v["name"] == "ecenet20m" and v["link"]["rate"] == 20_000_000
    assert v["link"]["burst_ms"] == data["link"]["burst_ms"] and v["buffers"] == data["buffers"]
    assert v["hosts"] == data["hosts"] and data["link"]["rate"] != 20_000_000  # the input is not changed
    p = tmp_path / "t.yaml"
    p.write_text(yaml.safe_dump(v))
    topo = load_topology(p)
    assert topo.link.rate == 20_000_000 and topo.link.burst_bytes == 6250  # 2.5 ms at 20 Mbit/s


def test_bad_sweep_files_name_file_and_field(write_yaml):
    base = {"name": "s", "playbook": "playbooks/quick.yaml", "rates": ["10Mbit"]}
    with pytest.raises(ConfigError, match="rates"):
        load_sweep(write_yaml({**base, "rates": ["10Mbit", "10000000"]}, "a.yaml"))
    with pytest.raises(ConfigError, match="rates"):
        load_sweep(write_yaml({**base, "rates": ["fast"]}, "b.yaml"))
    with pytest.raises(ConfigError, match="overrides.trials"):
        load_sweep(write_yaml({**base, "overrides": {"trials": 1}}, "c.yaml"))
    with pytest.raises(ConfigError, match="overrides.trails"):
        load_sweep(write_yaml({**base, "overrides": {"trails": 5}}, "d.yaml"))
    with pytest.raises(ConfigError, match="cannot read"):
        load_sweep(write_yaml({**base, "playbook": "playbooks/none.yaml"}, "e.yaml"))


def test_prepare_records_the_seed_and_refuses_another_sweep(tmp_path, write_yaml):
    sw = load_sweep(write_yaml({"name": "s", "playbook": "playbooks/quick.yaml", "rates": ["10Mbit", "20Mbit"],
                                "overrides": {"trials": 2}}, "s.yaml"))
    out = tmp_path / "sweep"
    a = prepare(sw, out)
    assert a.seed is not None and prepare(sw, out).seed == a.seed  # re-opened, same seed
    other = sw.model_copy(update={"rates": [10_000_000]})
    with pytest.raises(QoslabError, match="holds another sweep"):
        prepare(other, out)
    folder = ensure_rate_campaign(a, out, 20_000_000)
    assert folder.name == "rate-20Mbit" and (folder / "topology.yaml").exists()
    pb = yaml.safe_load((folder / "playbook.yaml").read_text())
    assert pb["name"] == "s-20Mbit" and pb["seed"] == a.seed and pb["trials"] == 2
    assert load_topology(pb["topology"]).name == "ecenetq20m"  # quick's topology, ecenet-quick.yaml
    assert ensure_rate_campaign(a, out, 20_000_000) == folder  # an existing campaign is kept


def _fake_rate(folder, bps):
    """A finished campaign folder: stats.json, stats-network.json and a store with cpu columns."""
    folder.mkdir(parents=True)
    conds = {"no congestion fifo": 1.0, "congestion fifo": 5.0, "congestion thesis": 1.4}
    stats = {"conditions": {n: {"n": 3, "mean": m} for n, m in conds.items()},
             "comparisons": [{"a": "no congestion fifo", "b": "congestion fifo", "ratio": 5.0, "ratio_ci95": [4.0, 6.5]}],
             "recovery": [{"baseline": "no congestion fifo", "congested": "congestion fifo",
                           "treated": "congestion thesis", "ratio": 0.9, "ci95": [0.85, 0.93]}]}
    (folder / "stats.json").write_text(json.dumps(stats))
    net = {"recovery": [{**stats["recovery"][0], "ratio": 0.99, "ci95": [0.98, 1.0]}]}
    (folder / "stats-network.json").write_text(json.dumps(net))
    Store(folder / "trials.sqlite").close()  # the store adds the meters' columns
    con = sqlite3.connect(folder / "trials.sqlite")
    rows = []
    for i, (n, m) in enumerate((n, m) for n, m in conds.items() for _ in range(3)):
        flood = json.dumps([{"received_wire_bps": bps * 0.99}]) if "congestion " in n and "no" not in n else None
        rows.append((i, n, m, flood, json.dumps({"saturated": True}) if flood else "{}",
                     0.5 if flood else 0.0, 0.2 if flood else 0.01, m - 0.1, 0.3))
    con.executemany("INSERT INTO trials (idx, condition, trial, warmup, status, valid, elapsed_s, flood_json, "
                      "phases_json, cpu_flood_s, cpu_softirq_s, busy_max_s, cpu_busiest_worker_s, cpu_window_s, "
                    "started, finished) VALUES (?, ?, 1, 0, 'done', 1, ?, ?, ?, ?, ?, ?, ?, 2.0, 0, 2)", rows)
    con.commit()
    con.close()


def test_rate_rows_and_table(tmp_path):
    _fake_rate(tmp_path / "rate-10Mbit", 10**7)
    [r] = rate_rows(tmp_path / "rate-10Mbit", 10**7)
    assert r["slowdown"] == 5.0 and r["recovery"] == 0.9 and r["recovery_network"] == 0.99 and r["n"] == 3
    assert r["flood_cores"] == pytest.approx(0.25) and r["softirq_cores_congested"] == pytest.approx(0.1)
    assert r["softirq_cores_baseline"] == pytest.approx(0.005) and r["flood_received_of_link"] == pytest.approx(0.99)
    assert r["saturated"] == 1.0 and r["trial_wall_s"] == pytest.approx(18.0)
    assert r["cpu_wait_baseline_s"] == pytest.approx(0.6)  # busy 0.9 - on CPU 0.3
    md = sweep_markdown([r])
    assert "| 10 Mbit/s | 3 | 1.000 | 5.000 | 1.400 | 5.00x [4.00, 6.50] | 90.0% [85.0%, 93.0%] | 99.0% [98.0%, 100.0%]" in md
    assert rate_rows(tmp_path / "rate-20Mbit", 2 * 10**7) == []  # not run yet


def test_summarize_sweep_writes_json_and_markdown(tmp_path, write_yaml):
    sw = load_sweep(write_yaml({"name": "s", "playbook": "playbooks/quick.yaml", "rates": ["10Mbit", "20Mbit"]},
                               "s.yaml"))
    _fake_rate(tmp_path / "rate-10Mbit", 10**7)
    rows = summarize_sweep(sw, tmp_path)
    assert [r["rate"] for r in rows] == ["10Mbit"]
    assert json.loads((tmp_path / "sweep.json").read_text())["rows"][0]["rate_bps"] == 10**7
    assert (tmp_path / "sweep.md").read_text().count("\n") == 3
