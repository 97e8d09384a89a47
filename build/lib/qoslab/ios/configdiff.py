"""The QoS part of a Catalyst running-config, as pure text functions: with the split of
:mod:`qoslab.ios.qoswalk` (which lines are QoS on a platform), build the intended config for a
profile, compute the remediation (hier-config, IOS rules) and order it so every reference exists
when it is made. Used by the push (:mod:`qoslab.switch.push`).

Access lists are compared in one form (:func:`canonical_acls`: each entry as IOS prints it,
without its sequence number, remarks left out), so a profile's ``eq 80`` equals the switch's ``eq
www``, IOS 12.2's running-config (no numbers) and IOS-XE's (numbers) read alike and a remark
typed twice by another client does not stop hier-config (``DuplicateChildError``). hier-config
numbers the entries 10, 20 ... (its IOS driver); the remediation renumbers an existing named list
the same way first (``ip access-list resequence NAME 10 10``), so its ``no 20 ...`` / ``20 ...``
lines hit the entries they mean whatever numbers the switch had. A changed numbered list is sent
whole (``no access-list N`` removes all of list N on IOS, whatever follows the number).
An EOS config (:data:`qoslab.platforms.arista_eos`'s rules) passes through the same functions:
its ``ip access-list NAME`` entries keep their numbers, an interface's ``tx-queue`` blocks are
QoS lines with their children, the platform's ``negations`` correct hier-config's ``no`` forms and
a ``qos map`` line that changes its keys is removed before it is added again.
"""

from __future__ import annotations

import re

from ..errors import QoslabError
from .acl import numbered_kind
from .aclparse import canonical_entry
from .qoswalk import C3750_RULES, QosRules, split_qos

_ACL_SECTION = re.compile(r"^ip access-list (standard|extended) (\S+)\s*$")
_NUMBERED_ACL = re.compile(r"^access-list (\d+) (.+)$")
_SEQ = re.compile(r"^\d+\s+")

#: The ownership record (:mod:`qoslab.switch.ownership`): a standard access list, never applied,
#: whose remarks list what qoslab's pushes made.
RECORD = "QOSLAB-OWNED"
RECORD_HEADER = f"ip access-list standard {RECORD}"


def _record_span(lines: list[str]) -> tuple[int, int] | None:
    """(first, end) indices of the record's section in ``lines``, or None."""
    for i, line in enumerate(lines):
        if line.rstrip() == RECORD_HEADER:
            j = i + 1
            while j < len(lines) and lines[j].startswith(" "):
                j += 1
            return i, j
    return None


def record_remarks(config_text: str) -> list[str] | None:
    """The remarks of the ownership record in a configuration (sequence numbers and spacing
    dropped, in order), or None when it has no record. Pure."""
    lines = config_text.splitlines()
    span = _record_span(lines)
    if span is None:
        return None
    out = []
    for line in lines[span[0] + 1:span[1]]:
        words = _SEQ.sub("", line.strip()).split()
        if words[:1] == ["remark"]:
            out.append(" ".join(words[1:]))
    return out


def without_record(config_text: str) -> str:
    """The configuration without the ownership record's section. Pure."""
    lines = config_text.splitlines()
    span = _record_span(lines)
    if span is None:
        return config_text
    return "\n".join(lines[:span[0]] + lines[span[1]:]) + "\n"


def canonical_acls(config_text: str) -> str:
    """``config_text`` with every access-list entry (named lists' children, numbered lists'
    ``access-list N`` lines, and IOS-XE's ``ip access-list ... N`` sections of numbered lists, which
    become ``access-list N`` lines) as IOS prints it in ``show access-lists``, without sequence
    numbers, and without remarks (the module doc) but those of the ownership record
    (:data:`RECORD`, which are its content). Other lines are unchanged. Pure."""
    out, kind, number, record = [], None, None, False
    for raw in config_text.splitlines():
        line = raw.rstrip()
        if not line.startswith(" "):
            m = _ACL_SECTION.match(line)
            kind, number = (m.group(1), m.group(2) if numbered_kind(m.group(2)) else None) if m else (None, None)
            record = line == RECORD_HEADER
            if number is not None:
                continue  # IOS-XE's section of a numbered list: its entries become access-list N lines
            n = _NUMBERED_ACL.match(line)
            num_kind = numbered_kind(n.group(1)) if n else None
            if n and num_kind:
                if n.group(2).split()[0] == "remark":
                    continue
                line = f"access-list {n.group(1)} {canonical_entry(n.group(2), num_kind == 'standard')}"
        elif kind is not None and line.strip():
            body = _SEQ.sub("", line.strip())
            if body.split()[0] == "remark":
                if record:
                    out.append(" " + " ".join(body.split()))
                continue
            entry = canonical_entry(body, kind == "standard")
            line = f"access-list {number} {entry}" if number is not None else " " + entry
        out.append(line)
    return "\n".join(out) + ("\n" if config_text.endswith("\n") else "")


#: Lines a switch changes by itself or that carry no configuration: left out of whole-config
#: comparisons (``ntp clock-period`` is rewritten by IOS as the clock drifts).
_VOLATILE = re.compile(r"^(!|end$|Building configuration|Current configuration|ntp clock-period\b)")


