"""The virtual switch's show dispatch: from its state (running-config, topology, counters) to the
data the pure renderers take (:mod:`qoslab.ios.show_qos`, :mod:`qoslab.vcatalyst.show_mqc`,
:mod:`qoslab.vcatalyst.show_sys`), one function per command family.

``sw`` provides ``running`` (RunningConfig), ``topo`` (Topology), ``dir`` (state folder) and
``counters(long_port) -> PortCounters``; optional ``link_counters(long_port) -> dict`` (packets
and bytes in/out, output drops) and ``class_counters() -> {(long port, class): ClassCounters}``.
"""

from __future__ import annotations

import time

from ..ios import IosError, qos_model
from ..ios.config import interface_order
from ..ios.mqc import egress_classes
from ..ios.show_qos import (
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
from ..ios.xe import dscp_name
from ..topology import canonical_port, long_port
from .core import BOOT_SECONDS
from .execparse import ExecCommand
from .flash import Flash
from .show_l2 import render_arp, render_cdp, render_env, render_lldp, render_mac_table
from .show_mqc import (
    ClassCounters,
    render_access_lists,
    render_class_map,
    render_policy_map,
    render_policy_map_interface,
    views_from_config,
)
from .show_ports import (
    render_counters,
    render_ip_route,
    render_processes_cpu,
    render_snmp,
    render_switchport,
    render_vlan_id,
)
from .show_sys import (
    DeviceFacts,
    MonitorSession,
    PortView,
    render_hosts,
    render_interfaces,
    render_interfaces_status,
    render_inventory,
    render_ip_interface,
    render_ip_interface_brief,
    render_memory_statistics,
    render_monitor,
    render_version,
    render_vlan_brief,
)
from .show_xe import QueueStat, render_input_xe, render_output_xe, render_version_xe


def _ports(sw) -> list[str]:
    return [long_port(p) for p in sw.topo.switch.ports]


def _port_arg(sw, cmd: ExecCommand) -> str | None:
    """The ``port`` argument, checked against the switch's ports (IosError with its column)."""
    p = cmd.args.get("port")
    if p is None:
        return None
    if p not in _ports(sw):
        raise IosError("", cmd.columns.get("port", 0))
    return p


def port_views(sw, only: str | None = None) -> list[PortView]:
    """PortView of every front port: link up where a testbed host is attached, description and
    shutdown from the running-config, counters when measured. The speed is the 3750's (1000 Mbit/s
    negotiated on a 10/100/1000 port), not the testbed's scale-model link rate, which ``show
    version`` states (:func:`qoslab.vcatalyst.session.device_facts`)."""
    hosts = {long_port(h.port): h for h in sw.topo.hosts}
    link = getattr(sw, "link_counters", None)
    out = []
    for i, p in enumerate(_ports(sw), 1):
        if only is not None and p != only:
            continue
        sec = sw.running.interfaces.get(canonical_port(p))
        children = sec.children if sec else []
        desc = next((c.split(None, 1)[1] for c in children if c.startswith("description ")), "")
        v = PortView(p, desc, admin_up="shutdown" not in children, link_up=p in hosts, speed_mbps=1000,
                     mac=f"0200.5100.{i:04x}")
        if link is not None and v.link_up:
            for k, val in link(p).items():
                setattr(v, k, val)
        out.append(v)
    return out


def port_qos(sw, port: str) -> PortQos:
    """The QoS settings of one port (long name) from the running-config."""
    q = qos_model(sw.running).interfaces[canonical_port(port)]
    return PortQos(port, q.trust, q.service_policy_in, q.share, q.shape, q.priority_queue_out, q.queue_set)


def qos_maps(sw) -> QosMaps:
    """The switch's QoS maps: configured ones from the running-config, 3750 defaults elsewhere."""
    q = qos_model(sw.running)
    g = sw.running.globals_
    return QosMaps(cos_dscp=list(q.cos_dscp), dscp_cos=[q.dscp_cos[d] for d in range(64)],
                   dscp_input_q=dscp_input_q_from_config(g), dscp_output_q=dscp_output_q_from_config(g))


def monitor_sessions(sw) -> list[MonitorSession]:
    """The local SPAN sessions of the running-config's ``monitor session`` lines, by number."""
    out: dict[int, MonitorSession] = {}
    for line in sw.running.monitor:
        w = line.split()
        s = out.setdefault(int(w[2]), MonitorSession(int(w[2])))
        port = canonical_port(w[5])
        if w[3] == "source":
            {"both": s.both, "rx": s.rx, "tx": s.tx}[w[6] if len(w) > 6 else "both"].append(port)
        else:
            s.destinations.append(port)
            if len(w) > 7 and w[6] == "encapsulation":
                s.encapsulation = w[7]
    for s in out.values():
        for ports in (s.both, s.rx, s.tx, s.destinations):
            ports.sort(key=interface_order)
    return [out[n] for n in sorted(out)]


def _mls(sw, cmd: ExecCommand) -> str | None:
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
    port = _port_arg(sw, cmd)
    ports = [port] if port else _ports(sw)
    if n.endswith("statistics"):
        many = getattr(sw, "counters_of", None)  # one kernel reading for all ports
        counts = many(ports) if many is not None else {p: sw.counters(p) for p in ports}
        return "".join(render_statistics(p, counts[p]) for p in ports)
    if n.endswith("queueing"):
        return "".join(render_queueing(port_qos(sw, p)) for p in ports)
    if n.endswith("buffers"):
        sets = queue_sets_from_config(g)
        return "".join(render_buffers(port_qos(sw, p), sets) for p in ports)
    return "".join(render_port_qos(port_qos(sw, p)) for p in ports)


def _mqc(sw, cmd: ExecCommand) -> str | None:
    n, word = cmd.name, cmd.args.get("word")
    cms, pms = views_from_config(sw.running.class_maps, sw.running.policy_maps)
    if n.startswith("show class-map"):
        out = render_class_map(cms, word)
        return out if out is not None else f"Class-map {word} does not exist\n"
    if n.startswith("show policy-map interface"):
        port = _port_arg(sw, cmd)
        q = qos_model(sw.running).interfaces
        ports = [(p, pol) for p in ([port] if port else _ports(sw))
                 if (pol := q[canonical_port(p)].service_policy_in) is not None]
        counters = sw.class_counters() if hasattr(sw, "class_counters") else {}
        return render_policy_map_interface(ports, cms, pms, counters)
    if n.startswith("show policy-map"):
        out = render_policy_map(pms, word)
        return out if out is not None else f"Policy Map {word} does not exist\n"
    if n.startswith(("show ip access-lists", "show access-lists")):
        acls = {k: (v.show_header(), v.show_entries()) for k, v in sw.running.acls.items()}
        out = render_access_lists(acls, word)
        return out if out is not None else ""
    return None


def _system(sw, cmd: ExecCommand, facts: DeviceFacts, flash: Flash, usage: dict) -> str | None:
    n = cmd.name
    simple = {
        "show version": lambda: render_version(facts),
        "show inventory": lambda: render_inventory(facts),
        "show hosts": render_hosts,
        "show running-config": lambda: sw.running.render(),
        "show running-config all": lambda: sw.running.render(),
        "show interfaces": lambda: render_interfaces(port_views(sw)),
        "show interfaces status": lambda: render_interfaces_status(port_views(sw)),
        "show ip interface brief": lambda: render_ip_interface_brief(port_views(sw)),
        "show ip interface": lambda: render_ip_interface(port_views(sw)),
        "show ipv6 interface": lambda: "",
        "show vlan": lambda: render_vlan_brief(port_views(sw)),
        "show interfaces switchport": lambda: render_switchport(port_views(sw)),
        "show interfaces counters": lambda: render_counters(port_views(sw)),
        "show vlan brief": lambda: render_vlan_brief(port_views(sw)),
        "show archive": lambda: "Archive feature not enabled\n",
        "show archive config rollback timer": lambda: "No Rollback Confirmed Change pending\n",
        "show memory statistics": lambda: render_memory_statistics(134217728, min(usage["rss"], 134217728)),
        "show clock": lambda: time.strftime("*%H:%M:%S.000 UTC %a %b %d %Y\n", time.gmtime()),
        "show file systems": lambda: ("File Systems:\n\n     Size(b)     Free(b)      Type  Flags  Prefixes\n"
                                      f"*   32514048    {32514048 - sum(e.size for e in flash.entries())}"
                                      "     flash     rw   flash:\n"),
    }
    if n in simple:
        return simple[n]()
    if n == "show startup-config":
        p = sw.dir / "startup-config"
        return render_startup(p.read_text()) if p.exists() else "startup-config is not present\n"
    if n == "show running-config partition access-list":
        return sw.running.render_partition_acl()
    if n.startswith("show monitor"):
        sessions = monitor_sessions(sw)
        if n == "show monitor session n":
            sessions = [s for s in sessions if s.number == cmd.args["n"]]
        return render_monitor(sessions)
    if n == "show running-config interface port":
        p = cmd.args["port"]
        out = sw.running.render_interface(p if p.startswith(("Vlan", "Port-channel")) else canonical_port(p))
        if out is None:
            raise IosError("", cmd.columns.get("port", 0))
        return out
    port = _port_arg(sw, cmd)
    if n == "show interfaces port":
        return render_interfaces(port_views(sw, port))
    if n == "show interfaces port status":
        return render_interfaces_status(port_views(sw, port))
    if n == "show ip interface port":
        return render_ip_interface(port_views(sw, port))
    if n == "show interfaces port switchport":
        return render_switchport(port_views(sw, port))
    return None


def _l2(sw, cmd: ExecCommand, facts: DeviceFacts, usage: dict) -> str | None:
    """The layer-2 and system state: MAC table (the bridge's learned addresses, :meth:`fdb`),
    ARP, CDP/LLDP, environment, SNMP, VLAN by id, IP route, CPU (:mod:`.show_l2`, :mod:`.show_ports`)."""
    n, kept = cmd.name, sw.running.kept
    if n.startswith("show mac address-table"):
        port = _port_arg(sw, cmd)
        fdb = [e for e in (sw.fdb() if hasattr(sw, "fdb") else [])
               if port is None or long_port(e.port) == port]
        return render_mac_table(fdb, with_cpu=n == "show mac address-table")
    if n in ("show arp", "show ip arp"):
        return render_arp([])  # no SVI has an address: the switch has no ARP entries
    what = {"show cdp": "global", "show lldp": "global", "show cdp neighbors": "brief",
            "show lldp neighbors": "brief"}.get(n, "detail")
    if n.startswith("show cdp"):
        return render_cdp("no cdp run" not in kept, what)
    if n.startswith("show lldp"):
        return render_lldp("lldp run" in kept, what)
    if n.startswith("show environment"):
        return render_env(n.rsplit(" ", 1)[1])
    if n.startswith("show snmp"):
        return render_snmp(kept, facts.serial, {"show snmp": "all"}.get(n, n.rsplit(" ", 1)[1]))
    if n == "show vlan id n":
        return render_vlan_id(cmd.args["n"], port_views(sw))
    if n == "show ip route":
        return render_ip_route()
    if n == "show processes cpu":
        percent = min(100, round(100 * usage["cpu_s"] / max(facts.uptime_s - BOOT_SECONDS, 1.0)))
        return render_processes_cpu(percent, int(usage["cpu_s"] * 1000))
    return None


#: NVRAM of a WS-C3750G-24T (``show version``: 512K bytes of flash-simulated NVRAM).
NVRAM_BYTES = 524288


def render_startup(saved: str) -> str:
    """``show startup-config``: ``Using N out of 524288 bytes`` and the saved configuration (as
    NVRAM holds it: without ``show running-config``'s ``Building configuration...`` and ``Current
    configuration`` lines)."""
    lines = saved.split("\n")
    while lines and (not lines[0].strip() or lines[0].startswith(("Building configuration", "Current configuration"))):
        lines.pop(0)
    body = "\n".join(lines)
    return f"Using {len(body.encode())} out of {NVRAM_BYTES} bytes\n" + body


def _xe_policy_map_interface(sw, cmd: ExecCommand) -> str:
    """``show policy-map interface [PORT]`` of the IOS-XE dialect (:mod:`.show_xe`)."""
    port = _port_arg(sw, cmd)
    ports = [port] if port else _ports(sw)
    rc, q = sw.running, qos_model(sw.running)
    cls_counts = sw.class_counters() if hasattr(sw, "class_counters") else {}
    stats = sw.queue_stats([canonical_port(p) for p in ports]) if hasattr(sw, "queue_stats") else {}
    out: list[str] = []
    for p in ports:
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


def _xe(sw, cmd: ExecCommand, facts: DeviceFacts) -> str | None:
    """The commands the IOS-XE dialect answers its own way; ``show mls ...`` is not IOS-XE."""
    n = cmd.name
    if n.startswith("show mls"):
        raise IosError("", 5)
    if n == "show version":
        return render_version_xe(facts)
    if n.startswith("show policy-map interface"):
        return _xe_policy_map_interface(sw, cmd)
    return None


def show_output(sw, cmd: ExecCommand, facts: DeviceFacts, flash: Flash, usage: dict) -> str:
    """Output of a parsed show command (before output modifiers). Raises IosError (with the
    column of the bad argument) for a port the switch does not have."""
    if sw.running.dialect == "c9300" and (out := _xe(sw, cmd, facts)) is not None:
        return out
    for family in (lambda: _mls(sw, cmd), lambda: _mqc(sw, cmd), lambda: _system(sw, cmd, facts, flash, usage),
                   lambda: _l2(sw, cmd, facts, usage)):
        out = family()
        if out is not None:
            return out
    raise IosError("", 0)
