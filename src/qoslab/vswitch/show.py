"""Show commands of the virtual Catalyst 3750, in IOS output format, from its running-config and
the switch ports' tc counters. :func:`show_command` dispatches on the command's words; each
command is one small function ``(switch, match) -> text``."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..ios import QosConfig, ace_text, qos_model
from ..topology import canonical_port, long_port
from .counters import PortCounters

if TYPE_CHECKING:
    from .catalyst import VirtualCatalyst

#: The IOS release the virtual switch reports (a 3750 IP Services release).
IOS_VERSION = "12.2(55)SE12"

Show = Callable[["VirtualCatalyst", "re.Match[str]"], "str | None"]


def _version(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    up = int(time.time() - sw.booted)
    return (f"Cisco IOS Software, C3750 Software (C3750-IPSERVICESK9-M), Version {IOS_VERSION}, "
            f"RELEASE SOFTWARE (fc2)\nqoslab virtual Catalyst (tc on the embedded testbed)\n\n"
            f"{sw.running.hostname} uptime is {up // 60} minutes\n"
            f"cisco {sw.topo.switch.model} (PowerPC405) processor with 131072K bytes of memory.\n"
            f"{len(sw.topo.switch.ports)} Gigabit Ethernet interfaces\n")


def _running(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    return sw.running.render()


def _startup(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    p = sw.dir / "startup-config"
    return p.read_text() if p.exists() else "startup-config is not present\n"


def _mls_qos(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    state = "enabled" if qos_model(sw.running).enabled else "disabled"
    return f"QoS is {state}\nQoS ip packet dscp rewrite is enabled\n\n"


def _interface(sw: VirtualCatalyst, m: re.Match[str]) -> str | None:
    q = qos_model(sw.running)
    try:
        port = canonical_port(m.group(1))
    except ValueError:
        return None
    if port not in q.interfaces:
        return None
    return _queueing(port, q) if m.group(2) == "queueing" else _statistics(sw, port)


def _queue_set(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    q = qos_model(sw.running)
    out = ""
    for qs in (1, 2):
        b = q.queue_set_buffers[qs]
        out += (f"Queueset: {qs}\nQueue     :       1       2       3       4\n"
                f"----------------------------------------------\n"
                f"buffers   :{''.join(f'{x:8d}' for x in b)}\n")
    return out


def _dscp_output_q(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    q = qos_model(sw.running)
    out = "   Dscp-outputq-threshold map:\n     d1 :d2    0     1     2     3     4     5     6     7     8     9 \n"
    out += "     ------------------------------------------------------------\n"
    for d1 in range(7):
        cells = [f"{q.dscp_output_queue[d1 * 10 + d2]:02d}-01" for d2 in range(10) if d1 * 10 + d2 < 64]
        out += f"      {d1} :    " + " ".join(cells) + " \n"
    return out


def _input_queue(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    return ("Queue     :       1       2\n----------------------------------------------\n"
            + "".join(f"{line}\n" for line in sw.running.globals_ if "srr-queue input" in line)
            + "(ingress queues are not emulated: see switch-configs/README.md)\n")


def _access_lists(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    out = ""
    for name, aces in sw.running.acls.items():
        out += f"Extended IP access list {name}\n"
        out += "".join(f"    {10 * (i + 1)} {ace_text(x)}\n" for i, x in enumerate(aces))
    return out


def _class_map(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    out = ""
    for i, (name, s) in enumerate(sw.running.class_maps.items(), 1):
        out += f" Class Map {s.header.split()[1]} {name} (id {i})\n" + "".join(
            f"   {c.replace('match access-group ', 'Match access-group  ')}\n" for c in s.children) + "\n"
    return out


def _policy_map(sw: VirtualCatalyst, m: re.Match[str]) -> str:
    out = ""
    for name, s in sw.running.policy_maps.items():
        out += f"  Policy Map {name}\n"
        for sub in s.subsections:
            out += f"    Class {sub.header.split()[1]}\n" + "".join(
                f"      {c.replace('set ip dscp', 'set dscp')}\n" for c in sub.children)
    return out


#: (pattern over the words after ``show``, handler), tried in order.
SHOWS: list[tuple[re.Pattern[str], Show]] = [
    (re.compile(r"^ver(s(i(on?)?)?)?$"), _version),
    (re.compile(r"^run(n(i(n(g(-(c(o(n(f(ig?)?)?)?)?)?)?)?)?)?)?$"), _running),
    (re.compile(r"^startup"), _startup),
    (re.compile(r"^mls qos$"), _mls_qos),
    (re.compile(r"^mls qos interface (\S+) (queueing|statistics)$"), _interface),
    (re.compile(r"^mls qos queue-set$"), _queue_set),
    (re.compile(r"^mls qos maps dscp-output-q$"), _dscp_output_q),
    (re.compile(r"^mls qos input-queue$"), _input_queue),
    (re.compile(r"^access-lists$"), _access_lists),
    (re.compile(r"^class-map$"), _class_map),
    (re.compile(r"^policy-map$"), _policy_map),
]


def show_command(sw: VirtualCatalyst, args: list[str]) -> str | None:
    """Output of ``show ARGS`` or None for an unknown show command."""
    a = " ".join(args)
    for pattern, fn in SHOWS:
        m = pattern.match(a)
        if m:
            return fn(sw, m)
    return None


def _queueing(port: str, q: QosConfig) -> str:
    iq = q.interfaces[port]
    return (f"{long_port(port)}\nEgress Priority Queue : {'enabled' if iq.priority_queue_out else 'disabled'}\n"
            f"Shaped queue weights (absolute) :  {' '.join(map(str, iq.shape))}\n"
            f"Shared queue weights  :  {' '.join(map(str, iq.share))}\n"
            f"The port bandwidth limit : 100  (Operational Bandwidth:100.0)\n"
            f"The port is mapped to qset : {iq.queue_set}\n")


def _statistics(sw: VirtualCatalyst, port: str) -> str:
    return render_statistics(sw.counters([port])[port])


def _table(title: str, values: list[int]) -> str:
    """A DSCP or CoS table of ``show mls qos interface statistics``: five values a row."""
    out = f"  {title}\n-------------------------------\n\n"
    for lo in range(0, len(values), 5):
        hi = 7 if len(values) == 8 and lo == 5 else lo + 4  # IOS labels the last DSCP row 60 - 64
        out += f" {lo:2d} - {hi:2d} :" + "".join(f"{v:>12d} " for v in values[lo:lo + 5]) + "\n"
    return out


def render_statistics(c: PortCounters) -> str:
    """``show mls qos interface X statistics`` in the Catalyst 3750 format (12.2(55)SE command
    reference sample): DSCP and CoS tables incoming/outgoing, output queues enqueued/dropped per
    threshold (queue 0-3 = egress queues 1-4), policer in/out of profile. Pure."""
    head = " queue:    threshold1   threshold2   threshold3\n-----------------------------------------------\n"

    def rows(v: list[list[int]]) -> str:
        return "".join(f" queue {i}:" + "".join(f"{x:>12d}" for x in v[i]) + " \n" for i in range(4))

    return (f"{long_port(c.port)} (All statistics are in packets)\n\n"
            + _table("dscp: incoming", c.dscp_in) + _table("dscp: outgoing", c.dscp_out)
            + _table("cos: incoming", c.cos_in) + _table("cos: outgoing", c.cos_out)
            + f"  output queues enqueued: \n{head}{rows(c.enqueued)}\n  output queues dropped: \n{head}{rows(c.dropped)}"
            + f"\nPolicer: Inprofile: {c.policer_in:>12d} OutofProfile: {c.policer_out:>12d} \n")
