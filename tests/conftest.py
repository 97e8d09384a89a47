"""Shared fixtures: paths, and a helper writing topology variants to temporary files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]

# A pytest-xdist worker (make test-unit / test-fast) runs with COLUMNS=80 in its environment; a
# serial pytest has none, so the CLI's consoles (qoslab.cli.common: 120 columns when not a
# terminal) and every qoslab a test starts would wrap at 80 in parallel only. Tests see the same
# environment either way.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)


def shared_or_copy(shared_rel: str, copy_rel: str) -> Path:
    """A reference file from ../shared (preferred) or its copy in the repository, for checkouts
    that have no ../shared next to them. test_reference_copies_match_shared keeps them identical."""
    shared = REPO.parent / "shared" / shared_rel
    return shared if shared.exists() else REPO / copy_rel


APPENDIX_B = shared_or_copy("reference/thesis-appendix-b-running-config.txt",
                            "switch-configs/reference/thesis-appendix-b-running-config.txt")
ECENET = REPO / "playbooks" / "topologies" / "ecenet.yaml"


def slurm_topology(folder: Path, block: dict) -> Path:
    """``folder/topo.yaml``: the shipped ecenet topology with the ``slurm:`` block ``block``."""
    data = yaml.safe_load(ECENET.read_text())
    data["slurm"] = block
    path = folder / "topo.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def ecenet_data() -> dict:
    """The shipped ecenet topology as plain data, to mutate in tests."""
    return yaml.safe_load(ECENET.read_text())


@pytest.fixture
def write_yaml(tmp_path):
    """write_yaml(data, name) -> Path of a YAML file in tmp_path."""

    def _write(data: dict, name: str = "topo.yaml") -> Path:
        p = tmp_path / name
        p.write_text(yaml.safe_dump(data, sort_keys=False))
        return p

    return _write
