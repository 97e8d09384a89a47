"""Catalyst 9300 system and interface show output (IOS-XE 17.9), as pure functions: ``show
version``, ``show inventory``, ``show environment all``, ``show interfaces [PORT]`` (with the
``Vlan1`` SVI), ``show ip interface brief``, ``show processes cpu``.

Each follows a real 9300's output line for line and space for space (the recordings in
tests/data/show-recordings/, README there: Cisco genieparser's test outputs of C9300 switches); what
the emulation does not measure (fan speeds, temperatures, power supply) is a constant of the
virtual switch, named as such in the fidelity table (switch-configs/README.md), and every serial
number is a virtual one (``QSL...``).
"""

from __future__ import annotations

from ...facts import DeviceFacts, PortView, uptime_text
from ..ioscommon.render import PortForm, SviView, render_port_block

#: The IOS-XE release the virtual 9300 claims (17.9, an extended-maintenance release).
XE_VERSION = "17.09.05"
#: The power supply a C9300-24T ships with (Catalyst 9300 Hardware Installation Guide, "Power
#: Supply Modules": 350 W AC).
PSU_PID = "PWR-C1-350WAC-P"


def model_of(f: DeviceFacts) -> str:
    """The switch model the virtual 9300 claims: the topology's when it is a C9300/C9200."""
    return f.model if f.model.upper().startswith(("C9300", "C9200")) else "C9300-24T"


def render_version_xe(f: DeviceFacts) -> str:
    """``show version`` of a Catalyst 9300 on IOS-XE 17.9 (virtual serial and MAC); the switch
    table with the trailing blanks of the real one (genieparser reads ports, model, version and
    image from it only then)."""
    model = model_of(f)
    mac = ":".join(f.base_mac.replace(".", "")[i:i + 2] for i in range(0, 12, 2))
    table = "\n".join([f"{'Switch Ports Model              SW Version        SW Image              Mode':<79}",
                        f"{'------ ----- -----              ----------        ----------            ----':<79}",
                        f"{f'*    1 {f.n_ports:<5d} {model:<18} {XE_VERSION:<17} CAT9K_IOSXE           INSTALL':<79}"])
    return f"""Cisco IOS XE Software, Version {XE_VERSION}
Cisco IOS Software [Cupertino], Catalyst L3 Switch Software (CAT9K_IOSXE), Version 17.9.5, RELEASE SOFTWARE (fc1)
Technical Support: http://www.cisco.com/techsupport
Copyright (c) 1986-2024 by Cisco Systems, Inc.
Compiled Wed 27-Mar-24 09:56 by mcpre


Cisco IOS-XE software, Copyright (c) 2005-2024 by cisco Systems, Inc.
All rights reserved.  Certain components of Cisco IOS-XE software are
licensed under the GNU General Public License ("GPL") Version 2.0.


ROM: IOS-XE ROMMON
BOOTLDR: System Bootstrap, Version 17.9.1r, RELEASE SOFTWARE (P)

{f.hostname} uptime is {uptime_text(f.uptime_s)}
Uptime for this control processor is {uptime_text(f.uptime_s)}
System returned to ROM by PowerOn
System image file is "flash:packages.conf"
Last reload reason: PowerOn


qoslab virtual Catalyst 9300: the QoS configuration is emulated with tc/nftables on the embedded
testbed; serial numbers and MAC addresses are virtual.


cisco {model} (X86) processor with 1338934K/6147K bytes of memory.
Processor board ID {f.serial}
1 Virtual Ethernet interface
{f.n_ports} Gigabit Ethernet interfaces
2048K bytes of non-volatile configuration memory.
8388608K bytes of physical memory.
1638400K bytes of Crash Files at crashinfo:.
11264000K bytes of Flash at flash:.

Base Ethernet MAC Address          : {mac}
Motherboard Assembly Number        : 73-18271-03
Motherboard Serial Number          : {f.serial}
Model Revision Number              : A0
Motherboard Revision Number        : A0
Model Number                       : {model}
System Serial Number               : {f.serial}
CLEI Code Number                   :{" "}


{table}


Configuration register is 0x102

"""


#: The stack cables a 9300 lists in ``show inventory`` (genieparser's C9300-24T recording).
STACK_CABLE = "STACK-T1-50CM"


def render_inventory_xe(f: DeviceFacts) -> str:
    """``show inventory`` of a one-member 9300 stack as every public C9300 recording starts: the
    stack (``c93xx Stack``), the switch, its two stack ports' cables, its power supply A."""
    model = model_of(f)

    def item(name: str, descr: str, pid: str, sn: str) -> str:
        return f'NAME: "{name}", DESCR: "{descr}"\nPID: {pid:<18}, VID: V01  , SN: {sn}\n\n'

    return (item("c93xx Stack", "c93xx Stack", model, f.serial) + item("Switch 1", model, model, f.serial)
            + item("StackPort1/1", "StackPort1/1", STACK_CABLE, f.serial[:-1] + "A")
            + item("StackPort1/2", "StackPort1/2", STACK_CABLE, f.serial[:-1] + "B")
            + item("Switch 1 - Power Supply A", "Switch 1 - Power Supply A", PSU_PID, f.serial[:-1] + "P"))


#: The sensors of ``show environment all`` (name, value, yellow and red thresholds in Celsius): a
#: virtual switch's constants, in a real 9300's ranges (the recording's thresholds).
SENSORS = (("Inlet", 25, 46, 56), ("Outlet", 33, 105, 125), ("Hotspot", 45, 105, 125))
#: The fan speed (rpm) every one of the three fans shows: a constant of the virtual switch.
FAN_RPM = 14240


