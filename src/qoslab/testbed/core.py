"""Building and tearing down the embedded testbed of one topology.

:class:`Testbed` applies the pure :func:`qoslab.testbedplan.build_plan` with ``ip -batch``/``tc -batch``
(host ends of every link, bridge, SPAN ports), then starts the virtual Catalyst (``qoslab switch
serve``), which owns the switch ports' egress queues from then on: it applies the tc plan of its
running-config (a factory-default switch: one FIFO per port) before it accepts connections.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import EnvironmentProblem, QoslabError
from ..executors import NetnsExecutor
from ..executors.local import NETNS_MARKER
from ..executors.sshscripts import RUN_MARKER
from ..testbedplan import (
    STATE_DIR,
    build_plan,
    host_namespace,
    owns_namespace,
    span_namespace,
    switch_namespace,
    vswitch_dir,
)
from ..topology import Topology
from ..yamlio import dump_yaml
from . import netlink, probes, slurm, sshd
from .caps import probe_capabilities, require_root, run_batches, run_in_namespaces
from .cpuplace import CpuPlacement, joiner
from .neigh import NEIGH_SAVED, ensure_neighbour_capacity, restore_neighbour_capacity
from .procs import cmdline, environ_marked, kill_pids, list_namespaces, namespace_pids
from .statedir import campaign_running, private_dir, state_dir

#: Seconds the virtual Catalyst may take to listen on its management endpoint.
SWITCH_START_TIMEOUT_S = 15.0

@dataclass
class UpReport:
    """What ``up`` did: ``built`` (False = it was already up), ``stale_removed`` (namespaces of
    an earlier crashed run), ``seconds`` (wall time), ``survivors`` (PIDs ended in the hosts and
    the SPAN namespace of a testbed that was already up: what a killed run left), ``notes``
    (machine settings changed, see :func:`ensure_neighbour_capacity`)."""

    built: bool
    stale_removed: list[str]
    seconds: float
    survivors: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class DownReport:
    """What ``down`` removed: namespaces, PIDs of processes ended inside them, wall seconds."""

    namespaces: list[str]
    killed_pids: list[int]
    seconds: float


class Testbed:
    """The embedded testbed of one topology. ``up``/``down`` are idempotent; :meth:`executor`
    gives the executor of a host. Raises QoslabError for a topology that is not
    ``environment: embedded``."""

    __test__ = False  # not a pytest test class

    def __init__(self, topology: Topology) -> None:
        if topology.environment != "embedded":
            raise QoslabError(
                f"topology {topology.name} is for a real cluster (environment: cluster); "
                "the embedded testbed only builds environment: embedded topologies"
            )
        self.topo = topology
        self.plan = build_plan(topology)
        self.switch_ns = switch_namespace(topology.name)
        self.span_ns = span_namespace(topology.name)
        self.state_file = STATE_DIR / f"testbed-{topology.name}.json"
        self._switch_pid: int | None = None
        #: the topology's cpu: block on this machine (host cgroups, RPS, br_netfilter; inactive without one)
        self.cpu = CpuPlacement(topology)

    # -- helpers ------------------------------------------------------------------------------
    def namespace(self, host: str) -> str:
        """Namespace of ``host``; raises QoslabError for an unknown host."""
        try:
            return host_namespace(self.topo.name, self.topo.host(host).name)
        except KeyError as e:
            raise QoslabError(str(e.args[0])) from None

    def executor(self, host: str) -> NetnsExecutor:
        """Executor running commands inside ``host``'s namespace (in the host's CPU budget when the
        topology has a ``cpu:`` block, in the testbed's CPU shield without one; its
        ``as_emulation()`` runs outside both, on the switch's cores with a block, its
        ``as_booting()`` in the host's boot group)."""
        return NetnsExecutor(host, self.namespace(host), cgroups=self.cpu.procs_files(host),
                             emulation_cpus=self.cpu.switch_cpus(), boot_cgroups=self.cpu.boot_procs_files(host),
                             admit=lambda: self.cpu.admit(host), in_budget=self.cpu.active,
                             emulation_cgroups=self.cpu.emulation_files())

    def sshd_up(self) -> list[str]:
        """Start an sshd in every host namespace that has none (:mod:`.sshd`); returns the hosts
        started (idempotent)."""
        return sshd.start(self.topo)

    def slurm_up(self) -> bool:
        """Start the testbed's Slurm cluster unless it runs (:mod:`.slurm`: ``slurmctld`` in the
        head node's namespace, one ``slurmd`` per host, ``munged``); True when it started it."""
        return slurm.start(self.topo)

    def slurm_client(self) -> tuple[list[str], dict[str, str]]:
        """How a Slurm client reaches the testbed's cluster (see :func:`.slurm.client`)."""
        return slurm.client(self.topo)

    def sshd_pids(self) -> list[int]:
        """PIDs of the testbed's sshd servers and of the sessions they serve (none: [])."""
        return sshd.server_and_session_pids(self.topo)

    def ssh_targets(self) -> dict[str, Any]:
        """Host -> :class:`~qoslab.executors.ssh.SshTarget` through the testbed's sshd (see
        :func:`.sshd.targets`). Raises QoslabError when the servers were never started."""
        return sshd.targets(self.topo)

    def span_executor(self) -> NetnsExecutor:
        """Executor of the SPAN namespace (where captures listen on the SPAN destination ports)."""
        return NetnsExecutor("span", self.span_ns)

    def host_namespaces(self) -> list[str]:
        """The namespaces of the topology's hosts (not the switch's or the SPAN's)."""
        return [host_namespace(self.topo.name, h.name) for h in self.topo.hosts]

    def existing(self) -> list[str]:
        """Namespaces of this testbed that exist now (complete or left by a crash)."""
        return [ns for ns in list_namespaces() if owns_namespace(self.topo.name, ns)]

    def is_up(self) -> bool:
        """True when the state file says a build completed and all its namespaces exist."""
        try:
            state = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return False
        if not (state.get("status") == "up" and set(self.plan.namespaces) <= set(list_namespaces())):
            return False
        return self._switch_alive(state.get("switch_pid"))

    def _switch_alive(self, pid: int | None) -> bool:
        """True when the virtual Catalyst of the state file still runs (its PID's command line is
        ``qoslab switch serve``). A machine restart or a killed switch leaves the namespaces without
        it: that testbed is not up, and :meth:`up` rebuilds it (the campaign resume of issue 42 met
        this: 'switch 127.0.0.1:8026: unreachable' on every trial)."""
        if not pid:
            return False
        cmd = cmdline(int(pid))
        return "serve" in cmd and any("qoslab" in c for c in cmd)

    # -- up / down ----------------------------------------------------------------------------
    def up(self, end_survivors: bool = True) -> UpReport:
        """Build the testbed (idempotent: a complete testbed is left as it is; leftovers of a
        crashed run are removed first). When it is already up and ``end_survivors``, processes
        left in its hosts and SPAN namespace by a killed run are ended by PID, unless a campaign
        runs on it now (its lock is held). On any error or interrupt, everything built is removed
        and the error re-raised. Raises EnvironmentProblem (not root, tools or tc kinds
        missing) or QoslabError naming the failing command."""
        t0 = time.monotonic()
        require_root()
        missing = probe_capabilities().missing_required()
        if missing:
            raise EnvironmentProblem(
                f"this kernel lacks tc {', '.join(missing)} (needed by the testbed); see `qoslab testbed caps`"
            )
        if self.is_up():
            survivors = self.end_survivors() if end_survivors and campaign_running(self.topo.name) is None else []
            return UpReport(False, [], time.monotonic() - t0, survivors)
        stale = self.existing()
        if stale:
            self._remove(stale)
            self._stop_slurm()
        n = len(self.topo.hosts)
        state_dir()
        note = ensure_neighbour_capacity(n * (n - 1), saved=STATE_DIR / NEIGH_SAVED)
        try:
            state_dir()
            self._write_state("building")
            p = self.plan
            run_batches([("ip", None, p.root_ip)])
            run_batches([("ip", self.switch_ns, p.links)])
            run_in_namespaces(p.prepare)
            run_batches([("ip", ns, lines) for ns, lines in p.ip.items()])
            run_batches([("tc", ns, lines) for ns, lines in p.tc.items()])
            self.cpu.apply()
            self._start_switch()
            if self.topo.slurm is not None:
                self.slurm_up()
            self._write_state("up")
        except BaseException:
            self._remove(self.existing())
            self._stop_slurm()
            self.cpu.remove()
            self.state_file.unlink(missing_ok=True)
            raise
        return UpReport(True, stale, time.monotonic() - t0, notes=[note] if note else [])

    def end_survivors(self) -> list[int]:
        """End (SIGTERM, then SIGKILL; by PID) the processes qoslab started in the hosts' namespaces
        and the SPAN namespace: on a testbed no campaign runs on, they are what a killed run left
        (D-ITG, iperf3, workload and capture JVMs). qoslab's are those whose environment carries
        :data:`~qoslab.executors.local.NETNS_MARKER` with one of these namespaces (every process a
        host's executor starts, and what those start in turn) or
        :data:`~qoslab.executors.sshscripts.RUN_MARKER` (over SSH, a Slurm step's tasks); anything
        else there is the operator's and stays (a ``squeue`` on the login node, a shell of
        ``qoslab testbed exec``). Of those, the Slurm cluster's daemons and step managers stay too
        (a step whose processes are gone ends), and so do the testbed's own sshd servers and the
        sessions they serve (:meth:`sshd_pids`): a campaign driving the hosts over SSH keeps its
        connections. Returns the PIDs signalled."""
        keep = set(self.sshd_pids()) | slurm.keep_pids(self.topo)
        namespaces = [*self.host_namespaces(), self.span_ns]
        markers: dict[str, frozenset[str] | None] = {NETNS_MARKER: frozenset(namespaces), RUN_MARKER: None}
        pids = [p for ps in namespace_pids(namespaces).values() for p in ps
                if p not in keep and environ_marked(p, markers)]
        return kill_pids(pids) if pids else []

    def down(self) -> DownReport:
        """Remove the testbed: end every process inside its namespaces (SIGTERM, then SIGKILL),
        delete the namespaces (and with them every veth and the bridge) and the state file.
        Idempotent. Raises QoslabError if a namespace survives."""
        t0 = time.monotonic()
        require_root()
        netlink.close_all()  # the probes' kept sockets hold the namespaces open
        existing = self.existing()
        killed = self._remove(existing)
        killed += self._stop_slurm()
        self.cpu.remove()
        self.state_file.unlink(missing_ok=True)
        shutil.rmtree(vswitch_dir(self.topo.name), ignore_errors=True)
        shutil.rmtree(STATE_DIR / f"sshd-{self.topo.name}", ignore_errors=True)
        if not any(STATE_DIR.glob("testbed-*.json")):  # the last testbed down: the machine's limits back
            restore_neighbour_capacity(STATE_DIR / NEIGH_SAVED)
        left = self.existing()
        if left:
            raise QoslabError(f"namespaces survived `down`: {', '.join(left)}")
        return DownReport(existing, killed, time.monotonic() - t0)

    def _start_switch(self) -> None:
        """Start the virtual Catalyst (``qoslab switch serve``) in the background, fresh state
        (factory config, new credentials and host key), and wait until it accepts connections
        (it has applied its factory tc plan to the switch ports by then)."""
        d = vswitch_dir(self.topo.name)
        shutil.rmtree(d, ignore_errors=True)
        private_dir(d)
        mg = self.topo.switch.management
        if probes.listening(mg.host, mg.port):
            raise QoslabError(f"management endpoint {mg.host}:{mg.port} is already in use (another testbed "
                              "or virtual switch?)")
        topo_file = d / "topology.yaml"  # the resolved topology (names and overrides as built)
        topo_file.write_text(dump_yaml(self.topo.model_dump(mode="json")))
        argv = [sys.executable, "-m", "qoslab", "switch", "serve", "-t", str(topo_file)]
        cpus = self.cpu.switch_cpus()  # the switch's cores (None: wherever the scheduler puts it)
        shield = joiner(self.cpu.shield.files() if self.cpu.shield else [])  # or the CPU shield (no cpu: block)
        with open(d / "serve.log", "ab") as log:
            p = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True,
                                 preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else shield)
        self._switch_pid = p.pid
        deadline = time.monotonic() + SWITCH_START_TIMEOUT_S
        while not probes.listening(mg.host, mg.port):
            if p.poll() is not None or time.monotonic() > deadline:
                tail = (d / "serve.log").read_text(errors="replace").strip().splitlines()[-2:]
                raise QoslabError(f"the virtual switch ({self.topo.switch.model}) did not start: "
                                  f"{' / '.join(tail) or 'no output'}")
            time.sleep(0.05)

    def _stop_switch(self) -> list[int]:
        """End the virtual Catalyst this testbed started (PID from the state file; its command
        line is checked so a reused PID is never signalled)."""
        pid = self._switch_pid
        if pid is None:
            try:
                pid = json.loads(self.state_file.read_text()).get("switch_pid")
            except (OSError, ValueError):
                pid = None
        if pid is None or not self._switch_alive(pid):
            return []
        return kill_pids([pid])

    def _stop_slurm(self) -> list[int]:
        """End the Slurm cluster's daemons left (``munged`` is outside the namespaces), remove its folder."""
        return slurm.stop(self.topo)

    def _remove(self, namespaces: list[str]) -> list[int]:
        killed = self._stop_switch()
        if not namespaces:
            return killed
        pids = [pid for pids in namespace_pids(namespaces).values() for pid in pids]
        killed += kill_pids(pids)
        subprocess.run(["ip", "-force", "-batch", "-"], input="".join(f"netns del {ns}\n" for ns in namespaces),
                       capture_output=True, text=True)
        return killed

    def _write_state(self, status: str) -> None:
        state: dict[str, Any] = {
            "status": status, "topology": self.topo.source, "name": self.topo.name,
            "namespaces": self.plan.namespaces, "pid": os.getpid(), "time": time.time(),
            "switch_pid": self._switch_pid}
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        tmp.replace(self.state_file)

    # -- probes (see qoslab.testbed.probes) -----------------------------------------------------
    def status(self) -> probes.TestbedStatus:
        """Interfaces, qdiscs and counters of every host and switch port (reads the kernel)."""
        return probes.status(self)

    def port_bytes_sent(self, ports: list[str]) -> dict[str, int]:
        """Bytes sent so far by each switch port (see :func:`probes.port_bytes_sent`)."""
        return probes.port_bytes_sent(self, ports)

    def wait_ports_saturated(self, ports: list[str], timeout_s: float, share: float = 0.95,
                             window_s: float | None = None) -> bool:
        """See :func:`probes.wait_ports_saturated`."""
        return probes.wait_ports_saturated(self, ports, timeout_s, share, window_s)

    def wait_drained(self, ports: list[str], hosts: list[str], timeout_s: float = 2.0) -> bool:
        """See :func:`probes.wait_drained`."""
        return probes.wait_drained(self, ports, hosts, timeout_s)

    def ping_matrix(self, count: int = 1, timeout_s: float = 2.0) -> dict[tuple[str, str], float | None]:
        """See :func:`probes.ping_matrix`."""
        return probes.ping_matrix(self, count, timeout_s)

    def iperf_tcp(self, src: str, dst: str, seconds: float = 5.0, port: int = 5201) -> dict[str, float]:
        """See :func:`probes.iperf_tcp`."""
        return probes.iperf_tcp(self, src, dst, seconds, port)
