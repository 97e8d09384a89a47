"""A campaign folder made by a ``derive:`` block (issue 48, qoslab.campaign.onmachine) names its
derived topology ``derive/topology.yaml``, relative to itself, in its own and each pilot's
``playbook.yaml`` (the committed thesis-faithful-cpu-onmachine-20261129 had the run folder's
absolute path in it, cut by hand, which broke its snapshot's SHA-256): moved elsewhere, with the
folder it was made in gone, the folder and its pilots resume (every check passes and the runner
is reached), ``campaign status`` and ``report`` read it. The derivation runs for real, only its
trials are stood in for (no testbed: every trial done with the receive cost and run time of the
committed measurements). References under ``derive/`` that are not the folder's own regular
files are refused in one line."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from test_campaign_folders import _drive, checksums

from conftest import REPO
from qoslab.campaign import onmachine
from qoslab.campaign.checks import load_playbook
from qoslab.campaign.folder import check_folder
from qoslab.campaign.snapshot import input_path, sha256
from qoslab.errors import ConfigError
from qoslab.trials.store import Store

SHIPPED = REPO / "playbooks" / "thesis-faithful-cpu-onmachine.yaml"


class TrialsDone:
    """The runner of a campaign folder with its trials stood in for: the folder checked as the
    runner checks it, then every trial done with an uncongested run time of 3.677 s (the committed
    pilot) and a receive cost of 9.342 us (the committed probe), fidelity ok."""

    def __init__(self, folder: Path, log=None, **_: object) -> None:
        self.folder = folder
        check_folder(folder)

    def run(self) -> Store:
        st = Store(self.folder / "trials.sqlite")
        for r in st.trials():
            st.record(r.idx, status="done", valid=1, elapsed_s=3.677 + 0.01 * r.trial, total_s=4.0, fidelity="ok",
                      rx_cost_us=9.342, started=1.0, finished=2.0, attempts=1)
        return st


@pytest.fixture
def moved(tmp_path, monkeypatch):
    """(the derived campaign folder moved to another place, the path it was made at), the
    folder it was made in removed."""
    monkeypatch.setattr(onmachine, "Runner", TrialsDone)
    data = yaml.safe_load(SHIPPED.read_text())
    data.update(trials=2, warmup=0, capture="off", conditions=data["conditions"][:2],
                derive={**data["derive"], "rx_cost_trials": 2, "pilot_trials": 2, "supersample": [1, 2]})
    made = tmp_path / "made-here"
    made.mkdir()
    pfile = made / "pb.yaml"
    pfile.write_text(yaml.safe_dump(data, sort_keys=False))
    folder = made / "campaign"
    onmachine.create_campaign(load_playbook(pfile), pfile, folder, None, False, lambda s: None)
    TrialsDone(folder).run().close()
    there = tmp_path / "elsewhere" / "committed-copy"
    there.parent.mkdir()
    shutil.move(folder, there)
    shutil.rmtree(made)
    return there, folder


def test_the_derived_playbooks_name_their_topology_relative_to_their_folder(moved):
    there, made = moved
    for camp in (there, there / "derive" / "pilot-ss1", there / "derive" / "pilot-ss2"):
        played = yaml.safe_load((camp / "playbook.yaml").read_text())
        assert played["topology"] == "derive/topology.yaml" and played.get("derive") is None
        m = json.loads((camp / "inputs" / "manifest.json").read_text())
        assert m["topology"]["ref"] == "derive/topology.yaml"
        assert m["topology"]["sha256"] == sha256(input_path(played["topology"], camp)) == sha256(
            camp / "inputs" / "topology.yaml")
        assert m["playbook"]["sha256"] == sha256(camp / "playbook.yaml")
        prov = json.loads((camp / "provenance.json").read_text())
        assert prov["inputs"]["topology"] == m["topology"]
        for f in ("playbook.yaml", "inputs/manifest.json"):
            assert str(made) not in (camp / f).read_text(), f  # no path of the folder it was made in
    # the campaign runs the derived topology: supersample 2 and the committed host capacity
    played = yaml.safe_load((there / "playbook.yaml").read_text())
    ran = yaml.safe_load((there / "derive" / "topology.yaml").read_text())
    derivation = json.loads((there / "provenance.json").read_text())["derivation"]
    assert played["workload"]["supersample"] == 2 == derivation["derived"]["supersample"]
    assert ran["cpu"]["host_cores"] == derivation["derived"]["host_cores"] == 0.162
    pilot = yaml.safe_load((there / "derive" / "pilot-ss1" / "derive" / "topology.yaml").read_text())
    assert pilot == yaml.safe_load((there / "derive" / "topology-pilot.yaml").read_text())


def test_a_moved_derived_folder_resumes_and_reports(moved, tmp_path):
    there, _ = moved
    pilot = there / "derive" / "pilot-ss1"
    before = checksums(there)
    recs = _drive([["campaign", "run", "--resume", str(there)], ["campaign", "run", "--resume", str(pilot)],
                   ["campaign", "status", str(there)], ["report", str(there), "--out", str(tmp_path / "report")]],
                  tmp_path / "out")
    for rec in recs[:2]:  # every check passed: the stub runner was reached (the CLI's last resort, exit 3)
        assert rec["code"] == 3 and "ACCEPTED: the campaign runner was started" in rec["stderr"], rec
    assert recs[2]["code"] == 0, recs[2]
    assert recs[3]["code"] == 0, recs[3]
    assert (tmp_path / "report" / "report.html").is_file()
    assert checksums(there) == before


@pytest.mark.parametrize("ref,make", [
    ("derive/missing.yaml", None),
    ("derive", None),  # the folder itself
    ("derive/../../outside.yaml", "outside"),
    ("derive/link.yaml", "symlink"),
    ("derive/fifo.yaml", "fifo"),
    ("derive/sub/topology.yaml", "symlinked-folder"),
])
def test_a_derive_reference_that_is_not_the_folders_own_file_is_refused_by_name(tmp_path, ref, make):
    folder = tmp_path / "camp"
    (folder / "derive").mkdir(parents=True)
    (tmp_path / "outside.yaml").write_text("name: outside\n")
    if make == "symlink":
        (folder / "derive" / "link.yaml").symlink_to(tmp_path / "outside.yaml")
    elif make == "fifo":
        os.mkfifo(folder / "derive" / "fifo.yaml")
    elif make == "symlinked-folder":
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "topology.yaml").write_text("name: outside\n")
        (folder / "derive" / "sub").symlink_to(tmp_path / "sub")
    with pytest.raises(ConfigError) as e:
        input_path(ref, folder)
    msg = str(e.value)
    assert msg.startswith(f"{folder / ref}: ") and "regular file inside the folder" in msg and "\n" not in msg


def test_other_references_resolve_as_in_every_playbook(tmp_path):
    assert input_path("playbooks/topologies/ecenet.yaml", tmp_path) == REPO / "playbooks/topologies/ecenet.yaml"
    assert input_path(str(tmp_path / "derive" / "x.yaml"), tmp_path) == tmp_path / "derive" / "x.yaml"
    assert input_path("derived/x.yaml", tmp_path) == REPO / "derived/x.yaml"  # only derive/ is the folder's