def normalized_config(config_text: str) -> list[str]:
    """The whole config as a sorted list of path strings (``interface GigabitEthernet1/0/1 /
    mls qos trust dscp``), comments, ``end`` and volatile lines left out, for comparing a
    device's running-config with the intended one line by line, QoS or not; access lists in one
    form (:func:`canonical_acls`). Pure."""
    out: set[str] = set()
    stack: list[tuple[int, str]] = []
    for raw in canonical_acls(config_text).splitlines():
        l = raw.rstrip()
        if not l.strip() or _VOLATILE.match(l.strip()):
            continue
        indent = len(l) - len(l.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        out.add(" / ".join([t for _, t in stack] + [l.strip()]))
        stack.append((indent, l.strip()))
    return sorted(out)


def merge_profile(kept: list[str], profile_lines: list[str]) -> str:
    """The running-config's ``kept`` lines (``end`` dropped) with a profile's lines put in: an
    interface's children into that interface's section (a section the running-config did not
    show is added after the rest), every other line at the end. Returns the text, one line per
    ``\n``. Pure."""
    extra: dict[str, list[str]] = {}
    tail: list[str] = []
    header = None
    for line in profile_lines:
        if not line.startswith(" "):
            header = line if line.startswith("interface ") else None
            if header is None:
                tail.append(line)
            else:
                extra.setdefault(header, [])
        elif header is not None:
            extra[header].append(line.rstrip())
        else:
            tail.append(line)
    out = []
    for line in kept:
        if line.strip() == "end":
            continue
        out.append(line)
        if line in extra:
            out += extra.pop(line)
    for h, children in extra.items():  # interfaces the running-config did not show
        out += [h] + children
    return "\n".join(out + tail) + "\n"


def intended_config(running_text: str, profile_lines: list[str], rules: QosRules = C3750_RULES) -> str:
    """The running-config with *all* its QoS lines replaced by the profile's (text). Pure. The
    push does not use it: it replaces only what qoslab made (:func:`qoslab.switch.ownership.plan`);
    this is the whole-QoS view the renderers' tests compare against."""
    return merge_profile(split_qos(running_text, rules)[0], profile_lines)


def remediation(running_text: str, intended_text: str, hier_platform: str = "CISCO_IOS",
                negations: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """Config lines that turn the running config into the intended one (hier-config, the rules of
    ``hier_platform``: ``CISCO_IOS``, ``CISCO_XE``, ``ARISTA_EOS``; ``negations``: the platform's
    corrections, :attr:`QosRules.negations`), ordered for IOS (:func:`order_for_ios`), access
    lists as the module doc says (IOS's ``standard``/``extended`` and numbered lists; EOS's
    ``ip access-list NAME`` keeps its numbered entries as they are). Raises QoslabError for a
    config hier-config cannot read (a line twice in one section)."""
    from hier_config import Platform, WorkflowRemediation, get_hconfig
    from hier_config.exceptions import DuplicateChildError

    plat = Platform[hier_platform]
    try:
        run = get_hconfig(plat, _for_hier(without_record(running_text)))
        want = get_hconfig(plat, _for_hier(without_record(intended_text)))
    except DuplicateChildError as e:
        raise QoslabError(f"cannot compute the change: a configuration has a line twice in one section ({e})") from None
    lines = list(WorkflowRemediation(run, want).remediation_config.dump_simple())
    for pattern, repl in negations:
        lines = [re.sub(pattern, repl, line) for line in lines]
    lines = order_for_ios(lines)
    return resequence_first(whole_numbered_lists(lines, intended_text), running_text) + \
        record_change(running_text, intended_text)


def record_change(running_text: str, intended_text: str) -> list[str]:
    """The lines that turn the running config's ownership record into the intended one's, last
    in a remediation: the list removed and written again whole when it differs (its remarks have
    no identity a line-wise diff could use). Pure."""
    have, want = _record_section(running_text), _record_section(intended_text)
    if have == want:
        return []
    return ([f"no {RECORD_HEADER}"] if have is not None else []) + (want or [])


def _record_section(config_text: str) -> list[str] | None:
    """The record's section in :func:`canonical_acls`'s form (header, remarks, entries), or None."""
    lines = config_text.splitlines()
    span = _record_span(lines)
    return None if span is None else canonical_acls("\n".join(lines[span[0]:span[1]])).splitlines()


def whole_numbered_lists(lines: list[str], intended_text: str) -> list[str]:
    """Remediation ``lines`` with every numbered list that loses an entry sent whole: ``no
    access-list N`` then all of N's intended entries, where N's first line was (IOS removes the
    whole list for ``no access-list N ...``). Pure."""
    nums = {m.group(1) for line in lines if (m := re.match(r"^no access-list (\d+)\b", line))}
    if not nums:
        return lines
    ours = re.compile(r"^(no )?access-list (" + "|".join(sorted(nums)) + r") ")
    at = next(i for i, line in enumerate(lines) if ours.match(line + " "))
    rest = [line for line in lines if not ours.match(line + " ")]
    intended = canonical_acls(intended_text).splitlines()
    block = [x for n in sorted(nums, key=int)
             for x in [f"no access-list {n}"] + [line for line in intended if line.startswith(f"access-list {n} ")]]
    at = len([line for line in lines[:at] if not ours.match(line + " ")])
    return rest[:at] + block + rest[at:]


def resequence_first(lines: list[str], running_text: str) -> list[str]:
    """Remediation ``lines`` with ``ip access-list resequence NAME 10 10`` before the block of each
    named list that the running config already has (the module doc). Pure."""
    existing = {m.group(2) for line in running_text.splitlines() if (m := _ACL_SECTION.match(line.rstrip()))}
    out: list[str] = []
    for i, line in enumerate(lines):
        m = _ACL_SECTION.match(line)
        if m and m.group(2) in existing and i + 1 < len(lines) and lines[i + 1].startswith(" "):
            out.append(f"ip access-list resequence {m.group(2)} 10 10")
        out.append(line)
    return out


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
    return "\n".join(l for l in canonical_acls(text).splitlines()
                     if l.strip() and not l.startswith(("Building configuration", "Current configuration", "end")))


