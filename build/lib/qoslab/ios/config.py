"""A Catalyst 3750's configuration as IOS keeps it (:class:`RunningConfig`) and where the CLI is
in it (:class:`Mode`)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from ..portnames import long_port
from . import stock
from .acl import AccessList
from .globalorder import ordered_globals
from .grammar import GLOBAL, MODES


@dataclass
class Section:
    """A config section: its header line and child lines (order kept)."""

    header: str
    children: list[str] = field(default_factory=list)
    subsections: list[Section] = field(default_factory=list)


@dataclass
class RunningConfig:
    """A switch's configuration as IOS keeps it: hostname, global lines, access lists (by name or
    number), class-maps, policy-maps (with classes), interfaces, monitor sessions."""

    hostname: str = "Switch"
    ports: list[str] = field(default_factory=list)
    globals_: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    acls: dict[str, AccessList] = field(default_factory=dict)
    class_maps: dict[str, Section] = field(default_factory=dict)
    policy_maps: dict[str, Section] = field(default_factory=dict)
    interfaces: dict[str, Section] = field(default_factory=dict)
    monitor: list[str] = field(default_factory=list)
    #: the console and vty lines: header (``line vty 0 4``) -> settings, in entry order
    lines: dict[str, list[str]] = field(default_factory=lambda: {h: list(c) for h, c in stock.LINES.items()})
    #: the config language: ``c3750`` (IOS 12.2, ``mls qos``) or ``c9300`` (IOS-XE 17.x, MQC; :mod:`.xe`)
    dialect: str = "c3750"

    @classmethod
    def factory(cls, hostname: str, ports: list[str], dialect: str = "c3750") -> RunningConfig:
        """A switch at factory defaults with ``ports`` (short names) speaking ``dialect``."""
        rc = cls(hostname=hostname, ports=list(ports), dialect=dialect)
        for p in ports:
            rc.interfaces[p] = Section(f"interface {long_port(p)}")
        return rc

    def copy(self) -> RunningConfig:
        """A deep copy (the interpreter mutates configs in place)."""
        return copy.deepcopy(self)

    def render(self) -> str:
        """``show running-config`` text, in IOS's order whatever the order of entry: global lines
        (:func:`.globalorder.ordered_globals`), class-maps and policy-maps by name, interfaces in
        port order (:func:`interface_order`), named ACLs by name then numbered ACLs by number
        (:func:`acl_order`), monitor sessions by number. The entries inside a section (a
        policy-map's classes) keep their order; an access list's are in sequence order."""
        slots, rest = stock.place(self.kept)
        version = VERSION_LINE.get(self.dialect, "version 12.2")
        out = ["Building configuration...", "", "Current configuration : {size} bytes", "!", version,
               "no service pad", *slots["service"], "!", f"hostname {self.hostname}", "!", *slots["boot"], "!"]
        out += rest
        if rest:
            out.append("!")
        out += ordered_globals(self.globals_)
        out += ["!", *slots["spanning-tree"], "!", *slots["vlan"], "!"]
        for name in sorted(self.class_maps):
            out += self.section_lines(self.class_maps[name]) + ["!"]
        for name in sorted(self.policy_maps):
            out += self.section_lines(self.policy_maps[name]) + ["!"]
        for port in sorted(self.interfaces, key=interface_order):
            out += self.interface_lines(port) + ["!"]
        if "Vlan1" not in self.interfaces:
            out += [*stock.VLAN1, "!"]
        out += slots["ip"]
        out += ["!", *self.acl_lines()]
        out.append("!")
        out += self.monitor
        out += ["!", *self.line_lines(), "!", "end"]
        return _sized("\n".join(out) + "\n")

    @staticmethod
    def section_lines(s: Section) -> list[str]:
        """A section as ``show running-config`` prints it (header, indented children)."""
        out = [s.header] + [f" {c}" for c in s.children]
        for sub in s.subsections:
            out.append(f" {sub.header}")
            out += [f"  {c}" for c in sub.children]
        return out

    def line_lines(self) -> list[str]:
        """The console and vty lines as IOS prints them: ``con``, ``aux``, then ``vty`` by first
        number, each line's settings in IOS's order (:data:`LINE_ORDER`)."""
        out = []
        for header in sorted(self.lines, key=line_order):
            ranked = sorted(self.lines[header], key=lambda c: next(
                (i for i, k in enumerate(LINE_ORDER) if c == k or c.startswith(k + " ")), len(LINE_ORDER)))
            out += [header] + [f" {c}" for c in ranked]
        return out

    def interface_lines(self, port: str) -> list[str]:
        """An interface section, its lines in IOS's order whatever the order of entry
        (:data:`IF_LINE_ORDER`; lines it does not list after those it does, in entry order)."""
        sec = self.interfaces[port]
        ranked = sorted(sec.children, key=lambda c: next((i for i, k in enumerate(IF_LINE_ORDER)
                                                          if c == k or c.startswith(k + " ")), len(IF_LINE_ORDER)))
        return [sec.header] + [f" {c}" for c in ranked]

    def acl_lines(self) -> list[str]:
        """The access lists as ``show running-config`` prints them (named ones by name, then
        numbered ones by number); named-list entries with their sequence numbers on IOS-XE
        (``c9300``), without on IOS 12.2 (:mod:`.acl`)."""
        out = []
        for name in sorted(self.acls, key=lambda n: acl_order(n, self.acls[n].named)):
            out += self.acls[name].config_lines(seqs=self.dialect == "c9300")
        return out

    def render_interface(self, port: str) -> str | None:
        """``show running-config interface PORT`` (``port``: short name); None if no such interface."""
        if port not in self.interfaces:
            return None
        return _sized("\n".join(["Building configuration...", "", "Current configuration : {size} bytes", "!",
                                 *self.interface_lines(port), "end"]) + "\n", body_from=4)

    def render_partition_acl(self) -> str:
        """``show running-config partition access-list``: the access lists only."""
        return _sized("\n".join(["Building configuration...", "", "Current configuration : {size} bytes", "!",
                                 "Configuration of Partition - access-list", "!", "!", *self.acl_lines(), "!",
                                 "end"]) + "\n", body_from=4)


#: The ``version`` line of ``show running-config`` per dialect (12.2(55)SE; IOS-XE 17.9, the
#: Catalyst 9300's long-lived release).
VERSION_LINE = {"c3750": "version 12.2", "c9300": "version 17.9"}

#: The order in which a 3750 lists an interface's lines (as in the AutoQoS-generated interface
#: configurations of the Catalyst 3750 QoS configuration guide: queueing, then trust, then the
#: input policy last).
IF_LINE_ORDER = ("description", "ip address", "no ip address", "shutdown", "srr-queue bandwidth share",
                 "srr-queue bandwidth shape", "srr-queue bandwidth limit", "queue-set", "priority-queue out",
                 "mls qos trust", "no mdix auto", "service-policy input", "service-policy output")


#: The order of a console or vty line's settings in ``show running-config`` (as IOS 12.2 and
#: IOS-XE print them: access-class and exec-timeout first, login, then the transport lines).
LINE_ORDER = ("session-timeout", "access-class", "exec-timeout", "privilege level", "password",
              "logging synchronous", "login", "stopbits", "length", "width", "transport input", "transport output")


def line_order(header: str) -> tuple[int, int]:
    """Sort key of a ``line`` section: ``con``, ``aux``, ``vty``, then the first line number."""
    w = header.split()
    return ("con", "aux", "vty").index(w[1]) if w[1] in ("con", "aux", "vty") else 3, int(w[2])


def _sized(text: str, body_from: int = 0) -> str:
    """Fill in ``{size}``: the bytes of the configuration from line ``body_from`` on."""
    body = "\n".join(text.split("\n")[body_from:]) if body_from else text
    return text.replace("{size}", str(len(body.encode())))


def interface_order(port: str) -> tuple[int, tuple[int, ...]]:
    """Sort key of an interface as IOS lists them: Port-channels, then Ethernet ports by type
    (Fa, Gi, Te) and stack/module/port number, then VLAN interfaces by number."""
    kinds = ("Po", "Fa", "Gi", "Te", "Vlan")
    kind = next((i for i, k in enumerate(kinds) if port.startswith(k) and port[len(k):][:1].isdigit()), len(kinds))
    nums = tuple(int(x) for x in re.findall(r"\d+", port))
    return kind, nums


def acl_order(name: str, named: bool) -> tuple[int, int, str]:
    """Sort key of an access list in ``show running-config``: named lists by name, then numbered
    lists by number (``access-list 100`` before ``access-list 112``)."""
    if named or not name.isdigit():
        return 0, 0, name
    return 1, int(name), ""


@dataclass
class Mode:
    """Where the CLI is: mode name and the section it edits (e.g. interface name, class-map name)."""

    name: str = GLOBAL
    target: str | None = None
    sub: str | None = None  # policy-map class name in config-pmap-c

    @property
    def prompt_suffix(self) -> str:
        return MODES[self.name]


