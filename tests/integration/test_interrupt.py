"""An interrupt during a congested trial's workload (issue 35): SIGTERM, and Ctrl-C (SIGINT), to
``qoslab campaign run`` while the RayTracer manager is past its go gate end the campaign within
10 s with exit code 130; nothing the trial started is left in the testbed's hosts; the trial is
pending again with no failure counted (``--resume`` runs it; resuming itself is the chaos test's,
tests/integration/test_campaign.py). Before, the trial waited for the workload to finish (here a
size-B render of 20 frames under congestion, minutes; up to trial_timeout_s), the trial
timeout could replace the interrupt, and the runner started attempt 2."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qoslab.stats import ANALYSIS_JAR
from qoslab.testbed import Testbed, list_namespaces
from qoslab.topology import load_topology
from qoslab.workloads.gate import GO_FILE

from .campaign_helpers import chaos_files, trial_procs, trial_rows
from .conftest import unique_name

pytestmark = pytest.mark.skipif(not ANALYSIS_JAR.exists(), reason="analysis jar not built (make setup)")
N = 2


def _wait_for_go(folder: Path, proc: subprocess.Popen, timeout_s: float = 120) -> Path:
    """The first trial folder whose workload passed its go gate (the manager's run under way)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        assert proc.poll() is None, proc.communicate()
        gone = sorted((folder / "trials").glob(f"*/workload/{GO_FILE}")) if (folder / "trials").exists() else []
        if gone:
            return gone[0].parents[1]
        time.sleep(0.05)
    raise AssertionError("no trial reached its go gate")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_an_interrupt_during_the_workload_ends_the_campaign_at_once(tmp_path, sig):
    name = unique_name("i")
    tfile, pfile = chaos_files(tmp_path, name)
    # a workload that runs long after the interrupt: 20 frames of size B (500 x 500) under congestion
    text = (pfile.read_text().replace("frames: 1", "frames: 20").replace("size: A", "size: B")
            .replace("trials: 3", f"trials: {N}").replace("trial_timeout_s: 40", "trial_timeout_s: 300"))
    assert "size: B" in text and "trial_timeout_s: 300" in text
    pfile.write_text(text)
    tb = Testbed(load_topology(tfile))
    folder = tmp_path / "campaign"
    try:
        proc = subprocess.Popen([sys.executable, "-m", "qoslab", "campaign", "run", str(pfile), "--out", str(folder)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        tdir = _wait_for_go(folder, proc)
        time.sleep(0.3)  # into the manager's run
        sent = time.monotonic()
        proc.send_signal(sig)
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()  # the campaign went on with its workload: end it (by PID) and fail
            proc.communicate()
            raise AssertionError(f"the campaign was still running 60 s after {sig.name}") from None
        took = time.monotonic() - sent
        assert proc.returncode == 130, (proc.returncode, out[-2000:], err[-2000:])
        assert took < 10, f"the campaign took {took:.1f} s to end after {sig.name}"
        assert "interrupted" in out + err, (out[-1500:], err[-1500:])
        assert not trial_procs(tb), f"left running: {trial_procs(tb)}"
        rows = {r[0]: r for r in trial_rows(folder / "trials.sqlite")}
        idx = int(tdir.name)
        assert rows[idx][3] == "pending" and rows[idx][6] == 0, rows[idx]  # not a failure, runs again
        assert all(r[3] != "failed" and r[6] == 0 for r in rows.values()), rows
    finally:
        subprocess.run([sys.executable, "-m", "qoslab", "testbed", "down", "-t", str(tfile)], capture_output=True,
                       text=True, timeout=60)
    assert not [n for n in list_namespaces() if n.startswith(f"qsl-{name}")]
