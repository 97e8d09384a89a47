"""The EXEC command table of the IOS family (IOS 12.2 and IOS-XE alike): the show commands both
Catalyst dialects answer, configuration, files and archive, terminal settings.

Sources: Catalyst 3750 Command Reference 12.2(55)SE; Cisco IOS Configuration Fundamentals Command
Reference 12.2; Catalyst 9300 Command Reference, IOS-XE 17.x (the same EXEC commands). The
``mls qos`` show commands are the 3750's own (:mod:`qoslab.vswitch.dialects.catalyst3750`).
"""

from __future__ import annotations

from ...execparse import ExecTable

#: EXEC commands: name -> token specs (see :class:`qoslab.vswitch.execparse.ExecTable`).
COMMANDS: dict[str, str] = {
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
    "show interfaces summary": "show interfaces summary",
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
    "show policy-map interface port input": "show policy-map interface {port} input",
    "show policy-map interface port output": "show policy-map interface {port} output",
    "show policy-map name": "show policy-map {word}",
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
    "show environment temperature status": "show environment temperature status",
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
    # answered from the switch's namespace by qoslab.vswitch.ping (IOS: user EXEC may run both)
    "ping": "ping {word}",
    "ping options": "ping {word} {rest}",
    "traceroute": "traceroute {word}",
    "traceroute options": "traceroute {word} {rest}",
}
#: Commands user EXEC (``>``, privilege level 1) may run; everything else needs ``enable``. From
#: the "Command Modes" of each command in the Catalyst 3750 Command Reference 12.2(55)SE and the
#: Cisco IOS Configuration Fundamentals Command Reference 12.2: the status and table displays
#: (version, inventory, clock, hosts, interfaces, ip interface/arp/route, vlan, arp, mac
#: address-table, cdp, lldp, env, processes) are User EXEC; configurations (running, startup,
#: archive), QoS and ACL settings, SNMP (it shows community strings), memory, monitor sessions
#: and files are Privileged EXEC. See src/qoslab/vswitch/README.md.
USER_EXEC_PREFIXES = (
    "show version", "show privilege", "show inventory", "show hosts", "show clock", "show interfaces",
    "show ip interface", "show ip arp", "show ip route", "show vlan", "show arp", "show mac address-table",
    "show cdp", "show lldp", "show environment", "show processes cpu", "enable", "terminal", "exit", "logout",
    "quit", "ping", "traceroute")


def user_exec(commands: dict[str, str]) -> frozenset[str]:
    """The names of ``commands`` user EXEC may run (:data:`USER_EXEC_PREFIXES`)."""
    return frozenset(n for n in commands if n.startswith(USER_EXEC_PREFIXES))


#: Operational shows both Catalysts answer (issue 49; :mod:`.show_ops`): what the real switches
#: answer and operators' tools (Genie, NAPALM ``ios``, Ansible ``ios_facts``) send.
OPS_COMMANDS: dict[str, str] = {
    "show interfaces description": "show interfaces description",
    "show etherchannel summary": "show etherchannel summary",
    "show ip ssh": "show ip ssh", "show users": "show users", "show logging": "show logging",
    "show processes cpu sorted": "show processes cpu sorted",
    "show ip bgp all summary": "show ip bgp all summary", "show bgp all summary": "show bgp all summary",
    "show ip protocols": "show ip protocols", "show ip route prefix": "show ip route {word} {rest}",
    "show ip vrf": "show ip vrf", "show vrf": "show vrf", "show vrf detail": "show vrf detail",
    "show ipv6 neighbors": "show ipv6 neighbors", "show ntp associations": "show ntp associations",
    "show interfaces transceiver": "show interfaces transceiver", "show memory": "show memory",
    "show vlan all-ports": "show vlan all-ports", "show spanning-tree": "show spanning-tree",
}
#: Of those, what user EXEC may run (the Command References' "User EXEC" displays).
OPS_USER = frozenset({"show interfaces description", "show etherchannel summary", "show users",
                      "show ip protocols", "show ip route prefix", "show ntp associations", "show vlan all-ports",
                      "show processes cpu sorted", "show spanning-tree"})

#: The IOS family's table (what both Catalyst dialects take).
IOS_TABLE = ExecTable({**COMMANDS, **OPS_COMMANDS}, user_exec(COMMANDS) | OPS_USER)
