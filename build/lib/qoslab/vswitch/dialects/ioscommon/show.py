"""The show commands IOS 12.2 and IOS-XE answer alike, from the switch's state to the pure
renderers (:mod:`.render`, :mod:`.show_l2`, :mod:`.show_ports`): configuration displays (running,
startup, partition, interface), access lists, files, clock, hosts, memory, SPAN sessions, the port
tables (interfaces status and summary, ip interface [brief], vlan [brief]), ARP, CDP/LLDP, SNMP,
VLAN by id, IP route, switchport, interface counters, the MAC table and the CPU.

Each Catalyst dialect answers its own commands first and passes the rest to :func:`show_common`;
the helpers (:func:`ports`, :func:`port_arg`, :func:`port_views`, :func:`monitor_sessions`) are
what both dialects read the switch's ports with. ``sw`` is the switch object of
:mod:`qoslab.vswitch.dialects.base`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from ....ios import IosError
from ....ios.config import interface_order
from ....portnames import canonical_port, linux_ifname, long_port
from ...execparse import ExecCommand
from ...facts import PortView
from ...sshprofile import ssh_profile
from ..base import ShowContext
from .render import (
    MonitorSession,
    SviView,
    render_access_lists,
    render_hosts,
    render_interfaces_status,
    render_interfaces_summary,
    render_ip_interface,
    render_ip_interface_brief,
    render_memory_statistics,
    render_monitor,
    render_privilege,
    render_startup,
    render_vlan_brief,
)
from .show_l2 import render_arp, render_cdp, render_lldp, render_mac_table
from .show_ops import (
    CONSTANT,
    render_etherchannel_summary,
    render_interfaces_description,
    render_ip_ssh,
    render_logging,
    render_spanning_tree,
    render_users,
    sort_cpu,
)
from .show_ports import (
    render_counters,
    render_ip_route,
    render_processes_cpu,
    render_snmp,
    render_switchport,
    render_vlan_id,
)


def ports(sw: Any) -> list[str]:
    """The switch's front ports, long names, in the topology's order."""
    return [long_port(p) for p in sw.topo.switch.ports]


def port_arg(sw: Any, cmd: ExecCommand) -> str | None:
    """The ``port`` argument, checked against the switch's ports (IosError with its column)."""
    p = cmd.args.get("port")
    if p is None:
        return None
    if p not in ports(sw):
        raise IosError("", cmd.columns.get("port", 0))
    return str(p)


def port_views(sw: Any, only: str | None = None) -> list[PortView]:
    """PortView of every front port: link up where a testbed host is attached, description and
    shutdown from the running-config, packets and bytes in and out from the kernel's link
    statistics of the switch port (``sw.links()``: in = what the host sent, out = what the port
    sent it) and output drops from its egress qdiscs (``sw.qdiscs()``); zeros on a switch without
    kernel readings. The speed is the 3750's (1000 Mbit/s negotiated on a 10/100/1000 port), not
    the testbed's scale-model link rate, which ``show version`` states
    (:func:`qoslab.vswitch.session.device_facts`)."""
    hosts = {long_port(h.port): h for h in sw.topo.hosts}
    links = sw.links() if hasattr(sw, "links") else {}
    qdiscs = sw.qdiscs() if hasattr(sw, "qdiscs") and links else {}
    out = []
    for i, p in enumerate(ports(sw), 1):
        if only is not None and p != only:
            continue
        sec = sw.running.interfaces.get(canonical_port(p))
        children = sec.children if sec else []
        desc = next((c.split(None, 1)[1] for c in children if c.startswith("description ")), "")
        v = PortView(p, desc, admin_up="shutdown" not in children, link_up=p in hosts, speed_mbps=1000,
                     mac=f"0200.5100.{i:04x}")
        dev = linux_ifname(canonical_port(p))
        if dev in links:
            rx, tx = links[dev].get("rx", {}), links[dev].get("tx", {})
            v.in_packets, v.in_bytes = int(rx.get("packets", 0)), int(rx.get("bytes", 0))
            v.out_packets, v.out_bytes = int(tx.get("packets", 0)), int(tx.get("bytes", 0))
            v.out_drops = sum(int(q.get("drops", 0)) for q in qdiscs.get(dev, []) if q.get("kind") == "bfifo")
        out.append(v)
    return out


def svi_views(sw: Any, base_mac: str, views: list[PortView]) -> list[SviView]:
    """The VLAN interfaces: ``Vlan1`` (every switch has it; up while a port of VLAN 1 is up among
    ``views``, its MAC the switch's base MAC) and any other ``interface VlanN`` of the
    running-config (down: no port is in another VLAN), admin state from ``shutdown``."""
    names = ["Vlan1"] + sorted((n for n in sw.running.interfaces if n.startswith("Vlan") and n != "Vlan1"),
                               key=lambda n: int(n[4:]))
    any_up = any(v.link_up and v.admin_up and v.vlan == 1 for v in views)
    out = []
    for n in names:
        sec = sw.running.interfaces.get(n)
        out.append(SviView(n, admin_up=not (sec and "shutdown" in sec.children), up=any_up and n == "Vlan1",
                           mac=base_mac))
    return out


def monitor_sessions(sw: Any) -> list[MonitorSession]:
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
        for pl in (s.both, s.rx, s.tx, s.destinations):
            pl.sort(key=interface_order)
    return [out[n] for n in sorted(out)]


def _access_lists(sw: Any, cmd: ExecCommand) -> str | None:
    if not cmd.name.startswith(("show ip access-lists", "show access-lists")):
        return None
    acls = {k: (v.show_header(), v.show_entries()) for k, v in sw.running.acls.items()}
    out = render_access_lists(acls, cmd.args.get("word"))
    return out if out is not None else ""


