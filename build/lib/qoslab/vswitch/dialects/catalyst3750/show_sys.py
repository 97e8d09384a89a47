"""Catalyst 3750 system and interface show output, as pure functions: ``show version``,
``show inventory``, ``show interfaces [PORT]``, ``show interfaces status``, ``show ip interface
[brief]``, ``show vlan brief``, ``show env``; the switch table of ``show version`` with the
trailing blanks of the real one (genieparser reads ports, model, version and image from it only
then).

Inputs: :class:`qoslab.vswitch.facts.DeviceFacts` (identity of the switch) and
:class:`qoslab.vswitch.facts.PortView` (state and counters of one port). The formats are those
the automation clients parse (NAPALM ``ios`` getters, Ansible ``cisco.ios`` facts, ntc-templates)
and match IOS 12.2(55)SE on a WS-C3750G-24T (samples and sources in
tests/data/ios-samples/README.md). Values that no emulation measures are the clearly virtual ones
(serial ``QSL...``), never a real device's.
"""

from __future__ import annotations

from ...facts import DeviceFacts, PortView, uptime_text
from ..ioscommon.render import PortForm, SviView, render_port_block


def render_version(f: DeviceFacts) -> str:
    """``show version`` (first line, uptime, image, processor, serial, stack table, register)."""
    img = f.image.split("-mz")[0].upper() + "-M"
    table = "\n".join([f"{'Switch Ports Model              SW Version            SW Image':<79}",
                        f"{'------ ----- -----              ----------            ----------':<79}",
                        f"*    1 {f.n_ports:<5d} {f.model:<18} {f.version:<21} {img:<25}"])
    return f"""Cisco IOS Software, C3750 Software (C3750-IPSERVICESK9-M), Version {f.version}, RELEASE SOFTWARE (fc2)
Technical Support: http://www.cisco.com/techsupport
Copyright (c) 1986-2017 by Cisco Systems, Inc.
Compiled Mon 09-Jan-17 10:57 by prod_rel_team
Image text-base: 0x01000000, data-base: 0x02F00000

ROM: Bootstrap program is C3750 boot loader
BOOTLDR: C3750 Boot Loader (C3750-HBOOT-M) Version 12.2(44)SE5, RELEASE SOFTWARE (fc1)

{f.hostname} uptime is {uptime_text(f.uptime_s)}
System returned to ROM by power-on
System image file is "flash:{f.image}"

qoslab virtual Catalyst: the QoS configuration is emulated with tc/nftables on the embedded
testbed; serial numbers and MAC addresses are virtual.{_rate_note(f)}

cisco {f.model} (PowerPC405) processor (revision F0) with 131072K bytes of memory.
Processor board ID {f.serial}
Last reset from power-on
1 Virtual Ethernet interface
{f.n_ports} Gigabit Ethernet interfaces
The password-recovery mechanism is enabled.

512K bytes of flash-simulated non-volatile configuration memory.
Base ethernet MAC Address       : {_colon_mac(f.base_mac)}
Motherboard assembly number     : 73-9677-10
Model revision number           : F0
Motherboard revision number     : A0
Model number                    : {f.model}-S
System serial number            : {f.serial}
Version ID                      : V05
Hardware Board Revision Number  : 0x09


{table}


Configuration register is {f.config_register}

"""


def _rate_note(f: DeviceFacts) -> str:
    """The scale-model line of ``show version``: ports report 1000Mb/s as a 3750's do, the
    testbed's links run at ``link_bps`` (empty when not known)."""
    if not f.link_bps:
        return ""
    rate = f"{f.link_bps / 1e6:g} Mbit/s"
    return (f"\nScale model: ports report 1000Mb/s as a 3750's do; the testbed's links and the egress\n"
            f"queues' port rate run at {rate} (qoslab topology link.rate).")


def _colon_mac(dotted: str) -> str:
    h = dotted.replace(".", "").upper()
    return ":".join(h[i:i + 2] for i in range(0, 12, 2))


def render_inventory(f: DeviceFacts) -> str:
    """``show inventory``: the one stack member."""
    return (f'NAME: "1", DESCR: "{f.model}"\n'
            f"PID: {f.model}-S   , VID: V05  , SN: {f.serial}\n\n")


#: A 3750's port block on 12.2(55)SE.
PORT_FORM = PortForm()


def render_interface(p: PortView) -> str:
    """One port of ``show interfaces``."""
    return render_port_block(p, PORT_FORM)


def render_svi(v: SviView) -> str:
    """An SVI of ``show interfaces`` in the 3750's form (``EtherSVI``; an ntc-templates recording
    of a Catalyst 3750, tests/data/show-recordings/README.md)."""
    line = "administratively down" if not v.admin_up else ("up" if v.up else "down")
    proto = "up" if v.admin_up and v.up else "down"
    return "\n".join([
        f"{v.name} is {line}, line protocol is {proto} ",
        f"  Hardware is EtherSVI, address is {v.mac} (bia {v.mac})",
        "  MTU 1500 bytes, BW 1000000 Kbit, DLY 10 usec, ", "     reliability 255/255, txload 1/255, rxload 1/255",
        "  Encapsulation ARPA, loopback not set", "  Keepalive not supported ",
        "  ARP type: ARPA, ARP Timeout 04:00:00", "  Last input never, output never, output hang never",
        '  Last clearing of "show interface" counters never',
        "  Input queue: 0/75/0/0 (size/max/drops/flushes); Total output drops: 0",
        "  Queueing strategy: fifo", "  Output queue: 0/40 (size/max)",
        "  5 minute input rate 0 bits/sec, 0 packets/sec", "  5 minute output rate 0 bits/sec, 0 packets/sec",
        "     0 packets input, 0 bytes, 0 no buffer", "     Received 0 broadcasts (0 IP multicasts)",
        "     0 runts, 0 giants, 0 throttles", "     0 input errors, 0 CRC, 0 frame, 0 overrun, 0 ignored",
        "     0 packets output, 0 bytes, 0 underruns", "     0 output errors, 0 interface resets",
        "     0 output buffer failures, 0 output buffers swapped out"]) + "\n"


def render_interfaces(ports: list[PortView], svis: list[SviView] | None = None) -> str:
    """``show interfaces``: the SVIs first, then the front ports (all, or the one given)."""
    return "".join(render_svi(v) for v in svis or []) + "".join(render_interface(p) for p in ports)


def render_env(what: str) -> str:
    """``show env all|fan|temperature`` of a WS-C3750G (status words only: the 3750G reports no
    sensor values; Catalyst 3750 command reference 12.2(55)SE, ``show env``)."""
    parts = {"fan": "FAN is OK\n", "temperature": "TEMPERATURE is OK\n"}
    if what in parts:
        return parts[what]
    return parts["fan"] + parts["temperature"] + "POWER is OK\nRPS is NOT PRESENT\n"


def render_boot(f: DeviceFacts) -> str:
    """``show boot`` of a 3750: the image it booted (``show version``'s), ``config.text``; the
    layout of ntc-templates' cisco_ios show_boot recording (a WS-C3750E on 15.0(2)SE11)."""
    return "\n".join([
        f"BOOT path-list      : flash:{f.image}", "Config file         : flash:/config.text",
        "Private Config file : flash:/private-config.text", "Enable Break        : no", "Manual Boot         : no",
        "HELPER path-list    : ", "Auto upgrade        : yes", "Auto upgrade path   :", "NVRAM/Config file",
        "      buffer size:   524288", "Timeout for Config", "          Download:    0 seconds", "Config Download",
        "       via DHCP:       disabled (next boot: disabled)"]) + "\n"
