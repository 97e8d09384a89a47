"""The Catalyst 9300's show dispatch (IOS-XE 17.x): its own system displays (:mod:`.show_sys`),
MQC displays (:mod:`.show_mqc`) and the UADP queue counters (:mod:`.show_fed`), from the
switch's state and kernel readings; what IOS and IOS-XE print alike goes to
:func:`qoslab.vswitch.dialects.ioscommon.show.show_common`.
"""

from __future__ import annotations

from typing import Any

from ....ios import qos_model
from ....ios.mqc import egress_classes
from ....portnames import canonical_port, linux_ifname
from ...counters import NftCounters
from ...execparse import ExecCommand
from ...facts import ClassCounters
from ..base import ShowContext
from ..ioscommon.show import port_arg, port_views, ports, show_common, svi_views
from ..ioscommon.show_ops import sort_cpu
from .counters import QueueStat, fed_queues, queue_stats
from .show_fed import render_fed_queue_stats
from .show_mqc import (
    CLASS_DEFAULT,
    InputClass,
    XeClassMap,
    render_class_map_xe,
    render_input_xe,
    render_output_xe,
    render_policy_map_xe,
)
from .show_plat import (
    render_boot_xe,
    render_environment_fan_xe,
    render_file_systems_xe,
    render_license_summary_xe,
    render_memory_statistics_xe,
    render_module_xe,
    render_platform_xe,
    render_redundancy_xe,
    render_switch_xe,
)
from .show_sys import (
    render_environment_xe,
    render_interfaces_xe,
    render_inventory_xe,
    render_processes_cpu_xe,
    render_version_xe,
)

#: The global line that makes the fed queue stats count frames instead of bytes.
FRAME_COUNT = "qos queue-stats-frame-count"


def class_maps(sw: Any) -> list[XeClassMap]:
    """The running-config's class-maps, in entry order."""
    out = []
    for name, s in sw.running.class_maps.items():
        w = s.header.split()
        out.append(XeClassMap(name, w[1] if len(w) > 2 else "match-all", list(s.children)))
    return out


def _input_classes(sw: Any, policy: str, port: str, nft: NftCounters) -> list[InputClass]:
    """The classes of input ``policy`` on ``port`` (long name) with their counters, then
    ``class-default`` with the port's other IPv4 packets (all it received less the classified)."""
    q = qos_model(sw.running)
    cms = {cm.name: cm for cm in class_maps(sw)}
    out = []
    for pc in q.policy_maps.get(policy, []):
        cm = CLASS_DEFAULT if pc.class_name == "class-default" else cms.get(pc.class_name, XeClassMap(pc.class_name))
        out.append(InputClass(cm, pc.set_dscp, (pc.police.rate_bps, pc.police.burst_bytes) if pc.police else None,
                              nft.classes.get((port, pc.class_name), ClassCounters())))
    if not any(c.cm.name == "class-default" for c in out):
        out.append(InputClass(CLASS_DEFAULT))
    default = next(c for c in out if c.cm.name == "class-default")
    received = sum(nft.dscp_in.get(linux_ifname(canonical_port(port)), []))
    default.counts = ClassCounters(packets=max(0, received - sum(c.counts.packets for c in out if c is not default)))
    return out


def policy_map_interface(sw: Any, cmd: ExecCommand) -> str:
    """``show policy-map interface [PORT]`` of the IOS-XE dialect (:mod:`.show_mqc`)."""
    port = port_arg(sw, cmd)
    pl = [port] if port else ports(sw)
    rc, q = sw.running, qos_model(sw.running)
    nft = sw.nft_counters() if hasattr(sw, "nft_counters") else NftCounters()
    stats = queue_stats(sw, [canonical_port(p) for p in pl])
    cms = {cm.name: cm for cm in class_maps(sw)}
    out: list[str] = []
    for p in pl:
        sec = rc.interfaces[canonical_port(p)]
        pols = {c.split()[1]: c.split()[2] for c in sec.children if c.startswith("service-policy ")}
        if not pols:
            continue
        if cmd.name.endswith((" input", " output")):  # ``show policy-map interface PORT input|output``
            pols = {d: pm for d, pm in pols.items() if cmd.name.endswith(" " + d)}
            if not pols:
                continue
        out += [f" {p} ", ""]
        if (pin := pols.get("input")) in q.policy_maps:
            out += render_input_xe(pin, _input_classes(sw, pin, p, nft))
        if (pout := pols.get("output")) is not None:
            classes, _ = egress_classes(rc, pout)
            qs = stats.get(canonical_port(p)) or [QueueStat() for _ in range(4)]
            out += render_output_xe(pout, [(c, cms[c.name].matches if c.name in cms else [], qs[c.queue - 1])
                                           for c in classes])
    return "\n".join(out) + "\n"


