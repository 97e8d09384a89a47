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
