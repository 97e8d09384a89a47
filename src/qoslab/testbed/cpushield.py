"""The testbed's CPU shield (issue 48): without a topology ``cpu:`` block, one group
``qoslab-shield-TOPOLOGY`` at the top of the cgroup v1 ``cpu`` hierarchy, no quota and no cpuset,
with the CFS weight :data:`SHIELD_WEIGHT` against a nice-0 task's 1024 (Documentation/scheduler/
sched-design-CFS.rst; ``cpu.shares`` of cgroup v1). At the top, not under ``qoslab-testbed`` (the
``cpu:`` block's host groups): a group's weight counts among its siblings, so under a shared
parent the parent's weight, which a block testbed sets to its own, would be the shield's.

Why: on a real cluster each node is a machine of its own; on one machine another user's process
(a build, a busy loop) takes CPU from the emulated nodes, and it slowed the compute-bound
uncongested trials more than the congested ones' network wait, so `make run`'s slowdown depended
on the machine's other load (reproducibility bench, a busy loop pinned to CPU 0: 0.72 of the quiet
run's slowdown, bench/README.md "The CPU shield"). In the shield such a process gets a smaller
share of a core the testbed wants.

Who is in it: every process the hosts' executors start (the workload's JVMs, the flood's ITGRecv),
the virtual switch, and a campaign's harness while it runs (:meth:`CpuShield.join`: alone outside,
at a fraction of the group's weight, it prepared each trial after the manager JVM had booted,
``go_wait_s`` median 0.004 -> 0.187 s; in it the shares among the testbed's own processes are what
they were). Outside it: the flood's senders (``as_emulation``; :meth:`CpuShield.emulation_files`,
the group the harness came from), because ITGSend runs in the real-time class
(:mod:`qoslab.trafficgen.ditgsched`), which a v1 cpu group without real-time runtime
(``cpu.rt_runtime_us`` 0, its default) refuses and which no busy loop at normal priority delays;
the hosts' sshd (a real node's is its own machine's: a sender over SSH keeps the real-time class);
and the kernel's threads (``ksoftirqd``, kworkers: a per-CPU kernel thread cannot be moved).

Why not the largest weight (262144, as the ``cpu:`` block's host groups, which have quotas): the
kernel's threads outside the shield compete with it at 1024 too. With 262144, in ``make test``'s
pool (several testbeds and test workers at once), a congested campaign's flood left its HTB classes
at 0.05-0.94 of the asked rate (``offered_load`` invalid in 4 of 5 attempts,
tests/integration/test_timewait.py, ci37), which never happened in the 20 CI runs before it. The
likely path (not traced): softirq work the kernel does not finish inline (a woken real-time sender
ends the inline loop, kernel/softirq.c) goes to ``ksoftirqd``, which then waits behind unbudgeted
JVMs at 256 tasks' weight. :data:`SHIELD_WEIGHT` is 8 tasks' weight: on a core where the testbed
runs, a busy loop (or ``ksoftirqd``) gets about 1/9 to 1/5 of it instead of 1/3.

A machine without the v1 ``cpu`` hierarchy (a unified cgroup v2 host) runs unshielded, as
before. The fidelity monitor's ``outside_cores`` still judges a trial beside outside load: the
shield keeps CPU time, not the caches or the memory bus.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import QoslabError

#: CFS weight of the shield (``cpu.shares``; a nice-0 task weighs 1024): see the module doc.
SHIELD_WEIGHT = 8192
#: The shield's group is ``PREFIX + TOPOLOGY`` at the top of the v1 cpu hierarchy.
PREFIX = "qoslab-shield-"

def write_file(path: Path, value: str) -> None:
    """Write ``value`` to the cgroup or sysfs file ``path``; raises QoslabError naming both."""
    try:
        path.write_text(value)
    except OSError as e:
        raise QoslabError(f"cannot write {value!r} to {path}: {e.strerror or e}") from None


def own_cpu_group(text: str | None = None) -> str:
    """This process's group in the v1 ``cpu`` hierarchy, from ``text`` (the content of
    /proc/self/cgroup: ``ID:CONTROLLERS:PATH`` lines), e.g. ``"/"``; ``"/"`` when no line names
    the ``cpu`` controller. Pure with ``text``."""
    if text is None:
        try:
            text = Path("/proc/self/cgroup").read_text()
        except OSError:
            return "/"
    for line in text.splitlines():
        f = line.split(":", 2)
        if len(f) == 3 and "cpu" in f[1].split(","):
            return f[2] or "/"
    return "/"


class CpuShield:
    """The shield ``group`` (a directory in the v1 ``cpu`` hierarchy) and ``home``, the group the
    process that made this object was in (the flood's senders go there)."""

    def __init__(self, group: Path, home: Path) -> None:
        self.group, self.home = group, home

    @property
    def active(self) -> bool:
        """Whether the group exists now (made by :meth:`apply`, maybe by another process)."""
        return (self.group / "cgroup.procs").is_file()

    def files(self) -> list[str]:
        """The group's ``cgroup.procs`` while it exists, else []."""
        return [str(self.group / "cgroup.procs")] if self.active else []

    def emulation_files(self) -> list[str]:
        """Where a process standing for the network (a flood sender) goes while the group exists:
        ``home``'s ``cgroup.procs``; else [] (it stays where its parent is)."""
        return [str(self.home / "cgroup.procs")] if self.active else []

    def apply(self) -> None:
        """Make the group with :data:`SHIELD_WEIGHT`. Raises QoslabError naming the group when the
        kernel refuses."""
        try:
            self.group.mkdir(exist_ok=True)
            (self.group / "cpu.shares").write_text(str(SHIELD_WEIGHT))
        except OSError as e:
            raise QoslabError(f"cannot make the testbed's CPU shield {self.group} (cpu.shares "
                              f"{SHIELD_WEIGHT}): {e.strerror or e}") from None

    def remove(self) -> list[str]:
        """Remove the group (its processes must be gone); returns it when it could not be removed."""
        try:
            self.group.rmdir()
        except FileNotFoundError:
            return []
        except OSError:
            return [str(self.group)]
        return []

    def join(self) -> Path | None:
        """Move this process (every thread: a v1 ``cgroup.procs`` write moves the thread group) into
        the group; returns the group to go back to (:meth:`leave`), None when the group does not
        exist (nothing moved). Raises QoslabError naming the file that could not be written."""
        if not self.active:
            return None
        write_file(self.group / "cgroup.procs", str(os.getpid()))
        return self.home

    def leave(self, home: Path | None) -> None:
        """Move this process back to ``home`` (what :meth:`join` returned; None: nothing) before the
        group is removed. A home that is gone is no error (the process stays); another failure
        raises QoslabError naming the file."""
        if home is None or not (home / "cgroup.procs").is_file():
            return
        write_file(home / "cgroup.procs", str(os.getpid()))


def shield_of(ctl: dict[str, Path], topology: str) -> CpuShield | None:
    """The shield of ``topology`` (:data:`PREFIX` + its name) in the v1 ``cpu`` hierarchy of ``ctl``
    (controller -> mount point), or None when there is none or it is not writable."""
    cpu = ctl.get("cpu")
    if cpu is None or not os.access(cpu, os.W_OK):
        return None
    group = cpu / f"{PREFIX}{topology}"
    home = cpu / own_cpu_group().lstrip("/")
    if home == group or not home.is_dir():  # made from inside the shield, or a group we cannot see
        home = cpu
    return CpuShield(group, home)


__all__ = ["PREFIX", "SHIELD_WEIGHT", "CpuShield", "own_cpu_group", "shield_of", "write_file"]
