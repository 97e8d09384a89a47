"""The EXEC command language of the virtual Catalyst 3750, as pure functions: parsing with IOS
keyword abbreviations (``sh mls qos int gi1/0/1 stat``), case-insensitive keywords and interface
names (``gi1/0/1``, ``g1/0/1``, ``GigabitEthernet 1/0/1``), the caret under the first token that
does not fit, ambiguity (``% Ambiguous command``), and the output modifiers ``| include``,
``| exclude``, ``| begin``, ``| section``, ``| count``.

:func:`parse_exec` turns a line into an :class:`ExecCommand` (a command name from
:data:`EXEC_COMMANDS` and its arguments); the caller (the virtual switch's session) runs it and
passes the output through :func:`apply_modifier`. Nothing here touches the switch state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..ios.grammar import IosError
from ..ios.names import merge_port_tokens, parse_port
from ..ios.show_qos import MAP_NAMES

#: EXEC commands: name -> token specs. Literals may be abbreviated; ``{port}`` an interface
#: (one token or two, ``gi 1/0/1``), ``{word}`` a name, ``{n:A-B}`` a number, ``{url}`` a file
#: (``flash:x``, ``running-config`` ...), ``{rest}`` the rest of the line.
EXEC_COMMANDS: dict[str, str] = {
    "show version": "show version",
    "show running-config": "show running-config",
    "show running-config all": "show running-config all",
    "show running-config interface port": "show running-config interface {port}",
    "show running-config partition access-list": "show running-config partition access-list",
    "show startup-config": "show startup-config",
    "show privilege": "show privilege",
    "show inventory": "show inventory",
    "show hosts": "show hosts",
    "show clock": "show clock",
    "show interfaces": "show interfaces",
    "show interfaces status": "show interfaces status",
    "show interfaces port": "show interfaces {port}",
    "show interfaces port status": "show interfaces {port} status",
    "show ip interface": "show ip interface",
    "show ip interface brief": "show ip interface brief",
    "show ip interface port": "show ip interface {port}",
    "show ipv6 interface": "show ipv6 interface",
    "show ip access-lists": "show ip access-lists",
    "show ip access-lists name": "show ip access-lists {word}",
    "show access-lists": "show access-lists",
    "show access-lists name": "show access-lists {word}",
    "show class-map": "show class-map",
    "show class-map name": "show class-map {word}",
    "show policy-map": "show policy-map",
    "show policy-map interface": "show policy-map interface",
    "show policy-map interface port": "show policy-map interface {port}",
    "show policy-map name": "show policy-map {word}",
    "show mls qos": "show mls qos",
    "show mls qos interface": "show mls qos interface",
    "show mls qos interface port": "show mls qos interface {port}",
    "show mls qos interface queueing": "show mls qos interface queueing",
    "show mls qos interface statistics": "show mls qos interface statistics",
    "show mls qos interface buffers": "show mls qos interface buffers",
    "show mls qos interface port queueing": "show mls qos interface {port} queueing",
    "show mls qos interface port statistics": "show mls qos interface {port} statistics",
    "show mls qos interface port buffers": "show mls qos interface {port} buffers",
    "show mls qos queue-set": "show mls qos queue-set",
    "show mls qos queue-set n": "show mls qos queue-set {n:1-2}",
    "show mls qos maps": "show mls qos maps",
    **{f"show mls qos maps {m}": f"show mls qos maps {m}" for m in MAP_NAMES},
    "show mls qos input-queue": "show mls qos input-queue",
    "show archive": "show archive",
    "show archive config differences": "show archive config differences {url} {url2}",
    "show archive config incremental-diffs": "show archive config incremental-diffs {url} ignorecase",
    "show archive config incremental-diffs plain": "show archive config incremental-diffs {url}",
    "show archive config rollback timer": "show archive config rollback timer",
    "show monitor": "show monitor",
    "show monitor session n": "show monitor session {n:1-66}",
    "show monitor session all": "show monitor session all",
    "show monitor session local": "show monitor session local",
    "show vlan": "show vlan",
    "show vlan brief": "show vlan brief",
    "show vlan id n": "show vlan id {n:1-4094}",
    "show lldp": "show lldp",
    "show lldp neighbors": "show lldp neighbors",
    "show lldp neighbors detail": "show lldp neighbors detail",
    "show cdp": "show cdp",
    "show cdp neighbors": "show cdp neighbors",
    "show cdp neighbors detail": "show cdp neighbors detail",
    "show arp": "show arp",
    "show ip arp": "show ip arp",
    "show ip route": "show ip route",
    "show mac address-table": "show mac address-table",
    "show mac address-table dynamic": "show mac address-table dynamic",
    "show mac address-table interface port": "show mac address-table interface {port}",
    "show environment all": "show environment all",
    "show environment fan": "show environment fan",
    "show environment temperature": "show environment temperature",
    "show snmp": "show snmp",
    "show snmp chassis": "show snmp chassis",
    "show snmp community": "show snmp community",
    "show interfaces switchport": "show interfaces switchport",
    "show interfaces port switchport": "show interfaces {port} switchport",
    "show interfaces counters": "show interfaces counters",
    "show memory statistics": "show memory statistics",
    "show processes cpu": "show processes cpu",
    "show file systems": "show file systems",
    "dir": "dir",
    "dir url": "dir {url}",
    "more url": "more {url}",
    "verify md5": "verify /md5 {url}",
    "delete url": "delete {url}",
    "delete force url": "delete /force {url}",
    "copy": "copy {url} {url2}",
    "enable": "enable",
    "tclsh": "tclsh",
    "disable": "disable",
    "configure terminal": "configure terminal",
    "configure": "configure",
    "configure replace": "configure replace {url} {rest}",
    "configure replace plain": "configure replace {url}",
    "write memory": "write memory",
    "write": "write",
    "terminal length": "terminal length {n:0-512}",
    "terminal width": "terminal width {n:0-512}",
    "terminal monitor": "terminal monitor",
    "terminal no monitor": "terminal no monitor",
    "exit": "exit",
    "logout": "logout",
    "quit": "quit",
}
_SPECS = {name: tuple(text.split()) for name, text in EXEC_COMMANDS.items()}
#: Commands user EXEC (``>``, privilege level 1) may run; everything else needs ``enable``. From
#: the "Command Modes" of each command in the Catalyst 3750 Command Reference 12.2(55)SE and the
#: Cisco IOS Configuration Fundamentals Command Reference 12.2: the status and table displays
#: (version, inventory, clock, hosts, interfaces, ip interface/arp/route, vlan, arp, mac
#: address-table, cdp, lldp, env, processes) are User EXEC; configurations (running, startup,
#: archive), QoS and ACL settings, SNMP (it shows community strings), memory, monitor sessions
#: and files are Privileged EXEC. See src/qoslab/vcatalyst/README.md.
USER_EXEC = {n for n in EXEC_COMMANDS if n.startswith((
    "show version", "show privilege", "show inventory", "show hosts", "show clock", "show interfaces",
    "show ip interface", "show ip arp", "show ip route", "show vlan", "show arp", "show mac address-table",
    "show cdp", "show lldp", "show environment", "show processes cpu", "enable", "terminal", "exit", "logout",
    "quit"))}
_URL = re.compile(r"^([a-z]+:[^\s]*|running-config|startup-config|[A-Za-z0-9_.\-/]+)$")
_MODIFIERS = ("include", "exclude", "begin", "section", "count")


@dataclass
class ExecCommand:
    """A parsed EXEC line: command name (a key of :data:`EXEC_COMMANDS`), its arguments
    (``port``, ``word``, ``n``, ``url``, ``url2``, ``rest``) and the output modifier, if any
    (``("include", REGEX)``)."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)
    modifier: tuple[str, str] | None = None
    columns: dict[str, int] = field(default_factory=dict)  # argument -> column of its token in the line


