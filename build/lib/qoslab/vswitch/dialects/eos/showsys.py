"""The virtual EOS switch's system, software and services shows (text and JSON model, pure over
the switch object): what Arista's ANTA (``anta nrfu``, its system / configuration / services /
software tests) and NAPALM's ``eos`` getters send. Field names and layouts are those of EOS
4.2x-4.3x as ANTA's unit-test data (aristanetworks/anta tests/units/anta_tests/test_system.py,
test_services.py, test_software.py, test_configuration.py) and NAPALM's mocked outputs
(napalm/test/eos/mocked_data) record them.

Values are the virtual switch's own: uptime and boot time of the ``qoslab switch serve``
process; reload cause none (it was started, not reloaded); no core dumps, no agent crashes, no
maintenance units, no extensions, ZTP disabled (a configured switch); NTP and DNS as configured
(the testbed switch has neither: ``NTP is disabled.``, no name servers); flash of
:data:`FLASH_BYTES` holding the EOS image (:data:`IMAGE`, listed only), ``startup-config`` once
written and the files copied there; CPU and memory from ``show version``'s figures (the
process's own load is not the switch's). Every function returns ``(text, model)``; ``model`` is
:data:`.render.NO_MODEL`-free (a dict) except for text-only commands (model None).
"""

from __future__ import annotations

import difflib
import json
import time
from typing import Any

from .state import VERSION, facts

#: Flash of a DCS-7280SR3 (``show file systems``: size of ``flash:`` in bytes, 4 GB eMMC partition).
FLASH_BYTES = 3_957_878_784
#: The EOS image the switch booted (``boot system flash:/EOS-4.32.2F.swi``), listed, not stored.
IMAGE = f"EOS-{VERSION}.swi"
IMAGE_BYTES = 1_050_214_400
MEM_TOTAL, MEM_FREE = 32617448, 27011180  # kB, as show version reports


def _flash_files(sw: Any) -> dict[str, tuple[int, float]]:
    root = sw.dir / "flash"
    out = {IMAGE: (IMAGE_BYTES, sw.booted)}
    if root.is_dir():
        out.update({p.name: (p.stat().st_size, p.stat().st_mtime) for p in root.iterdir()
                    if p.is_file() and not p.name.startswith(".")})
    startup = sw.dir / "startup-config"
    if startup.is_file():
        out["startup-config"] = (startup.stat().st_size, startup.stat().st_mtime)
    return dict(sorted(out.items()))


