"""The switch's own IP address: ``ip address A M`` on ``interface Vlan1`` (the SVI of the VLAN
every port is in), the source of the switch's ``ping`` and ``traceroute`` (Catalyst 3750 Software
Configuration Guide 12.2(55)SE, "Assigning the Switch IP Address and Default Gateway"). Pure."""

from __future__ import annotations

import ipaddress

from .config import RunningConfig

#: The SVI whose address the virtual switch takes (every port is in VLAN 1).
SVI = "Vlan1"


def svi_address(rc: RunningConfig) -> ipaddress.IPv4Interface | None:
    """``interface Vlan1``'s address with its prefix (``198.18.0.254/24``), or None."""
    sec = rc.interfaces.get(SVI)
    for line in sec.children if sec else []:
        w = line.split()
        if w[:2] == ["ip", "address"] and len(w) == 4:
            try:
                return ipaddress.IPv4Interface(f"{w[2]}/{w[3]}")
            except ValueError:
                return None
    return None
