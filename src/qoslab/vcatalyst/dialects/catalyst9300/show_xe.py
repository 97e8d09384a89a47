"""What the virtual Catalyst 9300 shows in its IOS-XE dialect (pure renderers):

- ``show version``: a C9300 on IOS-XE 17.9 (the first lines, ``Cisco IOS XE Software, Version``,
  model and serial, the switch table), laid out as the Catalyst 9300 ``show version`` of the
  IOS-XE 17.x command reference; NAPALM's ``ios`` driver and ntc-templates read the same lines
  as on IOS (uptime, image, model, serial);
- ``show policy-map interface [PORT]``: per port its input policy (class packets from the
  nftables rules, ``QoS Set`` / ``police``) and its output queuing policy (per class: packets,
  ``(total drops)`` and ``(bytes output)``, the priority class's in ``queue stats for all priority
  classes``), in the Catalyst 9300 layout (IOS-XE 17.x QoS configuration guide, "Monitoring
  QoS"). Drops: UADP counts them in bytes; tc counts dropped packets, so the virtual switch shows
  dropped packets x the queue's mean sent packet size (1514 B when it sent none): an estimate.
"""

from __future__ import annotations

from ....ios.mqc import EgressClass
from ....ios.xe import dscp_name
from ...facts import DeviceFacts, uptime_text
from .counters import QueueStat

#: The IOS-XE release the virtual 9300 claims (17.9, an extended-maintenance release).
XE_VERSION = "17.09.05"


def render_version_xe(f: DeviceFacts) -> str:
    """``show version`` of a Catalyst 9300 on IOS-XE 17.9 (virtual serial and MAC)."""
    model = f.model if f.model.upper().startswith(("C9300", "C9200")) else "C9300-24T"
    return f"""Cisco IOS XE Software, Version {XE_VERSION}
Cisco IOS Software [Cupertino], Catalyst L3 Switch Software (CAT9K_IOSXE), Version 17.9.5, RELEASE SOFTWARE (fc1)
Technical Support: http://www.cisco.com/techsupport
Copyright (c) 1986-2024 by Cisco Systems, Inc.
Compiled Wed 27-Mar-24 09:56 by mcpre


Cisco IOS-XE software, Copyright (c) 2005-2024 by cisco Systems, Inc.
All rights reserved.

ROM: IOS-XE ROMMON
BOOTLDR: System Bootstrap, Version 17.9.1r, RELEASE SOFTWARE (P)

{f.hostname} uptime is {uptime_text(f.uptime_s)}
Uptime for this control processor is {uptime_text(f.uptime_s)}
System returned to ROM by PowerOn
System image file is "flash:packages.conf"
Last reload reason: PowerOn

qoslab virtual Catalyst 9300: the QoS configuration is emulated with tc/nftables on the embedded
testbed; serial numbers and MAC addresses are virtual.

cisco {model} (X86) processor with 1338934K/6147K bytes of memory.
Processor board ID {f.serial}
1 Virtual Ethernet interface
{f.n_ports} Gigabit Ethernet interfaces
2048K bytes of non-volatile configuration memory.
8388608K bytes of physical memory.

Base Ethernet MAC Address          : {f.base_mac}
Model Number                       : {model}
System Serial Number               : {f.serial}

Switch Ports Model              SW Version        SW Image              Mode
------ ----- -----              ----------        ----------            ----
*    1 {f.n_ports:<5d} {model:<18} {XE_VERSION:<17} CAT9K_IOSXE           INSTALL


Configuration register is 0x102

"""


def _match_text(dscps: list[int], acls: list[str]) -> str:
    if dscps:
        return "Match:  dscp " + " ".join(f"{dscp_name(d)} ({d})" if dscp_name(d) != str(d) else str(d)
                                          for d in dscps)
    return "".join(f"Match: access-group {a}" for a in acls[:1]) or "Match: any"


def render_input_xe(policy: str, classes: list[tuple[str, str, list[int], list[str], int, list[str]]]) -> list[str]:
    """An input policy's block: classes as (name, match-all|match-any, DSCPs, ACLs, packets, actions)."""
    out = [f"  Service-policy input: {policy}", ""]
    for name, how, dscps, acls, packets, actions in classes:
        out += [f"    Class-map: {name} ({how})", f"      {packets} packets", f"      {_match_text(dscps, acls)}"]
        out += [f"      {a}" for a in actions] + [""]
    return out


def render_output_xe(policy: str, classes: list[tuple[EgressClass, list[int], QueueStat]]) -> list[str]:
    """An output queuing policy's block: classes as (EgressClass, matched DSCPs, queue counters)."""
    out = [f"  Service-policy output: {policy}", ""]
    prio = [(c, s) for c, _, s in classes if c.priority]
    if prio:
        out += ["    queue stats for all priority classes:", "      Queueing"]
        for c, s in prio:
            out += [f"      priority level {c.priority}", "", f"      (total drops) {s.dropped_bytes}",
                    f"      (bytes output) {s.sent_bytes}", ""]
    for c, dscps, s in classes:
        how = "match-any"
        match = _match_text(dscps, []) if c.name != "class-default" else "Match: any"
        out += [f"    Class-map: {c.name} ({how})", f"      {s.sent_packets + s.dropped_packets} packets",
                f"      {match}"]
        if c.priority:
            out += ["      Priority: Strict,", "", f"      Priority Level: {c.priority}"]
        else:
            out += ["      Queueing", "", f"      (total drops) {s.dropped_bytes}",
                    f"      (bytes output) {s.sent_bytes}"]
            if c.share:
                out.append(f"      bandwidth remaining {c.share}%")
        if c.buffers is not None:
            out.append(f"      queue-buffers ratio {c.buffers}")
        out.append("")
    return out
