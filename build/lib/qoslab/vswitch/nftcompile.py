"""Compile a Catalyst 3750 QoS configuration to an nftables ruleset (bridge family) for the
testbed's switch namespace. :func:`compile_nft` is pure: (QosConfig, topology) -> :class:`NftPlan`.

What a 3750 does at ingress (QoS configuration guide 12.2(25)SE, "Understanding QoS": classification,
policing, marking give each packet a QoS label; the DS field is rewritten to the label on the way
out unless ``no mls qos rewrite ip dscp``), as one table ``bridge qoslab``:

- ``forward`` (hook forward, every bridged frame, once per egress port): counts the DSCP as
  received per ingress port (set ``dscp_in``), then jumps to the chain of the ingress port.
- ``in_<port>``: the port's input policy-map classes in order (ACL entries with ``deny`` first
  return, as IOS evaluates an ACL top-down; class-map ``match ip dscp`` values), each going to the
  class's action chain; no class matched -> ``t_<port>``, the port's trust state.
- ``a_<port>_<n>``: the class's individual policer (``limit rate over RATE bytes/second burst B
  bytes drop``, counted as out of profile), a counter (in profile), then the label: ``set ip dscp``
  (or ``trust dscp``; neither -> the port's trust state).
- ``t_<port>``: untrusted -> label 0; ``trust dscp`` -> the packet's DSCP; ``trust cos`` on an
  untagged frame -> CoS 0 -> the CoS-to-DSCP map; ``trust ip-precedence`` -> precedence x 8.
  Non-IP frames get the label of CoS 0.
- The label becomes the DS field (when rewrite is on) and ``meta priority 1:1Q``, Q = the
  DSCP-to-output-queue map of the label, which HTB on the egress port takes as the class of egress
  queue Q (tc's classes 1:11..1:14, :mod:`qoslab.vswitch.tccompile`).
- ``postrouting`` counts the DSCP as sent per egress port (set ``dscp_out``), after the rewrite.

``mls qos`` off: only the two DSCP counters (the 3750 passes the DS field through). SPAN taps with
tc on the ports (:mod:`qoslab.vswitch.tccompile`): rx copies at the port's ingress, before this table (the
original DSCP); tx copies at its egress, after it (the rewritten DSCP), as the field note says.
Rule comments name port and class (``police-out|Gi1/0/1|class112``) so counters can be read back
(:mod:`qoslab.vswitch.counters`).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from ..ios import Ace, InterfaceQos, PolicyClass, QosConfig
from ..ios.acl import Addr, Ports
from ..ios.aclnames import PROTOCOLS

#: The table the virtual Catalyst owns in the switch namespace.
from ..portnames import linux_ifname
from ..topology import Topology

TABLE = "qoslab"
#: IP protocols nft knows by the name IOS uses (others are matched by number).
NFT_PROTOCOLS = ("tcp", "udp", "icmp")
#: Elements of each DSCP counter set: (ports x 64 DSCP values) with room to spare.
SET_SIZE = 8192


@dataclass
class NftPlan:
    """``text``: input for ``nft -f -`` that replaces the table atomically; ``notes``: configured
    features that are not emulated."""

    text: str
    notes: list[str] = field(default_factory=list)


def _chain_id(port: str) -> str:
    """Chain-name part of a Linux port name (``Gi1-0-1`` -> ``Gi1_0_1``)."""
    return linux_ifname(port).replace("-", "_")


def priority(qos: QosConfig, dscp: int) -> str:
    """The skb priority (HTB class of the egress queue) of QoS label ``dscp``: ``1:1Q``."""
    return f"1:1{qos.dscp_output_queue[dscp]}"


def _addr(field: str, a: Addr) -> list[str]:
    """nft match of an ACE address: a prefix when its wildcard is contiguous, else the masked
    compare (``ip saddr & 255.0.255.0 == 10.0.1.0``); nothing for ``any``."""
    if a.is_any:
        return []
    net = a.network
    if net is not None:
        return [f"ip {field} {net}"]
    mask = ipaddress.IPv4Address(~a.wildcard & 0xFFFFFFFF)
    return [f"ip {field} & {mask} == {ipaddress.IPv4Address(a.ip)}"]


def _ports(proto: str, field: str, p: Ports) -> str:
    """nft port match of ``eq|neq|gt|lt P`` or ``range LO HI`` (inclusive)."""
    op = {"eq": "", "neq": "!= ", "gt": "> ", "lt": "< "}.get(p.op)
    value = f"{p.lo}-{p.hi}" if p.op == "range" else f"{op}{p.lo}"
    return f"{proto} {field} {value}"


#: TCP header flag bits (RFC 793).
TCP_BITS = {"fin": 0x01, "syn": 0x02, "rst": 0x04, "psh": 0x08, "ack": 0x10, "urg": 0x20}


def _tcp_flags(ace: Ace) -> list[str]:
    """nft matches of an ACE's TCP flags: single flags all set; ``match-all|match-any`` over
    signed flags as the set of flag combinations (of the flags named) that satisfy it."""
    out = []
    if ace.flags:
        mask = sum(TCP_BITS[f] for f in ace.flags)
        out.append(f"tcp flags & {mask:#04x} == {mask:#04x}")
    if ace.flag_match is not None:
        how, signed = ace.flag_match
        bits = [(TCP_BITS[f[1:]], f[0] == "+") for f in signed]
        mask = sum(b for b, _ in bits)
        test = all if how == "match-all" else any
        values = [v for v in range(mask + 1) if v & ~mask == 0 and test(bool(v & b) == want for b, want in bits)]
        out.append(f"tcp flags & {mask:#04x} {{ {', '.join(f'{v:#04x}' for v in values)} }}")
    return out


def ace_match(ace: Ace) -> str:
    """nft match expression of an ACE's fields (the Catalysts' data path and the EOS dialect's:
    :mod:`qoslab.vswitch.dialects.eos.datapath`): addresses, protocol (by number where nft has no
    name for it), ports, ICMP type/code, ``established`` (ACK or RST set), TCP flags, ``dscp`` and
    ``precedence`` (the DSCPs whose top three bits are the precedence), ``tos`` (the four TOS bits
    of the header's second byte), ``fragments`` (a fragment offset). ``log`` is not matched
    on (it only logs on a switch)."""
    parts = _addr("saddr", ace.src) + (_addr("daddr", ace.dst) if ace.dst is not None else [])
    if ace.proto != "ip":
        parts.append(f"ip protocol {ace.proto if ace.proto in NFT_PROTOCOLS else PROTOCOLS.get(ace.proto, ace.proto)}")
    if ace.sport is not None:
        parts.append(_ports(ace.proto, "sport", ace.sport))
    if ace.dport is not None:
        parts.append(_ports(ace.proto, "dport", ace.dport))
    if ace.icmp is not None:
        parts.append(f"icmp type {ace.icmp[0]}" + (f" icmp code {ace.icmp[1]}" if ace.icmp[1] is not None else ""))
    if ace.established:
        parts.append("tcp flags & (ack | rst) != 0")
    parts += _tcp_flags(ace)
    if ace.dscp is not None:
        parts.append(f"ip dscp {ace.dscp}")
    if ace.precedence is not None:
        parts.append(f"ip dscp {ace.precedence * 8}-{ace.precedence * 8 + 7}")
    if ace.tos is not None:  # RFC 1349: the TOS bits are bits 1-4 of the second header byte
        parts.append(f"@nh,8,8 & 0x1e == {ace.tos << 1:#04x}")
    if ace.fragments:
        parts.append("ip frag-off & 0x1fff != 0")
    return " ".join(parts) or "meta protocol ip"


def _label(qos: QosConfig, dscp: int) -> str:
    """Statements giving an IP packet the QoS label ``dscp``: DS field (if rewrite is on), queue."""
    rewrite = f"ip dscp set {dscp} " if qos.rewrite_dscp else ""
    return f"{rewrite}meta priority set {priority(qos, dscp)} accept"


def _dscp_map(qos: QosConfig) -> str:
    """``meta priority set ip dscp map {...}``: the queue of a trusted DSCP (contiguous ranges)."""
    items, start = [], 0
    for d in range(1, 65):
        if d == 64 or qos.dscp_output_queue[d] != qos.dscp_output_queue[start]:
            rng = f"{start}" if d - 1 == start else f"{start}-{d - 1}"
            items.append(f"{rng} : {priority(qos, start)}")
            start = d
    return "meta priority set ip dscp map { " + ", ".join(items) + " } accept"


def trust_rules(qos: QosConfig, trust: str | None) -> list[str]:
    """Rules of a port's trust state (see the module doc); the last one catches non-IP frames."""
    cos0 = qos.cos_dscp[0]
    if trust == "dscp":
        ip = [f"meta protocol ip {_dscp_map(qos)}"]
    elif trust == "ip-precedence":
        ip = [f"meta protocol ip ip dscp {p * 8}-{p * 8 + 7} {_label(qos, p * 8)}" for p in range(8)]
    else:  # untrusted: DSCP 0; trust cos: untagged frames carry the port's default CoS 0
        ip = [f"meta protocol ip {_label(qos, cos0 if trust == 'cos' else 0)}"]
    return ip + [f"meta priority set {priority(qos, cos0 if trust else 0)} accept"]


def _action_chain(qos: QosConfig, port: str, pc: PolicyClass, tname: str) -> list[str]:
    """Rules of a class's action chain: policer, in-profile counter, label."""
    tag = f"{port}|{pc.class_name}"
    rules = []
    if pc.police is not None:
        rules.append(f"limit rate over {pc.police.rate_bps // 8} bytes/second burst {pc.police.burst_bytes} bytes "
                     f'counter drop comment "police-out|{tag}"')
    kind = "police-in" if pc.police is not None else "class"
    if pc.set_dscp is not None:
        rules.append(f'counter meta protocol ip {_label(qos, pc.set_dscp)} comment "{kind}|{tag}"')
    elif pc.trust == "dscp":
        rules.append(f'counter meta protocol ip {_dscp_map(qos)} comment "{kind}|{tag}"')
    else:
        rules.append(f'counter comment "{kind}|{tag}"')
    rules.append(f"goto {tname}")
    return rules


def _class_rules(qos: QosConfig, pc: PolicyClass, aname: str, mname: str,
                 chains: dict[str, list[str]], notes: list[str]) -> list[str]:
    """Rules in the port chain that send a class's packets to its action chain ``aname``
    (an ACL with deny entries gets its own chain ``mname``, evaluated top-down)."""
    cm = qos.class_maps.get(pc.class_name)
    if cm is None:
        notes.append(f"policy-map class {pc.class_name}: no such class-map (matches nothing)")
        return []
    dscp = "ip dscp { " + ", ".join(str(d) for d in sorted(set(cm.dscps))) + " } " if cm.dscps else ""
    if cm.match_all and cm.acls and cm.dscps:
        acl_dscp, only_dscp = dscp, []   # match-all: ACL entries AND the DSCP values
    else:
        acl_dscp, only_dscp = "", ([f"{dscp}goto {aname}"] if dscp else [])
    if cm.match_all and len(cm.acls) > 1:
        notes.append(f"class-map {cm.name}: match-all over {len(cm.acls)} ACLs is matched as match-any")
    rules: list[str] = []
    for acl in cm.acls:
        aces = qos.acls.get(acl, [])
        if not aces:
            notes.append(f"class-map {cm.name}: ACL {acl} is not configured (matches nothing)")
        if any(a.log for a in aces):
            notes.append(f"access-list {acl}: log/log-input is not emulated (the entries match, nothing is logged)")
        if any(a.action == "deny" for a in aces):
            sub = f"{mname}_{len(rules)}"
            chains[sub] = [f"{ace_match(a)} {acl_dscp}" + ("return" if a.action == "deny" else f"goto {aname}")
                           for a in aces]
            rules.append(f"jump {sub}")
        else:
            rules += [f"{ace_match(a)} {acl_dscp}goto {aname}" for a in aces]
    return rules + only_dscp


def _port_chains(qos: QosConfig, port: str, iq: InterfaceQos, notes: list[str]) -> dict[str, list[str]]:
    """The chains of one ingress port: ``in_``, its class action chains, ``t_`` (trust)."""
    cid = _chain_id(port)
    tname = f"t_{cid}"
    chains: dict[str, list[str]] = {}
    main: list[str] = []
    if iq.service_policy_in and iq.service_policy_in not in qos.policy_maps:
        notes.append(f"interface {port}: service-policy {iq.service_policy_in} is not configured")
    for n, pc in enumerate(qos.policy_maps.get(iq.service_policy_in or "", []), 1):
        aname = f"a_{cid}_{n}"
        main += _class_rules(qos, pc, aname, f"m_{cid}_{n}", chains, notes)
        chains[aname] = _action_chain(qos, port, pc, tname)
    chains[tname] = trust_rules(qos, iq.trust)
    return {f"in_{cid}": [*main, f"goto {tname}"], **chains}


def compile_nft(qos: QosConfig, topo: Topology) -> NftPlan:
    """QoS configuration -> the ``bridge qoslab`` ruleset for the switch namespace (pure; see the
    module doc). Every host port of the topology gets a chain when ``mls qos`` is on."""
    notes: list[str] = []
    chains: dict[str, list[str]] = {}
    forward = ["type filter hook forward priority 0; policy accept;",
               "meta protocol ip update @dscp_in { iifname . ip dscp }"]
    if qos.enabled:
        vmap = []
        for h in topo.hosts:
            chains.update(_port_chains(qos, h.port, qos.interfaces.get(h.port) or InterfaceQos(), notes))
            vmap.append(f'"{linux_ifname(h.port)}" : jump in_{_chain_id(h.port)}')
        forward.append("iifname vmap { " + ", ".join(vmap) + " }")
    out = [f"table bridge {TABLE}", f"delete table bridge {TABLE}", f"table bridge {TABLE} {{"]
    for name, key in (("dscp_in", "iifname"), ("dscp_out", "oifname")):
        out.append(f"  set {name} {{ typeof {key} . ip dscp; flags dynamic; counter; size {SET_SIZE}; }}")
    post = ["type filter hook postrouting priority 0; policy accept;",
            "meta protocol ip update @dscp_out { oifname . ip dscp }"]
    for name, rules in {"forward": forward, "postrouting": post, **chains}.items():
        out.append(f"  chain {name} {{")
        out += [f"    {r}" for r in rules]
        out.append("  }")
    out.append("}")
    return NftPlan("\n".join(out) + "\n", sorted(set(notes)))
