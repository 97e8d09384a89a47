"""What a push owns on a switch, and the plan that changes only that (pure; issue 49).

A switch's configuration holds more than qoslab's QoS: management access lists, VTY
``access-class`` lines, SNMP, an operator's own class-maps and policy-maps. A push adds, changes
and removes only what qoslab made, which is provable from the switch's own configuration:

- objects named ``QOSLAB-*`` (access lists, class-maps, policy-maps; profiles cannot take such
  names, :data:`qoslab.profiles.model.RESERVED_PREFIXES`) are qoslab's by their name;
- everything else a push made is listed by that push in the configuration itself, in the standard
  access list ``QOSLAB-OWNED`` (:data:`RECORD`), whose remarks list it (:mod:`.ownrecord`); the
  list is never applied anywhere, ``deny any`` its only entry. It travels with the configuration: backups, rollbacks,
  ``write memory`` and another machine's push all see it.

The units a push owns (:class:`Item`, by key): an access list (``acl 112``, ``acl rmi``: named
or numbered), a class-map, a policy-map (``class-map class112``, ``policy-map police-jp``), a SPAN
session (``monitor session 1``), a global QoS line (``global mls qos``), an interface's QoS line
with its sub-lines (``if GigabitEthernet1/0/1: priority-queue out``; EOS ``tx-queue`` blocks).
Which lines are QoS lines is the platform's :class:`~qoslab.ios.qoswalk.QosRules`; other
lines are never owned and never changed.

:func:`plan` builds the intended configuration: the running one without the items qoslab owns,
with the profile's lines and the new record. It refuses (:class:`OwnershipError`, nothing sent)
a profile that would change an item qoslab did not make (same key, other content), replace a line
qoslab did not make (a profile line with a setting in common: :attr:`QosRules.keys`), or remove
an object that a line qoslab did not make uses (a foreign policy-map's ``class``, a VTY
``access-class``, an SNMP community's list, a ``service-policy``). :meth:`Plan.check` checks the
remediation hier-config computed against the same ownership before anything is sent, and
:meth:`Plan.record_first` writes the record first too when the push makes new items. A profile
item the switch already has, identical, but not made by qoslab, stays the owner's: the push does
not record it (``adopt`` records it, for a switch an earlier qoslab configured).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ios.configdiff import RECORD, RECORD_HEADER, canonical_acls, merge_profile, record_remarks, without_record
from ..ios.qoswalk import QosRules, qos_lines
from .ownrecord import OwnershipError, read_record, record_lines

#: Objects with names that start so are qoslab's.
OWNED_PREFIX = "QOSLAB-"
_OBJECT = re.compile(r"^(?:ip access-list (?:standard |extended )?(?P<acl>\S+)|(?P<kind>class-map|policy-map)\b.*?"
                     r"(?P<name>\S+))\s*$")
_NUMBERED = re.compile(r"^access-list (\d+)\b")
_MONITOR = re.compile(r"^monitor session (\S+)\b")


def _norm(line: str) -> str:
    return " ".join(line.split())


def object_key(header: str) -> str:
    """The key of a section header (``class-map match-all c`` -> ``class-map c``; ``ip access-list
    extended 112`` -> ``acl 112``; EOS ``policy-map type quality-of-service p`` -> ``policy-map p``)."""
    m = _OBJECT.match(_norm(header))
    if not m:
        return f"section {_norm(header)}"
    return f"acl {m.group('acl')}" if m.group("acl") else f"{m.group('kind')} {m.group('name')}"


def global_key(line: str) -> str:
    """The key of a global QoS line: a numbered list's line its list (``acl 112``), a SPAN line its
    session (``monitor session 1``), any other line itself (``global mls qos``)."""
    text = _norm(line)
    if m := _NUMBERED.match(text):
        return f"acl {m.group(1)}"
    if m := _MONITOR.match(text):
        return f"monitor session {m.group(1)}"
    return f"global {text}"


def named_owned(key: str) -> bool:
    """Whether an item is qoslab's by its name (``QOSLAB-*`` access lists, class-maps, policy-maps)."""
    kind, _, name = key.partition(" ")
    return kind in ("acl", "class-map", "policy-map") and name.startswith(OWNED_PREFIX) and name != RECORD


