"""Catalyst interface names as topologies, profiles and the virtual switches write them (pure):
short and long IOS forms (``Gi1/0/3``, ``GigabitEthernet1/0/3``), ranges (``Gi1/0/1-24``) and the
Linux interface name that stands for a port on the embedded testbed (``Gi1-0-3``).
"""

from __future__ import annotations

import re

_PORT = re.compile(r"^(?P<kind>Gi|GigabitEthernet|Fa|FastEthernet|Te|TenGigabitEthernet)"
                   r"(?P<stack>\d+)/(?P<module>\d+)/(?P<port>\d+)$", re.ASCII)
_PORT_RANGE = re.compile(r"^(?P<prefix>.+/)(?P<first>\d+)-(?P<last>\d+)$", re.ASCII)
#: Highest port number of an interface name (a stack member of the 3750 family has at most 52).
MAX_PORT = 99
_SHORT = {"GigabitEthernet": "Gi", "FastEthernet": "Fa", "TenGigabitEthernet": "Te"}
_LONG = {v: k for k, v in _SHORT.items()}


def canonical_port(name: str) -> str:
    """Short Catalyst interface name: ``GigabitEthernet1/0/3`` -> ``Gi1/0/3``.

    Raises ValueError for a name that is not a Catalyst 3750 Ethernet interface.
    """
    m = _PORT.fullmatch(name.strip()) if isinstance(name, str) else None
    if not m or not (1 <= int(m["stack"]) <= 9 and int(m["module"]) <= 9 and 1 <= int(m["port"]) <= MAX_PORT):
        raise ValueError(f"not a Catalyst interface name: {name!r} (write e.g. Gi1/0/1: stack 1-9, module "
                         f"0-9, port 1-{MAX_PORT})")
    kind = _SHORT.get(m["kind"], m["kind"])
    return f"{kind}{m['stack']}/{m['module']}/{m['port']}"


def long_port(name: str) -> str:
    """Full IOS interface name: ``Gi1/0/3`` -> ``GigabitEthernet1/0/3``."""
    short = canonical_port(name)
    m = _PORT.match(short)
    assert m
    return f"{_LONG[m['kind']]}{short[len(m['kind']):]}"


def linux_ifname(port: str) -> str:
    """Linux interface name standing for a Catalyst port (``/`` is not allowed in ifnames):
    ``Gi1/0/3`` -> ``Gi1-0-3`` (at most 15 characters, IFNAMSIZ)."""
    return canonical_port(port).replace("/", "-")


def expand_ports(spec: str) -> list[str]:
    """``Gi1/0/1-24`` -> ``[Gi1/0/1, ..., Gi1/0/24]``; a single name -> a one-element list."""
    m = _PORT_RANGE.fullmatch(spec.strip())
    if m and _PORT.match(f"{m['prefix']}{m['first']}"):
        first, last = int(m["first"]), int(m["last"])
        if last < first:
            raise ValueError(f"port range runs backwards: {spec!r}")
        if last > MAX_PORT:
            raise ValueError(f"port range {spec!r} goes beyond port {MAX_PORT}")
        return [canonical_port(f"{m['prefix']}{n}") for n in range(first, last + 1)]
    return [canonical_port(spec)]
