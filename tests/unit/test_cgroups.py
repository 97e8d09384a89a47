"""qoslab.executors.cgroups without a cgroup mount: finding the cgroup v2 mount, the campaign's
cgroup name, processes and leftovers read from cgroup.procs files (a fake tree in tmp_path)."""

from __future__ import annotations

import os
from pathlib import Path

from qoslab.executors import cgroups

HYBRID = """cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup2 {mnt} cgroup2 rw,relatime 0 0
"""


def test_mount_point_is_the_writable_cgroup2_mount(tmp_path):
    assert cgroups.mount_point(HYBRID.format(mnt=tmp_path)) == tmp_path
    assert cgroups.mount_point(HYBRID.format(mnt="/nonexistent/unified")) is None
    assert cgroups.mount_point("proc /proc proc rw 0 0\n") is None


def test_campaign_cgroup_is_per_folder_under_qoslab(tmp_path):
    a = cgroups.campaign_cgroup(tmp_path / "runs" / "c1", mount=tmp_path)
    b = cgroups.campaign_cgroup(tmp_path / "other" / "c1", mount=tmp_path)
    assert a is not None and b is not None and a.parent == tmp_path / "qoslab" and a != b
    assert a.name.startswith("c1-") and len(a.name) == len("c1-") + 10
    assert cgroups.campaign_cgroup(Path("runs/c1").resolve(), mount=tmp_path) == \
        cgroups.campaign_cgroup(Path("runs/c1"), mount=tmp_path)


def test_leftovers_are_processes_in_finished_trials_cgroups(tmp_path):
    camp = tmp_path / "qoslab" / "c1-0123456789"
    for d, pids in {"trial-3": [os.getpid()], "trial-4": [], "trial-5": [os.getpid()], "pool": [os.getpid()]}.items():
        (camp / d).mkdir(parents=True)
        (camp / d / "cgroup.procs").write_text("".join(f"{p}\n" for p in pids))
    left = cgroups.leftovers(camp, finished=[3, 4])  # trial 5 still runs; the pool is no trial
    assert list(left) == ["trial-3"]
    (p,) = left["trial-3"]
    assert p.pid == os.getpid() and p.comm == Path("/proc/self/comm").read_text().strip() and "python" in p.cmdline
    assert cgroups.leftovers(None, [3]) == {} and cgroups.leftovers(tmp_path / "none", [3]) == {}
    assert not cgroups.tracking()
    cgroups.join_in_child()  # no trial tracked: nothing happens


def test_a_killed_runs_trial_and_pool_are_leftovers_once_the_run_is_dead(tmp_path):
    """Issue 45: after a kill -9 the killed trial is still `running` in the store. Whether the run
    that marked it is alive is the last provenance segment's PID: alive, a qoslab process, started
    before its segment was written (a later process that reused the PID is not it)."""
    import json
    import subprocess
    import sys
    import time

    from qoslab.campaign.folder import live_run

    camp = tmp_path / "qoslab" / "c1-0123456789"
    for d in ("trial-5", "pool"):
        (camp / d).mkdir(parents=True)
        (camp / d / "cgroup.procs").write_text(f"{os.getpid()}\n")
    assert list(cgroups.leftovers(camp, finished=[3], pool=True)) == ["pool"]
    assert list(cgroups.leftovers(camp, finished=[3, 5], pool=True)) == ["pool", "trial-5"]

    folder = tmp_path / "c"
    folder.mkdir()

    def segment(pid: int, when: float) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
        (folder / "provenance.json").write_text(json.dumps({"segments": [{"pid": pid, "time": stamp}]}))

    run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "qoslab", "campaign", "run"])
    try:
        time.sleep(0.2)
        segment(run.pid, time.time())
        assert live_run(folder) == run.pid
        segment(run.pid, time.time() - 3600)  # the segment is older than the process: PID reused
        assert live_run(folder) is None
        segment(os.getpid(), time.time())  # alive, but not a qoslab run (pytest)
        assert live_run(folder) is None or "qoslab" in Path(f"/proc/{os.getpid()}/cmdline").read_text()
    finally:
        run.kill()
        run.wait()
    segment(run.pid, time.time())
    assert live_run(folder) is None  # killed
    (folder / "provenance.json").write_text("[broken")
    assert live_run(folder) is None and live_run(tmp_path / "nowhere") is None
