"""IOS interface names as people type them and switches print them, without any other qoslab
dependency (the config interpreter :mod:`qoslab.ios`, the EXEC parser
:mod:`qoslab.vswitch.execparse` and the show-output parsers use it).

The kinds and their shortest abbreviations are those of Catalyst 3750 (12.2) and Catalyst
9000 (IOS-XE 17.x) interface names: ``FastEthernet`` (Fa), ``GigabitEthernet`` (Gi),
``TwoGigabitEthernet`` (Tw), ``FiveGigabitEthernet`` (Fi), ``TenGigabitEthernet`` (Te),
``TwentyFiveGigE`` (Twe), ``FortyGigabitEthernet`` (Fo), ``HundredGigE`` (Hu),
``AppGigabitEthernet`` (Ap), ``Port-channel`` (Po), ``Vlan`` (Vl) (Cisco IOS Interface and Hardware
Component Command Reference, ``interface``; the names in the Catalyst 9300 and ASR/ISR outputs of
genieparser's test data).
"""

from __future__ import annotations

import re

#: (lower-case name, printed name, shortest abbreviation IOS takes)
_PORT_KINDS = (("gigabitethernet", "GigabitEthernet", 1), ("fastethernet", "FastEthernet", 1),
               ("tengigabitethernet", "TenGigabitEthernet", 2), ("vlan", "Vlan", 1),
               ("port-channel", "Port-channel", 1), ("twogigabitethernet", "TwoGigabitEthernet", 2),
               ("fivegigabitethernet", "FiveGigabitEthernet", 2), ("twentyfivegige", "TwentyFiveGigE", 3),
               ("fortygigabitethernet", "FortyGigabitEthernet", 2), ("hundredgige", "HundredGigE", 2),
               ("appgigabitethernet", "AppGigabitEthernet", 2))
_PORT_NUM = re.compile(r"^(\d+/\d+/\d+|\d+/\d+)$", re.ASCII)
#: A slot/port number as any IOS platform prints one: ``1/0/1``, ``0/0/0``, ``4`` (a router's
#: ``GigabitEthernet4``), with a subinterface (``.101``) or a channel (``:1``).
_ANY_NUM = re.compile(r"^\d+(?:/\d+)*(?:\.\d+)?(?::\d+)?$", re.ASCII)


def _kind(word: str) -> str | None:
    """The printed kind an interface-type word names (any case, abbreviated to at least its
    shortest form); None if none or several."""
    kind = word.lower()
    hits = [long for key, long, mn in _PORT_KINDS if key.startswith(kind) and len(kind) >= mn]
    return hits[0] if len(hits) == 1 else None


def parse_port(text: str) -> str | None:
    """The long IOS name of a switch interface given as IOS accepts it in commands, any case,
    abbreviated to at least the shortest unambiguous prefix: ``gi1/0/1``, ``g1/0/1``, ``Gig
    1/0/1`` -> ``GigabitEthernet1/0/1``; ``twe1/0/1`` -> ``TwentyFiveGigE1/0/1``; ``vl10`` ->
    ``Vlan10``. None if it is not a switch interface name (a physical port needs stack/module/port
    or module/port)."""
    m = re.match(r"^([A-Za-z-]+)\s*([\d/]+)$", text.strip(), re.ASCII)
    if not m:
        return None
    long, num = _kind(m.group(1)), m.group(2)
    if long is None:
        return None
    if long == "Vlan":
        return f"Vlan{num}" if num.isdigit() and 1 <= int(num) <= 4094 else None
    if long == "Port-channel":
        return f"Port-channel{num}" if num.isdigit() else None
    return f"{long}{num}" if _PORT_NUM.match(num) and num.count("/") == 2 else None


def interface_name(text: str) -> str | None:
    """The long name of any interface as a switch or router prints it in show output (known
    kinds normalised, abbreviations expanded: ``Hu1/0/3`` -> ``HundredGigE1/0/3``; subinterfaces
    and channels kept: ``TenGigabitEthernet0/3/0.41``; other kinds as printed: ``serial3/1``,
    ``Tunnel1``, as Genie keeps them); None if ``text`` is not one word of letters then such a
    number."""
    m = re.match(r"^([A-Za-z][A-Za-z-]*)(\d[\d/.:]*)$", text.strip(), re.ASCII)
    if not m or not _ANY_NUM.match(m.group(2)):
        return None
    long = _kind(m.group(1))
    return f"{long or m.group(1)}{m.group(2)}"


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
