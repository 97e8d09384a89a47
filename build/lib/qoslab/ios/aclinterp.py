"""The configuration lines of IP access lists (pure apart from mutating the config they are
given), registered into :mod:`.interpret` when :mod:`qoslab.ios` is imported:

- ``ip access-list standard|extended NAME`` (enters ``(config-std-nacl)`` / ``(config-ext-nacl)``),
  ``no ip access-list ... NAME``; ``ip access-list resequence NAME START STEP``;
- in those modes ``[SEQ] permit|deny ...`` (:func:`qoslab.ios.aclparse.parse_ace`), ``[SEQ]
  remark TEXT``, ``no SEQ``, ``no [SEQ] permit|deny ...``, ``no remark TEXT``, ``no [SEQ] remark``
  (the remarks of entry SEQ, or of the whole list);
- numbered lists ``access-list N permit|deny ...`` / ``access-list N remark TEXT`` (appended),
  ``no access-list N ...`` (removes the whole list, as IOS does whatever follows the number).

Rules and messages: :mod:`.acl` (IOS's "IP Access List Entry Sequence Numbering": numbering,
``% Duplicate sequence number``, an equal entry changes nothing).
"""

from __future__ import annotations

from .acl import MAX_SEQ, AccessList, numbered_kind
from .aclparse import parse_ace
from .config import Mode, RunningConfig
from .grammar import GLOBAL, IosError
from .interpret import ENTRY_HOOKS, HANDLERS, Ctx, Tokens

_MODE = {"standard": "config-std-nacl", "extended": "config-ext-nacl"}


def _named(c: Ctx) -> Mode:
    """``[no] ip access-list standard|extended NAME``."""
    kind, name = c.words[2], c.words[3]
    existing = c.rc.acls.get(name)
    if c.negate:
        if existing is not None and existing.kind == kind:
            del c.rc.acls[name]
        return Mode(GLOBAL)
    num_kind = numbered_kind(name)
    if (name.isdigit() and num_kind != kind) or (existing is not None and existing.kind != kind):
        raise IosError(c.line, c.body[3][1])  # a number of the other kind's range, or the other kind's name
    if existing is None:
        c.rc.acls[name] = AccessList(name, kind, named=not name.isdigit())
    return Mode(_MODE[kind], name)


def _resequence(c: Ctx) -> Mode:
    """``ip access-list resequence NAME START STEP``."""
    acl = c.rc.acls.get(c.vals["name"])
    if acl is None:
        raise IosError(c.line, c.body[3][1])
    if not c.negate:
        acl.resequence(c.vals["start"], c.vals["step"])
    return Mode(GLOBAL)


def _numbered(c: Ctx) -> Mode:
    """``[no] access-list N ENTRY | remark TEXT``."""
    if len(c.body) < 2:
        raise IosError(c.line, len(c.line), "incomplete")
    num, col = c.body[1]
    kind = numbered_kind(num)
    if kind is None:
        raise IosError(c.line, col)
    if c.negate:
        c.rc.acls.pop(num, None)
        return Mode(GLOBAL)
    rest = c.body[2:]
    acl = c.rc.acls.get(num) or AccessList(num, kind, named=False)
    if rest and rest[0][0].lower() == "remark" and len(rest) > 1:
        acl.add_remark(" ".join(t for t, _ in rest[1:]))
    else:
        used, ace = parse_ace(rest, standard=kind == "standard")
        if ace is None:
            raise _entry_error(c.line, rest, used)
        if (msg := acl.add(ace)) is not None:
            raise IosError(c.line, 0, "message", msg)
    c.rc.acls.setdefault(num, acl)
    return Mode(GLOBAL)


def _entry_error(line: str, toks: Tokens, used: int) -> IosError:
    if used >= len(toks):
        return IosError(line, len(line), "incomplete")
    return IosError(line, toks[used][1])


def _entry(rc: RunningConfig, mode: Mode, body: Tokens, negate: bool, line: str) -> tuple[Mode | None, int]:
    """A line in an access-list mode (see the module doc): (the mode, or None when it is not an
    entry line: the interpreter then tries it at the global level; tokens matched)."""
    assert mode.target is not None
    acl = rc.acls[mode.target]
    seq = None
    if body and body[0][0].isdigit():
        seq = int(body[0][0])
        if not 1 <= seq <= MAX_SEQ:
            return None, 0
        if negate and len(body) == 1:
            acl.remove(seq)
            return mode, 1
        body = body[1:]
    skip = 1 if seq is not None else 0
    if body and body[0][0].lower() == "remark":
        if len(body) < 2:
            if not negate:
                return None, skip + 1
            acl.remove_remarks(seq)  # `no [SEQ] remark` (the form cisco.ios sends): all of them
            return mode, skip + 1
        text = " ".join(t for t, _ in body[1:])
        if negate:
            acl.remove_remark(text)
        else:
            acl.add_remark(text, seq)
        return mode, skip + len(body)
    used, ace = parse_ace(body, standard=acl.kind == "standard")
    if ace is None:
        return None, skip + used
    if negate:
        if seq is not None and acl.entries.get(seq) == ace:
            acl.remove(seq)
        else:
            acl.remove_ace(ace)
    elif (msg := acl.add(ace, seq)) is not None:
        raise IosError(line, 0, "message", msg)
    return mode, skip + used


HANDLERS.update({"named-acl": _named, "acl-resequence": _resequence, "numbered-acl": _numbered})
ENTRY_HOOKS.update({"config-ext-nacl": _entry, "config-std-nacl": _entry})