def _param(spec: str, tok: str) -> Any:
    kind = spec[1:-1].split(":")[0]
    if kind == "port":
        return parse_port(tok)
    if kind == "word":
        return tok if re.match(r"^[A-Za-z0-9_.\-]+$", tok) else None
    if kind == "n":
        lo, hi = (int(x) for x in spec[1:-1].split(":")[1].split("-"))
        return int(tok) if tok.isdigit() and lo <= int(tok) <= hi else None
    if kind in ("url", "url2"):
        return tok if _URL.match(tok) else None
    return tok


Specs = dict[str, tuple[str, ...]]


def _step(alive: Specs, i: int, tok: str, line: str, col: int) -> tuple[Specs, dict[str, tuple[str, Any]]]:
    """Advance the candidate commands by one token; returns (alive, values per command)."""
    words = {s[i] for s in alive.values() if i < len(s) and not s[i].startswith("{")}
    low = tok.lower()
    exact = {w for w in words if w == low}
    pref = exact or {w for w in words if w.startswith(low)}
    if len(pref) > 1:
        raise IosError(line, col, "ambiguous")
    keep: Specs = {}
    vals: dict[str, tuple[str, Any]] = {}
    for name, s in alive.items():
        if i >= len(s):
            continue
        if not s[i].startswith("{"):
            if s[i] in pref:
                keep[name] = s
        elif not pref:
            v = _param(s[i], tok)
            if v is not None:
                keep[name], vals[name] = s, (s[i][1:-1].split(":")[0], v)
    return keep, vals


