"""``qoslab campaign plan`` of the playbook inside a derived campaign's folder (issue 48): its
``derive/topology.yaml`` is the folder's own (:func:`qoslab.campaign.snapshot.input_path`), not a
path of the repository, wherever the folder is; the command only reads (the committed folder's
bytes unchanged); a ``derive/`` reference that is not the folder's own regular file fails in one
line naming the playbook's file:line and the path."""

from __future__ import annotations

import shutil

import pytest
from test_campaign_folders import checksums
from test_campaign_plan import _main

from conftest import REPO
from qoslab.campaign.preview import make_plan

COMMITTED = REPO / "docs" / "results" / "thesis-faithful-cpu-onmachine-100ppm-20261129"


def test_plan_of_the_committed_derived_folder_reads_its_own_topology_and_writes_nothing(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # not the repository: the folder's own derive/ is found from the playbook's path
    before = checksums(COMMITTED)
    code, out, err = _main(["campaign", "plan", str(COMMITTED / "playbook.yaml"), "--show", "2"])
    assert code == 0, err
    assert "derive/topology.yaml: ecfcpu, embedded, 8 hosts, 50 Mbit/s links" in out, out
    assert "seed 50 (a run makes this schedule)" in out, out
    assert checksums(COMMITTED) == before
    assert not list(tmp_path.iterdir())  # nothing written where it ran either


def test_a_moved_copy_plans_from_its_own_derive_folder(tmp_path):
    there = tmp_path / "moved" / "camp"
    shutil.copytree(COMMITTED, there)
    topo = there / "derive" / "topology.yaml"
    topo.write_text(topo.read_text().replace("name: ecfcpu", "name: ecfcpumoved", 1))
    plan = make_plan(there / "playbook.yaml")
    assert plan.references[0] == ("topology", "derive/topology.yaml: ecfcpumoved, embedded, 8 hosts, "
                                              "50 Mbit/s links")


@pytest.mark.parametrize("make", ["missing", "symlink-outside", "directory"])
def test_a_derive_reference_that_is_not_the_folders_own_file_fails_in_one_line(tmp_path, make):
    there = tmp_path / "camp"
    shutil.copytree(COMMITTED, there)
    topo = there / "derive" / "topology.yaml"
    if make == "missing":
        topo.unlink()
    elif make == "symlink-outside":
        outside = tmp_path / "outside.yaml"
        shutil.copy(topo, outside)
        topo.unlink()
        topo.symlink_to(outside)
    else:
        topo.unlink()
        topo.mkdir()
    code, out, err = _main(["campaign", "plan", str(there / "playbook.yaml")])
    assert code != 0
    msg = (out + err).strip()
    assert f"{there / 'playbook.yaml'}:4: topology: {topo}: " in msg, msg
    assert "names the campaign folder's own derived input" in msg and "Traceback" not in msg, msg
    assert len(msg.splitlines()) == 1, msg
