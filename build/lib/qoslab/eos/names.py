"""Arista EOS interface names as people type them, and the map between qoslab's neutral port
names and EOS's (pure).

qoslab's topologies name switch ports in the Catalyst form (``Gi1/0/N``: stack 1, module 0, port
N); on an EOS switch the same front-panel port N is ``EthernetN`` (EOS User Manual, "Ethernet
Ports": fixed-configuration switches number their ports ``Ethernet1`` .. ``EthernetN``; a
7280SR3-48YC8 has Ethernet1-48 for its SFP28 ports). EOS accepts any unambiguous prefix of an
interface type, with or without a space before the number (``et1``, ``eth 1``, ``Ethernet1``).
"""

from __future__ import annotations

import re

#: EOS interface types qoslab's virtual EOS switch knows: (lower-case type, EOS spelling,
#: shortest accepted prefix, short form in tables).
KINDS = (("ethernet", "Ethernet", 2, "Et"), ("management", "Management", 2, "Ma"),
         ("port-channel", "Port-Channel", 1, "Po"), ("vlan", "Vlan", 1, "Vl"))
_NAME = re.compile(r"^([A-Za-z-]+)\s*(\d+(?:/\d+)*)$")
_NEUTRAL = re.compile(r"^(?:Gi|GigabitEthernet)1/0/(\d+)$")


def interface_name(text: str) -> str | None:
    """The EOS name of an interface as EOS accepts it (``et1``, ``Eth 1``, ``ethernet1`` ->
    ``Ethernet1``; ``ma1`` -> ``Management1``); None for anything else."""
    m = _NAME.match(text.strip())
    if not m:
        return None
    kind, num = m.group(1).lower(), m.group(2)
    hits = [long for key, long, mn, _ in KINDS if key.startswith(kind) and len(kind) >= mn]
    if len(hits) != 1 or (hits[0] != "Ethernet" and "/" in num):
        return None
    return f"{hits[0]}{num}"


def short_name(name: str) -> str:
    """The short form EOS prints in tables: ``Ethernet1`` -> ``Et1``, ``Management1`` -> ``Ma1``."""
    for _, long, _, short in KINDS:
        if name.startswith(long):
            return short + name[len(long):]
    return name


def eos_port(neutral: str) -> str:
    """qoslab's neutral port name -> the EOS front-panel port: ``Gi1/0/7`` or
    ``GigabitEthernet1/0/7`` -> ``Ethernet7``. Raises ValueError for any other stack or module (a
    fixed-configuration EOS switch has one row of ports)."""
    m = _NEUTRAL.match(neutral.strip())
    if not m:
        raise ValueError(f"{neutral!r} has no EOS counterpart: an EOS switch's port N is Gi1/0/N in a qoslab "
                         "topology (stack 1, module 0)")
    return f"Ethernet{int(m.group(1))}"


def neutral_port(eos: str) -> str | None:
    """The EOS port name (any accepted spelling) -> qoslab's short neutral name: ``Et7`` ->
    ``Gi1/0/7``; None for an interface that is not a front-panel Ethernet port."""
    name = interface_name(eos)
    if name is None or not name.startswith("Ethernet") or not name[8:].isdigit():
        return None
    return f"Gi1/0/{int(name[8:])}"
