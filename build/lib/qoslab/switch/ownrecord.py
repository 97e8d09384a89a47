"""The ownership record (pure; issue 49): the standard access list ``QOSLAB-OWNED`` whose remarks
list what qoslab's pushes made (:mod:`qoslab.switch.ownership`), read from a configuration and
written for a set of item keys.

One remark per kind of item, names packed up to IOS's 100 characters a remark: ``acl 100 112
113``, ``class-map class112 class113``, ``policy-map police-jp``, ``monitor session 1 2``,
``global mls qos``, ``if GigabitEthernet1/0/1-4: priority-queue out`` (an interface line and the
ports it is on, consecutive ports as a range of the last number). The first remark says what the
list is; remarks that are not a record line own nothing. ``deny any`` is the list's only entry
(it is never applied).
"""

from __future__ import annotations

import re

from ..errors import QoslabError
from ..ios.configdiff import RECORD, RECORD_HEADER, record_remarks

#: The longest remark IOS takes (Catalyst 3750 / 9300 command references, ``remark``; EOS the same).
REMARK_MAX = 100
#: The first remark of the record (ignored when read: not a kind of item).
RECORD_NOTE = "qoslab switch push made what these remarks list; it changes nothing else"
_KINDS = ("acl", "class-map", "policy-map", "monitor", "global", "if")


class OwnershipError(QoslabError):
    """A push would change configuration qoslab did not make; nothing was sent."""


def _norm(line: str) -> str:
    return " ".join(line.split())


def read_record(config_text: str) -> frozenset[str]:
    """The keys the record (``QOSLAB-OWNED``'s remarks) lists; empty without one. Remarks that
    are not a record line (the note, a person's) are ignored: they own nothing."""
    out: set[str] = set()
    for text in record_remarks(config_text) or []:
        kind, _, rest = text.partition(" ")
        if kind not in _KINDS or not rest:
            continue
        if kind == "if":
            ports, sep, line = rest.partition(": ")
            if sep and line:
                out |= {f"if {p}: {_norm(line)}" for group in ports.split(",") if group for p in _expand(group)}
        elif kind == "global":
            out.add(f"global {_norm(rest)}")
        elif kind == "monitor":
            out |= {f"monitor session {s}" for s in rest.removeprefix("session ").split()}
        else:
            out |= {f"{kind} {n}" for n in rest.split()}
    return frozenset(out)


_RANGE = re.compile(r"^(.*?)(\d+)-(\d+)$")
_LAST = re.compile(r"^(.*?)(\d+)$")


def _expand(group: str) -> list[str]:
    """``GigabitEthernet1/0/1-4`` -> the four ports (a range of the last number); a name as it is."""
    m = _RANGE.match(group)
    if not m or int(m.group(3)) < int(m.group(2)) or int(m.group(3)) - int(m.group(2)) > 4096:
        return [group]
    return [f"{m.group(1)}{n}" for n in range(int(m.group(2)), int(m.group(3)) + 1)]


def _compress(ports: list[str]) -> list[str]:
    """Consecutive ports as ranges of their last number (``Ethernet1``, ``Ethernet2``,
    ``Ethernet3`` -> ``Ethernet1-3``), in order."""
    out: list[tuple[str, int, int]] = []
    for p in sorted(ports, key=lambda x: (m.group(1), int(m.group(2))) if (m := _LAST.match(x)) else (x, -1)):
        m = _LAST.match(p)
        if m and out and out[-1][0] == m.group(1) and out[-1][2] == int(m.group(2)) - 1:
            out[-1] = (out[-1][0], out[-1][1], int(m.group(2)))
        elif m:
            out.append((m.group(1), int(m.group(2)), int(m.group(2))))
        else:
            out.append((p, -1, -1))
    return [f"{b}{lo}-{hi}" if hi > lo else (f"{b}{lo}" if lo >= 0 else b) for b, lo, hi in out]


def _pack(prefix: str, names: list[str], sep: str = " ", suffix: str = "") -> list[str]:
    """``prefix NAME NAME ...suffix`` remarks of at most REMARK_MAX characters."""
    out: list[str] = []
    cur: list[str] = []
    for n in names:
        if cur and len(prefix + sep.join(cur + [n]) + suffix) > REMARK_MAX:
            out.append(prefix + sep.join(cur) + suffix)
            cur = []
        cur.append(n)
    if cur:
        out.append(prefix + sep.join(cur) + suffix)
    return out


def record_lines(keys: frozenset[str] | set[str]) -> list[str]:
    """The record of ``keys`` as config lines (header, remarks, ``deny any``), sorted so the same
    keys always give the same text; [] for no keys. Raises OwnershipError for an item too long for
    one remark."""
    if not keys:
        return []
    by_kind: dict[str, list[str]] = {}
    ifs: dict[str, list[str]] = {}
    for k in sorted(keys):
        kind, _, rest = k.partition(" ")
        if kind == "if":
            port, _, line = rest.partition(": ")
            ifs.setdefault(line, []).append(port)
        elif kind == "monitor":
            by_kind.setdefault("monitor session", []).append(rest.removeprefix("session "))
        else:
            by_kind.setdefault(kind, []).append(rest)
    remarks = [RECORD_NOTE]
    for kind in ("acl", "class-map", "policy-map", "monitor session"):
        remarks += _pack(kind + " ", by_kind.get(kind, []))
    remarks += [f"global {line}" for line in by_kind.get("global", [])]
    for line, ports in sorted(ifs.items()):
        remarks += _pack("if ", _compress(ports), ",", f": {line}")
    long = [r for r in remarks if len(r) > REMARK_MAX]
    if long:
        raise OwnershipError(f"cannot record {long[0]!r} in {RECORD}: longer than a remark's {REMARK_MAX} characters")
    return [RECORD_HEADER] + [f" remark {r}" for r in remarks] + [" deny any"]
