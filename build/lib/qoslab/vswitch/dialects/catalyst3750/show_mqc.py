"""Catalyst 3750 show output of the modular QoS CLI, as pure functions: ``show class-map`` (with
``class-default``), ``show policy-map``, ``show policy-map interface`` (per-class and policer
counters as input data); each takes an optional name argument as IOS does.

Inputs are plain views of the configuration (:class:`ClassMapView`, :class:`PolicyView`) and
counters (:class:`qoslab.vswitch.facts.ClassCounters`); :func:`views_from_config` builds the views from a
running-config's sections (anything with ``header``, ``children`` and ``subsections``).
Format: IOS 12.2(55)SE on a Catalyst 3750 (the policer prints ``conformed N bytes`` as on that
platform; see tests/data/ios-samples/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...facts import ClassCounters
from ..ioscommon.render import select_class_maps


@dataclass
class ClassMapView:
    """A class-map: name, ``match-all``/``match-any``, its ``match ...`` lines as configured."""

    name: str
    how: str = "match-all"
    matches: list[str] = field(default_factory=list)


@dataclass
class PolicyView:
    """A policy-map: name and its classes in order, each with its action lines (``set ip dscp 40``,
    ``police 10000000 8000 exceed-action drop``, ``trust dscp``)."""

    name: str
    classes: list[tuple[str, list[str]]] = field(default_factory=list)


DEFAULT_CLASS = ClassMapView("class-default", "match-any", ["match any"])


def views_from_config(class_sections: dict[str, Any],
                      policy_sections: dict[str, Any]) -> tuple[list[ClassMapView], list[PolicyView]]:
    """Class-map and policy-map views from running-config sections (``header`` like
    ``class-map match-all NAME`` / ``policy-map NAME``, ``children``, ``subsections``). Pure."""
    cms = []
    for name, s in class_sections.items():
        w = s.header.split()
        cms.append(ClassMapView(name, w[1] if len(w) > 2 else "match-all", list(s.children)))
    pms = [PolicyView(name, [(sub.header.split()[1], list(sub.children)) for sub in s.subsections])
           for name, s in policy_sections.items()]
    return cms, pms


def _match_text(line: str) -> str:
    w = line.split()[1:]  # drop "match"
    if w[:1] == ["access-group"]:
        return "access-group  " + " ".join(w[1:]) if w[1:2] != ["name"] else "access-group name " + " ".join(w[2:])
    if w[:2] == ["ip", "dscp"]:
        return "ip dscp " + " ".join(w[2:])
    return " ".join(w)


def render_class_map(cms: list[ClassMapView], name: str | None = None) -> str | None:
    """``show class-map [NAME]``; None when NAME is not a class-map (IOS: ``% Class map NAME not
    configured``, the caller prints that)."""
    allc = select_class_maps(cms, DEFAULT_CLASS, name)
    if allc is None:
        return None
    out = []
    for cm, i in allc:
        out.append(f" Class Map {cm.how} {cm.name} (id {i})")
        out += [f"   Match {_match_text(m)} " for m in cm.matches]
        out.append("")
    return "\n".join(out) + "\n"


def _action_text(line: str) -> str:
    return line.replace("set ip dscp", "set dscp")


def render_policy_map(pms: list[PolicyView], name: str | None = None) -> str | None:
    """``show policy-map [NAME]``; None when NAME is not a policy-map."""
    sel = [p for p in pms if name is None or p.name == name]
    if name is not None and not sel:
        return None
    out = []
    for p in sel:
        out.append(f"  Policy Map {p.name}")
        for cname, actions in p.classes:
            out.append(f"    Class {cname}")
            out += [f"      {_action_text(a)}" for a in actions]
        out.append("")
    return "\n".join(out) + "\n"


def _police_block(action: str, c: ClassCounters) -> list[str]:
    """``police RATE BURST [exceed-action drop|policed-dscp-transmit]`` as IOS shows it."""
    w = action.split()
    rate, burst = w[1], w[2] if len(w) > 2 and w[2].isdigit() else "8000"
    exceed = w[w.index("exceed-action") + 1] if "exceed-action" in w else "drop"
    return ["      police:", f"          cir {rate} bps, bc {burst} bytes",
            f"          conformed {c.conformed_bytes} bytes; actions:", "            transmit",
            f"          exceeded {c.exceeded_bytes} bytes; actions:", f"            {exceed}",
            "          conformed 0000 bps, exceed 0000 bps"]


def _class_block(cm: ClassMapView, actions: list[str], c: ClassCounters) -> list[str]:
    out = [f"    Class-map: {cm.name} ({cm.how})", f"      {c.packets} packets, {c.bytes} bytes",
           "      5 minute offered rate 0 bps, drop rate 0 bps"]
    out += [f"      Match: {_match_text(m).replace('  ', ' ')}" for m in cm.matches]
    for a in actions:
        out += _police_block(a, c) if a.startswith("police") else [f"      {_action_text(a)}"]
    return out + [""]


def render_policy_map_interface(ports: list[tuple[str, str]], cms: list[ClassMapView], pms: list[PolicyView],
                                counters: dict[tuple[str, str], ClassCounters] | None = None) -> str:
    """``show policy-map interface [PORT]`` for ``ports`` = [(long port name, input policy name)];
    ``counters[(port, class)]`` per class (zeros when missing). Every policy ends with
    ``class-default``."""
    counters = counters or {}
    byname = {cm.name: cm for cm in cms}
    out = []
    for port, policy in ports:
        pm = next((p for p in pms if p.name == policy), PolicyView(policy))
        out += [f" {port} ", "", f"  Service-policy input: {policy}", ""]
        classes = list(pm.classes)
        if not any(n == "class-default" for n, _ in classes):
            classes.append(("class-default", []))
        for cname, actions in classes:
            cm = DEFAULT_CLASS if cname == "class-default" else byname.get(cname, ClassMapView(cname))
            out += _class_block(cm, actions, counters.get((port, cname), ClassCounters()))
    return "\n".join(out) + ("\n" if out else "")


