"""Catalyst 9300 platform shows (IOS-XE 17.9, a one-member stack), pure: ``show memory
statistics``, ``show file systems``, ``show environment fan``, ``show platform``, ``show module``,
``show switch [detail]``, ``show boot``, ``show license summary``, ``show redundancy``.

Each in the layout of a public recording of a Catalyst 9000 (tests/data/show-recordings/, the
README there names the source of each), with the 9300's facts: the processor pool of ``show
version``'s ``1338934K`` bytes of memory, flash of :data:`.flash_xe.XE_FLASH_BYTES`,
``flash:packages.conf``, 28 ports (24 + the four uplinks of the fixed C9300-24T's network module
slot, as ``show platform`` counts them on a C9200-24P: 32 for 24 + 8). What the emulation does
not measure (fan speeds, the I/O pool, license use) is a constant, named in the fidelity table.
"""

from __future__ import annotations

import hashlib

from ...facts import DeviceFacts, uptime_text
from .flash_xe import XE_FLASH_BYTES
from .show_sys import XE_VERSION, model_of

#: The processor pool of a C9300 (bytes): ``show version``'s "1338934K/6147K bytes of memory".
XE_PROCESSOR_BYTES = 1338934 * 1024
#: The lsmpi_io pool (bytes total, used) as the recorded IOS-XE switch shows it: a constant.
LSMPI_IO = (6295128, 6294304)
#: The fans' speed (rpm) and airflow of ``show environment fan`` (the recording's values).
FAN_RPM_XE, AIRFLOW = 5440, "Front to Back"


def render_memory_statistics_xe(f: DeviceFacts, used: int) -> str:
    """``show memory statistics``: the trace key line, the processor pool (:data:`XE_PROCESSOR_BYTES`,
    ``used`` bytes: the server process's resident memory), the lsmpi_io pool."""
    key = hashlib.md5(f.serial.encode()).hexdigest()
    used = min(used, XE_PROCESSOR_BYTES)
    free = XE_PROCESSOR_BYTES - used
    io_total, io_used = LSMPI_IO
    return (f"Tracekey : 1#{key}   \n\n"
            "                Head    Total(b)     Used(b)     Free(b)   Lowest(b)  Largest(b)\n"
            f"Processor  FF86F21010 {XE_PROCESSOR_BYTES:11d} {used:11d} {free:11d} {free:11d} {free:11d}\n"
            f" lsmpi_io  FF867C51A8 {io_total:11d} {io_used:11d} {io_total - io_used:11d} "
            f"{io_total - io_used:11d} {(io_total - io_used) // 2:11d}\n")


def render_file_systems_xe(flash_used: int) -> str:
    """``show file systems`` of a one-member 9300 stack (the recorded stack's member 1 lines)."""
    rows = [("-", "-", "opaque", "rw", "system:"), ("-", "-", "opaque", "rw", "tmpsys:"),
            ("1651314688", "1651314688", "disk", "rw", "crashinfo: crashinfo-1:"),
            (str(XE_FLASH_BYTES), str(XE_FLASH_BYTES - flash_used), "disk", "rw", "flash: bootflash: flash-1:"),
            ("3940040704", "3790381056", "disk", "ro", "webui:"), ("-", "-", "opaque", "rw", "null:"),
            ("-", "-", "opaque", "ro", "tar:"), ("-", "-", "network", "rw", "tftp:"),
            ("2097152", "2056462", "nvram", "rw", "nvram:"), ("-", "-", "opaque", "wo", "syslog:"),
            ("-", "-", "network", "rw", "rcp:"), ("-", "-", "network", "rw", "http:"),
            ("-", "-", "network", "rw", "ftp:"), ("-", "-", "network", "rw", "scp:"),
            ("-", "-", "network", "rw", "sftp:"), ("-", "-", "network", "rw", "https:"),
            ("-", "-", "opaque", "ro", "cns:")]
    out = ["File Systems:", "", "       Size(b)       Free(b)      Type  Flags  Prefixes"]
    for size, free, kind, flags, prefixes in rows:
        star = "*" if prefixes.startswith("flash:") else " "
        out.append(f"{star}{size:>13} {free:>13} {kind:>9} {flags:>6}   {prefixes}")
    return "\n".join(out) + "\n\n"


def render_environment_fan_xe() -> str:
    """``show environment fan`` of IOS-XE 17.x: three fans with the airflow column, the PSU fans."""
    out = ["Switch   FAN     Speed   State   Airflow direction", "-" * 51]
    out += [f"  1       {n}     {FAN_RPM_XE}      OK     {AIRFLOW}" for n in (1, 2, 3)]
    return "\n".join(out + ["FAN PS-1 is OK", "FAN PS-2 is NOT PRESENT"]) + "\n"


def _ports(f: DeviceFacts) -> int:
    return f.n_ports + 4  # the fixed uplink slot's four ports (C9300-NM-4G in the virtual switch)


