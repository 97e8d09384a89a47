"""The lines a Catalyst 3750 on 12.2(55)SE prints in ``show running-config`` that qoslab does not
model: the service and boot markers, spanning-tree and VLAN allocation defaults, ``interface
Vlan1``, the HTTP server, and the console and vty lines' defaults (the factory configuration of a WS-C3750G:
Catalyst 3750 Software Configuration Guide 12.2(55)SE, "Assigning the Switch IP Address and
Default Gateway" / "Configuring Spanning Tree", default settings, and the command reference's
``show running-config`` example).

:func:`place` splits the lines a configuration keeps verbatim (``RunningConfig.kept``) into the
slots where IOS prints them; a slot the configuration says nothing about prints its defaults.
Loading a printed configuration back keeps the same lines: the text is stable under a round trip.
"""

from __future__ import annotations

#: Slot -> (what its kept lines start with, the 3750's defaults).
SLOTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "service": (("service ", "no service "), ("service timestamps debug datetime msec",
                                              "service timestamps log datetime msec",
                                              "no service password-encryption")),
    "boot": (("boot-start-marker", "boot-end-marker"), ("boot-start-marker", "boot-end-marker")),
    "spanning-tree": (("spanning-tree ", "no spanning-tree "), ("spanning-tree mode pvst",
                                                                "spanning-tree etherchannel guard misconfig",
                                                                "spanning-tree extend system-id")),
    "vlan": (("vlan internal allocation policy ",), ("vlan internal allocation policy ascending",)),
    "ip": (("ip classless", "ip http "), ("ip classless", "ip http server", "ip http secure-server")),
}
#: The console and vty lines at the factory defaults (header -> settings; configured in
#: ``(config-line)``: :attr:`qoslab.ios.config.RunningConfig.lines`).
LINES: dict[str, tuple[str, ...]] = {"line con 0": (), "line vty 0 4": ("login",), "line vty 5 15": ("login",)}
#: Kept lines of earlier releases that belong to the lines (dropped when printed).
LINE_PREFIXES = ("line ", "login")
#: ``interface Vlan1`` at its defaults (printed when the configuration has no Vlan1 section).
VLAN1 = ("interface Vlan1", " no ip address")


def place(kept: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """(slot -> lines to print, the other kept lines in entry order). ``version 12.2`` and
    ``no service pad`` are printed by the renderer itself and dropped here."""
    slots: dict[str, list[str]] = {}
    rest = []
    for line in kept:
        if line.startswith(("version ", "no service pad")) or line.startswith(LINE_PREFIXES):
            continue
        slot = next((s for s, (prefixes, _) in SLOTS.items() if line.startswith(prefixes)), None)
        if slot is None:
            rest.append(line)
        else:
            slots.setdefault(slot, []).append(line)
    return {s: slots.get(s) or list(defaults) for s, (_, defaults) in SLOTS.items()}, rest
