"""Rule 3b of the scale model derived on the machine of the run (issue 48, docs/scale-model.md,
"Rule 3b"): the workload is the RayTracer's rays per pixel whose pilot holds the network share
nearest the target, not the largest supersample under a time cap. The pure rule
(qoslab.scale.onmachine) on the recorded pilots of the four derived runs, and the campaign side
(qoslab.campaign.onmachine) run for real with only its trials stood in for (no testbed: every
trial done with a run time that grows with the rays per pixel as the C1 pilots did, and the
manager's byte counts in each trial's workload-result.json)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from conftest import REPO
from qoslab.campaign import onmachine
from qoslab.campaign.checks import load_playbook
from qoslab.campaign.folder import check_folder
from qoslab.campaign.onmachine import summary_lines
from qoslab.errors import QoslabError
from qoslab.scale.onmachine import (
    DeriveSpec,
    choose_rays,
    network_share,
    next_rays,
    pilot_share,
    values,
)
from qoslab.trials.store import Store
from qoslab.workloads.raytracer import RaytracerSettings

SHARE_PB = REPO / "playbooks" / "thesis-faithful-cpu-onmachine-c1-share.yaml"
RATE = 50_000_000
#: The manager's RMI bytes of one size-A run, 5 rows a call, 4 workers: bytes_sent + bytes_received of
#: the captured trials of docs/results/thesis-faithful-cpu-20261127 (42,610 + 99,306; 141,908-141,918 in
#: all five derived runs, every supersample).
RUN_BYTES = 141_916
#: The C1 pilots of docs/results/thesis-faithful-cpu-onmachine-c1-100ppm-20261129 (derive/derivation.json):
#: 1 ray (supersample 1) and 4 rays (supersample 2), seconds.
C1_1 = [2.420000464, 2.269946785, 2.079509478]
C1_4 = [7.911077018, 6.470108367, 6.91043865]


def test_the_target_is_the_first_runs_share_in_the_pilots_own_units():
    """0.00627: 141,916 B a run at 50 Mbit/s over the pilot mean 3.677 s that set the first run's
    values (docs/results/thesis-faithful-cpu-20261127: slowdown 1.50x, recovery 61.2 %)."""
    assert network_share(RUN_BYTES, RATE, 3.677) == pytest.approx(0.00627, abs=5e-6)
    spec = load_playbook(SHARE_PB).derive
    assert spec is not None and spec.network_share == round(network_share(RUN_BYTES, RATE, 3.677), 5)
    for bad in (0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="a positive number"):
            network_share(bad, RATE, 3.677)
        with pytest.raises(ValueError, match="a positive number"):
            network_share(RUN_BYTES, RATE, bad)


def test_the_c1_run_would_have_taken_supersample_1_by_share_too_and_2_rays_hold_it():
    """With only supersample's steps (1 and 4 rays) the nearest share on the C1 core is 1 ray's
    (0.0102 against 0.00325: ln-ratio 0.49 against 0.66), the miss of the C1 run; 2 rays, here
    stood in for by the C1 pilots' own line (0.65 s + 1.61 s a ray), land within 5 %."""
    one, four = (C1_1, [RUN_BYTES] * 3), (C1_4, [RUN_BYTES] * 3)
    assert choose_rays({1: one, 4: four}, RATE, 0.00627, 12.0)[0] == 1
    per_ray = (sum(C1_4) / 3 - sum(C1_1) / 3) / 3
    two = ([sum(C1_1) / 3 + per_ray], [RUN_BYTES])
    rays, t, share = choose_rays({1: one, 2: two, 4: four}, RATE, 0.00627, 12.0)
    assert rays == 2 and t == pytest.approx(3.87, abs=0.01) and share == pytest.approx(0.00627, rel=0.05)


