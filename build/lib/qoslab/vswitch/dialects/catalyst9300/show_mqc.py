"""The Catalyst 9300's modular QoS CLI output (IOS-XE 17.x), as pure renderers:

- ``show class-map [NAME]``: ``Class Map match-any|match-all NAME (id N)``, one ``Match`` line per
  ``match`` of the class-map (DSCP values by name with the number after it, ``Match   dscp cs5
  (40)``; ``access-group  112``, ``access-group name X``), ``class-default`` (id 0) with ``Match any``;
- ``show policy-map [NAME]``: per class its actions, a policer over three lines (``police cir R bc
  B`` then its conform and exceed actions);
- ``show policy-map interface [PORT]``: per port its input policy (every class and
  ``class-default``: packets, one ``Match:`` line per match, ``QoS Set``, the policer's
  ``conformed``/``exceeded`` bytes from the data path) and its output queuing policy (per class:
  packets, ``(total drops)`` and ``(bytes output)``, the priority class's in ``queue stats for all
  priority classes``). Drops: UADP counts them in bytes; tc counts dropped packets, so the virtual
  switch shows dropped packets x the queue's mean sent packet size (1514 B when it sent none): an
  estimate.

Layouts: a real 9300-family switch's (genieparser's IOS-XE recordings ``ShowClassMap``,
``ShowPolicyMap``, ``ShowPolicyMapInterface`` golden_output29; Catalyst 9300 QoS configuration
guide, IOS-XE 17.x, "Monitoring QoS"; tests/data/show-recordings/README.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ....ios.mqc import EgressClass
from ....ios.xe import dscp_name
from ...facts import ClassCounters
from ..ioscommon.render import select_class_maps
from .counters import QueueStat


@dataclass
class XeClassMap:
    """A class-map as configured: name, ``match-all``/``match-any``, its ``match ...`` lines."""

    name: str
    how: str = "match-all"
    matches: list[str] = field(default_factory=list)


#: IOS-XE's implicit class.
CLASS_DEFAULT = XeClassMap("class-default", "match-any", ["match any"])


def _dscp_list(words: list[str]) -> str:
    """DSCP words as IOS-XE prints them: a name with its value after it (``cs5 (40)``)."""
    out = []
    for w in words:
        value = next((d for d in range(64) if dscp_name(d) == w), None) if not w.isdigit() else int(w)
        out.append(f"{w} ({value})" if value is not None and not w.isdigit() else w)
    return " ".join(out)


def match_text(line: str, form: str = "class-map") -> str:
    """One ``match`` line of a class-map as ``show class-map`` (``form`` = ``class-map``:
    ``Match   dscp cs5 (40)``) or ``show policy-map interface`` (``Match:  dscp cs5 (40)``)
    prints it."""
    w = line.split()[1:]
    if w[:1] == ["dscp"] or w[:2] == ["ip", "dscp"]:
        vals = _dscp_list(w[2:] if w[0] == "ip" else w[1:])
        return f"Match   dscp {vals}" if form == "class-map" else f"Match:  dscp {vals}"
    if w[:2] == ["access-group", "name"]:
        body = f"access-group name {' '.join(w[2:])}"
    elif w[:1] == ["access-group"]:
        body = f"access-group  {' '.join(w[1:])}" if form == "class-map" else f"access-group {' '.join(w[1:])}"
    else:
        body = " ".join(w)
    return f"Match {body} " if form == "class-map" else f"Match: {body}"


def render_class_map_xe(cms: list[XeClassMap], name: str | None = None) -> str | None:
    """``show class-map [NAME]``; None when NAME is not a class-map."""
    allc = select_class_maps(cms, CLASS_DEFAULT, name)
    if allc is None:
        return None
    out = []
    for cm, i in allc:
        out += [f" Class Map {cm.how} {cm.name} (id {i})"] + [f"   {match_text(m)}" for m in cm.matches] + [""]
    return "\n".join(out) + "\n"


def _action_lines(action: str, indent: str) -> list[str]:
    """A policy-map class action as ``show policy-map`` prints it (a policer over three lines)."""
    w = action.split()
    if w[0] != "police" or "conform-action" not in w:
        return [indent + action]
    ci, ei = w.index("conform-action"), w.index("exceed-action") if "exceed-action" in w else len(w)
    return [indent + " ".join(w[:ci]), f"{indent}  {' '.join(w[ci:ei])} ", f"{indent}  {' '.join(w[ei:])} "]


def render_policy_map_xe(pms: list[tuple[str, list[tuple[str, list[str]]]]], name: str | None = None) -> str | None:
    """``show policy-map [NAME]``: ``pms`` = [(policy, [(class, [action lines])])]; None when NAME
    is not a policy-map."""
    sel = [p for p in pms if name is None or p[0] == name]
    if name is not None and not sel:
        return None
    out = []
    for policy, classes in sel:
        out.append(f"  Policy Map {policy}")
        for cname, actions in classes:
            out.append(f"    Class {cname}")
            for a in actions:
                out += _action_lines(a, "      ")
        out.append("")
    return "\n".join(out) + "\n"


@dataclass
class InputClass:
    """One class of an input policy on one port: the class-map, its set DSCP, its policer (cir
    bits/s, bc bytes) and its counters."""

    cm: XeClassMap
    set_dscp: int | None = None
    police: tuple[int, int] | None = None
    counts: ClassCounters = field(default_factory=ClassCounters)


def render_input_xe(policy: str, classes: list[InputClass]) -> list[str]:
    """An input policy's block (class-default included by the caller, last)."""
    out = [f"  Service-policy input: {policy}", ""]
    for c in classes:
        out += [f"    Class-map: {c.cm.name} ({c.cm.how})", f"      {c.counts.packets} packets"]
        out += [f"      {match_text(m, 'interface')}" for m in c.cm.matches]
        if c.police:
            out += ["      police:", f"          cir {c.police[0]} bps, bc {c.police[1]} bytes",
                    f"        conformed {c.counts.conformed_bytes} bytes; actions:", "          transmit",
                    f"        exceeded {c.counts.exceeded_bytes} bytes; actions:", "          drop",
                    "        conformed 0000 bps, exceeded 0000 bps"]
        if c.set_dscp is not None:
            out += ["      QoS Set", f"        dscp {dscp_name(c.set_dscp)}"]
        out.append("")
    return out


def render_output_xe(policy: str, classes: list[tuple[EgressClass, list[str], QueueStat]]) -> list[str]:
    """An output queuing policy's block: classes as (EgressClass, its class-map's match lines,
    queue counters)."""
    out = [f"  Service-policy output: {policy}", ""]
    prio = [(c, s) for c, _, s in classes if c.priority]
    if prio:
        out += ["    queue stats for all priority classes:", "      Queueing"]
        for c, s in prio:
            out += [f"      priority level {c.priority}", "", f"      (total drops) {s.dropped_bytes}",
                    f"      (bytes output) {s.sent_bytes}", ""]
    for c, matches, s in classes:
        out += [f"    Class-map: {c.name} (match-any)", f"      {s.sent_packets + s.dropped_packets} packets"]
        out += [f"      {match_text(m, 'interface')}" for m in (matches or ["match any"])]
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
