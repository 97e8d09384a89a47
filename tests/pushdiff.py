"""What a push changed in a running configuration, for the ownership tests on the interpreter
(tests/unit/test_push_ownership.py) and on the virtual switches (tests/clients/test_push_ownership*.py)."""

from __future__ import annotations

import difflib

#: The first line of qoslab's record section in a running configuration.
RECORD_HEAD = "ip access-list standard QOSLAB-OWNED"


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    """(lines of ``before`` that are gone, lines ``after`` added), the size line (``Current
    configuration : N bytes``) aside, the added ones with qoslab's record section (``QOSLAB-OWNED``)
    left out."""
    gone, added, in_record = [], [], False
    for d in difflib.ndiff(before.splitlines(), after.splitlines()):
        text = d[2:]
        if text.startswith("Current configuration") or d[:2] not in ("- ", "+ "):
            continue
        if d.startswith("- "):
            gone.append(text)
            continue
        if not text.startswith(" "):
            in_record = text == RECORD_HEAD
        if not in_record:
            added.append(text)
    return gone, added
