"""An EOS switch's configuration as EOS keeps it (:class:`EosConfig`), rendered in the order and
form of ``show running-config`` (pure).

Form (EOS User Manual, "Switch Configuration: running-config"; the order of Arista's own config
generator, AVD ``eos_cli_config_gen``, which reproduces EOS's): three-space indentation per level,
``!`` between sections and before each ``tx-queue`` block of an interface, sections in the order
interfaces, IP access lists (standard lists after the others), monitor sessions, ``qos map``
lines, class-maps, policy-maps, the ``management`` sections; within
an interface ``service-policy`` before ``qos trust``; ``qos map dscp`` lines one per traffic class
with the DSCPs ascending (as ``show running-config`` prints them in the DISA STIG for Arista MLS
EOS 4.2x, ARST-RT-000310); access list entries with their sequence numbers.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

I1, I2 = "   ", "      "

#: EOS's default DSCP -> traffic class map (EOS User Manual, QoS chapter, "Default DSCP to
#: Traffic Class Map"): DSCP 0-7 -> TC 1, 8-15 -> TC 0, then DSCP // 8.
DEFAULT_DSCP_TC = {d: 1 if d < 8 else 0 if d < 16 else d // 8 for d in range(64)}
#: EOS's default CoS -> traffic class map (same chapter): CoS 0 -> TC 1, CoS 1 -> TC 0, else CoS.
DEFAULT_COS_TC = {c: 1 if c == 0 else 0 if c == 1 else c for c in range(8)}

#: The order in which EOS lists an interface's lines (AVD eos_cli_config_gen ethernet-interfaces
#: template order; lines it does not list come after those it does, in entry order).
IF_LINE_ORDER = ("description", "no description", "shutdown", "no shutdown", "mtu", "speed", "switchport",
                 "no switchport",
                 "ip address", "service-policy type qos input", "service-profile", "qos trust", "no qos trust",
                 "qos cos", "qos dscp", "shape rate")
#: The order of a tx-queue block's lines (AVD qos.cfg, DISA STIG ARST-RT-000310).
TXQ_LINE_ORDER = ("priority strict", "no priority", "bandwidth percent", "bandwidth guaranteed", "shape rate",
                  "random-detect")


def _ranked(lines: list[str], order: tuple[str, ...]) -> list[str]:
    return sorted(lines, key=lambda c: next((i for i, k in enumerate(order) if c == k or c.startswith(k + " ")),
                                            len(order)))


def _line_key(line: str) -> str:
    """What a line sets (``qos trust dscp`` and ``no qos trust`` both set the trust)."""
    w = line.split()
    w = w[1:] if w[0] == "no" else w
    return " ".join(w[:2])


def natural_key(name: str) -> list[int | str]:
    """Sort key that puts ``Ethernet2`` before ``Ethernet10`` (EOS and AVD order names this way)."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


@dataclass
class Interface:
    """An interface's config: its lines (order kept) and its tx-queue blocks (queue -> lines)."""

    name: str
    lines: list[str] = field(default_factory=list)
    txq: dict[int, list[str]] = field(default_factory=dict)

    def render(self, defaults: bool = False, kind: str = "interface") -> list[str]:
        """The interface as ``show running-config`` prints it; ``defaults``: as ``show
        running-config all`` does, with the default of each setting the configuration leaves
        out (an Ethernet port's description, shutdown and access-port switchport lines);
        ``kind``: the header's keyword (``qos profile`` for a QoS profile, which holds the same lines)."""
        lines = self.lines + (self.default_lines() if defaults else [])
        out = [f"{kind} {self.name}"] + [I1 + c for c in _ranked(lines, IF_LINE_ORDER)]
        for q in sorted(self.txq):
            if self.txq[q]:
                out += [f"{I1}!", f"{I1}tx-queue {q}"] + [I2 + c for c in _ranked(self.txq[q], TXQ_LINE_ORDER)]
        return out


    def default_lines(self) -> list[str]:
        """The defaults ``show running-config all`` adds to this interface (Ethernet ports: a
        switched access port in VLAN 1, up, no description), those the configuration sets aside."""
        if not self.name.startswith("Ethernet"):
            return []
        have = {c.split()[0] if c.split()[0] != "no" else c.split()[1] for c in self.lines}
        out = [] if "description" in have else ["no description"]
        out += [] if "shutdown" in have else ["no shutdown"]
        if "switchport" not in have:
            out += ["switchport access vlan 1", "switchport trunk native vlan 1",
                    "switchport trunk allowed vlan 1-4094", "switchport mode access", "switchport"]
        return out


