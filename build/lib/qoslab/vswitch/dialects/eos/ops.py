"""The virtual EOS switch's operational shows (issue 49): EXEC action -> (text, JSON model) for
what ANTA's hardware-independent tests and NAPALM's ``eos`` getters send, over
:mod:`.showsys` (system, software, services) and :mod:`.showifs` (interfaces, layer 2 and 3).
A text-only command (EOS has no model for it) gives :data:`.render.NO_MODEL`'s stand-in None
here; the text of a JSON-only model is its one-line-per-entry table.

``ping`` and ``bash timeout N CMD`` answer as the switch's Linux would: it has no address (no
SVI is emulated), so ``ping`` and ``traceroute`` print ``connect: Network is unreachable``;
``bash ... df -h`` lists flash as :func:`.showsys.file_systems` counts it; any other bash
command is refused with one line naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....eos import EosError
from . import showifs as ifs
from . import showsys as sys_
from .state import Port, ports

Op = Callable[[Any, dict[str, Any]], tuple[str | None, Any]]


def _table(model: dict[str, Any], key: str, cols: list[str]) -> str:
    rows = model.get(key, {})
    out = ["Port".ljust(14) + "".join(c[:12].ljust(14) for c in cols)]
    for name, v in rows.items():
        out.append(name.ljust(14) + "".join(str(v.get(c, ""))[:12].ljust(14) for c in cols))
    return "\n".join(out) + "\n"


def _ps(sw: Any, values: dict[str, Any]) -> list[Port]:
    port = values.get("port")
    if port is not None and port not in sw.running.interfaces:
        raise EosError(f"show interfaces {port}", "message", 0, "Interface does not exist")
    return ports(sw, port)


def _df(sw: Any) -> str:
    _, fs = sys_.file_systems(sw)
    flash = next(s for s in fs["fileSystems"] if s["prefix"] == "flash:")
    used, size = flash["size"] - flash["free"], flash["size"]
    return ("Filesystem      Size  Used Avail Use% Mounted on\n"
            f"/dev/sda1       {size / 2**30:.1f}G  {used / 2**30:.1f}G  {flash['free'] / 2**30:.1f}G  "
            f"{round(100 * used / size):>3}% /mnt/flash\n"
            "none            2.0G  312M  1.7G  16% /\n")


def _bash(sw: Any, values: dict[str, Any]) -> tuple[str | None, Any]:
    cmd = str(values["cmd"]).split()
    if cmd[:2] == ["df", "-h"]:
        return _df(sw), None
    if cmd and cmd[0] == "traceroute":
        return "connect: Network is unreachable\n", None
    raise EosError(f"bash {values['cmd']}", "message", 0, f"bash: {cmd[0] if cmd else ''}: not emulated by the "
                   "virtual switch (df -h, traceroute)")


def _if(fn: Callable[[list[Port]], dict[str, Any]], key: str, cols: list[str]) -> Op:
    def op(session: Any, values: dict[str, Any]) -> tuple[str | None, Any]:
        model = fn(_ps(session.sw, values))
        return _table(model, key, cols), model
    return op


def _const(model: dict[str, Any], text: str) -> Op:
    return lambda session, values: (text, model)


OPS: dict[str, Op] = {
    "uptime": lambda s, v: sys_.uptime(s.sw),
    "reload cause": lambda s, v: sys_.reload_cause(),
    "coredump": lambda s, v: sys_.coredump(),
    "agent logs crash": lambda s, v: ("", None),
    "processes top": lambda s, v: sys_.processes_top(),
    "ntp status": lambda s, v: sys_.ntp_status(s.sw),
    "ntp associations": lambda s, v: sys_.ntp_associations(s.sw),
    "maintenance": lambda s, v: sys_.maintenance(),
    "file systems": lambda s, v: sys_.file_systems(s.sw),
    "dir flash": lambda s, v: sys_.dir_flash(s.sw),
    "zerotouch": lambda s, v: sys_.zerotouch(),
    "name-server": lambda s, v: sys_.name_servers(s.sw),
    "errdisable recovery": lambda s, v: (sys_.errdisable_recovery(), None),
    "extensions": lambda s, v: sys_.extensions(),
    "boot-extensions": lambda s, v: sys_.boot_extensions(),
    "users accounts": lambda s, v: sys_.users_accounts(s.sw),
    "snmp mib": lambda s, v: sys_.snmp_mib(s.sw, str(v["what"])),
    "environment": lambda s, v: sys_.environment(str(v["what"])),
    "bash": lambda s, v: _bash(s.sw, v),
    "ping": lambda s, v: ("connect: Network is unreachable\n", None),
    "errdisabled": _const(ifs.errdisabled(), "Port       Name   Status       Reason\n"),
    "counters errors": _if(ifs.counters_errors, "interfaceErrorCounters",
                           ["fcsErrors", "alignmentErrors", "symbolErrors", "inErrors", "frameTooShorts",
                            "frameTooLongs", "outErrors"]),
    "counters discards": _if(ifs.counters_discards, "interfaces", ["inDiscards", "outDiscards"]),
    "counters rates": _if(ifs.counters_rates, "interfaces", ["description", "inBpsRate", "inPktsRate",
                                                               "outBpsRate", "outPktsRate"]),
    "description": lambda s, v: _descriptions(ifs.descriptions(_ps(s.sw, v))),
    "queue drops": lambda s, v: (None, ifs.queue_drops(_ps(s.sw, v))),
    "storm-control": _const(ifs.storm_control(), "Port       BUM       Status    Level  Rate   Drops\n"),
    "port-channel": _const(ifs.port_channels(), ""),
    "lacp counters": _const(ifs.lacp_counters(), ""),
    "ip interface": _const(ifs.ip_interfaces(), ""),
    "ipv6 interface": lambda s, v: (_ for _ in ()).throw(
        EosError("show ipv6 interface", "message", 0, "No IPv6 configured interfaces")),
    "lldp neighbors": _const(ifs.lldp_neighbors(), "Last table change time   : never\nNumber of table inserts"
                             "  : 0\nNumber of table deletes  : 0\nNumber of table drops    : 0\n"
                             "Number of table age-outs : 0\n\nPort       Neighbor Device ID             "
                             "Neighbor Port ID           TTL\n"),
    "lldp detail": lambda s, v: (None, ifs.lldp_detail(_ps(s.sw, v))),
    "mac address-table": _const(ifs.mac_table(), "          Mac Address Table\n------------------------------------"
                                "------------------------------\n\nVlan    Mac Address       Type        Ports      "
                                "Moves   Last Move\n----    -----------       ----        -----      -----   ------"
                                "---\nTotal Mac Addresses for this criterion: 0\n"),
    "vlan": lambda s, v: (_vlan_text(ports(s.sw)), ifs.vlans(ports(s.sw))),
    "vrf": _const(ifs.vrfs(), "Maximum number of VRFs allowed: 1023\n"
                  "   VRF             Protocols       State         Interfaces                             \n"
                  "--------------- --------------- ---------------- ---------------------------------------\n"
                  "   default         IPv4            no routing                                           \n"
                  "   default         IPv6            no routing                                           \n"),
    "ip route": lambda s, v: ("VRF: " + str(v.get("vrf", "default")) + "\n\nGateway of last resort is not set\n\n",
                              ifs.routes(str(v.get("vrf", "default")))),
    "transceiver": _const(ifs.transceivers(), ""),
    "arp": _const({"vrfs": {"default": {"ipV4Neighbors": [], "totalEntries": 0, "staticEntries": 0,
                                        "dynamicEntries": 0, "notLearnedEntries": 0}}}, ""),
    "bgp": _const({"vrfs": {}}, ""),  # no ``router bgp``: no VRF has a BGP instance
}


def _descriptions(model: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``show interfaces description`` text (ntc-templates' arista_eos recording's columns)."""
    out = ["Interface                      Status         Protocol           Description"]
    for name, d in model["interfaceDescriptions"].items():
        status = "admin down" if d["interfaceStatus"] == "adminDown" else d["interfaceStatus"]
        out.append(f"{name.replace('Ethernet', 'Et'):<31}{status:<15}{d['lineProtocolStatus']:<19}"
                   f"{d['description']}".rstrip())
    return "\n".join(out) + "\n", model


def _vlan_text(ps: list[Port]) -> str:
    names = ", ".join(p.name.replace("Ethernet", "Et") for p in ps)
    return ("VLAN  Name                             Status    Ports\n"
            "----- -------------------------------- --------- -------------------------------\n"
            f"1     default                          active    {names}\n")
