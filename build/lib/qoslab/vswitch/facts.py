"""The plain data every dialect's show renderers take, whatever the platform (pure): who the
switch is (:class:`DeviceFacts`), one front port's state and counters (:class:`PortView`), one
policy class's counters on one port (:class:`ClassCounters`), one learned MAC address
(:class:`MacEntry`), and the uptime wording IOS and IOS-XE share (:func:`uptime_text`).

The virtual switch's neutral core (:mod:`qoslab.vswitch.core`, :mod:`qoslab.vswitch.session`,
:mod:`qoslab.vswitch.counters`) fills them from its state and the kernel; a dialect package
(:mod:`qoslab.vswitch.dialects`) prints them in its platform's form. Values that no emulation
measures are the clearly virtual ones (serial ``QSL...``, locally administered MACs), never a
real device's.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DeviceFacts:
    """Who the switch is: hostname, model, IOS version and image, serial (virtual), base MAC,
    uptime in seconds, configuration register, number of front ports, the testbed's link rate
    (bits/s). The version and image defaults are the 3750's (12.2(55)SE12); a dialect that
    prints its own release ignores them."""

    hostname: str
    model: str = "WS-C3750G-24T"
    version: str = "12.2(55)SE12"
    image: str = "c3750-ipservicesk9-mz.122-55.SE12.bin"
    serial: str = "QSL00000000"
    base_mac: str = "0200.5100.0000"
    uptime_s: float = 0.0
    config_register: str = "0xF"
    n_ports: int = 24
    link_bps: float | None = None  # the testbed's scale-model link rate (tc), stated in show version


@dataclass
class PortView:
    """One front port: long name, description, admin state, link state, speed (Mbit/s), duplex,
    access VLAN, MAC, and counters (packets/bytes in and out, output drops; 5-minute rates in
    bits/s)."""

    name: str
    description: str = ""
    admin_up: bool = True
    link_up: bool = False
    speed_mbps: int = 1000
    duplex: str = "full"
    vlan: int = 1
    mac: str = "0200.5100.0001"
    in_packets: int = 0
    in_bytes: int = 0
    out_packets: int = 0
    out_bytes: int = 0
    out_drops: int = 0
    rates_bps: tuple[int, int] = field(default=(0, 0))


@dataclass
class ClassCounters:
    """Counters of one class of a policy on one port: packets and bytes classified, policer bytes
    conformed and exceeded (zeros where nothing measures them)."""

    packets: int = 0
    bytes: int = 0
    conformed_bytes: int = 0
    exceeded_bytes: int = 0


@dataclass(frozen=True)
class MacEntry:
    """A learned (or static) MAC address: VLAN, dotted MAC (``0200.5100.0001``), port (short
    name, ``Gi1/0/1``), ``DYNAMIC`` or ``STATIC``."""

    vlan: int
    mac: str
    port: str
    kind: str = "DYNAMIC"


def dotted_mac(mac: str) -> str:
    """``02:00:51:00:00:01`` -> ``0200.5100.0001`` (IOS's notation)."""
    h = mac.replace(":", "").replace("-", "").replace(".", "").lower()
    return f"{h[0:4]}.{h[4:8]}.{h[8:12]}"


def uptime_text(seconds: float) -> str:
    """IOS uptime wording: ``1 week, 2 days, 3 hours, 4 minutes`` (zero parts left out)."""
    s = int(seconds)
    parts = []
    for name, size in (("year", 31536000), ("week", 604800), ("day", 86400), ("hour", 3600), ("minute", 60)):
        n, s = divmod(s, size)
        if n:
            parts.append(f"{n} {name}{'s' if n != 1 else ''}")
    return ", ".join(parts) or "0 minutes"
