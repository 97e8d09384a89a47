"""The configuration commands of qoslab's virtual EOS switch, per mode (pure data): the QoS
commands of the EOS User Manual's QoS chapter (``qos trust``, ``qos map``, ``tx-queue``,
``priority strict``, ``bandwidth percent``, ``shape rate``, ``random-detect drop``, QoS class-maps
and policy-maps with ``set dscp``, ``set traffic-class``, ``police rate``), IP access lists
(extended and standard, with remarks), ``monitor session``, ``management ssh`` (its service
ACL), SNMP and the few global lines a switch's identity needs.

Modes and their prompts (EOS User Manual, "Command-Line Interface: Command Modes"; the prompt
suffix EOS shows after the hostname): :data:`PROMPTS`. A mode's parent is where a command the
mode does not know is tried next (EOS leaves the sub-mode, as IOS does): :data:`PARENT`.
"""

from __future__ import annotations

from .grammar import Template as T

_UNITS = "bytes|kbytes|mbytes|segments"
_WRED = (f"minimum-threshold {{min:1-4294967295}} {{unit:{_UNITS}}} maximum-threshold {{max:1-4294967295}} "
         f"{{unit2:{_UNITS}}} drop-probability {{prob:1-100}}")

GLOBAL = [
    T("hostname {name:word}", "hostname"),
    T("interface {name:iface}", "interface", "if"),
    T("ip access-list {name:word}", "acl", "acl"),
    T("ip access-list standard {name:word}", "acl", "acl-std"),
    T("class-map type qos match-any {name:word}", "class-map", "cmap"),
    T("class-map type qos {name:word}", "class-map", "cmap"),
    T("policy-map type {kind:qos|quality-of-service} {name:word}", "policy-map", "pmap"),
    T("qos map dscp {keys:dscp+} to traffic-class {tc:0-7}", "map-dscp"),
    T("qos map dscp {keys:dscp+} to traffic-class {tc:0-7} drop-precedence {dp:0-2}", "map-dscp"),
    T("qos map cos {keys:0-7+} to traffic-class {tc:0-7}", "map-cos"),
    T("qos map traffic-class {keys:0-7+} to tx-queue {q:0-7}", "map-tc"),
    T("qos rewrite dscp", "rewrite"),
    T("monitor session {name:word} source {port:iface}", "mon-source"),
    T("monitor session {name:word} source {port:iface} {dir:rx|tx|both}", "mon-source"),
    T("monitor session {name:word} destination {port:iface}", "mon-dest"),
    T("transceiver qsfp default-mode {mode:word}", "kept"),
    T("service routing protocols model {model:ribd|multi-agent}", "kept"),
    T("spanning-tree mode {mode:mstp|rstp|rapid-pvst|none}", "kept-after"),
    T("ip routing", "kept-after"),  # kept (the testbed routes nothing: the switch's ports are switched)
    T("management api http-commands", "mgmt", "mgmt"),
    T("management ssh", "mgmt-ssh", "mgmt-ssh"),
    # a QoS profile (EOS User Manual, "QoS profiles"; what AVD writes for tx-queue scheduling):
    # an interface's QoS lines under a name, applied by the interface's ``service-profile NAME``
    T("qos profile {name:word}", "qos-profile", "qprof"),
    # SNMP (EOS User Manual, "SNMP"): one line per community, one location, one contact
    T("snmp-server community {name:word} {how:ro|rw}", "kept-after"),
    T("snmp-server community {name:word} {how:ro|rw} {acl:word}", "kept-after"),
    T("snmp-server location {text:rest}", "kept-after"),
    T("snmp-server contact {text:rest}", "kept-after"),
]
#: ``management ssh`` (EOS User Manual, "Management ssh": the service ACL, the idle timeout).
MGMT_SSH = [T("ip access-group {name:word} in", "ssh-line"), T("ip access-group {name:word} vrf {vrf:word} in",
                                                                  "ssh-line"),
            T("idle-timeout {m:0-86400}", "ssh-line"), T("shutdown", "ssh-line")]
