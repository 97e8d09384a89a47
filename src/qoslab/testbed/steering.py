"""Where the testbed's packets are processed (issue 42; a topology's ``cpu:`` block, applied by
:mod:`.cpuplace`): RPS (``queues/rx-0/rps_cpus``) of every switch port and host interface steers
the receive path to the block's cores (Documentation/networking/scaling.rst); with ``rx_usecs``
each host interface receives in a NAPI thread of its own, pinned to ``hosts_cpus`` at real-time
priority (:func:`~qoslab.scale.cpu.host_rx_lines`); ``br_netfilter`` in the switch namespace as the
block says. Split from :mod:`.cpuplace`, which places processes (cgroups); this module places the
kernel's packet work."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..errors import QoslabError
from ..portnames import linux_ifname
from ..scale.cpu import RX_THREAD_PRIORITY, CpuBlock, host_rx_lines, mask_cpus
from ..testbedplan import HOST_IF, host_namespace, switch_namespace
from ..topology import Topology
from .procs import pids_by_comm

#: The br_netfilter switches of a namespace (net/bridge/br_netfilter_hooks.c).
BR_NF_SYSCTLS = ("net.bridge.bridge-nf-call-iptables", "net.bridge.bridge-nf-call-ip6tables",
                 "net.bridge.bridge-nf-call-arptables")


class PacketSteering:
    """The packet processing placement of ``topology``'s testbed under ``block``."""

    def __init__(self, topology: Topology, block: CpuBlock) -> None:
        self.topo, self.block = topology, block
        self._rx_pids: dict[str, int] = {}  # host -> its NAPI receive thread (rx_usecs)

    def apply(self) -> None:
        """Steer the ports' and hosts' receive, start and pin the NAPI threads, set br_netfilter.
        Raises QoslabError naming the namespace and command that failed."""
        self._steer()
        self._br_netfilter()

    def _steer(self) -> None:
        sw_mask, host_mask = self.block.rps_masks()
        _in_ns(switch_namespace(self.topo.name), "; ".join(
            f"echo {sw_mask} > /sys/class/net/{d}/queues/rx-0/rps_cpus" for d in self._switch_ifs()))
        for h in self.topo.hosts:
            ns = host_namespace(self.topo.name, h.name)
            _in_ns(ns, f"echo {host_mask} > /sys/class/net/{HOST_IF}/queues/rx-0/rps_cpus")
            lines = host_rx_lines(self.block, HOST_IF)
            if lines:
                before = set(napi_threads(HOST_IF))
                _in_ns(ns, " && ".join(lines))
                new = [pid for pid in napi_threads(HOST_IF) if pid not in before]
                if len(new) != 1:
                    raise QoslabError(f"in namespace {ns}: `echo 1 > /sys/class/net/{HOST_IF}/threaded` made "
                                      f"{len(new)} new NAPI threads where one was expected: {new}")
                self._pin_rx_thread(new[0])
                self._rx_pids[h.name] = new[0]

    def _pin_rx_thread(self, pid: int) -> None:
        try:
            os.sched_setaffinity(pid, self.block.host_set)
            os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(RX_THREAD_PRIORITY))
        except OSError as e:
            raise QoslabError(f"cannot pin NAPI thread {pid} to CPU {self.block.hosts_cpus} at SCHED_FIFO "
                              f"{RX_THREAD_PRIORITY}: {e.strerror or e}") from None

    def rx_threads(self) -> dict[str, tuple[int, frozenset[int], int, int]]:
        """Each host's NAPI receive thread as it is now, ``HOST -> (PID, its CPUs, its scheduling
        policy (os.SCHED_*), its priority)`` ({} without ``rx_usecs``, or before :meth:`apply`); a
        thread that has ended (its interface gone) is left out."""
        out: dict[str, tuple[int, frozenset[int], int, int]] = {}
        for host, pid in self._rx_pids.items():
            try:
                out[host] = (pid, frozenset(os.sched_getaffinity(pid)), os.sched_getscheduler(pid),
                             os.sched_getparam(pid).sched_priority)
            except OSError:
                continue
        return out

    def _switch_ifs(self) -> list[str]:
        return [linux_ifname(h.port) for h in self.topo.hosts] + [linux_ifname(p) for p in
                                                                  self.topo.switch.span_destinations]

    def rps(self) -> dict[str, frozenset[int]]:
        """The CPUs each interface's RPS steers to now, read back from sysfs: ``"switch/DEV"`` for a
        switch port, ``"HOST"`` for a host's interface; an empty set is no RPS. Raises QoslabError
        naming the namespace whose files could not be read."""
        out: dict[str, frozenset[int]] = {}
        ifs = self._switch_ifs()
        masks = _in_ns(switch_namespace(self.topo.name), "; ".join(
            f"cat /sys/class/net/{d}/queues/rx-0/rps_cpus" for d in ifs)).split()
        out.update({f"switch/{d}": mask_cpus(m) for d, m in zip(ifs, masks, strict=True)})
        for h in self.topo.hosts:
            ns = host_namespace(self.topo.name, h.name)
            out[h.name] = mask_cpus(_in_ns(ns, f"cat /sys/class/net/{HOST_IF}/queues/rx-0/rps_cpus"))
        return out

    def _br_netfilter(self) -> None:
        v = "1" if self.block.br_netfilter else "0"
        # the sysctls exist only once br_netfilter is loaded; absent, the bridge calls no netfilter
        _in_ns(switch_namespace(self.topo.name), "; ".join(
            f"[ ! -e /proc/sys/{s.replace('.', '/')} ] || sysctl -qw {s}={v}" for s in BR_NF_SYSCTLS))


def napi_threads(dev: str, proc: Path = Path("/proc")) -> list[int]:
    """PIDs of the kernel's NAPI threads of interfaces named ``dev`` (comm ``napi/DEV-ID``, in
    every namespace: the name has no namespace), in PID order."""
    return pids_by_comm(lambda comm: comm.startswith(f"napi/{dev}-"), proc)


def _in_ns(ns: str, script: str) -> str:
    p = subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", script], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise QoslabError(f"in namespace {ns}: `{script[:120]}` failed: {(p.stderr or p.stdout).strip()[:200]}")
    return p.stdout


__all__ = ["BR_NF_SYSCTLS", "PacketSteering", "napi_threads"]