def _module_row(f: DeviceFacts, version: str) -> str:
    return f" 1       {_ports(f):<6d} {model_of(f):<21} {f.serial:<12} {f.base_mac:<15} V01           {version}"


def render_module_xe(f: DeviceFacts) -> str:
    """``show module`` of a one-member stack (the layout of genieparser's 3850 stack recording)."""
    return ("Switch  Ports    Model                Serial No.   MAC address     Hw Ver.       Sw Ver. \n"
            "------  -----   ---------             -----------  --------------  -------       --------\n"
            f"{_module_row(f, XE_VERSION):<86}\n")


def render_platform_xe(f: DeviceFacts) -> str:
    """``show platform`` (the layout of genieparser's C9200-24P recording: the module table, the
    stack MAC, the member's role)."""
    return "\n".join([
        "Switch  Ports    Model                Serial No.   MAC address     Hw Ver.       Sw Ver. ",
        "------  -----   ---------             -----------  --------------  -------       --------",
        f"{_module_row(f, XE_VERSION):<86}",
        f"Switch/Stack Mac Address : {f.base_mac} - Local Mac Address", "Mac persistency wait time: Indefinite",
        "                                   Current", "Switch#   Role        Priority      State ",
        "-------------------------------------------", "*1       Active          1          Ready    "]) + "\n"


def render_switch_xe(f: DeviceFacts, detail: bool) -> str:
    """``show switch [detail]`` (genieparser's cat9kv recording; ``detail`` adds the stack-port
    table: both ports DOWN, no member on the other end of the cables)."""
    out = [f"Switch/Stack Mac Address : {f.base_mac} - Local Mac Address", "Mac persistency wait time: Indefinite",
           "                                             H/W   Current",
           "Switch#   Role    Mac Address     Priority Version  State ",
           "-------------------------------------------------------------------------------------",
           f"*1       Active   {f.base_mac}     1      V01     Ready                "]
    if detail:
        out += ["", "        Stack Port Status             Neighbors",
                "Switch#  Port 1     Port 2           Port 1   Port 2",
                "--------------------------------------------------------",
                "1       DOWN       DOWN             None     None"]
    return "\n".join(out) + "\n"


def render_boot_xe() -> str:
    """``show boot`` of a 9300 in INSTALL mode (genieparser's cat9300 recording)."""
    return "\n".join(["---------------------------", "Switch 1", "---------------------------",
                      "Current Boot Variables:", "BOOT variable = flash:packages.conf;", "",
                      "Boot Variables on next reload:", "BOOT variable = flash:packages.conf;", "Manual Boot = no",
                      "Enable Break = yes", "Boot Mode = DEVICE", "iPXE Timeout = 0"]) + "\n"


def render_license_summary_xe(f: DeviceFacts) -> str:
    """``show license summary``: the 9300's base license in use (Network Advantage, as a C9300
    ships; genieparser's recording of a C9300-48 shows the same two rows)."""
    size = "C9300-48" if "48" in model_of(f) else "C9300-24"
    return "\n".join([
        "License Usage:", "License                 Entitlement Tag               Count Status",
        "-" * 77, f"{'network-advantage':<23} {'(' + size + ' Network Advan...)':<29} {1:>5} IN USE",
        f"{'dna-advantage':<23} {'(' + size + ' DNA Advantage)':<29} {1:>5} IN USE"]) + "\n"


def render_redundancy_xe(f: DeviceFacts, config_register: str = "0x102") -> str:
    """``show redundancy`` of a standalone 9300 (simplex, no peer; the layout of genieparser's
    C9500 recording)."""
    up = uptime_text(f.uptime_s)
    return "\n".join([
        "Redundant System Information :", "------------------------------",
        f"       Available system uptime = {up}", "Switchovers system experienced = 0",
        "              Standby failures = 0", "        Last switchover reason = none", "",
        "                 Hardware Mode = Simplex", "    Configured Redundancy Mode = sso",
        "     Operating Redundancy Mode = Non-redundant", "              Maintenance Mode = Disabled",
        "                Communications = Down      Reason: Failure", "",
        "Current Processor Information :", "-------------------------------",
        "               Active Location = slot 1", "        Current Software state = ACTIVE",
        f"       Uptime in current state = {up}",
        "                 Image Version = Cisco IOS Software [Cupertino], Catalyst L3 Switch Software (CAT9K_IOSXE), "
        "Version 17.9.5, RELEASE SOFTWARE (fc1)",
        "Technical Support: http://www.cisco.com/techsupport", "Copyright (c) 1986-2024 by Cisco Systems, Inc.",
        "Compiled Wed 27-Mar-24 09:56 by mcpre", "                          BOOT = flash:packages.conf;",
        f"        Configuration register = {config_register}", "",
        "Peer (slot: 0) information is not available because it is in 'DISABLED' state"]) + "\n"
