"""The report's scale-model section (qoslab.report.scale, issue 32) on the thesis's Appendix A data
and on a committed campaign (docs/results/thesis-faithful-rep-20261124)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from qoslab.report import scale as rscale
from qoslab.report.context import context
from qoslab.report.notebook import THESIS_DATA
from qoslab.scale.model import THESIS
from qoslab.scale.overlay import CONDITIONS, quantile
from qoslab.topology import load_topology
from qoslab.trials.store import Store

ROOT = Path(__file__).resolve().parents[2]
REP = ROOT / "docs" / "results" / "thesis-faithful-rep-20261124"
MECH = ROOT / "docs" / "results" / "mechanisms-20261124"


def _thesis() -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_csv(THESIS_DATA / "thesis-table5-qos.csv"), pd.read_csv(THESIS_DATA / "thesis-table3-scaling.csv")


def _done(folder: Path) -> pd.DataFrame:
    with Store(folder / "trials.sqlite", readonly=True) as store:
        trials = pd.DataFrame(store.rows())
    return trials[(trials.status == "done") & (trials.warmup == 0)]


@pytest.fixture(scope="module")
def worlds() -> dict[str, dict[str, list[float]]]:
    t5, t3 = _thesis()
    return rscale.normalised_worlds(t5, t3, pd.read_csv(REP / "trials.csv"))


def test_thesis_normalised_by_table3_four_machines(worlds):
    th = worlds["thesis"]
    assert [len(th[c]) for c in CONDITIONS] == [50, 50, 50, 50]
    assert sum(th["no congestion fifo"]) / 50 == pytest.approx(1.0)
    # Table 5: 57.89 s congested fifo / 38.10 s baseline (Table 4's +19.8 s) = 1.52; QoS 44.05 s = 1.16
    t3 = _thesis()[1]
    base = t3[t3.machines == 4].elapsed_s.mean()
    assert base == pytest.approx(38.10, abs=0.01)
    assert sum(th["congestion fifo"]) / 50 == pytest.approx(1.52, abs=0.01)
    assert sum(th["congestion thesis"]) / 50 == pytest.approx(1.16, abs=0.01)
    assert th["congestion fifo"] == sorted(th["congestion fifo"])


def test_campaign_normalised_and_summarised(worlds):
    tb = worlds["this campaign"]
    assert [len(tb[c]) for c in CONDITIONS] == [9, 9, 7, 8]  # trials.csv: the fidelity-ok trials
    assert sum(tb["no congestion fifo"]) / 9 == pytest.approx(1.0)
    frame = rscale.overlay_table(worlds)
    assert list(frame.columns) == ["condition", "world", "n", "p10", "median", "p90", "max", "mean"]
    row = frame[(frame.condition == "congestion fifo") & (frame.world == "this campaign")].iloc[0]
    assert row["mean"] == pytest.approx(4.20, abs=0.01) and row["max"] == pytest.approx(7.14, abs=0.01)
    assert row.p10 == pytest.approx(quantile(tb["congestion fifo"], 10))
    text = rscale.overlay_sentence(worlds)
    assert "*congestion fifo* thesis 1.52x, this campaign 4.20x" in text
    assert "*congestion thesis* thesis 1.16x, this campaign 1.13x" in text


def test_quantities_table_of_the_replication():
    done = _done(REP)
    caps = [p for p in rscale.baseline_captures(done) if (REP / p).exists()]
    assert caps, "the replication captured a baseline trial"
    cap = REP / caps[0]
    world = rscale.campaign_world(load_topology(REP / "inputs" / "topology.yaml"), done, json.loads(cap.read_text()),
                                  json.loads((cap.parents[1] / "workload" / "workload-result.json").read_text()))
    assert math.isnan(world.base_rtt_s) and world.rto_min_s == pytest.approx(0.014961)
    assert world.link_rate_bps == 10e6 and world.delack_s == 0.0
    tab = rscale.quantities_table(THESIS, world).set_index("quantity")
    assert len(tab) == 19 and list(tab.columns) == ["definition", "thesis", "this campaign", "campaign / thesis"]
    # the CPU quantities (issue 42): the thesis's receive cost by the 1 Hz per bit/s rule, 2 cores a node;
    # this campaign (no cpu: block) shares 2 cores among 4 nodes
    assert tuple(tab.loc["a flooded node's cores", ["thesis", "this campaign"]]) == ("2", "0.5")
    assert tab.loc["CPU per flood packet (us)", "thesis"] == "5.77"
    assert tab.loc["receive CPU share", "thesis"] == "0.246"
    assert tuple(tab.loc["queue depth (frames)", ["thesis", "this campaign"]]) == ("86.6", "2")
    assert tuple(tab.loc["queue depth (ms)", ["thesis", "this campaign"]]) == ("1.05", "2.42")
    assert tab.loc["queue : minimum RTO", "campaign / thesis"] == "30.9"
    assert tab.loc["minimum RTO : run", "campaign / thesis"] == "1.04"
    assert tab.loc["flood load", "this campaign"] == "0.998"
    assert tab.loc["calls per run", "this campaign"] == "40" and tab.loc["calls per run", "thesis"] == "-"
    assert tab.loc["queue : RTT", "this campaign"] == "-"  # a campaign does not measure its base RTT
    assert tab.loc["network share", "thesis"] == "0.00595" and tab.loc["compute : communication", "thesis"] == "167"
    assert tab.loc["bytes per call", "this campaign"] == "3,336"


def test_section_applies_only_to_the_thesis_matrix():
    def ctx(folder: Path):
        import yaml

        return context(json.loads((folder / "stats.json").read_text()),
                       yaml.safe_load((folder / "playbook.yaml").read_text()))

    assert rscale.applies(ctx(REP), list(CONDITIONS), True)
    assert not rscale.applies(ctx(REP), list(CONDITIONS), False)
    assert not rscale.applies(ctx(REP), list(CONDITIONS)[:3], True)
    assert not rscale.applies(ctx(MECH), list(CONDITIONS), True)  # matmul: no scale section


def test_figure_has_one_panel_per_condition(worlds):
    fig = rscale.overlay_figure(worlds, {c: f"C{i}" for i, c in enumerate(CONDITIONS)})
    axes = fig.get_axes()
    assert [a.get_title() for a in axes] == list(CONDITIONS)
    assert all(len(a.get_lines()) == 3 for a in axes)  # thesis, campaign, the 1.0 line


def test_scripts_use_the_package():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "scale_overlay.py"), str(REP), "--main"],
                         capture_output=True, text=True, check=True).stdout
    assert "| congestion fifo | testbed | 9 | 2.64 | 4.16 | 5.56 | 7.14 | 4.20 |" in out
