"""The Catalyst 3750's show dispatch: from the switch's state (running-config, topology, kernel
counters) to the 3750 renderers (:mod:`qoslab.ios.show_qos` for ``show mls qos ...``,
:mod:`.show_mqc`, :mod:`.show_sys`), one function per command family; what IOS and IOS-XE print
alike goes to :func:`qoslab.vswitch.dialects.ioscommon.show.show_common`.

"""

from __future__ import annotations

from typing import Any

from ....ios import qos_model
from ....ios.show_qos import (
    PortQos,
    QosMaps,
    dscp_input_q_from_config,
    dscp_output_q_from_config,
    input_queues_from_config,
    queue_sets_from_config,
    render_buffers,
    render_input_queue,
    render_port_qos,
    render_qos_map,
    render_qos_maps,
    render_queue_set,
    render_queueing,
    render_statistics,
)
from ....portnames import canonical_port
from ...execparse import ExecCommand
from ..base import ShowContext
from ..ioscommon.show import port_arg, port_views, ports, show_common, svi_views
from .counters import port_counters
from .show_mqc import render_class_map, render_policy_map, render_policy_map_interface, views_from_config
from .show_sys import render_boot, render_env, render_interfaces, render_inventory, render_version


def port_qos(sw: Any, port: str) -> PortQos:
    """The QoS settings of one port (long name) from the running-config."""
    q = qos_model(sw.running).interfaces[canonical_port(port)]
    return PortQos(port, q.trust, q.service_policy_in, q.share, q.shape, q.priority_queue_out, q.queue_set)


def qos_maps(sw: Any) -> QosMaps:
    """The switch's QoS maps: configured ones from the running-config, 3750 defaults elsewhere."""
    q = qos_model(sw.running)
    g = sw.running.globals_
    return QosMaps(cos_dscp=list(q.cos_dscp), dscp_cos=[q.dscp_cos[d] for d in range(64)],
                   dscp_input_q=dscp_input_q_from_config(g), dscp_output_q=dscp_output_q_from_config(g))


def mls_family(sw: Any, cmd: ExecCommand) -> str | None:
    """``show mls qos ...``: global state, queue-sets, maps, input queues, per-port settings,
    queueing, buffers and statistics (counters from the kernel, :mod:`.counters`)."""
    n = cmd.name
    g = sw.running.globals_
    if n == "show mls qos":
        on = "enabled" if "mls qos" in g else "disabled"
        return f"QoS is {on}\nQoS ip packet dscp rewrite is enabled\n\n"
    if n in ("show mls qos queue-set", "show mls qos queue-set n"):
        return render_queue_set(queue_sets_from_config(g), cmd.args.get("n"))
    if n == "show mls qos maps":
        return render_qos_maps(qos_maps(sw))
    if n.startswith("show mls qos maps "):
        return render_qos_map(qos_maps(sw), n.rsplit(" ", 1)[1])
    if n == "show mls qos input-queue":
        return render_input_queue(input_queues_from_config(g))
    if not n.startswith("show mls qos interface"):
        return None
    port = port_arg(sw, cmd)
    pl = [port] if port else ports(sw)
    if n.endswith("statistics"):
        counts = port_counters(sw, pl)  # one kernel reading for all ports
        return "".join(render_statistics(p, counts[p]) for p in pl)
    if n.endswith("queueing"):
        return "".join(render_queueing(port_qos(sw, p)) for p in pl)
    if n.endswith("buffers"):
        sets = queue_sets_from_config(g)
        return "".join(render_buffers(port_qos(sw, p), sets) for p in pl)
    return "".join(render_port_qos(port_qos(sw, p)) for p in pl)


def mqc_family(sw: Any, cmd: ExecCommand) -> str | None:
    """``show class-map [NAME]``, ``show policy-map [NAME]``, ``show policy-map interface
    [PORT]`` (class and policer counters from the nftables rules)."""
    n, word = cmd.name, cmd.args.get("word")
    cms, pms = views_from_config(sw.running.class_maps, sw.running.policy_maps)
    if n.startswith("show class-map"):
        out = render_class_map(cms, word)
        return out if out is not None else f"Class-map {word} does not exist\n"
    if n.startswith("show policy-map interface"):
        port = port_arg(sw, cmd)
        q = qos_model(sw.running).interfaces
        pols = [(p, pol) for p in ([port] if port else ports(sw))
                if (pol := q[canonical_port(p)].service_policy_in) is not None
                and not n.endswith(" output")]  # a 3750 port has input policies only
        counters = sw.nft_counters().classes if hasattr(sw, "nft_counters") else {}
        return render_policy_map_interface(pols, cms, pms, counters)
    if n.startswith("show policy-map"):
        out = render_policy_map(pms, word)
        return out if out is not None else f"Policy Map {word} does not exist\n"
    return None


def system_family(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str | None:
    """``show version``, ``show inventory``, ``show interfaces [PORT]`` (``Vlan1`` first),
    ``show environment ...``."""
    n = cmd.name
    if n == "show version":
        return render_version(ctx.facts)
    if n == "show inventory":
        return render_inventory(ctx.facts)
    if n == "show interfaces":
        views = port_views(sw)
        return render_interfaces(views, svi_views(sw, ctx.facts.base_mac, views))
    if n == "show interfaces port":
        return render_interfaces(port_views(sw, port_arg(sw, cmd)))
    if n == "show boot":
        return render_boot(ctx.facts)
    if n == "show mls qos aggregate-policer":
        return ""
    if n.startswith("show environment"):
        what = n.rsplit(" ", 1)[1]
        return render_env("temperature" if what == "status" else what)
    return None


def show_3750(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str:
    """Output of a parsed show command (before output modifiers). Raises IosError (with the
    column of the bad argument) for a port the switch does not have."""
    for family in (lambda: mls_family(sw, cmd), lambda: mqc_family(sw, cmd), lambda: system_family(sw, cmd, ctx)):
        out = family()
        if out is not None:
            return out
    return show_common(sw, cmd, ctx)

