"""Scale check of the testbed (issue 25): 48 and 96 hosts up, the full-mesh ping correct (every
ordered pair answers: 2256 and 9120), 96 hosts up in <= 3 s, down without leftovers."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest
import yaml

from qoslab.testbed import Testbed
from qoslab.topology import load_topology

from .conftest import free_port, netns_snapshot, unique_name

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("scale_topology", REPO / "scripts" / "scale_topology.py")
assert _spec and _spec.loader
scale = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(scale)


@pytest.mark.parametrize("n", [48, 96])
def test_full_mesh_at_scale(tmp_path, n):
    before = netns_snapshot()
    f = tmp_path / "scale.yaml"
    f.write_text(yaml.safe_dump(scale.scale_topology(n, unique_name(f"s{n}"), free_port())))
    tb = Testbed(load_topology(f))
    t0 = time.monotonic()
    rep = tb.up()
    up_s = time.monotonic() - t0
    try:
        t1 = time.monotonic()
        res = tb.ping_matrix()
        ping_s = time.monotonic() - t1
        bad = sorted(p for p, rtt in res.items() if rtt is None)
        print(f"{n} hosts: up {up_s:.2f} s (report {rep.seconds:.2f} s), ping {len(res) - len(bad)}/{len(res)} "
              f"in {ping_s:.2f} s")
        assert len(res) == n * (n - 1)
        assert bad == [], f"{len(bad)} pairs unreachable, e.g. {bad[:5]}"
        if n == 96:
            assert up_s <= 3.0
    finally:
        t2 = time.monotonic()
        down = tb.down()
        print(f"down {time.monotonic() - t2:.2f} s, {len(down.namespaces)} namespaces")
    assert not tb.existing() and netns_snapshot() == before
