"""The scale model derived on the machine of the run (issue 48, qoslab.scale.onmachine): the rules
applied to the measurements recorded for thesis-faithful-cpu give exactly the values committed in
playbooks/topologies/ecenet-faithful-cpu.yaml; the supersample rule; differences against the
committed values; and a playbook's ``derive:`` block refused with file, line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from qoslab.campaign.checks import load_playbook
from qoslab.campaign.onmachine import read_inputs, summary_lines
from qoslab.errors import ConfigError
from qoslab.scale.derive import load_real_cluster
from qoslab.scale.onmachine import (
    DeriveSpec,
    choose_supersample,
    derive_scale,
    derived_topology,
    differences,
    host_cores,
    next_pilot,
    values,
)
from qoslab.topology import repo_root
from qoslab.yamlio import read_yaml

ROOT = repo_root()
REAL = ROOT / "playbooks/scale/thesis-cluster-cpu.yaml"
COMMITTED = ROOT / "playbooks/topologies/ecenet-faithful-cpu.yaml"


def test_the_recorded_measurements_give_the_committed_topology_by_the_rules():
    """docs/results/calibrate-cpu-20261127: rx_cost_us 9.342 at 50 Mbit/s; the pilot: 3.677 s at
    supersample 2 (3.58-3.74 s), supersample 3 over 6 s (6.38-7.17 s)."""
    real = load_real_cluster(REAL)
    data, _ = read_yaml(COMMITTED)
    cores = host_cores(real, 50_000_000, 9.342, 0.25)
    assert cores == data["cpu"]["host_cores"] == 0.162
    ss, t = choose_supersample({1: [1.2, 1.3], 2: [3.58, 3.77, 3.68], 3: [6.38, 7.17, 6.9]}, 6.0)
    assert (ss, round(t, 3)) == (2, 3.677)
    d = derive_scale(real, 50_000_000, 9.342, 3.677)
    final = derived_topology(data, cores, d)
    assert values(final, ss) == values(data, 2)  # host_cores, supersample, rto_min, quickack, queue
    assert final["scale"] == data["scale"] and differences(values(data, 2), values(final, ss)) == []


def test_a_costlier_receive_path_gives_a_larger_host_and_the_cap_holds():
    real = load_real_cluster(REAL)
    assert host_cores(real, 50_000_000, 11.6, 0.25) == pytest.approx(0.162 * 11.6 / 9.342, rel=0.01)
    assert host_cores(real, 50_000_000, 40.0, 0.25) == 0.25  # capped: four hosts on one core
    with pytest.raises(ValueError, match="no positive receive cost"):
        host_cores(real, 50_000_000, float("nan"), 0.25)


def test_the_supersample_rule_takes_the_largest_under_the_limit_and_stops_at_the_first_over():
    spec = DeriveSpec(real="x.yaml", supersample=[1, 2, 3, 4], max_uncongested_s=6.0)
    assert next_pilot({}, spec) == 1
    assert next_pilot({1: [1.0]}, spec) == 2
    assert next_pilot({1: [1.0], 2: [6.5]}, spec) is None  # over: 3 and 4 are not tried
    assert next_pilot({1: [1.0], 2: [2.0], 3: [4.0], 4: [5.0]}, spec) is None
    assert choose_supersample({1: [1.0], 2: [2.0], 3: [4.0], 4: [5.9]}, 6.0) == (4, 5.9)
    with pytest.raises(ValueError, match="supersample 1 already takes 7 s"):
        choose_supersample({1: [7.0, 7.0]}, 6.0)


def test_differences_name_each_value_beyond_five_percent():
    old = {"host_cores": 0.162, "supersample": 2, "rto_min_ms": 19.302, "quickack": True, "switch_queue_ms": 0.485}
    new = {**old, "host_cores": 0.2, "rto_min_ms": 19.9, "quickack": False}
    out = differences(old, new)
    assert out == ["host_cores 0.2 (committed 0.162, +23.5 %)", "quickack False (committed True)"]
    rec = {"derived": new, "rx_cost_us": 11.5, "uncongested_s": 3.8, "time_scale": 0.0997, "differs": out}
    lines = summary_lines(rec)
    assert lines[0].startswith("scale model derived on this machine: host_cores 0.2 (rx_cost_us 11.5)")
    assert lines[1].startswith("DIFFERS from the playbook's committed values: host_cores 0.2")


BASE = """\
name: derive-hostile
topology: playbooks/topologies/ecenet-faithful-cpu.yaml
workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1, rows_per_call: 5, supersample: 2}
flood: traffic-gen/thesis-faithful-flood.yaml
derive:
  real: playbooks/scale/thesis-cluster-cpu.yaml
  supersample: [1, 2]
conditions:
  - {name: no congestion fifo, congestion: false, profile: fifo}
  - {name: congestion fifo, congestion: true, profile: fifo}