@dataclass
class Item:
    """One unit of ownership: its key, its config lines (indented as printed; an interface line's
    without the interface header), the interface it is on (``if`` items)."""

    key: str
    lines: list[str] = field(default_factory=list)
    interface: str = ""

    @property
    def kind(self) -> str:
        return self.key.split(" ", 1)[0]

    @property
    def line(self) -> str:
        """The item's first line, stripped (an interface line, a global line, a header)."""
        return _norm(self.lines[0])

    def content(self) -> tuple[str, ...]:
        """The lines as paths (``policy-map p / class c / set dscp 40``), ``!`` lines left out:
        what two configurations are compared by, whatever their indentation width."""
        out: list[str] = []
        stack: list[tuple[int, str]] = []
        for raw in self.lines:
            if raw.strip() == "!":
                continue
            indent = len(raw) - len(raw.lstrip())
            while stack and stack[-1][0] >= indent:
                stack.pop()
            out.append(" / ".join([t for _, t in stack] + [_norm(raw)]))
            stack.append((indent, _norm(raw)))
        return tuple(out)

    def display(self) -> str:
        """How a message names the item: its first line, with the interface it is on."""
        return f"interface {self.interface} / {self.line}" if self.interface else self.line


def walk(config_text: str, rules: QosRules) -> list[tuple[str, str | None]]:
    """Every line of a configuration with the key of the item it belongs to, None for lines that
    are not QoS lines by ``rules`` (interface headers included: they belong to no item), in
    :func:`qoslab.ios.qoswalk.qos_lines`'s classification (the one of ``split_qos``). Pure."""
    out: list[tuple[str, str | None]] = []
    for q in qos_lines(config_text, rules):
        if q.role == "section":
            out.append((q.text, object_key(q.head)))
        elif q.role == "global":
            out.append((q.text, global_key(q.text)))
        elif q.role == "if-qos":
            out.append((q.text, f"if {q.interface}: {_norm(q.head)}"))
        else:
            out.append((q.text, None))
    return out


def items(config_text: str, rules: QosRules) -> dict[str, Item]:
    """The QoS items of a configuration by key (:func:`walk`). Pure."""
    out: dict[str, Item] = {}
    for line, key in walk(config_text, rules):
        if key is None:
            continue
        it = out.setdefault(key, Item(key))
        it.lines.append(line)
        if key.startswith("if "):
            it.interface = key[3:].split(":", 1)[0]
    return out


# ------------------------------------------------------------------------------------------ the plan
_REFS = (
    (re.compile(r"\baccess-(?:group|class) (?:name )?(\S+)"), "acl"),
    (re.compile(r"^\s*snmp-server community \S+ (?:view \S+ )?(?:ro|rw|RO|RW) (?:ipv6 \S+ )?(\S+)"), "acl"),
    (re.compile(r"\bservice-policy (?:type \S+ )?(?:input |output )?(\S+)"), "policy-map"),
)
_CLASS = re.compile(r"^\s+class (\S+)")


def references(line: str, in_policy_map: bool = False) -> set[str]:
    """The keys of the objects ``line`` uses: access lists (``match access-group``, ``ip
    access-group``, a VTY's ``access-class``, an SNMP community's list), policy-maps
    (``service-policy``), class-maps (a policy-map's ``class`` lines, with ``in_policy_map``)."""
    out = {f"{kind} {m.group(1)}" for pat, kind in _REFS for m in pat.finditer(line)}
    if in_policy_map and (m := _CLASS.match(line)) and m.group(1) != "class-default":
        out.add(f"class-map {m.group(1)}")
    return out


@dataclass
class Plan:
    """A push's plan: the intended configuration (the record included), the items of the running
    configuration and those of them qoslab owns, the record after the push, what ``adopt`` took
    over."""

    intended: str
    running: dict[str, Item]
    owned: frozenset[str]
    record: frozenset[str]
    adopted: frozenset[str]
    #: the record before the push (None: the switch had none)
    previous: frozenset[str] | None = None

    def record_first(self, lines: list[str]) -> list[str]:
        """The remediation ``lines`` with the record written first when the push makes items the
        record does not list yet (the record before the push with them added), and whole again
        last: a push interrupted whose rollback fails too leaves what it made recorded, so the
        next push may finish or remove it (a recorded item that was never made owns nothing)."""
        before = self.previous or frozenset()
        if not lines or self.record <= before:
            return lines
        tail = next((i for i, line in enumerate(lines) if line in (RECORD_HEADER, f"no {RECORD_HEADER}")),
                    len(lines))
        first = ([f"no {RECORD_HEADER}"] if self.previous is not None else []) + record_lines(before | self.record)
        return first + lines[:tail] + [f"no {RECORD_HEADER}"] + record_lines(self.record)

    def check(self, lines: list[str], rules: QosRules) -> None:
        """Refuse a remediation (``lines``, hier-config's, ordered) that touches anything but an
        item qoslab owns, a new item or the record. Raises OwnershipError naming the first line."""
        iface, block = "", ""
        for raw in lines:
            line = _norm(raw)
            depth = len(raw) - len(raw.lstrip())
            if depth == 0:
                iface, block = "", ""
                body = line.removeprefix("no ").removeprefix("default ")
                if body == RECORD_HEADER or body.startswith("ip access-list resequence "):
                    key = f"acl {body.split()[3]}" if body.startswith("ip access-list resequence") else ""
                    if key:
                        self._may(key, raw)
                    block = "record" if body == RECORD_HEADER else ""
                    continue
                if body.startswith("interface "):
                    if line.startswith("no "):
                        raise OwnershipError(f"the change would remove `{body}`, which qoslab did not make")
                    iface = body.split(None, 1)[1]
                    continue
                if rules.sections.match(body):
                    self._may(object_key(body), raw)
                elif rules.globals_.match(body):
                    self._may(global_key(body), raw)
                else:
                    raise OwnershipError(f"the change would touch `{line}`, which is not one of qoslab's QoS lines")
                continue
            if block == "record" or not iface:
                continue  # a section's lines: its header was checked
            if depth <= 2 or not block:
                body = line.removeprefix("no ").removeprefix("default ")
                if not (rules.interface.match(body) or rules.interface.match(body + " ")):
                    raise OwnershipError(f"the change would touch `interface {iface} / {line}`, which is not one of "
                                         "qoslab's QoS lines")
                block = f"if {iface}: {body}"
                removed = [k for k in self.running if k == block or k.startswith(block + " ")] if body != line \
                    else [block]
                for k in removed:  # ``default qos trust`` removes ``qos trust dscp``
                    self._may(k, f"interface {iface} / {line}")

    def _may(self, key: str, line: str) -> None:
        if key in self.running and key not in self.owned:
            raise OwnershipError(f"the change would alter `{self.running[key].display()}`, which qoslab did not make "
                                 f"(sent line: `{line.strip()}`)")


