"""The scale model (issue 32): the topology's scale: knobs (strict validation, queue times to
bytes), the host route lines the testbed runs, the dimensionless quantities of a world, and the
derivation of testbed settings from a real cluster's description."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from qoslab.errors import ConfigError
from qoslab.scale.derive import derive, load_real_cluster
from qoslab.scale.knobs import MIN_QUEUE_BYTES, ScaleKnobs, queue_bytes
from qoslab.scale.model import THESIS, World, compare, flood_pps, quantities, wire_time_s
from qoslab.testbedplan import build_plan, route_lines
from qoslab.topology import load_topology

REAL = {"name": "thesis", "link_rate": "1Gbit", "switch_port_buffer": "128KiB", "rtt_us": 150, "rto_min_ms": 200,
        "delack_ms": 40, "cores_per_node": 2, "uncongested_s": 38.1, "flood_load": 1.0,
        "testbed": {"link_rate": "10Mbit", "uncongested_s": 2.85}}


def _topo(write_yaml, ecenet_data, scale, buffers=None):
    data = {**ecenet_data, "scale": scale}
    if buffers is not None:
        data["buffers"] = buffers
    return load_topology(write_yaml(data))


# -- knobs --------------------------------------------------------------------------------------
def test_queue_times_become_bytes_at_the_link_rate(write_yaml, ecenet_data):
    t = _topo(write_yaml, ecenet_data, {"switch_queue_ms": 5, "host_queue_ms": 10}, buffers={})
    assert t.buffers.switch_port_bytes == 6250 and t.buffers.host_bytes == 12500  # 10 Mbit/s
    assert queue_bytes(1_000_000_000, 1.048576) == 131072


def test_a_queue_below_two_frames_is_refused_naming_the_field(write_yaml, ecenet_data):
    with pytest.raises(ConfigError) as e:
        _topo(write_yaml, ecenet_data, {"switch_queue_ms": 1}, buffers={})
    msg = str(e.value)
    assert "scale.switch_queue_ms" in msg and "1250 B" in msg and "2.42 ms" in msg
    assert "topo.yaml:" in msg


def test_a_queue_given_twice_must_agree(write_yaml, ecenet_data):
    with pytest.raises(ConfigError, match="given twice and the two disagree"):
        _topo(write_yaml, ecenet_data, {"switch_queue_ms": 5}, buffers={"switch_port_bytes": 131072})
    # a resolved topology read back (bytes and ms both, equal) is accepted
    t = _topo(write_yaml, ecenet_data, {"switch_queue_ms": 5}, buffers={"switch_port_bytes": 6250})
    assert t.buffers.switch_port_bytes == 6250


@pytest.mark.parametrize("bad", [{"rto_min_ms": 0.5}, {"rto_min_ms": 2000}, {"quickack": "yes"},
                                 {"rto_min": 10}, {"switch_queue_ms": 0}])
def test_knobs_are_strict(write_yaml, ecenet_data, bad):
    with pytest.raises(ConfigError, match="scale"):
        _topo(write_yaml, ecenet_data, bad)


def test_route_lines_carry_the_knobs_and_only_when_set(write_yaml, ecenet_data):
    t = _topo(write_yaml, ecenet_data, {"rto_min_ms": 15, "quickack": True})
    assert route_lines(t, "jp-3") == ["route replace 198.18.0.0/24 dev eth0 proto kernel scope link src 198.18.0.3 "
                                      "rto_min 15ms quickack 1"]
    plan = build_plan(t)
    ns = next(n for n in plan.ip if n.endswith("jp-3"))
    assert plan.ip[ns][-1] == route_lines(t, "jp-3")[0]  # after the link is up
    assert route_lines(load_topology(write_yaml(ecenet_data)), "jp-3") == []
    assert ScaleKnobs(quickack=False).route_options() == ["quickack", "0"]


# -- quantities ---------------------------------------------------------------------------------
def test_thesis_quantities_from_its_figures():
    q = quantities(THESIS)
    assert q["queue_s"] == pytest.approx(131072 * 8 / 1e9)
    assert q["queue_in_frames"] == pytest.approx(86.6, abs=0.1)
    assert q["queue_to_rto_min"] == pytest.approx(0.00524, rel=1e-3)
    assert q["rto_min_to_run"] == pytest.approx(0.2 / 38.1)
    assert q["flood_load"] == 1.0
    # Figure 9: 172,341 packets; control/ACK 38.1 %, RMI 15 of them
    assert q["class_control_ack"] == pytest.approx(65_664 / 172_341)
    assert q["class_rmi"] == pytest.approx(15 / 172_341)
    # 18,416 full data frames at 1 Gbit/s: 0.226 s of wire time = 0.59 % of the run
    assert q["network_share"] == pytest.approx(18_416 * 1538 * 8 / 1e9 / 38.1)
    assert q["calls_per_run"] is None and q["bytes_per_call"] is None
    assert q["rx_cpu_share"] == pytest.approx(0.246, abs=5e-4)  # the 1 Hz per bit/s rule (issue 42), derived, not measured


def test_flood_pps_and_cpu_share():
    w = dataclasses.replace(THESIS, rx_cost_s=5e-6)
    assert flood_pps(w) == pytest.approx(1e9 / 8 / 1466)  # 85,266 frames/s of 1442 B + 24 B wire overhead
    assert quantities(w)["rx_cpu_share"] == pytest.approx(85_266 * 5e-6 / 2, rel=1e-3)
    assert wire_time_s(1514, 1e9) == pytest.approx(1538 * 8 / 1e9)


def test_compare_gives_ratios_and_none_for_unknowns():
    tb = World(name="tb", link_rate_bps=10e6, switch_queue_bytes=3028, base_rtt_s=77e-6, rto_min_s=0.015,
               delack_s=0.0, uncongested_s=2.85, wire_bytes_per_run=110_000, calls_per_run=40,
               flood_offered_bps=10e6, receiver_cores=0.5)
    rows = {k: (a, b, r) for k, a, b, r in compare(THESIS, tb)}
    assert rows["queue_to_rto_min"][2] == pytest.approx((3028 * 8 / 10e6 / 0.015) / (131072 * 8 / 1e9 / 0.2))
    assert rows["calls_per_run"] == (None, 40, None)
    assert rows["delack_to_run"][1] == 0.0
    assert rows["class_data"][1] is None


# -- derivation ---------------------------------------------------------------------------------
def test_derivation_scales_every_timer_by_one_factor(write_yaml):
    d = derive(load_real_cluster(write_yaml(REAL, "real.yaml")))
    s = 2.85 / 38.1
    assert d.time_scale == pytest.approx(s)
    assert d.knobs.rto_min_ms == pytest.approx(200 * s, abs=1e-3)
    assert d.knobs.quickack is True  # 40 ms x s = 3 ms: nearer 0 than Linux's 40 ms floor
    # 128 KiB at 1 Gbit/s x s = 0.078 ms, below two frames at 10 Mbit/s: raised, and said so
    assert d.knobs.switch_queue_ms == pytest.approx(2.423)
    assert queue_bytes(d.link_rate, d.knobs.switch_queue_ms) >= MIN_QUEUE_BYTES
    assert any("raised to 2.42 ms" in x for x in d.deviations)
    assert any("SYN timeout" in x for x in d.unmatched)
    assert d.flood_multiple == 1.0
    assert d.topology_fragment() == {"link": {"rate": 10_000_000},
                                     "scale": {"rto_min_ms": d.knobs.rto_min_ms, "quickack": True,
                                               "switch_queue_ms": 2.423}}


def test_derivation_without_floors_keeps_the_queue_in_time(write_yaml):
    # a slow real cluster (100 Mbit/s, 1 MB buffer = 80 ms) scaled by 0.5 onto 10 Mbit/s: 40 ms
    real = {**REAL, "link_rate": "100Mbit", "switch_port_buffer": 1_000_000, "delack_ms": 40,
            "testbed": {"link_rate": "10Mbit", "uncongested_s": 19.05}}
    d = derive(load_real_cluster(write_yaml(real, "real.yaml")))
    assert d.knobs.switch_queue_ms == pytest.approx(40.0)
    assert d.knobs.rto_min_ms == pytest.approx(100.0)
    assert d.knobs.quickack is False  # 20 ms: not nearer 0 than 40
    assert not any("queue" in x for x in d.deviations)


def test_derivation_clamps_rto_min_to_one_ms(write_yaml):
    real = {**REAL, "testbed": {"link_rate": "10Mbit", "uncongested_s": 0.1}}
    d = derive(load_real_cluster(write_yaml(real, "real.yaml")))
    assert d.knobs.rto_min_ms == 1.0 and any("raised to 1 ms" in x for x in d.deviations)


@pytest.mark.parametrize("field,value", [("link_rate", "fast"), ("uncongested_s", 0), ("flood_load", -1),
                                         ("extra", 1)])
def test_real_cluster_file_is_strict(write_yaml, field, value):
    with pytest.raises(ConfigError) as e:
        load_real_cluster(write_yaml({**REAL, field: value}, "real.yaml"))
    assert "real.yaml:" in str(e.value) and field in str(e.value)


def test_shipped_thesis_cluster_file_derives():
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "playbooks" / "scale" / "thesis-cluster.yaml"
    d = derive(load_real_cluster(path))
    assert d.knobs.rto_min_ms == pytest.approx(200 * 2.85 / 38.10, abs=1e-3)
    assert yaml.safe_load(path.read_text())["uncongested_s"] == 38.10


def test_cli_writes_a_topology_that_loads(tmp_path, write_yaml):
    import subprocess
    import sys

    out = tmp_path / "scaled.yaml"
    res = subprocess.run([sys.executable, "-m", "qoslab", "testbed", "scale", "--from",
                          str(write_yaml(REAL, "real.yaml")), "--out", str(out)],
                         capture_output=True, text=True, timeout=60, env={"COLUMNS": "200", "PATH": ""})
    assert res.returncode == 0, res.stderr
    assert "time scale s = 0.0748" in res.stdout and "deviation: switch queue" in res.stdout
    t = load_topology(out)
    assert t.scale is not None and t.scale.quickack is True
    assert t.buffers.switch_port_bytes == queue_bytes(10_000_000, 2.423)
    bad = subprocess.run([sys.executable, "-m", "qoslab", "testbed", "scale", "--from",
                          str(write_yaml({**REAL, "rtt_us": -1}, "bad.yaml"))], capture_output=True, text=True,
                         timeout=60, env={"COLUMNS": "200", "PATH": ""})
    assert bad.returncode != 0 and "bad.yaml:" in bad.stdout + bad.stderr and "Traceback" not in bad.stderr


def test_supersample_is_a_strict_workload_setting():
    from pydantic import ValidationError

    from qoslab.workloads.raytracer import RaytracerSettings

    s = RaytracerSettings(hosts=["jp-1", "jp-2"], supersample=4)
    assert s.describe().endswith("supersample 4")
    assert "supersample" not in RaytracerSettings(hosts=["jp-1"]).describe()  # 1 = the JGF benchmark
    for bad in (0, 5, "2x"):
        with pytest.raises(ValidationError):
            RaytracerSettings(hosts=["jp-1"], supersample=bad)