baseline: no congestion fifo
trials: 2
"""


def _load(tmp_path: Path, text: str) -> ConfigError:
    p = tmp_path / "pb.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_playbook(p)
    assert "\n" not in str(e.value) and "Traceback" not in str(e.value)
    return e.value


def test_a_valid_derive_block_loads(tmp_path):
    p = tmp_path / "pb.yaml"
    p.write_text(BASE)
    pb = load_playbook(p)
    assert pb.derive is not None and pb.derive.supersample == [1, 2] and pb.derive.rx_cost_trials == 3


@pytest.mark.parametrize(("old", "new", "line", "field"), [
    ("  supersample: [1, 2]", "  supersampel: [1, 2]", 7, "derive.supersampel"),
    ("  supersample: [1, 2]", "  supersample: [2, 1]", 7, "derive.supersample"),
    ("  supersample: [1, 2]", "  supersample: [1, 5]", 7, "derive.supersample"),
    ("  supersample: [1, 2]", "  pilot_trials: 1", 7, "derive.pilot_trials"),
    ("  supersample: [1, 2]", "  max_host_cores: -1", 7, "derive.max_host_cores"),
    ("  real: playbooks/scale/thesis-cluster-cpu.yaml", "  real: playbooks/scale/nowhere.yaml", 6, "derive.real"),
    ("topology: playbooks/topologies/ecenet-faithful-cpu.yaml", "topology: playbooks/topologies/ecenet.yaml", 5,
     "derive"),  # no cpu: block
    ("baseline: no congestion fifo", "baseline: congestion fifo", 11, "baseline"),
])
def test_a_bad_derive_block_is_refused_with_file_line_and_field(tmp_path, old, new, line, field):
    assert old in BASE
    err = _load(tmp_path, BASE.replace(old, new))
    text = str(err)
    assert f"pb.yaml:{line}" in text and field in text, text


def test_a_real_cluster_without_a_receive_cost_is_refused(tmp_path):
    real = tmp_path / "real.yaml"
    real.write_text("".join(x for x in REAL.read_text().splitlines(keepends=True) if not x.startswith("rx_cost_us")))
    err = _load(tmp_path, BASE.replace("playbooks/scale/thesis-cluster-cpu.yaml", str(real)))
    assert "pb.yaml:6" in str(err) and "gives no rx_cost_us" in str(err)


def test_a_real_cluster_file_with_a_typo_names_its_own_line(tmp_path):
    real = tmp_path / "real.yaml"
    real.write_text(REAL.read_text().replace("cores_per_node:", "cores_per_nod:"))
    err = _load(tmp_path, BASE.replace("playbooks/scale/thesis-cluster-cpu.yaml", str(real)))
    assert "real.yaml" in str(err) and "cores_per_nod" in str(err)


def test_the_derive_block_is_documented_in_the_playbook_reference():
    page = (ROOT / "docs/reference/schemas/playbook.md").read_text()
    assert "derive" in page and textwrap.dedent("max_uncongested_s") in page


def test_a_campaign_folder_is_never_made_from_a_derive_block_with_its_committed_values(tmp_path):
    """Only `campaign run` derives (campaign.onmachine.create_campaign); a sweep or any other maker of
    folders is refused before it writes (the committed values would run under the derive: block's name)."""
    from qoslab.campaign.folder import create
    from qoslab.errors import QoslabError

    p = tmp_path / "pb.yaml"
    p.write_text(BASE)
    with pytest.raises(QoslabError, match="derive: block runs through `qoslab campaign run`"):
        create(load_playbook(p), p, tmp_path / "folder")
    assert not (tmp_path / "folder").exists()


def test_the_link_rate_is_read_as_the_topology_model_reads_it(tmp_path):
    """quick-cpu's topology writes ``rate: 50Mbit``: the rules get 50,000,000 bits/s, not a crash."""
    p = tmp_path / "pb.yaml"
    p.write_text(BASE.replace("playbooks/topologies/ecenet-faithful-cpu.yaml", "playbooks/topologies/ecenet-cpu.yaml"))
    real, data, rate = read_inputs(load_playbook(p))
    assert data["link"]["rate"] == "50Mbit" and rate == 50_000_000 and real.rx_cost_us == 5.768


def test_a_cheap_receive_path_lengthens_the_cfs_period_to_keep_a_kernel_quota():
    """2026-12-01 on this machine: rx_cost_us 5.47 -> 0.0948 cores, a 0.948 ms quota at period_ms
    10, which the kernel refuses (make test's on-machine derivation failed on it)."""
    from qoslab.scale.cpu import period_for
    real = load_real_cluster(REAL)
    data, _ = read_yaml(COMMITTED)
    cores = host_cores(real, 50_000_000, 5.47, 0.25)
    assert cores == pytest.approx(0.0948, abs=0.0002) and data["cpu"]["period_ms"] == 10
    final = derived_topology(data, cores, derive_scale(real, 50_000_000, 5.47, 3.677))
    assert final["cpu"]["period_ms"] == 11.0 and final["cpu"]["host_cores"] == cores
    assert final["cpu"]["period_ms"] * cores >= 1.0 and data["cpu"]["period_ms"] == 10  # input untouched
    assert "period_ms 11 (committed 10, +10.0 %)" in differences(values(data, 2), values(final, 2))
    assert derived_topology(data, 0.162)["cpu"]["period_ms"] == 10  # a quota of 1.62 ms: as it was
    bare = {k: v for k, v in data.items() if k != "cpu"}
    assert "period_ms" not in derived_topology(bare, 0.162)["cpu"] and values(bare, 2)["period_ms"] == 10
    assert derived_topology(bare, 0.081)["cpu"]["period_ms"] == 12.5  # ecenet-faithful-cpu-rx2's by hand
    assert period_for(0.001, 10) == 1000.0
    for bad in (0.0009, 0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            period_for(bad, 10)