def plan(running: str, profile_lines: list[str], rules: QosRules, adopt: bool = False) -> Plan:
    """The plan of a push of ``profile_lines`` onto the configuration ``running`` (see the module
    doc). Raises OwnershipError naming every line of another owner the push would change (the
    first few)."""
    recorded = read_record(running)
    run_text = canonical_acls(without_record(running))
    have = items(run_text, rules)
    want = items(canonical_acls("\n".join(profile_lines) + "\n"), rules)
    owned = frozenset(k for k in have if k in recorded or named_owned(k))
    problems: list[str] = []
    adopted: set[str] = set()
    for k, w in want.items():
        h = have.get(k)
        if h is None or k in owned:
            continue
        if h.content() != w.content():
            problems.append(f"`{h.display()}`: the profile has another `{w.display()}`")
        elif adopt:
            adopted.add(k)
    foreign = [h for k, h in have.items() if k not in owned and h.kind in ("global", "if")]
    for k, w in want.items():
        if k in have or w.kind not in ("global", "if"):
            continue
        keys = rules.keys(w.line)
        for h in foreign:
            if h.interface == w.interface and keys & rules.keys(h.line):
                problems.append(f"`{h.display()}`: the profile's `{w.line}` would replace it")
    removed = {k for k in owned if k not in want}
    top = ""
    for line, key in walk(run_text, rules):
        if not line.startswith(" "):
            top = _norm(line)
        if key is not None and key in owned:
            continue
        used = references(line, in_policy_map=key is not None and key.startswith("policy-map ")) & removed
        where = _norm(line) if not line.startswith(" ") else f"{top} / {_norm(line)}"
        for u in sorted(used):
            problems.append(f"`{where}` uses {u.replace('acl ', 'access list ')}, which the push would remove")
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise OwnershipError("it would change configuration that qoslab did not make (neither named "
                             f"{OWNED_PREFIX}* nor listed in {RECORD}): " + "; ".join(problems[:3]) + more)
    record = frozenset(k for k in want if not named_owned(k) and (k not in have or k in owned or k in adopted))
    # the profile's lines replace qoslab's items and the identical copies of its own items
    drop = owned | frozenset(k for k in want if k in have)
    intended = intended_text(run_text, drop, profile_lines, rules) + "".join(l + "\n" for l in record_lines(record))
    return Plan(intended, have, owned, record, frozenset(adopted), recorded if has_record(running) else None)


def has_record(config_text: str) -> bool:
    """Whether a configuration has the ownership record (empty or not)."""
    return record_remarks(config_text) is not None


def intended_text(run_text: str, drop: frozenset[str], profile_lines: list[str], rules: QosRules) -> str:
    """``run_text`` without the lines of the items in ``drop``, with the profile's lines: an
    interface's lines in its section, the others at the end. Pure."""
    return merge_profile([line for line, key in walk(run_text, rules) if key is None or key not in drop],
                         profile_lines)


__all__ = ["OWNED_PREFIX", "RECORD", "Item", "OwnershipError", "Plan", "items", "named_owned", "plan",
           "read_record", "record_lines", "references", "walk"]
