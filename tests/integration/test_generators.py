"""The traffic-generator interface: the same flood file made by D-ITG or iperf3, through the
CLI as a user runs it, fills the destination ports."""

from __future__ import annotations

import json

import pytest

from qoslab.errors import ConfigError
from qoslab.registry import generators
from qoslab.trafficgen import load_flood, open_flood

from .conftest import THESIS_FLOOD, pids_in_testbed, qoslab


def test_iperf3_flood_saturates_the_four_destination_ports(testbed, tmp_path):
    """`qoslab flood run traffic-gen/thesis-flood.yaml --generator iperf3 --duration 10`: every
    destination port receives >= 95 % of the link rate, like D-ITG; nothing is left running."""
    before = pids_in_testbed(testbed, ("iperf3",))
    topo_file = tmp_path / "topo.yaml"
    import yaml

    topo_file.write_text(yaml.safe_dump(testbed.topo.model_dump(mode="json"), sort_keys=False))
    r = qoslab("flood", "run", str(THESIS_FLOOD), "--generator", "iperf3", "--duration", "10", "-t", str(topo_file),
               "--out", str(tmp_path / "out"), timeout=120)
    assert r.returncode == 0, r.stderr + r.stdout
    assert "(iperf3)" in r.stdout
    res = json.loads((tmp_path / "out" / "flood-result.json").read_text())
    assert len(res["flows"]) == 4 and not res["errors"]
    for f in res["flows"]:
        assert f["generator"] == "iperf3" and f["itg_rate"] is None
        assert f["received_wire_bps"] >= 0.95 * testbed.topo.link.rate, f
        assert f["packets_received"] > 0 and f["packets_sent"] >= f["packets_received"]
        assert 9 <= f["duration_s"] <= 11.5
        assert f["series"], "per-interval series from the server"
    assert pids_in_testbed(testbed, ("iperf3",)) <= before


def test_generator_names_are_validated_and_backends_share_the_result_shape(testbed, tmp_path, write_yaml):
    assert {"ditg", "iperf3"} <= set(generators.names())
    data = yaml_data(THESIS_FLOOD)
    with pytest.raises(ConfigError, match=r"generator: unknown generator 'trex' \(known: ditg, iperf3"):
        load_flood(write_yaml({**data, "generator": "trex"}, "bad.yaml"))
    defn = load_flood(write_yaml({**data, "generator": "iperf3", "duration_s": 2}, "ok.yaml"))
    before = pids_in_testbed(testbed, logs=tmp_path)
    with open_flood(defn, testbed.topo, testbed.executor, tmp_path / "f") as fr:  # type: ignore[attr-defined]
        assert fr.name == "iperf3"
        fr.start()
        fr.wait()
    r = fr.result
    assert r is not None and r.ok and len(r.flows) == 4
    assert pids_in_testbed(testbed, logs=tmp_path) <= before


def yaml_data(path):
    import yaml

    return yaml.safe_load(path.read_text())
