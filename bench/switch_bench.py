"""Switch benchmark: a full push of the thesis profile (connect, backup, diff, send, verify,
write memory) and a no-op re-push, against the virtual Catalyst on the embedded testbed.
Targets (issue 5): full push + verify <= 5 s, no-op re-push <= 2 s."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from qoslab.profiles import load_profile, render
from qoslab.switch.backends import virtual_endpoint
from qoslab.switch.push import push
from qoslab.testbed import Testbed
from qoslab.topology import load_variant


def bench_switch(repeat: int) -> dict:
    topo = load_variant("bswitch", 8122)
    tb = Testbed(topo)
    tb.down()
    tb.up()
    full, noop, phases = [], [], []
    try:
        dev = virtual_endpoint(topo)
        thesis, fifo = render(load_profile("thesis"), topo), render(load_profile("fifo"), topo)
        with tempfile.TemporaryDirectory() as d:
            for _ in range(repeat):
                r = push(thesis, dev, Path(d), "thesis")
                full.append(r.seconds["total"])
                phases.append(r.seconds)
                noop.append(push(thesis, dev, Path(d), "thesis").seconds["total"])
                push(fifo, dev, Path(d), "fifo")
    finally:
        tb.down()
    return {
        "full_push_s": {"samples": full, "median": statistics.median(full), "target": 5.0,
                        "met": statistics.median(full) <= 5.0, "lines": len(thesis)},
        "noop_repush_s": {"samples": noop, "median": statistics.median(noop), "target": 2.0,
                          "met": statistics.median(noop) <= 2.0},
        "phases_of_first_push_s": phases[0],
    }
