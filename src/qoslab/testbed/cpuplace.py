"""The testbed's CPU placement (issue 42): a topology's ``cpu:`` block (:mod:`qoslab.scale.cpu`)
applied to this machine.

- **Host cgroups**: one per host, ``qoslab-testbed/TOPOLOGY/HOST`` in the cgroup v1 ``cpuset``,
  ``cpu`` and ``cpuacct`` hierarchies: ``cpuset.cpus`` = the block's ``hosts_cpus``,
  ``cpu.cfs_period_us`` / ``cpu.cfs_quota_us`` = the host's capacity (cores x period per period),
  ``cpuacct.usage`` its CPU time; the testbed's groups ``qoslab-testbed`` and its ``TOPOLOGY`` have
  the largest CFS weight (:data:`HOSTS_WEIGHT`), so another user's process on the hosts' cores runs only in
  the time the hosts leave. Every process the testbed's executors start on a host joins
  them in the child between fork and exec (:meth:`CpuPlacement.procs_files`; the host's sshd too,
  so an SSH session's processes inherit them). Kernel interface:
  Documentation/admin-guide/cgroup-v1/cpusets.rst and scheduler/sched-bwc.rst.
- **Boot groups**: beside each host's, ``qoslab-testbed/TOPOLOGY/boot:HOST`` on the same cores
  without a quota: a workload's manager JVM boots there (0.34-0.42 s at full speed; 4.2-5.6 s at the
  0.15 cores of a thesis-faithful-cpu host, ``manager_start_s`` of the committed runs) and
  :meth:`CpuPlacement.admit` moves it into the host's cgroups before its measured run
  (:mod:`qoslab.workloads.gate`).
- **The switch's cores** (:mod:`.steering`): RPS (``queues/rx-0/rps_cpus``) of every switch port and host
  interface steers the packets' receive path (veth, bridge, the ports' qdiscs and nftables, the
  receiving stack) to ``switch_cpus`` (Documentation/networking/scaling.rst); the virtual switch,
  the flood senders and the harness run with that CPU affinity. With ``receive_on: hosts`` the
  host interfaces' RPS goes to ``hosts_cpus`` instead (the receiving stack on the hosts' cores;
  :meth:`~qoslab.scale.cpu.CpuBlock.rps_masks`); :meth:`CpuPlacement.rps` reads the masks back.
  With ``rx_usecs`` too, each host interface receives in a NAPI thread of its own instead
  (:func:`~qoslab.scale.cpu.host_rx_lines`), which this module pins to ``hosts_cpus`` at
  real-time priority; :meth:`CpuPlacement.rx_threads` reads them back.
- **br_netfilter**: ``net.bridge.bridge-nf-call-{iptables,ip6tables,arptables}`` in the switch
  namespace as the block says (off by default: the QoS is nftables' bridge family).
- **The shield, without a block** (issue 48): :mod:`.cpushield`, one weighted v1 ``cpu`` group
  the hosts' processes, the virtual switch and a campaign's harness run in.

Why cgroup v1: on this machine's kind (a hybrid hierarchy, systemd not running) the ``cpu``,
``cpuacct`` and ``cpuset`` controllers are bound to v1 hierarchies and the unified (v2) one holds
none of them, so ``cpu.max``/``cpuset.cpus`` of v2 are not available; the v1 files are the same
kernel mechanism (CFS bandwidth control, cpusets). A machine without the v1 hierarchies refuses a
``cpu:`` block with :class:`~qoslab.errors.EnvironmentProblem` naming what is missing. The v1
hierarchies are independent of the v2 one that tracks a trial's processes
(:mod:`qoslab.executors.cgroups`), so a process is in both.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import EnvironmentProblem, QoslabError
from ..executors import cgroups
from ..scale.cpu import CpuBlock, format_cpulist, host_cores, mask_cpus
from ..topology import Topology
from .cpushield import CpuShield, shield_of
from .cpushield import write_file as _write
from .steering import PacketSteering

#: The top of the testbeds' host cgroups in each v1 hierarchy.
ROOT_NAME = "qoslab-testbed"
#: A host's boot group is ``BOOT_PREFIX + HOST`` beside the host's (a host name cannot start with it:
#: it holds a colon, :meth:`CpuPlacement.boot_procs_files`).
BOOT_PREFIX = "boot:"
#: The v1 controllers a cpu: block needs.
CONTROLLERS = ("cpuset", "cpu", "cpuacct")
#: CFS weight of a testbed's host group against the other tasks of the machine (``cpu.shares``,
#: v1's maximum; a task at nice 0 weighs 1024): Documentation/scheduler/sched-design-CFS.rst.
HOSTS_WEIGHT = 262144

def find_v1(mounts: str) -> dict[str, Path]:
    """Controller -> mount point of each cgroup v1 hierarchy in ``mounts`` (the text of
    /proc/self/mounts) that carries one of :data:`CONTROLLERS` (co-mounted ones share a path,
    e.g. ``/sys/fs/cgroup/cpu,cpuacct``). Pure."""
    out: dict[str, Path] = {}
    for line in mounts.splitlines():
        f = line.split()
        if len(f) >= 4 and f[2] == "cgroup":
            opts = set(f[3].split(","))
            for c in CONTROLLERS:
                if c in opts:
                    out[c] = Path(f[1])
    return out


@dataclass(frozen=True)
class HostCpu:
    """One host cgroup's counters: CPU time (``cpuacct.usage``, ns), CFS periods elapsed and
    throttled (``cpu.stat``: ``nr_periods``, ``nr_throttled``) and time throttled (ns)."""

    usage_ns: int
    nr_periods: int
    nr_throttled: int
    throttled_ns: int


def parse_cpu_stat(text: str) -> dict[str, int]:
    """``cpu.stat`` (``key value`` lines) -> {key: int}. Pure."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        if v.strip().lstrip("-").isdigit():
            out[k] = int(v)
    return out


