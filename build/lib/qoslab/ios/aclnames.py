"""The keywords IOS takes and prints in IP access-list entries instead of numbers: IP protocols,
TCP and UDP ports, ICMP messages, IP precedence (pure tables, no qoslab dependency).

Sources: Cisco IOS Security Command Reference, ``permit (IP)`` / ``deny (IP)`` (the protocol,
port, ICMP-message and precedence keywords and their values), and the Catalyst 3750 Software
Configuration Guide 12.2(55)SE, "Configuring Network Security with ACLs" (the extended-ACL
keywords a 3750 takes). IOS prints the keyword wherever one exists for a number, whichever form
was typed (``eq 80`` is shown ``eq www``, ``permit 47 ...`` is shown ``permit gre ...``); the
Ansible ``cisco.ios`` collection's ``ios_acls`` converts port numbers with the same TCP table
before comparing with what the device shows (``port_protocl_no_to_protocol``).
"""

from __future__ import annotations

from collections.abc import Mapping

#: IP protocol keywords of an extended ACE -> protocol number (``ip`` = any protocol: not here).
PROTOCOLS: dict[str, int] = {"icmp": 1, "igmp": 2, "ipinip": 4, "tcp": 6, "udp": 17, "gre": 47, "esp": 50,
                             "ahp": 51, "eigrp": 88, "ospf": 89, "nos": 94, "pim": 103, "pcp": 108}
PROTOCOL_NAMES: dict[int, str] = {v: k for k, v in PROTOCOLS.items()}

#: TCP port keywords -> port (``syslog`` is an alias of 514; IOS prints ``cmd``).
TCP_PORTS: dict[str, int] = {
    "bgp": 179, "chargen": 19, "cmd": 514, "daytime": 13, "discard": 9, "domain": 53, "drip": 3949, "echo": 7,
    "exec": 512, "finger": 79, "ftp": 21, "ftp-data": 20, "gopher": 70, "hostname": 101, "ident": 113, "irc": 194,
    "klogin": 543, "kshell": 544, "login": 513, "lpd": 515, "msrpc": 135, "nntp": 119, "pim-auto-rp": 496,
    "pop2": 109, "pop3": 110, "smtp": 25, "sunrpc": 111, "syslog": 514, "tacacs": 49, "talk": 517, "telnet": 23,
    "time": 37, "uucp": 540, "whois": 43, "www": 80}
#: UDP port keywords -> port.
UDP_PORTS: dict[str, int] = {
    "biff": 512, "bootpc": 68, "bootps": 67, "discard": 9, "dnsix": 195, "domain": 53, "echo": 7, "isakmp": 500,
    "mobile-ip": 434, "nameserver": 42, "netbios-dgm": 138, "netbios-ns": 137, "netbios-ss": 139,
    "non500-isakmp": 4500, "ntp": 123, "pim-auto-rp": 496, "rip": 520, "snmp": 161, "snmptrap": 162,
    "sunrpc": 111, "syslog": 514, "tacacs": 49, "talk": 517, "tftp": 69, "time": 37, "who": 513, "xdmcp": 177}
_PRINTED_ALIASES = {("tcp", "syslog")}  # accepted, never printed (the port prints as its other name)
PORT_NAMES: dict[str, dict[int, str]] = {
    proto: {v: k for k, v in table.items() if (proto, k) not in _PRINTED_ALIASES}
    for proto, table in (("tcp", TCP_PORTS), ("udp", UDP_PORTS))}

#: ICMP message keywords -> (type, code or None for every code of the type).
ICMP_MESSAGES: dict[str, tuple[int, int | None]] = {
    "echo-reply": (0, None), "unreachable": (3, None), "net-unreachable": (3, 0), "host-unreachable": (3, 1),
    "protocol-unreachable": (3, 2), "port-unreachable": (3, 3), "packet-too-big": (3, 4),
    "source-route-failed": (3, 5), "network-unknown": (3, 6), "host-unknown": (3, 7), "host-isolated": (3, 8),
    "dod-net-prohibited": (3, 9), "dod-host-prohibited": (3, 10), "net-tos-unreachable": (3, 11),
    "host-tos-unreachable": (3, 12), "administratively-prohibited": (3, 13),
    "host-precedence-unreachable": (3, 14), "precedence-unreachable": (3, 15), "source-quench": (4, None),
    "redirect": (5, None), "net-redirect": (5, 0), "host-redirect": (5, 1), "net-tos-redirect": (5, 2),
    "host-tos-redirect": (5, 3), "alternate-address": (6, None), "echo": (8, None),
    "router-advertisement": (9, None), "router-solicitation": (10, None), "time-exceeded": (11, None),
    "ttl-exceeded": (11, 0), "reassembly-timeout": (11, 1), "parameter-problem": (12, None),
    "general-parameter-problem": (12, 0), "option-missing": (12, 1), "no-room-for-option": (12, 2),
    "timestamp-request": (13, None), "timestamp-reply": (14, None), "information-request": (15, None),
    "information-reply": (16, None), "mask-request": (17, None), "mask-reply": (18, None),
    "traceroute": (30, None), "conversion-error": (31, None), "mobile-redirect": (32, None)}
ICMP_NAMES: dict[tuple[int, int | None], str] = {v: k for k, v in ICMP_MESSAGES.items()}

#: IP precedence keywords -> value 0-7 (RFC 791).
PRECEDENCE: dict[str, int] = {"routine": 0, "priority": 1, "immediate": 2, "flash": 3, "flash-override": 4,
                              "critical": 5, "internet": 6, "network": 7}
PRECEDENCE_NAMES: dict[int, str] = {v: k for k, v in PRECEDENCE.items()}
#: Type-of-service values 0-15 by name (RFC 1349; Cisco IOS Security Command Reference, ``permit
#: (IP)``, ``tos``): IOS prints the name where there is one.
TOS: dict[str, int] = {"normal": 0, "min-monetary-cost": 1, "max-reliability": 2, "max-throughput": 4, "min-delay": 8}
TOS_NAMES: dict[int, str] = {v: k for k, v in TOS.items()}


def keyword(tok: str, choices: Mapping[str, object]) -> str | None:
    """The keyword of ``choices`` that ``tok`` names: exactly, or as an unambiguous abbreviation of
    at least two characters (the IOS rule); None otherwise."""
    low = tok.lower()
    if low in choices:
        return low
    hits = [k for k in choices if k.startswith(low)]
    return hits[0] if len(hits) == 1 and len(low) >= 2 else None


def port_value(tok: str, proto: str) -> int | None:
    """A TCP/UDP port as IOS takes it: 0-65535 or a keyword of ``proto``'s table; None if neither."""
    if tok.isdigit():
        return int(tok) if int(tok) <= 65535 else None
    table = TCP_PORTS if proto == "tcp" else UDP_PORTS
    name = keyword(tok, table)
    return table[name] if name else None


def port_text(port: int, proto: str) -> str:
    """How IOS prints a port: its keyword, else the number."""
    return PORT_NAMES[proto].get(port, str(port))