@dataclass
class Monitor:
    """A port-mirroring session: source port -> direction (``both``, ``rx``, ``tx``, or ``""``: none
    given, which mirrors both and prints none, as EOS prints what was typed), destinations."""

    sources: dict[str, str] = field(default_factory=dict)
    destinations: list[str] = field(default_factory=list)


@dataclass
class EosConfig:
    """An EOS switch's configuration (see the module doc). ``dscp_tc``, ``dscp_dp`` and ``cos_tc``
    hold the configured ``qos map`` entries only (defaults: :data:`DEFAULT_DSCP_TC`,
    :data:`DEFAULT_COS_TC`, drop precedence 0); ``acls``: name -> {sequence: entry};
    ``policy_maps``: name -> {class: action lines} in class order; ``preamble``:
    the lines before ``hostname`` (``transceiver``, ``service routing``), ``globals_`` those after it
    (``spanning-tree mode``), ``mgmt_api`` the lines of ``management api http-commands`` (None:
    not configured)."""

    hostname: str = "switch"
    interfaces: dict[str, Interface] = field(default_factory=dict)
    dscp_tc: dict[int, int] = field(default_factory=dict)
    dscp_dp: dict[int, int] = field(default_factory=dict)
    cos_tc: dict[int, int] = field(default_factory=dict)
    tc_txq: dict[int, int] = field(default_factory=dict)
    rewrite_dscp: bool = False
    acls: dict[str, dict[int, str]] = field(default_factory=dict)
    class_maps: dict[str, list[str]] = field(default_factory=dict)
    policy_maps: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    monitor: dict[str, Monitor] = field(default_factory=dict)
    preamble: list[str] = field(default_factory=list)
    globals_: list[str] = field(default_factory=list)
    mgmt_api: list[str] | None = None
    #: the access lists that are standard lists (``ip access-list standard NAME``)
    standard_acls: set[str] = field(default_factory=set)
    #: the lines of ``management ssh`` (None: not configured)
    mgmt_ssh: list[str] | None = None
    #: ``qos profile NAME`` blocks (an interface's QoS lines and tx-queues, applied by ``service-profile``)
    qos_profiles: dict[str, Interface] = field(default_factory=dict)

    @classmethod
    def factory(cls, hostname: str, ports: list[str]) -> EosConfig:
        """A switch at factory defaults with the EOS interfaces ``ports`` (``Ethernet1`` ...)."""
        return cls(hostname=hostname, interfaces={p: Interface(p) for p in ports})

    def copy(self) -> EosConfig:
        """A deep copy (a configuration session edits one)."""
        return copy.deepcopy(self)

    def with_profiles(self) -> EosConfig:
        """A copy whose interfaces carry their ``service-profile``'s QoS lines and tx-queues under
        their own (a line or tx-queue the interface sets itself wins): what the data path and
        ``show qos interfaces`` apply. A profile that does not exist adds nothing."""
        out = self.copy()
        for intf in out.interfaces.values():
            name = next((x.split()[1] for x in intf.lines if x.startswith("service-profile ")), None)
            prof = self.qos_profiles.get(name or "")
            if prof is None:
                continue
            own = {_line_key(x) for x in intf.lines}
            intf.lines = intf.lines + [x for x in prof.lines if _line_key(x) not in own]
            intf.txq = {**copy.deepcopy(prof.txq), **intf.txq}
        return out

    def dscp_tc_of(self, dscp: int) -> int:
        """The traffic class of ``dscp`` (configured, else EOS's default)."""
        return self.dscp_tc.get(dscp, DEFAULT_DSCP_TC[dscp])

    def qos_map_lines(self) -> list[str]:
        """The ``qos map`` lines, as EOS prints them: ``qos rewrite dscp``, CoS maps, DSCP maps (one
        line per traffic class and drop precedence, DSCPs ascending), traffic-class maps."""
        out = ["qos rewrite dscp"] if self.rewrite_dscp else []
        for what, m in (("cos", self.cos_tc), ("dscp", self.dscp_tc)):
            groups: dict[tuple[int, int], list[int]] = {}
            for k in sorted(m):
                groups.setdefault((m[k], self.dscp_dp.get(k, 0) if what == "dscp" else 0), []).append(k)
            for (tc, dp), keys in sorted(groups.items()):
                tail = f" drop-precedence {dp}" if dp else ""
                out.append(f"qos map {what} {' '.join(map(str, keys))} to traffic-class {tc}{tail}")
        groups2: dict[int, list[int]] = {}
        for tc in sorted(self.tc_txq):
            groups2.setdefault(self.tc_txq[tc], []).append(tc)
        out += [f"qos map traffic-class {' '.join(map(str, tcs))} to tx-queue {q}"
                for q, tcs in sorted(groups2.items())]
        return out

    def acl_lines(self, name: str) -> list[str]:
        """One access list as ``show running-config`` prints it (entries and remarks with their
        sequence numbers)."""
        kind = "standard " if name in self.standard_acls else ""
        return [f"ip access-list {kind}{name}"] + [f"{I1}{seq} {e}" for seq, e in sorted(self.acls[name].items())]

    def policy_map_lines(self, name: str) -> list[str]:
        """One QoS policy-map as ``show running-config`` prints it (``!`` between classes)."""
        out = [f"policy-map type quality-of-service {name}"]
        for i, (cls, actions) in enumerate(self.policy_maps[name].items()):
            out += ([f"{I1}!"] if i else []) + [f"{I1}class {cls}"] + [I2 + a for a in actions]
        return out

    def monitor_lines(self) -> list[str]:
        """``monitor session`` lines: per session (by name) its sources, then its destinations."""
        out = []
        for name in sorted(self.monitor, key=natural_key):
            s = self.monitor[name]
            for port in sorted(s.sources, key=natural_key):
                d = s.sources[port]
                out.append(f"monitor session {name} source {port}" + (f" {d}" if d else ""))
            out += [f"monitor session {name} destination {port}" for port in s.destinations]
        return out

    def sections(self, defaults: bool = False) -> list[list[str]]:
        """The configuration's sections in ``show running-config`` order (each a list of lines);
        ``defaults``: with the interfaces' defaults (``show running-config all``)."""
        secs = [list(self.preamble)] if self.preamble else []
        secs.append([f"hostname {self.hostname}"])
        # QoS profiles right after the hostname, where AVD's eos_cli_config_gen puts them
        secs += [self.qos_profiles[n].render(kind="qos profile") for n in sorted(self.qos_profiles, key=natural_key)]
        snmp = [x for x in self.globals_ if x.startswith("snmp-server ")]
        for part in (snmp, [x for x in self.globals_ if not x.startswith("snmp-server ")]):
            if part:  # SNMP and the other global lines are sections of their own, as EOS and AVD print them
                secs.append(part)
        secs += [self.interfaces[n].render(defaults) for n in sorted(self.interfaces, key=natural_key)]
        secs += [self.acl_lines(n) for n in sorted(self.acls, key=lambda n: (n in self.standard_acls, natural_key(n)))]
        for part in (self.monitor_lines(), self.qos_map_lines()):
            if part:
                secs.append(part)
        secs += [[f"class-map type qos match-any {n}"] + [I1 + m for m in self.class_maps[n]]
                 for n in sorted(self.class_maps, key=natural_key)]
        secs += [self.policy_map_lines(n) for n in sorted(self.policy_maps, key=natural_key)]
        if self.mgmt_api is not None:
            secs.append(["management api http-commands"] + [I1 + x for x in self.mgmt_api])
        if self.mgmt_ssh is not None:
            secs.append(["management ssh"] + [I1 + x for x in self.mgmt_ssh])
        return secs

    def render(self, header: list[str] | None = None, defaults: bool = False) -> str:
        """``show running-config`` text: ``header`` (the ``! Command:`` comment lines), then the
        sections separated by ``!``, then ``end``; ``defaults``: ``show running-config all``."""
        out = list(header or [])
        for sec in self.sections(defaults):
            out += ["!", *sec]
        return "\n".join(out + ["!", "end"]) + "\n"
