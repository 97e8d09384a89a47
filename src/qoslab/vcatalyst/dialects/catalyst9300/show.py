"""The Catalyst 9300's show dispatch (IOS-XE 17.x): ``show version`` and ``show policy-map
interface`` in their IOS-XE form (:mod:`.show_xe`, counters from :mod:`.counters` and the
nftables class rules); the commands it has no IOS-XE form of yet are shown as the 3750 shows them
(:func:`qoslab.vcatalyst.dialects.catalyst3750.show.mqc_family` and ``system_family``); what IOS
and IOS-XE print alike goes to :func:`qoslab.vcatalyst.dialects.ioscommon.show.show_common`.
"""

from __future__ import annotations

from typing import Any

from ....ios import qos_model
from ....ios.mqc import egress_classes
from ....ios.xe import dscp_name
from ....topology import canonical_port
from ...execparse import ExecCommand
from ...facts import ClassCounters
from ..base import ShowContext
from ..catalyst3750.show import mqc_family, system_family
from ..ioscommon.show import port_arg, ports, show_common
from .counters import QueueStat, queue_stats
from .show_xe import render_input_xe, render_output_xe, render_version_xe


def policy_map_interface(sw: Any, cmd: ExecCommand) -> str:
    """``show policy-map interface [PORT]`` of the IOS-XE dialect (:mod:`.show_xe`)."""
    port = port_arg(sw, cmd)
    pl = [port] if port else ports(sw)
    rc, q = sw.running, qos_model(sw.running)
    cls_counts = sw.nft_counters().classes if hasattr(sw, "nft_counters") else {}
    stats = queue_stats(sw, [canonical_port(p) for p in pl])
    out: list[str] = []
    for p in pl:
        sec = rc.interfaces[canonical_port(p)]
        pols = {c.split()[1]: c.split()[2] for c in sec.children if c.startswith("service-policy ")}
        if not pols:
            continue
        out += [f" {p}", ""]
        if (pin := pols.get("input")) in q.policy_maps:
            rows = []
            for pc in q.policy_maps[pin]:
                cm = q.class_maps.get(pc.class_name)
                acts = (["QoS Set", f"  dscp {dscp_name(pc.set_dscp)}"] if pc.set_dscp is not None else [])
                acts += [f"police: cir {pc.police.rate_bps} bps, bc {pc.police.burst_bytes} bytes"] if pc.police else []
                rows.append((pc.class_name, "match-all" if cm is None or cm.match_all else "match-any",
                             cm.dscps if cm else [], cm.acls if cm else [],
                             cls_counts.get((p, pc.class_name), ClassCounters()).packets, acts))
            out += render_input_xe(pin, rows)
        if (pout := pols.get("output")) is not None:
            classes, _ = egress_classes(rc, pout)
            qs = stats.get(canonical_port(p)) or [QueueStat() for _ in range(4)]
            out += render_output_xe(pout, [(c, (cm.dscps if (cm := q.class_maps.get(c.name)) else []),
                                            qs[c.queue - 1]) for c in classes])
    return "\n".join(out) + "\n"


def show_9300(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str:
    """Output of a parsed show command (before output modifiers). Raises IosError (with the
    column of the bad argument) for a port the switch does not have."""
    if cmd.name == "show version":
        return render_version_xe(ctx.facts)
    if cmd.name.startswith("show policy-map interface"):
        return policy_map_interface(sw, cmd)
    for family in (lambda: mqc_family(sw, cmd), lambda: system_family(sw, cmd, ctx)):
        out = family()
        if out is not None:
            return out
    return show_common(sw, cmd, ctx)
