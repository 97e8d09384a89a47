"""The testbed's CPU shield without a ``cpu:`` block (issue 48, :mod:`qoslab.testbed.cpuplace`): on
a v1 ``cpu`` hierarchy made of plain directories, which groups it makes, which ``cgroup.procs``
file a host's processes join, that a shielded executor is not a budgeted one (a flood receiver
keeps its ``pin_cpu``), that the flood's senders run outside it and that the harness joins it and
goes back. The scheduler's side (a busy loop outside gets only what the testbed leaves) is
tests/integration/test_cpu_shield.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import ECENET, REPO
from qoslab.errors import QoslabError
from qoslab.executors.base import budgeted, emulation
from qoslab.executors.local import NetnsExecutor
from qoslab.testbed.cpuplace import CpuPlacement
from qoslab.testbed.cpushield import SHIELD_WEIGHT, own_cpu_group
from qoslab.topology import load_topology


def _v1(tmp_path: Path) -> str:
    return (f"cgroup {tmp_path}/cpu cgroup rw,cpu 0 0\n"
            f"cgroup {tmp_path}/cpuacct cgroup rw,cpuacct 0 0\n"
            f"cgroup {tmp_path}/cpuset cgroup rw,cpuset 0 0\n")


def test_without_a_block_the_testbed_gets_one_weighted_cpu_group_and_nothing_else(tmp_path):
    t = load_topology(ECENET)
    (tmp_path / "cpu").mkdir()
    place = CpuPlacement(t, mounts=_v1(tmp_path))
    assert not place.active and place.shield is not None
    assert place.shield.group == tmp_path / "cpu" / f"qoslab-shield-{t.name}"  # at the top: its own weight
    assert not place.shielded and place.procs_files("jp-1") == [] and place.shield.files() == []  # not made yet
    place.apply()
    assert (place.shield.group / "cpu.shares").read_text() == str(SHIELD_WEIGHT)
    assert not (tmp_path / "cpu" / "qoslab-testbed").exists()  # the block's parent: not the shield's
    assert not (tmp_path / "cpuset" / "qoslab-testbed").exists()  # no cpuset, no quota: only the weight
    assert not any(p.name == "cpu.cfs_quota_us" for p in place.shield.group.rglob("*"))
    (place.shield.group / "cgroup.procs").write_text("")  # what the kernel makes with the directory
    want = [f"{place.shield.group}/cgroup.procs"]
    assert place.shielded and place.shield.files() == want
    assert all(place.procs_files(h.name) == want for h in t.hosts)  # every host: the one group
    assert place.boot_procs_files("jp-1") == [] and place.admit("jp-1") == 0
    (place.shield.group / "cgroup.procs").unlink()  # the kernel's files go with the directory
    (place.shield.group / "cpu.shares").unlink()
    assert place.remove() == [] and not place.shield.group.exists()


def test_no_v1_cpu_hierarchy_no_shield():
    t = load_topology(ECENET)
    for mounts in ("", "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n", "cgroup /x/cpuset cgroup rw,cpuset 0 0\n"):
        place = CpuPlacement(t, mounts=mounts)
        assert place.shield is None and not place.shielded and place.procs_files("jp-1") == []
        place.apply()  # nothing to make, nothing raised


def test_a_block_keeps_its_host_groups_and_makes_no_shield(tmp_path):
    t = load_topology(REPO / "playbooks" / "topologies" / "ecenet-cpu.yaml")
    place = CpuPlacement(t, mounts=_v1(tmp_path))
    assert place.shield is None and place.emulation_files() == []
    assert place.procs_files("jp-1") == sorted(f"{tmp_path}/{c}/qoslab-testbed/{t.name}/jp-1/cgroup.procs"
                                               for c in ("cpu", "cpuacct", "cpuset"))


def test_a_shielded_executor_is_not_budgeted_and_its_flood_senders_run_outside_the_shield():
    shield, home = ("/sys/fs/cgroup/cpu/qoslab-shield-t/cgroup.procs",), ("/sys/fs/cgroup/cpu/cgroup.procs",)
    ex = NetnsExecutor("jp-5", "qsl-t-jp-5", cgroups=shield, in_budget=False, emulation_cgroups=home)
    sx = emulation(ex)  # ITGSend's real-time class: refused in a v1 group without real-time runtime
    assert not budgeted(ex) and sx is not ex and sx.cgroups == home and sx.cpus is None and not budgeted(sx)
    # with a block: the host's groups are a budget; its flood sender leaves them for the switch's cores
    host = ("/sys/fs/cgroup/cpu/qoslab-testbed/t/jp-5/cgroup.procs",)
    bx = NetnsExecutor("jp-5", "qsl-t-jp-5", cgroups=host, emulation_cpus=frozenset({1}), in_budget=True)
    bs = emulation(bx)
    assert budgeted(bx) and not budgeted(bs) and bs.cgroups == () and bs.cpus == frozenset({1})
    assert budgeted(NetnsExecutor("jp-5", "qsl-t-jp-5", cgroups=host))  # cgroups alone: a budget, as before
    plain = NetnsExecutor("jp-5", "qsl-t-jp-5")
    assert not budgeted(plain) and emulation(plain) is plain


@pytest.mark.parametrize("text, want", [
    ("12:cpu,cpuacct:/\n0::/\n", "/"),
    ("9:pids:/\n1:cpu:/qoslab-shield-ecenetq\n2:cpuacct:/x\n", "/qoslab-shield-ecenetq"),
    ("0::/user.slice/session-1.scope\n", "/"),  # unified only: no v1 cpu line
    ("", "/"), ("garbage\n::\n", "/"),
])
def test_the_own_cpu_group_is_read_from_proc_self_cgroup(text, want):
    assert own_cpu_group(text) == want


def test_the_harness_joins_the_shield_and_goes_back_home_and_the_senders_go_home(tmp_path):
    """join/leave write this process's PID to the groups' cgroup.procs (plain files here; the
    kernel moves the thread group); the flood senders' file is the group the harness came from."""
    import unittest.mock as um

    t = load_topology(ECENET)
    (tmp_path / "cpu").mkdir()
    place = CpuPlacement(t, mounts=_v1(tmp_path))
    assert place.shield is not None
    shield = place.shield.group
    assert place.shield.home == tmp_path / "cpu"  # this test's own group is not in the fake tree: its top
    assert place.join_shield() is None and place.emulation_files() == []  # no shield made yet: nothing
    place.apply()
    (shield / "cgroup.procs").write_text("")
    (tmp_path / "cpu" / "cgroup.procs").write_text("")
    assert place.emulation_files() == [f"{tmp_path}/cpu/cgroup.procs"]
    home = place.join_shield()
    assert home == tmp_path / "cpu" and (shield / "cgroup.procs").read_text() == str(os.getpid())
    place.leave_shield(home)
    assert (tmp_path / "cpu" / "cgroup.procs").read_text() == str(os.getpid())
    place.leave_shield(None)
    place.leave_shield(tmp_path / "gone")  # a home that is gone: stay, no error
    real = Path.write_text

    def refuse(self: Path, data: str, *a, **k) -> int:
        if self.parent == shield:
            raise PermissionError(13, "Permission denied")
        return real(self, data, *a, **k)

    with um.patch.object(Path, "write_text", refuse):
        with pytest.raises(QoslabError, match=r"cannot write '\d+' to .*/qoslab-shield-.*/cgroup.procs: Permission denied"):
            place.join_shield()
        with pytest.raises(QoslabError, match=r"cannot make the testbed's CPU shield .*qoslab-shield-.*Permission denied"):
            place.apply()
    assert place.remove() == [str(shield)]  # its files are in it: not empty, named