def test_the_committed_pilot_gives_the_committed_workload():
    """The unchanged core's pilot (1 ray 1.2-1.3 s, 4 rays 3.58-3.77 s): 4 rays, supersample 2."""
    pilots = {1: ([1.2, 1.3], [RUN_BYTES] * 2), 2: ([1.9, 2.0], [RUN_BYTES] * 2),
              3: ([2.8, 2.9], [RUN_BYTES] * 2), 4: ([3.58, 3.77, 3.68], [RUN_BYTES] * 3)}
    rays, t, share = choose_rays(pilots, RATE, 0.00627, 12.0)
    assert (rays, round(t, 3)) == (4, 3.677) and share == pytest.approx(0.00627, abs=5e-6)


def test_the_pilot_goes_up_until_the_share_reaches_the_target_or_the_guard():
    spec = DeriveSpec(real="x.yaml", network_share=0.00627, max_uncongested_s=6.0)
    assert spec.candidates == list(range(1, 17))
    b = [RUN_BYTES]
    assert next_rays({}, spec, RATE) == 1
    assert next_rays({1: ([2.0], b)}, spec, RATE) == 2  # share 0.0115 > target: more compute
    assert next_rays({1: ([2.0], b), 2: ([3.9], b)}, spec, RATE) is None  # 0.0059 <= target: decided
    assert next_rays({1: ([2.0], b), 2: ([6.1], b)}, spec, RATE) is None  # the guard
    only = DeriveSpec(real="x.yaml", network_share=0.00627, rays=[1, 2])
    assert next_rays({1: ([2.0], b), 2: ([3.0], b)}, only, RATE) is None  # every candidate tried
    # the nearest in ratio, the fewer rays on a tie; a pilot over the guard is never taken
    assert choose_rays({1: ([2.0], b), 2: ([3.0], b), 3: ([7.0], b)}, RATE, 0.00627, 6.0)[0] == 2
    with pytest.raises(ValueError, match="no pilot ran under max_uncongested_s 6 s"):
        choose_rays({1: ([7.0], b)}, RATE, 0.00627, 6.0)
    with pytest.raises(ValueError, match="byte counts"):
        pilot_share(([2.0], []), RATE)


def test_rule_3b_values_and_the_workload_knob():
    data = yaml.safe_load((REPO / "playbooks/topologies/ecenet-faithful-cpu.yaml").read_text())
    v = values(data, 1, 2)
    assert v["rays"] == 2 and "supersample" not in v and v["host_cores"] == 0.162
    wl = RaytracerSettings(hosts=["jp-1", "jp-2"], rays=6)
    assert wl.rays_per_pixel == 6 and "6 rays per pixel" in wl.describe()
    assert RaytracerSettings(hosts=["jp-1"], supersample=3).rays_per_pixel == 9
    rec = {"derived": {**v, "rto_min_ms": 12.0, "quickack": True, "switch_queue_ms": 0.485}, "rx_cost_us": 6.9,
           "uncongested_s": 3.87, "time_scale": 0.1016, "differs": [], "network_share": 0.00596,
           "target_network_share": 0.00627}
    assert "2 ray(s) per pixel (network share 0.00596, target 0.00627)" in summary_lines(rec)[0]


class C1Trials:
    """The runner of a campaign folder with its trials stood in for: the folder checked as the
    runner checks it, then every trial done, fidelity ok, receive cost 6.91 us, run time 0.65 s +
    1.61 s a ray per pixel of the folder's own playbook (the C1 pilots' line), and each trial's
    workload-result.json with the manager's byte counts, as the RayTracer's manager writes it."""

    def __init__(self, folder: Path, log=None, **_: object) -> None:
        self.folder = folder
        check_folder(folder)

    def run(self) -> Store:
        wl = yaml.safe_load((self.folder / "playbook.yaml").read_text())["workload"]
        rays = wl.get("rays") or wl.get("supersample", 1) ** 2
        st = Store(self.folder / "trials.sqlite")
        for r in st.trials():
            out = self.folder / "trials" / f"{r.idx:04d}" / "workload"
            out.mkdir(parents=True, exist_ok=True)
            (out / "workload-result.json").write_text(json.dumps({"rays": rays, "bytes_sent": 42_610,
                                                                   "bytes_received": 99_306 + r.trial}))
            st.record(r.idx, status="done", valid=1, elapsed_s=0.65 + 1.61 * rays + 0.01 * r.trial, total_s=9.0,
                      fidelity="ok", rx_cost_us=6.91, started=1.0, finished=2.0, attempts=1)
        return st


