"""The virtual Catalyst 3750's state: running- and startup-config, and the tc plan and nftables
ruleset compiled from it and applied to the switch namespace of the embedded testbed (it owns the
switch ports' egress queues and table ``bridge qoslab``: marking, policing, queue selection)."""

from __future__ import annotations

import asyncio
import time

from ..ios import RunningConfig, load_config, qos_model
from ..ios.show_qos import PortCounters
from ..testbed.plan import BRIDGE, switch_namespace, vswitch_dir
from ..testbed.statedir import private_dir
from ..topology import Topology, canonical_port, linux_ifname
from .apply import apply_nft, apply_plan
from .counters import read_counters, read_nft, run_json
from .nftcompile import NftPlan, compile_nft
from .show_l2 import MacEntry, parse_fdb
from .show_mqc import ClassCounters
from .tccompile import TcPlan, compile_tc, port_queue_limits

#: Seconds between a WS-C3750G's power-on and its first CLI prompt (POST, image decompression,
#: config load: about three minutes). The virtual switch's uptime counts from a virtual power-on
#: this long before its SSH server listens, so ``show version`` reads as on hardware (a client
#: that reads minutes, as NAPALM ``get_facts`` does, never sees 0).
BOOT_SECONDS = 180


class VirtualCatalyst:
    """The switch: running- and startup-config, and the tc applied to the testbed's switch ports."""

    def __init__(self, topology: Topology, apply: bool = True) -> None:
        self.topo = topology
        self.dir = vswitch_dir(topology.name)
        self.apply_enabled = apply
        self.running = RunningConfig.factory(topology.switch.hostname, topology.switch.ports)
        startup = self.dir / "startup-config"
        if startup.exists():
            load_config(startup.read_text(), self.running)
        self.applied: TcPlan | None = None
        self.applied_nft: NftPlan | None = None
        self.lock = asyncio.Lock()
        self.booted = time.time() - BOOT_SECONDS

    # -- tc -------------------------------------------------------------------------------------
    def plan(self) -> TcPlan:
        """The tc plan of the current running-config (pure compile)."""
        return compile_tc(qos_model(self.running), self.topo)

    def nft_plan(self) -> NftPlan:
        """The nftables ruleset of the current running-config (pure compile)."""
        return compile_nft(qos_model(self.running), self.topo)

    def apply(self) -> bool:
        """Compile the running-config and apply what changed (tc plan, nftables ruleset) to the
        switch namespace. Returns True when anything was changed. Raises QoslabError naming the
        failing tc or nft line."""
        plan, nft = self.plan(), self.nft_plan()
        tc_changed = self.applied is None or plan.ports != self.applied.ports
        nft_changed = self.applied_nft is None or nft.text != self.applied_nft.text
        ns = switch_namespace(self.topo.name)
        if tc_changed:
            if self.apply_enabled:
                apply_plan(plan, ns, [linux_ifname(h.port) for h in self.topo.hosts])
            self.applied = plan
        if nft_changed:
            if self.apply_enabled:
                apply_nft(nft, ns)
            self.applied_nft = nft
        return tc_changed or nft_changed

    def save(self) -> None:
        """``write memory``: the running-config becomes the startup-config (atomic replace)."""
        private_dir(self.dir)
        tmp = self.dir / "startup-config.tmp"
        tmp.write_text(self.running.render())
        tmp.replace(self.dir / "startup-config")

    def factory(self) -> RunningConfig:
        """This switch at factory defaults (``configure replace`` starts from it)."""
        return RunningConfig.factory(self.topo.switch.hostname, self.topo.switch.ports)

    def counters(self, port_long: str) -> PortCounters:
        """Counters of ``show mls qos interface PORT statistics`` from the kernel
        (:mod:`.counters`: nftables DSCP sets and policer rules, tc queues; CoS derived); zeros on
        a switch that does not apply its config. Raises QoslabError when nft or tc fails."""
        return self.counters_of([port_long])[port_long]

    def counters_of(self, ports_long: list[str]) -> dict[str, PortCounters]:
        """:meth:`counters` of several ports (``{long name as given: PortCounters}``) from one
        reading of the kernel (one ``nft`` and one ``tc`` run for all of them: ``show mls qos
        interface statistics`` of every port costs as much as one port's)."""
        if not self.apply_enabled:
            return {p: PortCounters() for p in ports_long}
        short = {p: canonical_port(p) for p in ports_long}
        qos = qos_model(self.running)
        thresholds = {s: [x.threshold for x in port_queue_limits(qos, self.topo, s)]
                      for s in short.values()} if qos.enabled else None
        got = read_counters(switch_namespace(self.topo.name), sorted(set(short.values())), qos.dscp_cos, thresholds)
        return {p: got[s] for p, s in short.items()}

    def fdb(self) -> list[MacEntry]:
        """The MAC addresses the testbed's bridge learned on the switch ports (``show mac
        address-table``); none on a switch that does not apply (no bridge to ask). Raises
        QoslabError when ``bridge`` fails."""
        if not self.apply_enabled:
            return []
        ports = {linux_ifname(p): canonical_port(p) for p in self.topo.switch.ports}
        return parse_fdb(run_json(["bridge", "-n", switch_namespace(self.topo.name), "-j", "fdb", "show", "br",
                                   BRIDGE]), ports)

    def class_counters(self) -> dict[tuple[str, str], ClassCounters]:
        """Per (long port, class) counters of the input policies (``show policy-map interface``),
        from the nftables class and policer rules; empty on a switch that does not apply."""
        if not self.apply_enabled:
            return {}
        return read_nft(switch_namespace(self.topo.name)).classes
