"""IOS interface names as people type them, without any other qoslab dependency (both the config
interpreter :mod:`qoslab.ios` and the EXEC parser :mod:`qoslab.vcatalyst.execparse` use it)."""

from __future__ import annotations

import re

_PORT_KINDS = (("gigabitethernet", "GigabitEthernet", 1), ("fastethernet", "FastEthernet", 1),
               ("tengigabitethernet", "TenGigabitEthernet", 2), ("vlan", "Vlan", 1),
               ("port-channel", "Port-channel", 1))
_PORT_NUM = re.compile(r"^(\d+/\d+/\d+|\d+/\d+)$")


def parse_port(text: str) -> str | None:
    """The long IOS name of an interface given as IOS accepts it, any case, abbreviated to at
    least the shortest unambiguous prefix: ``gi1/0/1``, ``g1/0/1``, ``Gig 1/0/1`` ->
    ``GigabitEthernet1/0/1``; ``vl10`` -> ``Vlan10``. None if it is not an interface name."""
    m = re.match(r"^([A-Za-z-]+)\s*([\d/]+)$", text.strip())
    if not m:
        return None
    kind, num = m.group(1).lower(), m.group(2)
    hits = [(long, mn) for key, long, mn in _PORT_KINDS if key.startswith(kind) and len(kind) >= mn]
    if len(hits) != 1:
        return None
    long = hits[0][0]
    if long == "Vlan":
        return f"Vlan{num}" if num.isdigit() and 1 <= int(num) <= 4094 else None
    if long == "Port-channel":
        return f"Port-channel{num}" if num.isdigit() else None
    return f"{long}{num}" if _PORT_NUM.match(num) and num.count("/") == 2 else None


def merge_port_tokens(toks: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Join ``Gi 1/0/1`` (two (token, column) pairs) into one token, as IOS accepts it."""
    out: list[tuple[str, int]] = []
    for t, c in toks:
        if out and re.match(r"^[\d/]+$", t) and "/" in t and re.match(r"^[A-Za-z-]+$", out[-1][0]) \
                and parse_port(out[-1][0] + t):
            out[-1] = (out[-1][0] + t, out[-1][1])
        else:
            out.append((t, c))
    return out
