"""The IOS-XE configuration dialect of a Catalyst 9300 (QoS part): MQC command templates per
config mode and the DSCP names IOS-XE prints.

Sources: Catalyst 9300 QoS Configuration Guide, Cisco IOS XE 17.x ("Configuring QoS": class-map
``match dscp``, policy-map class actions ``set dscp``, ``police cir ... bc ...``, ``priority level
1|2``, ``bandwidth remaining percent``, ``queue-buffers ratio``, ``queue-limit dscp N percent P``
(weighted tail drop), ``service-policy input|output``; there is no ``mls qos`` on IOS-XE, so a
3750 line is ``% Invalid input`` here). DSCP names: RFC 2474/2597/3246 (``default``, ``csN``,
``afXY``, ``ef``), as IOS-XE shows them in ``show running-config`` whatever form was typed.
"""

from __future__ import annotations

from .grammar import (
    DSCP_NAMES,
    LINE_TEMPLATES,
    MODE_TEMPLATES,
    PASSTHROUGH,
    SHARED_GLOBAL_TEMPLATES,
    T,
    Template,
    dscp_value,
)


def dscp_name(value: int) -> str:
    """How IOS-XE prints DSCP ``value``: its name, else the number."""
    return DSCP_NAMES.get(value, str(value))


#: IOS-XE accepts up to eight DSCP values on one ``match dscp`` line (Catalyst 9300 QoS guide).
MATCH_DSCP_MAX = 8

XE_GLOBAL = [
    T("hostname {name:word}", "hostname"),
    *SHARED_GLOBAL_TEMPLATES,
    # Catalyst 9300 QoS guide, "Queue buffer allocation": the soft-buffer multiplier (100-4800)
    T("qos queue-softmax-multiplier {m:100-4800}", "global"),
    # Catalyst 9300 command reference, IOS-XE 17.x: the fed queue stats count frames, not bytes
    T("qos queue-stats-frame-count", "global"),
]
XE_IF = [
    T("service-policy input {name:word}", "if"),
    T("service-policy output {name:word}", "if"),
    T("ip address {ip:ip} {mask:ip}", "if-keep"), T("no ip address", "if-keep"), T("shutdown", "if-keep"),
    T("description {rest:text}", "if-keep", 40, 1),
]
XE_CMAP = [T("match access-group {acl:word}", "cmap"), T("match access-group name {acl:word}", "cmap"),
           T("match dscp {d:dscp}", "xe-cmap", MATCH_DSCP_MAX, 1),
           T("match ip dscp {d:dscp}", "xe-cmap", MATCH_DSCP_MAX, 1)]
XE_PMAP = [T("class {name:word}", "pmap-class")]
XE_PMAPC = [
    T("set dscp {d:dscp}", "xe-pmapc"), T("set ip dscp {d:dscp}", "xe-pmapc"),
    # police cir RATE bc BURST (bits/s 8000-100 000 000 000; bytes 8000-1 000 000 here, as the 3750's)
    T("police cir {rate:8000-1000000000} bc {burst:8000-1000000} conform-action transmit exceed-action drop",
      "xe-pmapc"),
    T("police cir {rate:8000-1000000000} bc {burst:8000-1000000}", "xe-pmapc"),
    T("priority level {level:1-2}", "xe-pmapc"),
    T("priority", "xe-pmapc"),
    T("bandwidth remaining percent {p:1-100}", "xe-pmapc"),
    T("bandwidth percent {p:1-100}", "xe-pmapc"),
    T("queue-buffers ratio {r:0-100}", "xe-pmapc"),
    T("queue-limit dscp {d:dscp} percent {p:1-100}", "xe-pmapc"),
]
XE_MODE_TEMPLATES: dict[str, list[Template]] = {
    "config": XE_GLOBAL + PASSTHROUGH, "config-if": XE_IF, "config-cmap": XE_CMAP, "config-pmap": XE_PMAP,
    "config-pmap-c": XE_PMAPC, "config-ext-nacl": [], "config-std-nacl": [], "config-line": LINE_TEMPLATES}


def templates_of(dialect: str) -> dict[str, list[Template]]:
    """The command templates per config mode of ``dialect`` (an unknown one is the 3750's)."""
    return XE_MODE_TEMPLATES if dialect == "c9300" else MODE_TEMPLATES


def pmapc_key(words: list[str]) -> str:
    """Identity of a policy-map class action (a new value replaces the old one): ``set``,
    ``police``, ``priority``, ``bandwidth``, ``queue-buffers``, ``queue-limit dscp VALUE``."""
    if words[0] == "queue-limit" and len(words) > 2:
        return " ".join(words[:3])
    return words[0]


def normalize_dscp_words(words: list[str]) -> list[str]:
    """A config line's words with every DSCP argument in IOS-XE's printed form (``match dscp 40
    46`` -> ``match dscp cs5 ef``; ``set ip dscp`` -> ``set dscp``)."""
    w = list(words)
    if w[:3] == ["set", "ip", "dscp"] or w[:3] == ["match", "ip", "dscp"]:
        w = [w[0]] + w[2:]
    if w[:2] in (["set", "dscp"], ["match", "dscp"]):
        return w[:2] + [dscp_name(v) if (v := dscp_value(x)) is not None else x for x in w[2:]]
    if w[:2] == ["queue-limit", "dscp"] and len(w) > 2 and (v := dscp_value(w[2])) is not None:
        w[2] = dscp_name(v)
    return w