MGMT = [T("shutdown", "mgmt-line"), T("protocol https", "mgmt-line"), T("protocol http", "mgmt-line")]
INTERFACE = [
    T("description {text:rest}", "if-line"),
    T("shutdown", "if-line"),
    T("qos trust {how:dscp|cos}", "trust"),
    T("qos cos {v:0-7}", "if-line"),
    T("qos dscp {v:0-63}", "if-line"),
    T("service-policy type qos input {name:word}", "service-policy"),
    T("service-policy input {name:word}", "service-policy"),
    T("service-profile {name:word}", "if-line"),
    T("shape rate {rate:1-400000000}", "if-line"),
    T("shape rate {rate:1-400000000} {unit:kbps|mbps|pps}", "if-line"),
    T("shape rate {rate:1-100} percent", "if-line"),
    T("tx-queue {q:0-7}", "tx-queue", "txq"),
]
TXQ = [
    T("priority strict", "priority", neg=1),
    T("bandwidth percent {p:1-100}", "txq-line"),
    T("shape rate {rate:1-400000000}", "txq-line"),
    T("shape rate {rate:1-400000000} {unit:kbps|mbps|pps}", "txq-line"),
    T("shape rate {rate:1-100} percent", "txq-line"),
    T(f"random-detect drop {_WRED}", "wred"),
    T(f"random-detect drop drop-precedence {{dp:0-2}} {_WRED}", "wred"),
]
ACL = [
    T("{seq:1-4294967295} remark {text:rest}", "remark"),
    T("remark {text:rest}", "remark"),
    T("{seq:1-4294967295} {entry:rest}", "ace"),
    T("{action:permit|deny} {entry:rest}", "ace"),
]
CLASS_MAP = [
    T("match ip access-group {name:word}", "match"),
    T("match dscp {v:dscp+}", "match"),
]
POLICY_MAP = [T("class {name:word}", "class", "pmapc")]
POLICY_CLASS = [
    T("set dscp {v:dscp}", "set"),
    T("set traffic-class {v:0-7}", "set"),
    T("set cos {v:0-7}", "set"),
    T("set drop-precedence {v:0-2}", "set"),
    T("police rate {rate:1-400000000000} {unit:bps|kbps|mbps} burst-size {burst:1-1000000000} "
      "{bunit:bytes|kbytes|mbytes}", "police"),
]
#: Leaving a mode: ``exit`` goes to the parent, ``end`` (in any config mode) to privileged EXEC.
LEAVE = [T("exit", "exit"), T("end", "end")]

#: A QoS profile's commands: an interface's QoS lines.
QOS_PROFILE = [t for t in INTERFACE if t.spec.split()[0] not in ("description", "shutdown", "service-profile")]

MODES = {"config": GLOBAL, "if": INTERFACE, "txq": TXQ, "qprof": QOS_PROFILE, "qptxq": TXQ,
         "acl": ACL, "acl-std": ACL, "cmap": CLASS_MAP,
         "pmap": POLICY_MAP, "pmapc": POLICY_CLASS, "mgmt": MGMT, "mgmt-ssh": MGMT_SSH}
PARENT = {"if": "config", "txq": "if", "qprof": "config", "qptxq": "qprof",
          "acl": "config", "acl-std": "config", "cmap": "config", "pmap": "config",
          "pmapc": "pmap", "mgmt": "config", "mgmt-ssh": "config"}
#: Prompt suffix per mode; ``{}`` is the mode's target (``config-if-Et1``, ``config-pmap-qos-NAME``).
PROMPTS = {"config": "(config)#", "if": "(config-if-{})#", "txq": "(config-if-{}-txq-{})#",
           "qprof": "(config-qos-profile-{})#", "qptxq": "(config-qos-profile-{}-txq-{})#", "acl": "(config-acl-{})#",
           "cmap": "(config-cmap-qos-{})#", "pmap": "(config-pmap-qos-{})#", "pmapc": "(config-pmap-c-qos-{}-{})#",
           "mgmt": "(config-mgmt-api-http-cmds)#", "acl-std": "(config-std-acl-{})#", "mgmt-ssh": "(config-mgmt-ssh)#"}