class CpuPlacement:
    """The placement of ``topology``'s testbed (see the module doc); ``mounts`` overrides
    /proc/self/mounts (tests). Raises EnvironmentProblem when the topology has a ``cpu:`` block
    and this machine lacks a v1 hierarchy it needs."""

    def __init__(self, topology: Topology, mounts: str | None = None) -> None:
        self.topo = topology
        self.block: CpuBlock | None = topology.cpu
        self.ctl: dict[str, Path] = {}
        #: the switch's and hosts' packet processing (RPS, NAPI threads, br_netfilter), with a block
        self.steering: PacketSteering | None = PacketSteering(topology, self.block) if self.block else None
        if mounts is None:
            try:
                mounts = Path("/proc/self/mounts").read_text()
            except OSError:
                mounts = ""
        self.ctl = find_v1(mounts)
        #: the testbed's CPU shield (no block, the v1 cpu hierarchy present and writable), else None
        self.shield: CpuShield | None = None
        if self.block is None:
            self.shield = shield_of(self.ctl, self.topo.name)
            return
        missing = [c for c in CONTROLLERS if c not in self.ctl]
        if missing:
            raise EnvironmentProblem(
                f"topology {topology.name}: its cpu: block needs the cgroup v1 {', '.join(missing)} hierarch"
                f"{'ies' if len(missing) > 1 else 'y'} (mounted at /sys/fs/cgroup/<controller>); this machine "
                "has none: remove the cpu: block or mount them")

    @property
    def active(self) -> bool:
        """Whether the topology has a ``cpu:`` block."""
        return self.block is not None

    def _dir(self, controller: str, host: str | None = None) -> Path:
        d = self.ctl[controller] / ROOT_NAME / self.topo.name
        return d / host if host else d

    @property
    def shielded(self) -> bool:
        """Whether the hosts' processes run in the shield now (:class:`~.cpushield.CpuShield`)."""
        return self.shield is not None and self.shield.active

    def emulation_files(self) -> list[str]:
        """Where a flood sender goes while shielded (:meth:`~.cpushield.CpuShield.emulation_files`), else []."""
        return self.shield.emulation_files() if self.shield is not None else []

    def join_shield(self) -> Path | None:
        """This process into the shield (:meth:`~.cpushield.CpuShield.join`); None unshielded."""
        return self.shield.join() if self.shield is not None else None

    def leave_shield(self, home: Path | None) -> None:
        """This process back to ``home`` (:meth:`~.cpushield.CpuShield.leave`)."""
        if self.shield is not None:
            self.shield.leave(home)

    def procs_files(self, host: str) -> list[str]:
        """The ``cgroup.procs`` files a process started on ``host`` joins: the host's budget groups
        with a block, the shield's file without one (:meth:`~.cpushield.CpuShield.files`; [] unshielded)."""
        if self.block is None:
            return self.shield.files() if self.shield is not None else []
        dirs = {str(self._dir(c, host)) for c in CONTROLLERS}
        return sorted(f"{d}/cgroup.procs" for d in dirs)

    def boot_procs_files(self, host: str) -> list[str]:
        """The ``cgroup.procs`` files of ``host``'s boot group ([] without a block, and with
        ``manager_boot: budget``: the manager then boots in the host's budget): on the hosts' cores
        without the host's CPU quota, where a workload's manager JVM boots before its run
        (:meth:`admit` moves it into the host's budget at the go; :mod:`qoslab.workloads.gate`)."""
        if self.block is None or self.block.manager_boot == "budget":
            return []
        return sorted({f"{self._boot_dir(c, host)}/cgroup.procs" for c in CONTROLLERS})

    def _boot_dir(self, controller: str, host: str) -> Path:
        return self._dir(controller) / f"{BOOT_PREFIX}{host}"

    def admit(self, host: str) -> int:
        """Move every process of ``host``'s boot group into the host's cgroups (its CPU budget);
        returns how many moved (0 without a block). Writing a PID to a v1 ``cgroup.procs`` moves
        all its threads (Documentation/admin-guide/cgroup-v1/cgroups.rst). Raises QoslabError
        naming the file that could not be written (a process that ended meanwhile is skipped)."""
        if self.block is None:
            return 0
        moved = 0
        for ctl in {str(self.ctl[c]): c for c in CONTROLLERS}.values():  # co-mounted controllers: once
            source, target = self._boot_dir(ctl, host) / "cgroup.procs", self._dir(ctl, host) / "cgroup.procs"
            try:
                pids = source.read_text().split()
            except OSError as e:
                raise QoslabError(f"cannot read {source}: {e.strerror or e}") from None
            for pid in pids:
                try:
                    target.write_text(pid)
                except ProcessLookupError:
                    continue  # it ended meanwhile
                except OSError as e:
                    raise QoslabError(f"cannot move process {pid} into {target}: {e.strerror or e}") from None
                moved += 1
        return moved

    def switch_cpus(self) -> frozenset[int] | None:
        """The switch's cores (the affinity of the virtual switch, the senders, the harness), or None."""
        return self.block.switch_set if self.block is not None else None

    # -- apply / remove --------------------------------------------------------------------------
    def apply(self) -> None:
        """Make the host cgroups, steer the ports' packet processing, set br_netfilter. Raises
        QoslabError naming the file or command that failed."""
        if self.block is None:
            if self.shield is not None:
                self.shield.apply()
            return
        b = self.block
        for c in sorted({str(self.ctl[c]) for c in CONTROLLERS}):
            for d in (Path(c) / ROOT_NAME, Path(c) / ROOT_NAME / self.topo.name):
                d.mkdir(exist_ok=True)
        # the hosts' cores are the hosts': the testbed's group has the largest CFS weight, so another
        # user's process there runs only in the time the hosts leave (their quotas still cap them)
        for d in (self.ctl["cpu"] / ROOT_NAME, self._dir("cpu")):  # the weight counts among the root's tasks
            _write(d / "cpu.shares", str(HOSTS_WEIGHT))
        cs = self.ctl["cpuset"]
        for d in (cs / ROOT_NAME, self._dir("cpuset")):  # a v1 cpuset starts empty: fill it from its parent
            _write(d / "cpuset.cpus", (d.parent / "cpuset.cpus").read_text().strip())
            _write(d / "cpuset.mems", (d.parent / "cpuset.mems").read_text().strip())
        for h in self.topo.hosts:
            for c in CONTROLLERS:
                self._dir(c, h.name).mkdir(exist_ok=True)
            _write(self._dir("cpuset", h.name) / "cpuset.cpus", b.hosts_cpus)
            _write(self._dir("cpuset", h.name) / "cpuset.mems", (cs / "cpuset.mems").read_text().strip())
            cpu = self._dir("cpu", h.name)
            _write(cpu / "cpu.cfs_period_us", str(b.period_us))
            _write(cpu / "cpu.cfs_quota_us", str(b.quota_us(host_cores(b, h.cpu))))
            # its boot group: the hosts' cores, no quota (a v1 group's default: cfs_quota_us -1)
            for c in CONTROLLERS:
                self._boot_dir(c, h.name).mkdir(exist_ok=True)
            _write(self._boot_dir("cpuset", h.name) / "cpuset.cpus", b.hosts_cpus)
            _write(self._boot_dir("cpuset", h.name) / "cpuset.mems", (cs / "cpuset.mems").read_text().strip())
        assert self.steering is not None
        self.steering.apply()

    def rx_threads(self) -> dict[str, tuple[int, frozenset[int], int, int]]:
        """Each host's NAPI receive thread ({} without a block): :meth:`.steering.PacketSteering.rx_threads`."""
        return self.steering.rx_threads() if self.steering is not None else {}

    def rps(self) -> dict[str, frozenset[int]]:
        """Where each interface's RPS steers now ({} without a block): :meth:`.steering.PacketSteering.rps`."""
        return self.steering.rps() if self.steering is not None else {}

    def remove(self) -> list[str]:
        """Remove the host cgroups (their processes must be gone: the testbed ends them first);
        returns the directories that could not be removed (a process still in them)."""
        left: list[str] = self.shield.remove() if self.shield is not None else []
        for c in sorted({str(p) for p in find_v1(Path("/proc/self/mounts").read_text()).values()}):
            top = Path(c) / ROOT_NAME / self.topo.name
            if not top.is_dir():
                continue
            for d in [*(p for p in top.iterdir() if p.is_dir()), top]:
                try:
                    d.rmdir()
                except OSError:
                    left.append(str(d))
            try:
                (Path(c) / ROOT_NAME).rmdir()
            except OSError:
                pass  # another testbed's groups are in it
        return left

    # -- reading -----------------------------------------------------------------------------------
    def read(self, hosts: list[str]) -> dict[str, HostCpu]:
        """The counters of ``hosts``' cgroups now ({} without a block; a host whose files cannot be
        read is left out)."""
        out: dict[str, HostCpu] = {}
        if self.block is None:
            return out
        for h in hosts:
            try:
                usage = int((self._dir("cpuacct", h) / "cpuacct.usage").read_text())
                st = parse_cpu_stat((self._dir("cpu", h) / "cpu.stat").read_text())
            except (OSError, ValueError):
                continue
            out[h] = HostCpu(usage, st.get("nr_periods", 0), st.get("nr_throttled", 0), st.get("throttled_time", 0))
        return out


