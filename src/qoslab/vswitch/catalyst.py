"""The virtual Catalyst 3750's state: running- and startup-config, and the tc plan compiled
from it and applied to the switch ports of the embedded testbed (it owns their egress queues)."""

from __future__ import annotations

import asyncio
import time

from ..ios import RunningConfig, load_config, qos_model
from ..ios.show_qos import PortCounters
from ..netplan import switch_namespace, vswitch_dir
from ..tccompile import TcPlan, compile_tc
from ..topology import Topology, canonical_port, linux_ifname
from .tcapply import apply_plan, queue_counters


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
        self.lock = asyncio.Lock()
        self.booted = time.time()

    # -- tc -------------------------------------------------------------------------------------
    def plan(self) -> TcPlan:
        """The tc plan of the current running-config (pure compile)."""
        return compile_tc(qos_model(self.running), self.topo)

    def apply(self) -> bool:
        """Compile the running-config and apply it to the switch namespace if the plan changed.
        Returns True when tc was changed. Raises QoslabError naming the failing tc line."""
        plan = self.plan()
        if self.applied is not None and plan.ports == self.applied.ports:
            return False
        if self.apply_enabled:
            apply_plan(plan, switch_namespace(self.topo.name), [linux_ifname(h.port) for h in self.topo.hosts])
        self.applied = plan
        return True

    def save(self) -> None:
        """``write memory``: the running-config becomes the startup-config (atomic replace)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / "startup-config.tmp"
        tmp.write_text(self.running.render())
        tmp.replace(self.dir / "startup-config")

    def factory(self) -> RunningConfig:
        """This switch at factory defaults (``configure replace`` starts from it)."""
        return RunningConfig.factory(self.topo.switch.hostname, self.topo.switch.ports)

    def counters(self, port_long: str) -> PortCounters:
        """Counters of ``show mls qos interface PORT statistics``: tc's packets sent and dropped
        per egress queue, under threshold 1 (WTD is not emulated); zeros for what nothing
        measures yet (DSCP/CoS tables, policers) and on a switch that does not apply tc."""
        c = PortCounters()
        if self.apply_enabled:
            enq, drop = queue_counters(switch_namespace(self.topo.name), linux_ifname(canonical_port(port_long)))
            for q in range(4):
                c.enqueued[q][0], c.dropped[q][0] = enq[q], drop[q]
        return c
