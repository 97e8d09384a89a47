"""The QoS part of a Catalyst running-config, as pure text functions: split it from the rest,
build the intended config for a profile, compute the remediation (hier-config, IOS rules) and
order it so every reference exists when it is made. Used by the push (:mod:`qoslab.switch.push`)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class QosRules:
    """Which lines of a platform's config are QoS lines (the profile owns them: diff, rollback):
    global lines, whole sections (header and children), interface children; and the hier-config
    platform (``hier_config.Platform`` member name) whose rules compute the remediation;
    ``negations``: (pattern, replacement) pairs that correct what hier-config's driver writes where
    the platform takes another form (EOS: ``no priority`` is undone by ``priority strict``)."""

    globals_: re.Pattern[str]
    sections: re.Pattern[str]
    interface: re.Pattern[str]
    hier_platform: str = "CISCO_IOS"
    negations: tuple[tuple[str, str], ...] = ()


#: Global config lines that belong to QoS (and SPAN, which qoslab manages with the profile).
_QOS_GLOBAL = re.compile(r"^(mls qos\b|access-list 1\d\d\b|monitor session\b)")
_QOS_SECTIONS = re.compile(r"^(class-map\b|policy-map\b|ip access-list extended\b)")
_QOS_IF_LINES = re.compile(r"^(mls qos trust\b|service-policy\b|srr-queue\b|priority-queue\b|queue-set\b)")
#: The Catalyst 3750's QoS lines (the rules before platforms existed; every default below).
C3750_RULES = QosRules(_QOS_GLOBAL, _QOS_SECTIONS, _QOS_IF_LINES)


def split_qos(config_text: str, rules: QosRules = C3750_RULES) -> tuple[list[str], list[str]]:
    """Split a running-config text into (non-QoS lines, QoS lines), both with their indentation.
    Interface headers go to both sides so their QoS children keep their context. Pure."""
    other, qos = [], []
    section: str | None = None  # "qos" | "if" | "other"
    nested = -1  # indent of the interface QoS line whose deeper lines are QoS too (EOS tx-queue blocks)
    for raw in config_text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.startswith(("Building configuration", "Current configuration")):
            continue
        indent = len(line) - len(line.lstrip())
        if section == "if" and 0 <= nested < indent:
            qos.append(line)
            continue
        nested = -1
        if not line.startswith(" "):
            if rules.sections.match(line):
                section = "qos"
                qos.append(line)
            elif line.startswith("interface "):
                section = "if"
                other.append(line)
                qos.append(line)
            else:
                section = "other"
                (qos if rules.globals_.match(line) else other).append(line)
            continue
        if section == "qos" or section == "if" and rules.interface.match(line.strip()):
            qos.append(line)
            nested = indent if section == "if" else -1
        else:
            other.append(line)
    # drop interface headers without QoS children from the QoS side
    out, i = [], 0
    while i < len(qos):
        if qos[i].startswith("interface ") and (i + 1 == len(qos) or not qos[i + 1].startswith(" ")):
            i += 1
            continue
        out.append(qos[i])
        i += 1
    return other, out


def normalized_qos(config_text: str, rules: QosRules = C3750_RULES) -> list[str]:
    """The QoS part of a config as a sorted list of path strings (``policy-map p / class c / set ip
    dscp 40``), for comparing a device's state with the intended one regardless of order and
    indentation width. Pure."""
    _, qos = split_qos(config_text, rules)
    out: set[str] = set()
    stack: list[tuple[int, str]] = []
    for l in qos:
        indent = len(l) - len(l.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = " / ".join([t for _, t in stack] + [l.strip()])
        stack.append((indent, l.strip()))
        if not (indent == 0 and l.startswith("interface ")):
            out.add(path)
    return sorted(out)


def non_qos_lines(profile_lines: list[str], rules: QosRules = C3750_RULES) -> list[str]:
    """The lines of a rendered profile (config lines, sub-mode children indented) that are not QoS
    configuration by :func:`split_qos`'s rules (interface headers aside). A profile may only
    change QoS, so the push refuses any. Pure."""
    other, _ = split_qos("\n".join(profile_lines), rules)
    return [l for l in other if not l.startswith("interface ")]


#: Lines a switch changes by itself or that carry no configuration: left out of whole-config
#: comparisons (``ntp clock-period`` is rewritten by IOS as the clock drifts).
_VOLATILE = re.compile(r"^(!|end$|Building configuration|Current configuration|ntp clock-period\b)")


def normalized_config(config_text: str) -> list[str]:
    """The whole config as a sorted list of path strings (``interface GigabitEthernet1/0/1 /
    mls qos trust dscp``), comments, ``end`` and volatile lines left out, for comparing a
    device's running-config with the intended one line by line, QoS or not. Pure."""
    out: set[str] = set()
    stack: list[tuple[int, str]] = []
    for raw in config_text.splitlines():
        l = raw.rstrip()
        if not l.strip() or _VOLATILE.match(l.strip()):
            continue
        indent = len(l) - len(l.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        out.add(" / ".join([t for _, t in stack] + [l.strip()]))
        stack.append((indent, l.strip()))
    return sorted(out)


def intended_config(running_text: str, profile_lines: list[str], rules: QosRules = C3750_RULES) -> str:
    """The running-config with its QoS lines replaced by the profile's (text). Pure."""
    other, _ = split_qos(running_text, rules)
    other = [l for l in other if l.strip() != "end"]
    # the profile's lines by section; interface children go into the existing interface sections
    extra: dict[str, list[str]] = {}
    tail: list[str] = []
    header = None
    for l in profile_lines:
        if not l.startswith(" "):
            header = l if l.startswith("interface ") else None
            if header is None:
                tail.append(l)
            else:
                extra.setdefault(header, [])
        elif header is not None:
            extra[header].append(l.rstrip())
        else:
            tail.append(l)
    out = []
    for l in other:
        out.append(l)
        if l in extra:
            out += extra.pop(l)
    for h, children in extra.items():  # interfaces the running-config did not show
        out += [h] + children
    return "\n".join(out + tail) + "\n"


def remediation(running_text: str, intended_text: str, hier_platform: str = "CISCO_IOS",
                negations: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """Config lines that turn the running config into the intended one (hier-config, the rules of
    ``hier_platform``: ``CISCO_IOS``, ``CISCO_XE``, ``ARISTA_EOS``; ``negations``: the platform's
    corrections, :attr:`QosRules.negations`)."""
    from hier_config import Platform, WorkflowRemediation, get_hconfig

    plat = Platform[hier_platform]
    run = get_hconfig(plat, _for_hier(running_text))
    want = get_hconfig(plat, _for_hier(intended_text))
    lines = list(WorkflowRemediation(run, want).remediation_config.dump_simple())
    for pattern, repl in negations:
        lines = [re.sub(pattern, repl, line) for line in lines]
    return order_for_ios(lines)


_PRIORITY = [("mls qos", 0), ("qos map", 0), ("access-list", 1), ("ip access-list", 1), ("class-map", 2),
             ("policy-map", 3), ("interface", 4), ("monitor session", 5)]


def _prio(header: str) -> int:
    h = header.removeprefix("no ").strip()
    return next((p for k, p in _PRIORITY if h.startswith(k)), 6)


def order_for_ios(lines: list[str]) -> list[str]:
    """Order remediation blocks so every reference exists when it is made and is gone before its
    target is removed: interface blocks that only remove come first, then additions in dependency
    order (mls qos, ACLs, class-maps, policy-maps, interfaces, monitor sessions), then removals of
    global objects in reverse order. Pure."""
    blocks: list[list[str]] = []
    for l in lines:
        if l.startswith(" ") and blocks:
            blocks[-1].append(l)
        else:
            blocks.append([l])
    first = [b for b in blocks if b[0].startswith("interface ") and all(c.strip().startswith("no ") for c in b[1:])]
    adds = [b for b in blocks if b not in first and not b[0].startswith("no ")]
    removes = [b for b in blocks if b[0].startswith("no ")]
    adds.sort(key=lambda b: _prio(b[0]))
    removes.sort(key=lambda b: -_prio(b[0]))
    # a removal whose command is the prefix of an added line is a replacement: remove first, or it
    # would also remove the new line (e.g. a SPAN destination gaining "encapsulation replicate")
    replaced = [b for b in removes if len(b) == 1
                and any(a[0].startswith(b[0][3:] + " ") or _same_map(b[0][3:], a[0]) for a in adds)]
    removes = [b for b in removes if b not in replaced]
    return [l for b in first + replaced + adds + removes for l in b]


def _same_map(removed: str, added: str) -> bool:
    """Whether two EOS ``qos map`` lines map into the same target (``qos map dscp 8 9 to
    traffic-class 1`` and ``qos map dscp 8 10 to traffic-class 1``): the ``no`` form resets its
    keys to EOS's default, so it must come before the new map (EOS User Manual, QoS chapter)."""
    shape = [w for w in removed.split() if not w.isdigit()]
    return removed.startswith("qos map ") and shape == [w for w in added.split() if not w.isdigit()] \
        and removed.split()[-1] == added.split()[-1]


def _for_hier(text: str) -> str:
    return "\n".join(l for l in text.splitlines()
                     if l.strip() and not l.startswith(("Building configuration", "Current configuration", "end")))


