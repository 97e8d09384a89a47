"""How a platform's running-config divides into QoS lines and the rest, as pure text functions:
:class:`QosRules` (which lines are QoS on a platform: the Catalyst 3750's by default, the others'
in :mod:`qoslab.platforms`), the one walk that classifies every line (:func:`qos_lines`), and what
is built on it: the split (:func:`split_qos`), an order-free comparison form
(:func:`normalized_qos`) and a rendered profile's non-QoS lines (:func:`non_qos_lines`, which the
push refuses). Used by the push's diff (:mod:`qoslab.ios.configdiff`), the ownership's items
(:mod:`qoslab.switch.ownership`) and the platforms' renderers.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple

from .linekeys import line_keys


@dataclass(frozen=True)
class QosRules:
    """Which lines of a platform's config are QoS lines (what a push may own: diff, rollback,
    :mod:`qoslab.switch.ownership`): global lines, whole sections (header and children), interface
    children; the hier-config platform (``hier_config.Platform`` member name) whose rules compute
    the remediation; ``negations``: (pattern, replacement) pairs that correct what hier-config's
    driver writes where the platform takes another form (EOS: ``no priority`` is undone by
    ``priority strict``); ``keys``: the settings a global or interface line sets (two lines with
    a key in common replace each other on the switch: :func:`qoslab.ios.linekeys.line_keys`)."""

    globals_: re.Pattern[str]
    sections: re.Pattern[str]
    interface: re.Pattern[str]
    hier_platform: str = "CISCO_IOS"
    negations: tuple[tuple[str, str], ...] = ()
    keys: Callable[[str], frozenset[str]] = line_keys


#: Global config lines that belong to QoS (and SPAN, which qoslab manages with the profile).
_QOS_GLOBAL = re.compile(r"^(mls qos\b|access-list 1\d\d\b|monitor session\b)")
_QOS_SECTIONS = re.compile(r"^(class-map\b|policy-map\b|ip access-list extended\b)")
_QOS_IF_LINES = re.compile(r"^(mls qos trust\b|service-policy\b|srr-queue\b|priority-queue\b|queue-set\b)")
#: The Catalyst 3750's QoS lines (the rules before platforms existed; every default below).
C3750_RULES = QosRules(_QOS_GLOBAL, _QOS_SECTIONS, _QOS_IF_LINES)


class QosLine(NamedTuple):
    """One line of a configuration as :func:`qos_lines` classifies it: ``text`` (indentation
    kept, trailing white space cut); ``role``: ``section`` (a QoS section's header or child),
    ``global`` (a global QoS line), ``interface`` (an interface header), ``if-qos`` (an interface's
    QoS line or a deeper line under it, EOS ``tx-queue`` blocks), ``other`` (not QoS); ``head``:
    the line that opens its QoS item (the section header; the interface QoS line; "" for
    ``interface`` and ``other``); ``interface``: the interface a line is under ("" outside one)."""

    text: str
    role: str
    head: str
    interface: str


def qos_lines(config_text: str, rules: QosRules = C3750_RULES) -> Iterator[QosLine]:
    """Every line of a running-config text by ``rules`` (blank lines and the ``Building
    configuration`` / ``Current configuration`` banners left out), in order: the one walk of
    :func:`split_qos` and the ownership's items (:mod:`qoslab.switch.ownership`). Pure."""
    section, head, iface, nested = "", "", "", -1  # nested: indent of the interface QoS line over deeper ones
    for raw in config_text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.startswith(("Building configuration", "Current configuration")):
            continue
        indent = len(line) - len(line.lstrip())
        if section == "interface" and 0 <= nested < indent:
            yield QosLine(line, "if-qos", head, iface)
            continue
        nested = -1
        if not line.startswith(" "):
            iface = ""
            if rules.sections.match(line):
                section, head = "section", line
            elif line.startswith("interface "):
                section, head, iface = "interface", "", line.split(None, 1)[1].strip()
            else:
                section, head = ("global", line) if rules.globals_.match(line) else ("other", "")
            yield QosLine(line, section, head, iface)
        elif section == "section":
            yield QosLine(line, section, head, iface)
        elif section == "interface" and rules.interface.match(line.strip()):
            head, nested = line, indent
            yield QosLine(line, "if-qos", head, iface)
        else:
            yield QosLine(line, "other", "", iface)


def split_qos(config_text: str, rules: QosRules = C3750_RULES) -> tuple[list[str], list[str]]:
    """Split a running-config text into (non-QoS lines, QoS lines), both with their indentation
    (:func:`qos_lines`). Interface headers go to both sides so their QoS children keep their
    context; on the QoS side only those with QoS children. Pure."""
    walked = list(qos_lines(config_text, rules))
    qos = [q for q in walked if q.role != "other"]
    kept = [q.text for i, q in enumerate(qos)  # interface headers only with QoS children
            if q.role != "interface" or i + 1 < len(qos) and qos[i + 1].role == "if-qos"]
    return [q.text for q in walked if q.role in ("other", "interface")], kept


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