def _small_playbook(tmp_path) -> Path:
    """The share playbook cut to two conditions, 2 trials, 2 probe and 2 pilot trials (pb.yaml)."""
    data = yaml.safe_load(SHARE_PB.read_text())
    data.update(trials=2, warmup=0, capture="off", conditions=data["conditions"][:2],
                derive={**data["derive"], "rx_cost_trials": 2, "pilot_trials": 2})
    pfile = tmp_path / "pb.yaml"
    pfile.write_text(yaml.safe_dump(data, sort_keys=False))
    return pfile


@pytest.fixture
def derived(tmp_path, monkeypatch):
    """The share playbook's derivation run for real into a campaign folder (its trials stood in for)."""
    monkeypatch.setattr(onmachine, "Runner", C1Trials)
    pfile = _small_playbook(tmp_path)
    lines: list[str] = []
    folder = tmp_path / "campaign"
    onmachine.create_campaign(load_playbook(pfile), pfile, folder, None, False, lines.append)
    return folder, lines


def test_the_campaign_runs_the_rays_rule_3b_chose_and_records_its_inputs(derived):
    folder, lines = derived
    rec = json.loads((folder / "derive" / "derivation.json").read_text())
    assert rec == json.loads((folder / "provenance.json").read_text())["derivation"]
    assert sorted(rec["pilots"]) == ["1", "2"]  # 2 rays: 3.885 s, share 0.00594 <= target: the pilot stops
    assert rec["pilot_bytes"]["2"] == [141_917, 141_918] and rec["target_network_share"] == 0.00627
    assert rec["pilot_shares"]["1"] == pytest.approx(network_share(141_917.5, RATE, 2.275), rel=1e-4)
    assert rec["derived"]["rays"] == 2 and rec["committed"]["rays"] == 4 and "rays 2 (committed 4, -50.0 %)" in \
        rec["differs"]
    assert rec["uncongested_s"] == 3.885 and rec["network_share"] == rec["pilot_shares"]["2"]
    assert "rules 2, 3b, 4" in rec["rules"] and rec["derived"]["host_cores"] == 0.12  # 6.91 us a packet
    played = yaml.safe_load((folder / "playbook.yaml").read_text())
    assert played["workload"]["rays"] == 2 and played["workload"].get("supersample", 1) == 1
    assert played.get("derive") is None
    assert any("derive (rule 3b): 2 ray(s): 3.885 s, 141918 B, network share 0.00594" in x for x in lines), lines
    assert any("2 ray(s) per pixel (network share 0.00594, target 0.00627)" in x for x in lines), lines


def test_a_pilot_without_byte_counts_stops_the_derivation_naming_it(tmp_path, monkeypatch):
    class NoBytes(C1Trials):
        def run(self) -> Store:
            st = super().run()
            for p in (self.folder / "trials").rglob("workload-result.json"):
                p.write_text(json.dumps({"rays": 1, "valid": False, "error": "worker jp-3: render failed"}))
            return st

    monkeypatch.setattr(onmachine, "Runner", NoBytes)
    pfile = _small_playbook(tmp_path)
    with pytest.raises(QoslabError) as e:
        onmachine.create_campaign(load_playbook(pfile), pfile, tmp_path / "c", None, False, lambda s: None)
    assert str(e.value).startswith(str(tmp_path / "c" / "derive" / "pilot-rays1")) and "byte counts" in str(e.value)
    assert "\n" not in str(e.value)
