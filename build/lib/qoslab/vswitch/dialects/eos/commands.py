"""The EXEC commands of the virtual EOS switch (pure data), matched by :mod:`qoslab.eos.grammar`
(keywords abbreviable, EOS's errors): what Netmiko ``arista_eos``, NAPALM ``eos`` (eAPI and SSH),
Ansible ``arista.eos`` (network_cli and httpapi), scrapli ``arista_eos`` and qoslab's switch meter
send, and the QoS show commands of the EOS User Manual's QoS chapter.

``USER`` lists what user EXEC (``host>``) may run; the rest answers ``% Invalid input (privileged
mode required)`` there, as EOS does. In configuration mode EOS runs EXEC commands directly (and
after ``do``). Output modifiers after ``|`` (``json``, ``include``, ``exclude``, ``begin``,
``section``, ``no-more``) are :data:`MODIFIERS`.
"""

from __future__ import annotations

from ....eos.grammar import Template as T

EXEC = [
    T("enable", "enable"), T("disable", "disable"), T("exit", "exit"), T("logout", "exit"), T("quit", "exit"),
    T("terminal length {n:0-32767}", "terminal length"), T("terminal width {n:10-32767}", "terminal width"),
    T("terminal dont-ask", "noop"), T("terminal monitor", "noop"),
    T("configure", "configure"), T("configure terminal", "configure"),
    T("configure session {name:word}", "configure session"),
    T("configure session {name:word} commit", "session commit"),
    T("configure session {name:word} abort", "session abort"),
    T("configure replace {url:word}", "configure replace"),
    T("write", "write"), T("write memory", "write"),
    T("copy {src:word} {dst:word}", "copy"),
    T("show version", "version"), T("show hostname", "hostname"), T("show clock", "clock"),
    T("show running-config", "running-config"), T("show running-config all", "running-config all"),
    T("show running-config sanitized", "running-config"),
    T("show running-config interfaces {port:iface}", "running-config interface"),
    T("show startup-config", "startup-config"),
    T("show interfaces", "interfaces"), T("show interfaces {port:iface}", "interfaces"),
    T("show interfaces status", "interfaces status"), T("show interfaces {port:iface} status", "interfaces status"),
    T("show interfaces counters queue", "counters queue"),
    T("show interfaces counters queue detail", "counters queue detail"),
    T("show interfaces {port:iface} counters queue", "counters queue"),
    T("show interfaces {port:iface} counters queue detail", "counters queue detail"),
    T("show qos maps", "qos maps"),
    T("show qos interfaces", "qos interfaces"), T("show qos interfaces {port:iface}", "qos interfaces"),
    T("show configuration sessions", "sessions"), T("show configuration sessions detail", "sessions"),
    T("show session-config", "session-config"), T("show session-config diffs", "session-config diffs"),
    T("show session-config named {name:word}", "session-config"),
    T("show session-config named {name:word} diffs", "session-config diffs"),
    T("show running-config diffs", "running-config diffs"), T("show version detail", "version detail"),
]
#: The operational shows of issue 49 (ANTA's system, interfaces, configuration, services and
#: software tests; NAPALM's ``eos`` getters), answered by :mod:`.ops` under these action names.
OPS = [
    T("show uptime", "uptime"), T("show reload cause", "reload cause"), T("show system coredump", "coredump"),
    T("show agent logs crash", "agent logs crash"), T("show processes top once", "processes top"),
    T("show ntp status", "ntp status"), T("show ntp associations", "ntp associations"),
    T("show maintenance", "maintenance"), T("show file systems", "file systems"),
    T("dir", "dir flash"), T("dir {url:word}", "dir flash"), T("show zerotouch", "zerotouch"),
    T("show ip name-server", "name-server"), T("show errdisable recovery", "errdisable recovery"),
    T("show extensions", "extensions"), T("show boot-extensions", "boot-extensions"),
    T("show users accounts", "users accounts"), T("show snmp v2-mib {what:chassis|location|contact}", "snmp mib"),
    T("show system environment {what:cooling|temperature|power}", "environment"),
    T("bash timeout {n:1-86400} {cmd:rest}", "bash"), T("ping {dest:rest}", "ping"),
    T("show interfaces status errdisabled", "errdisabled"),
    T("show interfaces counters errors", "counters errors"),
    T("show interfaces counters discards", "counters discards"),
    T("show interfaces counters rates", "counters rates"), T("show interfaces description", "description"),
    T("show interfaces {port:iface} counters errors", "counters errors"),
    T("show interfaces {port:iface} counters discards", "counters discards"),
    T("show interfaces {port:iface} counters rates", "counters rates"),
    T("show interfaces {port:iface} description", "description"),
    T("show interfaces counters queue drops", "queue drops"),
    T("show interfaces {port:iface} counters queue drops", "queue drops"),
    T("show storm-control", "storm-control"), T("show port-channel", "port-channel"),
    T("show lacp counters all-ports", "lacp counters"), T("show ip interface", "ip interface"),
    T("show ip interface brief", "ip interface"), T("show ipv6 interface", "ipv6 interface"),
    T("show lldp neighbors", "lldp neighbors"), T("show lldp neighbors detail", "lldp detail"),
    T("show lldp neighbors {port:iface} detail", "lldp detail"),
    T("show mac address-table", "mac address-table"), T("show vlan", "vlan"), T("show vrf", "vrf"),
    T("show ip route", "ip route"), T("show ip route vrf {vrf:word}", "ip route"),
    T("show ip route vrf {vrf:word} {rest:rest}", "ip route"),
    T("show interfaces transceiver", "transceiver"), T("show arp vrf all", "arp"), T("show arp", "arp"),
    T("show {af:ip|ipv6} bgp summary vrf all", "bgp"), T("show ip bgp neighbors vrf all", "bgp"),
    T("show ip bgp neighbors {peer:word} vrf all", "bgp"), T("show ipv6 bgp peers vrf all", "bgp"),
    T("show ipv6 bgp peers {peer:word} vrf all", "bgp"),
]
EXEC += OPS
#: Commands of a configuration session's modes only (EOS User Manual, "Configuration Sessions").
SESSION = [T("commit", "commit"), T("abort", "abort"), T("rollback clean-config", "clean-config")]
USER = frozenset({"enable", "exit", "terminal length", "terminal width", "noop", "version", "hostname", "clock",
                  "interfaces", "interfaces status", "counters queue", "counters queue detail"})
MODIFIERS = ("json", "include", "exclude", "begin", "section", "no-more")