def mqc_family(sw: Any, cmd: ExecCommand) -> str | None:
    """``show class-map [NAME]``, ``show policy-map [NAME]``, ``show policy-map interface [PORT]``."""
    n, word = cmd.name, cmd.args.get("word")
    if n.startswith("show class-map"):
        out = render_class_map_xe(class_maps(sw), word)
        return out if out is not None else f"Class-map {word} does not exist\n"
    if n.startswith("show policy-map interface"):
        return policy_map_interface(sw, cmd)
    if n.startswith("show policy-map"):
        pms = [(name, [(sub.header.split()[1], list(sub.children)) for sub in s.subsections])
               for name, s in sw.running.policy_maps.items()]
        out = render_policy_map_xe(pms, word)
        return out if out is not None else f"Policy Map {word} does not exist\n"
    return None


def system_family(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str | None:
    """``show version``, ``show inventory``, ``show environment ...``, ``show interfaces [PORT]``
    (``Vlan1`` first), ``show processes cpu``, the fed queue stats."""
    n = cmd.name
    if n == "show version":
        return render_version_xe(ctx.facts)
    if n == "show inventory":
        return render_inventory_xe(ctx.facts)
    plat = _platform(sw, n, ctx)
    if plat is not None:
        return plat
    if n.startswith("show environment"):
        return _environment(render_environment_xe(ctx.facts), n.rsplit(" ", 1)[1])
    if n == "show interfaces":
        views = port_views(sw)
        return render_interfaces_xe(views, svi_views(sw, ctx.facts.base_mac, views))
    if n == "show interfaces port":
        return render_interfaces_xe(port_views(sw, port_arg(sw, cmd)), [])
    if n in ("show processes cpu", "show processes cpu sorted"):
        percent = min(100, round(100 * ctx.usage["cpu_s"] / max(ctx.facts.uptime_s - ctx.boot_seconds, 1.0)))
        out = render_processes_cpu_xe(percent, int(ctx.usage["cpu_s"] * 1000))
        return sort_cpu(out) if n.endswith("sorted") else out
    if n.startswith("show platform hardware fed"):
        port = str(port_arg(sw, cmd))
        short = canonical_port(port)
        index = [canonical_port(p) for p in sw.topo.switch.ports].index(short)
        return render_fed_queue_stats(index, fed_queues(sw, short), FRAME_COUNT in sw.running.globals_)
    return None


def _platform(sw: Any, n: str, ctx: ShowContext) -> str | None:
    """The 9300's own memory, file systems and platform displays (:mod:`.show_plat`)."""
    f = ctx.facts
    table: dict[str, Any] = {
        "show memory statistics": lambda: render_memory_statistics_xe(f, int(ctx.usage["rss"])),
        "show file systems": lambda: render_file_systems_xe(ctx.flash.used()),
        "show environment fan": render_environment_fan_xe, "show platform": lambda: render_platform_xe(f),
        "show module": lambda: render_module_xe(f), "show switch": lambda: render_switch_xe(f, False),
        "show switch detail": lambda: render_switch_xe(f, True), "show boot": render_boot_xe,
        "show license summary": lambda: render_license_summary_xe(f),
        "show redundancy": lambda: render_redundancy_xe(f, "0x102"),
    }
    return table[n]() if n in table else None


def _environment(text: str, what: str) -> str:
    """``show environment all|fan|temperature``: the whole display, or its fan or temperature part."""
    if what == "all":
        return text
    lines = text.splitlines()
    if what == "fan":
        return "\n".join(line for line in lines[:7]) + "\n"
    start = next(i for i, line in enumerate(lines) if "SYSTEM TEMPERATURE" in line)
    end = next(i for i, line in enumerate(lines) if line.startswith("SW  PID"))
    return "\n".join(lines[start:end]) + "\n"


def show_9300(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str:
    """Output of a parsed show command (before output modifiers). Raises IosError (with the
    column of the bad argument) for a port the switch does not have."""
    out = system_family(sw, cmd, ctx)
    if out is None:
        out = mqc_family(sw, cmd)
    return out if out is not None else show_common(sw, cmd, ctx)