def placement_of(topology: Topology) -> CpuPlacement:
    """The :class:`CpuPlacement` of ``topology`` (inactive without a ``cpu:`` block)."""
    return CpuPlacement(topology)


def joiner(files: list[str]) -> Callable[[], None] | None:
    """A ``preexec_fn`` that moves the child into the cgroups of ``files`` (``cgroup.procs``
    paths, :meth:`CpuPlacement.procs_files`), or None for none; a file it cannot write ends the
    child with code 126 (never a process outside its budget)."""
    if not files:
        return None

    def join() -> None:
        if not cgroups.join_files(files):
            os._exit(126)

    return join


def set_affinity(cpus: frozenset[int] | None) -> frozenset[int] | None:
    """Pin this process to ``cpus``: every thread it has now (/proc/self/task; the call applies
    per thread) and so every thread and child they start later; returns the affinity the calling
    thread had (for restoring), None when ``cpus`` is None (nothing changed)."""
    if cpus is None:
        return None
    before = frozenset(os.sched_getaffinity(0))
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except (OSError, ValueError):
            continue  # a thread that ended meanwhile
    return before


__all__ = ["CpuPlacement", "HostCpu", "find_v1", "format_cpulist", "joiner", "mask_cpus", "parse_cpu_stat",
           "placement_of", "set_affinity"]