def _config_and_files(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str | None:
    """Configuration displays, files, clock, hosts, memory, SPAN sessions."""
    n = cmd.name
    simple: dict[str, Callable[[], str]] = {
        "show privilege": lambda: render_privilege(ctx.privilege),
        "show hosts": render_hosts,
        "show running-config": lambda: str(sw.running.render()),
        "show running-config all": lambda: str(sw.running.render()),
        "show ipv6 interface": lambda: "",
        "show archive": lambda: "Archive feature not enabled\n",
        "show archive config rollback timer": lambda: "No Rollback Confirmed Change pending\n",
        "show memory statistics": lambda: render_memory_statistics(134217728, min(int(ctx.usage["rss"]), 134217728)),
        "show clock": lambda: time.strftime("*%H:%M:%S.000 UTC %a %b %d %Y\n", time.gmtime()),
        "show file systems": lambda: ("File Systems:\n\n     Size(b)     Free(b)      Type  Flags  Prefixes\n"
                                      f"*   32514048    {32514048 - ctx.flash.used()}"
                                      "     flash     rw   flash:\n"),
    }
    if n in simple:
        return simple[n]()
    if n == "show startup-config":
        p = sw.dir / "startup-config"
        return render_startup(p.read_text()) if p.exists() else "startup-config is not present\n"
    if n == "show running-config partition access-list":
        return str(sw.running.render_partition_acl())
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
        return str(out)
    return None


def _port_tables(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str | None:
    """The port tables both print alike: ``show interfaces status``, ``show interfaces summary``,
    ``show ip interface [brief|PORT]`` (the SVIs first), ``show vlan [brief]``."""
    n = cmd.name
    tables: dict[str, Callable[[list[PortView]], str]] = {
        "show interfaces status": render_interfaces_status, "show ip interface": render_ip_interface,
        "show vlan": lambda v: render_vlan_brief(v, ctx.width),
        "show vlan brief": lambda v: render_vlan_brief(v, ctx.width),
        "show interfaces port status": render_interfaces_status, "show ip interface port": render_ip_interface}
    if n in tables:
        return tables[n](port_views(sw, port_arg(sw, cmd)))
    if n in ("show ip interface brief", "show interfaces summary"):
        views = port_views(sw)
        svis = svi_views(sw, ctx.facts.base_mac, views)
        return render_ip_interface_brief(views, svis) if n.endswith("brief") else render_interfaces_summary(views, svis)
    return None


def _l2(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str | None:
    """The layer-2 and system state: MAC table (the bridge's learned addresses), ARP, CDP/LLDP,
    SNMP, VLAN by id, IP route, switchport, interface counters, CPU."""
    n, kept = cmd.name, sw.running.kept
    if n.startswith("show mac address-table"):
        port = port_arg(sw, cmd)
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
    if n.startswith("show snmp"):
        return render_snmp(kept, ctx.facts.serial, {"show snmp": "all"}.get(n, n.rsplit(" ", 1)[1]))
    if n == "show vlan id n":
        return render_vlan_id(cmd.args["n"], port_views(sw), ctx.width)
    if n == "show ip route":
        return render_ip_route()
    if n == "show interfaces switchport":
        return render_switchport(port_views(sw))
    if n == "show interfaces counters":
        return render_counters(port_views(sw))
    if n == "show interfaces port switchport":
        return render_switchport(port_views(sw, port_arg(sw, cmd)))
    if n in ("show processes cpu", "show processes cpu sorted"):
        percent = min(100, round(100 * ctx.usage["cpu_s"] / max(ctx.facts.uptime_s - ctx.boot_seconds, 1.0)))
        out = render_processes_cpu(percent, int(ctx.usage["cpu_s"] * 1000))
        return sort_cpu(out) if n.endswith("sorted") else out
    return None


def _ops(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str | None:
    """The operational shows of :mod:`.show_ops` (issue 49)."""
    n = cmd.name
    if n in CONSTANT:
        return CONSTANT[n]
    if n == "show interfaces description":
        return render_interfaces_description(port_views(sw))
    if n == "show etherchannel summary":
        return render_etherchannel_summary()
    if n == "show ip ssh":
        return render_ip_ssh(ssh_profile(sw.topo.switch.management.ssh_profile, sw.dialect))
    if n == "show users":
        return render_users(_login(sw), "")
    if n == "show logging":
        return render_logging(sw.running.hostname)
    if n == "show memory":
        return show_common(sw, ExecCommand("show memory statistics", {}, cmd.modifier), ctx)
    if n == "show spanning-tree":
        kept = " ".join(sw.running.kept)
        mode = "rstp" if "spanning-tree mode rapid-pvst" in kept else "ieee"
        return render_spanning_tree(port_views(sw), ctx.facts.base_mac, mode)
    if n == "show vlan all-ports":
        return render_vlan_brief(port_views(sw), ctx.width)
    return None


def _login(sw: Any) -> str:
    try:
        return str(json.loads((sw.dir / "credentials").read_text())["username"])
    except (OSError, ValueError, KeyError):
        return "admin"


def show_common(sw: Any, cmd: ExecCommand, ctx: ShowContext) -> str:
    """The output of a show command both Catalyst dialects answer alike (before output
    modifiers). Raises IosError (with the column of the bad argument) for a port the switch does
    not have, and at column 0 for a command no family here answers."""
    for family in (_access_lists, lambda s, c: _config_and_files(s, c, ctx), lambda s, c: _port_tables(s, c, ctx),
                   lambda s, c: _l2(s, c, ctx), lambda s, c: _ops(s, c, ctx)):
        out = family(sw, cmd)
        if out is not None:
            return out
    raise IosError("", 0)