def render_environment_xe(f: DeviceFacts) -> str:
    """``show environment all`` of a one-member 9300 stack: its three fans and the power supply
    fans, the system temperature sensors, the power supply table (a real 9300's layout; the
    values are the virtual switch's constants, :data:`SENSORS`, :data:`FAN_RPM`)."""
    out = ["Switch   FAN     Speed   State", "---------------------------------------------------"]
    out += [f"    1       {n}     {FAN_RPM}     OK" for n in (1, 2, 3)]
    out += ["FAN PS-1 is OK", "FAN PS-2 is NOT PRESENT", "Switch 1: SYSTEM TEMPERATURE is OK"]
    for i, (name, value, yellow, red) in enumerate(SENSORS):
        out += [""] if i else []
        out += [f"{name} Temperature Value: {value} Degree Celsius", "Temperature State: GREEN",
                f"Yellow Threshold : {yellow} Degree Celsius", f"Red Threshold    : {red} Degree Celsius"]
    out += ["SW  PID                 Serial#     Status           Sys Pwr  PoE Pwr  Watts",
            "--  ------------------  ----------  ---------------  -------  -------  -----",
            f"1A  {PSU_PID:<18}  {f.serial[:-1] + 'P':<10}  OK              Good     n/a      350",
            "1B  Not Present"]
    return "\n".join(out) + "\n"


#: A 9300's port block on IOS-XE 17.x (genieparser's recording of a 9000's ports).
PORT_FORM_XE = PortForm(link_type="link type is auto, ", flow_in="on", input_queue=2000, throttles_end=" ",
                        unknown_drops=True, pause="pause")


def render_interface_xe(p: PortView) -> str:
    """One front port of ``show interfaces`` in the 9300's form (input queue 2000, ``unknown
    protocol drops``, the trailing blank after the state)."""
    return render_port_block(p, PORT_FORM_XE)


def render_svi_xe(v: SviView) -> str:
    """An SVI of ``show interfaces`` in the 9300's form (``Ethernet SVI``, ``Autostate Enabled``)."""
    line = "administratively down" if not v.admin_up else ("up" if v.up else "down")
    proto = "up" if v.admin_up and v.up else "down"
    return "\n".join([
        f"{v.name} is {line}, line protocol is {proto} , Autostate Enabled",
        f"  Hardware is Ethernet SVI, address is {v.mac} (bia {v.mac})",
        "  MTU 1500 bytes, BW 1000000 Kbit/sec, DLY 10 usec, ",
        "     reliability 255/255, txload 1/255, rxload 1/255",
        "  Encapsulation ARPA, loopback not set", "  Keepalive not supported ",
        "  ARP type: ARPA, ARP Timeout 04:00:00", "  Last input never, output never, output hang never",
        '  Last clearing of "show interface" counters never',
        "  Input queue: 0/375/0/0 (size/max/drops/flushes); Total output drops: 0",
        "  Queueing strategy: fifo", "  Output queue: 0/40 (size/max)",
        "  5 minute input rate 0 bits/sec, 0 packets/sec", "  5 minute output rate 0 bits/sec, 0 packets/sec",
        "     0 packets input, 0 bytes, 0 no buffer", "     Received 0 broadcasts (0 IP multicasts)",
        "     0 runts, 0 giants, 0 throttles ", "     0 input errors, 0 CRC, 0 frame, 0 overrun, 0 ignored",
        "     0 packets output, 0 bytes, 0 underruns", "     0 output errors, 1 interface resets",
        "     0 unknown protocol drops", "     0 output buffer failures, 0 output buffers swapped out"]) + "\n"


def render_interfaces_xe(ports: list[PortView], svis: list[SviView]) -> str:
    """``show interfaces``: the SVIs first, then the front ports, as a 9300 lists them."""
    return "".join(render_svi_xe(v) for v in svis) + "".join(render_interface_xe(p) for p in ports)


#: Processes of an IOS-XE switch shown by ``show processes cpu`` (PID, name, as the table of
#: genieparser's IOS-XE recording lists its first ones), and the SSH process (the virtual switch).
PROCESSES_XE = ((1, "Chunk Manager"), (2, "Load Meter"), (3, "SpanTree Helper"), (4, "Retransmission o"),
                (5, "IPC ISSU Dispatc"), (6, "RF Slave Main Th"), (7, "EDDRI_MAIN"), (8, "RO Notify Timers"),
                (9, "Check heaps"), (10, "Pool Manager"), (11, "DiscardQ Backgro"), (12, "Timers"),
                (13, "WATCH_AFS"), (14, "MEMLEAK PROCESS"), (15, "SSH Process"))


def render_processes_cpu_xe(percent: int, ssh_ms: int) -> str:
    """``show processes cpu`` of IOS-XE: the utilisation line (``percent`` for all three averages)
    and the process table (its column widths); ``ssh_ms``: the CPU milliseconds of the SSH process
    (the virtual switch)."""
    out = [f"CPU utilization for five seconds: {percent}%/0%; one minute: {percent}%; five minutes: {percent}%",
           " PID Runtime(ms)     Invoked      uSecs   5Sec   1Min   5Min TTY Process "]
    for pid, name in PROCESSES_XE:
        ms = ssh_ms if name == "SSH Process" else 0
        inv = max(1, ms)
        pct = f"{percent:.2f}%" if name == "SSH Process" else "0.00%"
        out.append(f"{pid:4d}{ms:12d}{inv:12d}{ms * 1000 // inv:11d} {pct:>6} {pct:>6} {pct:>6}{0:4d} {name[:16]:<16} ")
    return "\n".join(out) + "\n"
