"""A campaign's provenance names the qoslab commit its process started with (issue 48: the
derived thesis-faithful-cpu-onmachine run's segment named e8db840, a commit made during its
derivation). The commit and its dirty flag are read from git once, before the derivation's first
trial; a commit made and a file changed while the derivation runs (in a git repository of the
test's own standing in for the checkout) change neither the folders' provenance nor any segment.
The derivation runs for real; its trials are stood in for (test_derive_moved.TrialsDone) and
each measuring campaign records its segment as the runner does."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from test_derive_moved import SHIPPED, TrialsDone

import qoslab.campaign.folder as folder_mod
from qoslab.campaign import onmachine
from qoslab.campaign.checks import load_playbook
from qoslab.campaign.runner import Runner
from qoslab.trials.store import Store


def git(repo: Path, *argv: str) -> str:
    r = subprocess.run(["git", "-C", str(repo), "-c", "user.name=qoslab test", "-c", "user.email=test@example.invalid",
                        *argv], capture_output=True, text=True, timeout=30, check=False)
    assert r.returncode == 0, (argv, r.stdout, r.stderr)
    return r.stdout.strip()


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A git repository standing in for the qoslab checkout (one commit), read afresh by the
    commit reader; the process's real reading is restored after the test."""
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "code.py").write_text("v = 1\n")
    git(repo, "add", "code.py")
    git(repo, "commit", "-q", "-m", "first")
    monkeypatch.setattr(folder_mod, "repo_root", lambda: repo)
    folder_mod.process_commit.cache_clear()
    yield repo
    folder_mod.process_commit.cache_clear()


class CommitsWhileItRuns(TrialsDone):
    """A measuring campaign's run: its segment recorded as the runner records it, then a commit
    and an uncommitted change in the checkout while its trials run, then the trials done."""

    def run(self) -> Store:
        real = Runner(self.folder)
        real._segment()
        real.store.close()
        repo = folder_mod.repo_root()
        (repo / "code.py").write_text(f"v = {self.folder.name!r}\n")
        git(repo, "commit", "-q", "-am", "made during the derivation")
        (repo / "code.py").write_text("uncommitted\n")
        return super().run()


def _provenances(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.rglob("provenance.json"))]


def test_every_segment_names_the_commit_the_process_started_with(checkout, tmp_path, monkeypatch):
    first = git(checkout, "rev-parse", "HEAD")
    monkeypatch.setattr(onmachine, "Runner", CommitsWhileItRuns)
    data = yaml.safe_load(SHIPPED.read_text())
    data.update(trials=2, warmup=0, capture="off", conditions=data["conditions"][:2],
                derive={**data["derive"], "rx_cost_trials": 2, "pilot_trials": 2, "supersample": [1, 2]})
    pfile = tmp_path / "pb.yaml"
    pfile.write_text(yaml.safe_dump(data, sort_keys=False))
    folder = tmp_path / "campaign"
    onmachine.create_campaign(load_playbook(pfile), pfile, folder, None, False, lambda s: None)
    Runner(folder)._segment()  # the campaign's own run, after the derivation
    now = git(checkout, "rev-parse", "HEAD")
    assert now != first and folder_mod._commit() == now + "+dirty"  # what a fresh reading says now
    provs = _provenances(folder)
    assert len(provs) == 4  # the campaign, rx-cost, pilot-ss1, pilot-ss2
    for prov in provs:
        assert prov["qoslab_commit"] == first
        assert prov["segments"] and all(seg["qoslab_commit"] == first for seg in prov["segments"])


def test_a_resume_in_a_new_process_reads_the_checkout_again(checkout, tmp_path):
    """Once per process: a later process (a resume) reads the commit it starts with, and the
    runner notes that it differs from the one the campaign was made with."""
    first = git(checkout, "rev-parse", "HEAD")
    data = {"name": "pc", "topology": "playbooks/topologies/ecenet.yaml", "capture": "off", "trials": 2, "seed": 5,
            "workload": {"hosts": ["jp-1", "jp-2"]},
            "conditions": [{"name": "a", "congestion": False, "profile": "fifo"},
                           {"name": "b", "congestion": False, "profile": "thesis"}]}
    pfile = tmp_path / "pb.yaml"
    pfile.write_text(yaml.safe_dump(data))
    folder = tmp_path / "campaign"
    folder_mod.create(load_playbook(pfile), pfile, folder).close()
    git(checkout, "commit", "-q", "--allow-empty", "-m", "later")
    folder_mod.process_commit.cache_clear()  # a new process
    notes: list[str] = []
    Runner(folder, log=notes.append)._segment()
    prov = json.loads((folder / "provenance.json").read_text())
    assert prov["qoslab_commit"] == first and prov["segments"][0]["qoslab_commit"] == git(checkout, "rev-parse", "HEAD")
    assert any("differs from the one the campaign was made with" in n for n in notes), notes