def parse_exec(line: str) -> ExecCommand:
    """Parse one EXEC line. Raises IosError (``invalid`` with the caret column in ``line``,
    ``incomplete``, or ``ambiguous``) as IOS would answer."""
    body, modifier = _split_modifier(line)
    toks = merge_port_tokens([(m.group(0), m.start()) for m in re.finditer(r"\S+", body)])
    if not toks:
        raise IosError(line, 0, "incomplete")
    alive = dict(_SPECS)
    args: dict[str, dict[str, Any]] = {n: {} for n in alive}
    cols: dict[str, dict[str, int]] = {n: {} for n in alive}
    for i, (tok, col) in enumerate(toks):
        if "rest" in {s[i][1:-1] for s in alive.values() if i < len(s)}:
            rest = [n for n, s in alive.items() if i < len(s) and s[i] == "{rest}"]
            for n in rest:
                args[n]["rest"] = body[col:].strip()
            return ExecCommand(rest[0], args[rest[0]], modifier, cols[rest[0]])
        alive, vals = _step(alive, i, tok, line, col)
        if not alive:
            raise IosError(line, col)
        for n, (k, v) in vals.items():
            args[n][k], cols[n][k] = v, col
    done = [n for n, s in alive.items() if len(s) == len(toks)]
    if not done:
        raise IosError(line, len(line), "incomplete")
    return ExecCommand(done[0], args[done[0]], modifier, cols[done[0]])


def _split_modifier(line: str) -> tuple[str, tuple[str, str] | None]:
    """``show run | inc foo|bar`` -> (``show run``, (``include``, ``foo|bar``)). Raises IosError
    for an unknown modifier or a missing regular expression."""
    m = re.search(r"\s\|\s*", line)
    if not m:
        return line, None
    body, rest = line[:m.start()], line[m.end():]
    w = rest.split(None, 1)
    if not w:
        raise IosError(line, len(line), "incomplete")
    hits = [k for k in _MODIFIERS if k.startswith(w[0].lower())]
    if len(hits) != 1:
        raise IosError(line, m.end())
    if len(w) < 2 and hits[0] != "count":
        raise IosError(line, len(line), "incomplete")
    return body, (hits[0], w[1].strip() if len(w) > 1 else ".")


def apply_modifier(text: str, modifier: tuple[str, str] | None) -> str:
    """Filter command output as IOS does: ``include``/``exclude`` lines matching the regular
    expression, ``begin`` at the first match, ``section`` the top-level sections (a line and its
    indented children) with a matching line, ``count`` the number of matching lines."""
    if modifier is None:
        return text
    kind, regex = modifier
    try:
        rx = re.compile(regex)
    except re.error:
        return "% Invalid regular expression\n"
    lines = text.splitlines()
    if kind == "include":
        out = [l for l in lines if rx.search(l)]
    elif kind == "exclude":
        out = [l for l in lines if not rx.search(l)]
    elif kind == "begin":
        first = next((i for i, l in enumerate(lines) if rx.search(l)), len(lines))
        out = lines[first:]
    elif kind == "count":
        return f"Number of lines which match regexp = {sum(1 for l in lines if rx.search(l))}\n"
    else:
        out = []
        for sec in _sections(lines):
            if any(rx.search(l) for l in sec):
                out += sec
    return "\n".join(out) + ("\n" if out else "")


def _sections(lines: list[str]) -> list[list[str]]:
    secs: list[list[str]] = []
    for l in lines:
        if l.startswith(" ") and secs:
            secs[-1].append(l)
        elif l.strip() and not l.startswith("!"):
            secs.append([l])
    return secs
