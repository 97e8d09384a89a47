"""The virtual switch's state, dialect-neutral: running- and startup-config, the tc plan and
nftables ruleset compiled from it and applied to the switch namespace of the embedded testbed (it
owns the switch ports' egress queues and table ``bridge qoslab``: marking, policing, queue
selection), and the kernel's readings of them (:mod:`.counters`). What the switch prints is its
dialect's (:mod:`qoslab.vswitch.dialects`, chosen by the topology's switch model)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..portnames import canonical_port, linux_ifname
from ..testbed.statedir import private_dir
from ..testbedplan import BRIDGE, switch_namespace, vswitch_dir
from ..topology import Topology
from .apply import apply_nft, apply_plan, apply_svi
from .counters import NftCounters, parse_fdb, read_links, read_nft, read_qdiscs, run_json
from .dialects import Dialect, dialect_for_model, get_dialect
from .facts import MacEntry
from .ingresscompile import FAMILY, compile_ingress
from .nftcompile import NftPlan
from .tccompile import TcPlan


class VirtualSwitch:
    """The switch: running- and startup-config, the tc applied to the testbed's switch ports, and
    its ``dialect`` (a :class:`qoslab.vswitch.dialects.Dialect`: the topology's switch model's,
    or the one named). The uptime counts from a virtual power-on the dialect's ``boot_seconds``
    before the SSH server listens, so ``show version`` reads as on hardware (a client that reads
    minutes, as NAPALM ``get_facts`` does, never sees 0)."""

    def __init__(self, topology: Topology, apply: bool = True, dialect: str | None = None) -> None:
        self.topo = topology
        self.dir = vswitch_dir(topology.name)
        self.apply_enabled = apply
        self.dialect: Dialect = get_dialect(dialect) if dialect else dialect_for_model(topology.switch.model)
        self.running = self.factory()
        startup = self.dir / "startup-config"
        if startup.exists():
            self.dialect.load(startup.read_text(), self.running)
        self.applied: TcPlan | None = None
        self.applied_nft: NftPlan | None = None
        self.applied_svi: object = "none applied yet"
        self.lock = asyncio.Lock()
        self.booted = time.time() - self.dialect.boot_seconds

    # -- tc -------------------------------------------------------------------------------------
    def plan(self) -> TcPlan:
        """The tc plan of the current running-config (pure compile)."""
        return self.dialect.tc_plan(self.running, self.topo)

    def nft_plan(self) -> NftPlan:
        """The nftables ruleset of the current running-config (pure compile): the dialect's
        ``bridge qoslab`` table, plus the ``netdev qoslab`` table of the topology's
        ``switch.datapath: ingress`` (:mod:`.ingresscompile`)."""
        plan = self.dialect.nft_plan(self.running, self.topo)
        return compile_ingress(plan, self.topo) if self.topo.switch.datapath == "ingress" else plan

    def apply(self) -> bool:
        """Compile the running-config and apply what changed (tc plan, nftables ruleset, the SVI's
        address) to the switch namespace. Returns True when anything was changed. Raises
        QoslabError naming the failing tc or nft line, or an SVI address it does not apply."""
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
        svi = self.dialect.svi(self.running)
        svi_changed = svi != self.applied_svi
        if svi_changed:
            self.applied_svi = svi  # an address refused below is not tried again until it changes
            if self.apply_enabled:
                apply_svi(ns, BRIDGE, svi)
        return tc_changed or nft_changed or svi_changed

    def save(self) -> None:
        """``write memory``: the running-config becomes the startup-config (atomic replace)."""
        private_dir(self.dir)
        tmp = self.dir / "startup-config.tmp"
        tmp.write_text(self.running.render())
        tmp.replace(self.dir / "startup-config")

    def factory(self) -> Any:
        """This switch at factory defaults (``configure replace`` starts from it)."""
        return self.dialect.factory(self.topo.switch.hostname, self.topo.switch.ports)

    def nft_counters(self) -> NftCounters:
        """The parsed counters of table ``bridge qoslab`` (DSCP histograms, policers, policy
        classes: :mod:`.counters`); empty on a switch that does not apply. Raises QoslabError when
        nft fails."""
        if not self.apply_enabled:
            return NftCounters()
        ns = switch_namespace(self.topo.name)
        return read_nft(ns, ("bridge", FAMILY) if self.topo.switch.datapath == "ingress" else ("bridge",))

    def qdiscs(self) -> dict[str, list[dict[str, Any]]]:
        """Every switch port's qdiscs with their statistics, by Linux interface (one ``tc -s -j
        qdisc show``); empty on a switch that does not apply. Raises QoslabError when tc fails."""
        if not self.apply_enabled:
            return {}
        return read_qdiscs(switch_namespace(self.topo.name))

    def links(self) -> dict[str, dict[str, Any]]:
        """Every switch port's link statistics (``stats64``: ``rx``/``tx`` packets, bytes,
        dropped), by Linux interface (one ``ip -s -j link show``); empty on a switch that does not
        apply. Raises QoslabError when ip fails."""
        if not self.apply_enabled:
            return {}
        return read_links(switch_namespace(self.topo.name))

    def fdb(self) -> list[MacEntry]:
        """The MAC addresses the testbed's bridge learned on the switch ports (``show mac
        address-table``); none on a switch that does not apply (no bridge to ask). Raises
        QoslabError when ``bridge`` fails."""
        if not self.apply_enabled:
            return []
        ports = {linux_ifname(p): canonical_port(p) for p in self.topo.switch.ports}
        return parse_fdb(run_json(["bridge", "-n", switch_namespace(self.topo.name), "-j", "fdb", "show", "br",
                                   BRIDGE]), ports)
