"""A Catalyst 3750's configuration as IOS keeps it (:class:`RunningConfig`) and where the CLI is
in it (:class:`Mode`)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..topology import long_port
from .acl import Ace, ace_text
from .grammar import GLOBAL, MODES


@dataclass
class Section:
    """A config section: its header line and child lines (order kept)."""

    header: str
    children: list[str] = field(default_factory=list)
    subsections: list[Section] = field(default_factory=list)


@dataclass
class RunningConfig:
    """A switch's configuration as IOS keeps it: hostname, global lines (order kept), numbered ACLs,
    named ACLs, class-maps, policy-maps (with classes), interfaces, monitor sessions."""

    hostname: str = "Switch"
    ports: list[str] = field(default_factory=list)
    globals_: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    acls: dict[str, list[Ace]] = field(default_factory=dict)
    named_acls: set[str] = field(default_factory=set)
    class_maps: dict[str, Section] = field(default_factory=dict)
    policy_maps: dict[str, Section] = field(default_factory=dict)
    interfaces: dict[str, Section] = field(default_factory=dict)
    monitor: list[str] = field(default_factory=list)

    @classmethod
    def factory(cls, hostname: str, ports: list[str]) -> RunningConfig:
        """A switch at factory defaults with ``ports`` (short names)."""
        rc = cls(hostname=hostname, ports=list(ports))
        for p in ports:
            rc.interfaces[p] = Section(f"interface {long_port(p)}")
        return rc

    def copy(self) -> RunningConfig:
        """A deep copy (the interpreter mutates configs in place)."""
        return copy.deepcopy(self)

    def render(self) -> str:
        """``show running-config`` text."""
        out = ["Building configuration...", "", "Current configuration : {size} bytes", "!", "version 12.2",
               "no service pad", "!", f"hostname {self.hostname}", "!"]
        out += [l for l in self.kept if not l.startswith(("version", "no service pad"))]
        if self.kept:
            out.append("!")
        out += self.globals_
        out.append("!")
        for s in self.class_maps.values():
            out.append(s.header)
            out += [f" {c}" for c in s.children]
            out.append("!")
        for s in self.policy_maps.values():
            out.append(s.header)
            for sub in s.subsections:
                out.append(f" {sub.header}")
                out += [f"  {c}" for c in sub.children]
            out.append("!")
        for s in self.interfaces.values():
            out.append(s.header)
            out += [f" {c}" for c in s.children]
            out.append("!")
        for num, aces in self.acls.items():
            if num in self.named_acls:
                out.append(f"ip access-list extended {num}")
                out += [f" {ace_text(a)}" for a in aces]
            else:
                out += [f"access-list {num} {ace_text(a)}" for a in aces]
        out.append("!")
        out += self.monitor
        out.append("end")
        text = "\n".join(out) + "\n"
        return text.replace("{size}", str(len(text)))


@dataclass
class Mode:
    """Where the CLI is: mode name and the section it edits (e.g. interface name, class-map name)."""

    name: str = GLOBAL
    target: str | None = None
    sub: str | None = None  # policy-map class name in config-pmap-c

    @property
    def prompt_suffix(self) -> str:
        return MODES[self.name]