def uptime(sw: Any) -> tuple[str, dict[str, Any]]:
    """``show uptime``: the top-style line and ``upTime`` (seconds), ``loadAvg``, ``users``."""
    f = facts(sw)
    now = time.time()
    d, rest = divmod(int(f.uptime_s), 86400)
    h, m = divmod(rest // 60, 60)
    text = f" {time.strftime('%H:%M:%S', time.gmtime(now))} up {d} days, {h:2d}:{m:02d},  1 user,  " \
           "load average: 0.00, 0.00, 0.00\n"
    return text, {"upTime": round(f.uptime_s, 2), "loadAvg": [0.0, 0.0, 0.0], "users": 1,
                  "currentTime": round(now, 6)}


def reload_cause() -> tuple[str, dict[str, Any]]:
    """``show reload cause``: none recorded (the virtual switch is started, never reloaded)."""
    return "No reload causes recorded\n", {"kernelCrashData": [], "resetCauses": [], "full": False}


def coredump() -> tuple[str, dict[str, Any]]:
    """``show system coredump``: no core files."""
    return "Mode: compressedDeferred\nNo core files\n", {"mode": "compressedDeferred", "coreFiles": []}


def _mib(kb: int) -> str:
    return f"{kb / 1024:.1f}"


def processes_top() -> tuple[str, dict[str, Any]]:
    """``show processes top once``: the top header of EOS 4.2x+ (``MiB Mem :``, ntc-templates'
    arista_eos show_processes_top_once5 recording) NAPALM's get_environment reads (line 3 the CPU's
    idle, line 4 memory) and the JSON model ANTA reads (``cpuInfo`` ... ``idle``); no process
    rows (the switch's processes are not emulated)."""
    used = MEM_TOTAL - MEM_FREE
    text = "\n".join([
        "top - 00:00:00 up 0 min,  1 user,  load average: 0.00, 0.00, 0.00",
        "Tasks: 300 total,   1 running, 299 sleeping,   0 stopped,   0 zombie",
        "%Cpu(s):  2.0 us,  1.0 sy,  0.0 ni, 97.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st",
        f"MiB Mem : {_mib(MEM_TOTAL):>8} total, {_mib(MEM_FREE):>8} free, {_mib(used):>8} used,      0.0 buff/cache",
        f"MiB Swap:      0.0 total,      0.0 free,      0.0 used. {_mib(MEM_FREE):>8} avail Mem ", "",
        "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND", ""])
    model = {"timeInfo": {"loadAvg": [0.0, 0.0, 0.0], "users": 1},
             "cpuInfo": {"%Cpu(s)": {"user": 2.0, "system": 1.0, "nice": 0.0, "idle": 97.0, "ioWait": 0.0,
                                     "hwIrq": 0.0, "swIrq": 0.0, "stolen": 0.0}},
             "memInfo": {"physicalMem": {"total": MEM_TOTAL, "free": MEM_FREE, "used": used, "buffCache": 0},
                         "swapMem": {"total": 0, "free": 0, "used": 0, "availMem": MEM_FREE}},
             "processes": {}}
    return text, model


def ntp_servers(sw: Any) -> list[str]:
    """The configured ``ntp server`` addresses (none on the testbed's switch)."""
    return [x.split()[2] for x in sw.running.globals_ if x.startswith("ntp server ")]


def ntp_status(sw: Any) -> tuple[str, dict[str, Any]]:
    """``show ntp status``: ``NTP is disabled.`` without servers; with servers ``unsynchronised``
    (the virtual switch runs no NTP client: its clock is the host's)."""
    if not ntp_servers(sw):
        return "NTP is disabled.\n", {"status": "disabled"}
    return "unsynchronised\n  time server re-starting\n   polling server every 1024 s\n", {"status": "unsynchronised"}


def ntp_associations(sw: Any) -> tuple[str, dict[str, Any]]:
    """``show ntp associations``: each configured server, never reached (condition ``reject``)."""
    peers = {a: {"condition": "reject", "peerIpAddr": a, "refid": ".INIT.", "stratumLevel": 16, "peerType": "unicast",
                 "lastReceived": 0.0, "pollInterval": 1024, "reachabilityHistory": [], "delay": 0.0, "offset": 0.0,
                 "jitter": 0.0} for a in ntp_servers(sw)}
    lines = ["     remote           refid      st t when  poll reach   delay   offset  jitter",
             "=" * 79] + [f" {a:<16} .INIT.          16 u    -  1024    0    0.000    0.000   0.000" for a in peers]
    return "\n".join(lines) + "\n", {"peers": peers}


def maintenance() -> tuple[str, dict[str, Any]]:
    """``show maintenance``: no unit configured."""
    return "Maintenance Mode is disabled.\n", {"units": {}, "interfaces": {}, "vrfs": {},
                                               "warnings": ["Maintenance Mode is disabled."]}


def file_systems(sw: Any) -> tuple[str, dict[str, Any]]:
    """``show file systems``: ``flash:`` (:data:`FLASH_BYTES`, used by the image and files),
    ``file:``, ``system:``."""
    used = sum(s for s, _ in _flash_files(sw).values())
    systems = [
        {"currentFs": False, "size": 9852540, "free": 9727696, "fsType": "flash", "permission": "rw",
         "prefix": "file:"},
        {"currentFs": True, "size": FLASH_BYTES, "free": FLASH_BYTES - used, "fsType": "flash", "linuxFs": "ext4",
         "permission": "rw", "prefix": "flash:"},
        {"currentFs": False, "size": 0, "free": 0, "fsType": "system", "permission": "rw", "prefix": "system:"}]
    lines = ["File Systems:", "", "     Size(b)     Free(b)      Type Flags  Prefixes"]
    lines += [f"{'*' if s['currentFs'] else ' '}{s['size']:>11} {s['free']:>11} {s['fsType']:>9}    {s['permission']}"
              f"  {s['prefix']}" for s in systems]
    return "\n".join(lines) + "\n", {"fileSystems": systems}


def dir_flash(sw: Any) -> tuple[str, dict[str, Any]]:
    """``dir flash:``: the files (image, startup-config, copied files), total and free bytes (the
    layout of ntc-templates' arista_eos dir_flash recording)."""
    files = _flash_files(sw)
    used = sum(s for s, _ in files.values())
    lines = ["Directory of flash:/", ""]
    lines += [f"       -rwx{size:>12}{time.strftime('%b %-d %H:%M', time.gmtime(mt)):>23}  {name}"
              for name, (size, mt) in files.items()]
    lines += ["", f"{FLASH_BYTES} bytes total ({FLASH_BYTES - used} bytes free)"]
    entries = {name: {"permissions": "-rwx", "size": size, "modificationTime": round(mt, 3), "isDir": False}
               for name, (size, mt) in files.items()}
    return "\n".join(lines) + "\n", {"urls": {"flash:/": {"entries": entries, "totalSize": FLASH_BYTES,
                                                          "freeSize": FLASH_BYTES - used}}}


def zerotouch() -> tuple[str, dict[str, Any]]:
    """``show zerotouch``: disabled (a configured switch)."""
    return "ZeroTouch Mode: disabled\n", {"mode": "disabled"}


def running_diffs(running: str, startup: str) -> str:
    """``show running-config diffs``: unified diff of the startup-config (---) to the
    running-config (+++); empty when saved."""
    diff = difflib.unified_diff(startup.splitlines(), running.splitlines(), "system:/startup-config",
                                "system:/running-config", lineterm="", n=3)
    lines = [x for x in diff]
    return "\n".join(lines) + ("\n" if lines else "")


def name_servers(sw: Any) -> tuple[str, dict[str, Any]]:
    """``show ip name-server``: the configured ``ip name-server`` lines (none on the testbed)."""
    out = []
    for x in sw.running.globals_:
        w = x.split()
        if x.startswith("ip name-server "):
            vrf = w[w.index("vrf") + 1] if "vrf" in w else "default"
            out += [{"ipAddr": a, "vrf": vrf, "priority": 0} for a in w[2:] if a != "vrf" and a != vrf]
    text = "".join(f"{s['ipAddr']:<20} {s['vrf']}\n" for s in out)
    return text, {"nameServerConfigs": out}


#: ``show errdisable recovery``: EOS 4.32's causes with their default timers (recovery disabled).
ERRDISABLE = ["acl", "arp-inspection", "bpduguard", "dot1x", "link-flap", "no-internal-vlan", "portchannelguard",
              "portsec", "speed-misconfigured", "storm-control", "uplink-failure-detection", "xcvr-unsupported"]


def errdisable_recovery() -> str:
    """``show errdisable recovery`` (text: the model ANTA reads is this table)."""
    rows = [f"{c:<30} {'Disabled':<17} {300:>14}" for c in ERRDISABLE]
    return "\n".join(["Errdisable Reason              Timer Status      Timer Interval",
                      "------------------------------ ----------------- --------------", *rows]) + "\n"


def version_detail(sw: Any, base: dict[str, Any]) -> dict[str, Any]:
    """``show version detail``: ``show version``'s model and its details (no TerminAttr: the
    switch streams no telemetry)."""
    return {**base, "details": {"deviations": [], "components": [{"name": "Aboot", "version": "Aboot-norcal-14.0.0"}],
                                "switchType": "fixedSystem", "packages": {}}}


def extensions() -> tuple[str, dict[str, Any]]:
    """``show extensions``: none installed."""
    return "No extensions are available\n", {"extensions": {}, "extensionStoredDir": "flash:",
                                             "warnings": ["No extensions are available"]}


def boot_extensions() -> tuple[str, dict[str, Any]]:
    """``show boot-extensions``: none."""
    return "", {"extensions": []}


def users_accounts(sw: Any) -> tuple[str, dict[str, Any]]:
    """``show users accounts``: the switch's login (the credentials file's user, privilege 15,
    role network-admin), what NAPALM's get_users reads."""
    try:
        name = str(json.loads((sw.dir / "credentials").read_text())["username"])
    except (OSError, ValueError, KeyError):
        name = "admin"
    model = {"users": {name: {"username": name, "privLevel": 15, "role": "network-admin", "sshAuthorizedKey": "",
                              "nopassword": False}}}
    return f"user: {name}\n       role: network-admin\n       privilege level: 15\n", model


def snmp_mib(sw: Any, what: str) -> tuple[str, dict[str, Any]]:
    """``show snmp v2-mib chassis|location|contact``: ``snmp-server chassis-id`` (default the
    serial number), ``location``, ``contact``."""
    key = {"chassis": "chassis-id", "location": "location", "contact": "contact"}[what]
    value = next((x.split(None, 2)[2] for x in sw.running.globals_ if x.startswith(f"snmp-server {key} ")),
                 facts(sw).serial if what == "chassis" else "")
    return f"{value}\n" if value else "", {what + ("Id" if what == "chassis" else ""): value}


def environment(what: str) -> tuple[str, dict[str, Any]]:
    """``show system environment cooling|temperature|power``: a 7280SR3's fan trays, sensors and
    two PSUs, all ok (the virtual switch has no sensors: nominal values, named in the fidelity
    table)."""
    if what == "cooling":
        trays = [{"label": str(i), "status": "ok", "speed": 40, "fans": [
            {"label": f"{i}/1", "status": "ok", "actualSpeed": 40, "configuredSpeed": 40}]} for i in range(1, 5)]
        return "System cooling status is: Ok\n", {"systemStatus": "coolingOk", "fanTraySlots": trays,
                                                  "powerSupplySlots": [], "ambientTemperature": 25.0}
    if what == "temperature":
        sensors = [{"name": f"TempSensor{i}", "description": d, "currentTemperature": t, "overheatThreshold": 95.0,
                    "criticalThreshold": 105.0, "hwStatus": "ok", "inAlertState": False}
                   for i, (d, t) in enumerate([("Cpu temp sensor", 45.0), ("Switch chip sensor", 52.0),
                                               ("Front-panel temp sensor", 28.0)], 1)]
        return "System temperature status is: Ok\n", {"systemStatus": "temperatureOk", "tempSensors": sensors,
                                                      "cardSlots": [], "powerSupplySlots": []}
    psus = {str(i): {"modelName": "PWR-1011-AC-RED", "capacity": 1100.0, "outputPower": 120.0, "state": "ok",
                     "inputCurrent": 0.6, "outputCurrent": 10.0} for i in (1, 2)}
    return "Power supplies: 2 ok\n", {"powerSupplies": psus}
