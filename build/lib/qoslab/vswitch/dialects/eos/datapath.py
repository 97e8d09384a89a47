"""The virtual EOS switch's data path (pure): its configuration (:class:`qoslab.eos.EosConfig`)
compiled to the same kinds of tc plan and nftables ruleset as the Catalysts'
(:mod:`qoslab.vswitch.tccompile`, :mod:`qoslab.vswitch.nftcompile`), with eight egress queues.

What a 7280R3 does (EOS User Manual, QoS chapter), as the testbed emulates it:

- every port has eight transmit queues, one per traffic class (``qos map traffic-class N to
  tx-queue M`` moves one): HTB classes ``1:20`` .. ``1:27`` under ``1:1`` (the link rate, or the
  port's ``shape rate``), each with a bfifo ``20:`` .. ``27:``;
- scheduling: tx-queues are strict priority unless ``no priority`` (round robin), and a
  round-robin queue makes every lower-numbered one round robin too; a strict queue gets the link
  less 1 % as its assured rate with HTB priority 7 - N (the higher queue first, as the 3750's
  expedite queue: HTB's priority only orders borrowing), the round-robin queues share the rest in
  proportion to ``bandwidth percent`` (queues without one split what the others leave) and borrow
  up to the link; ``shape rate`` caps a queue (kbit/s, ``kbps``, ``mbps`` or ``percent`` of the link;
  ``pps`` is taken in the configuration and not emulated);
- drop thresholds: ``random-detect drop ... maximum-threshold M`` -> the bfifo's limit M (a tail
  drop; a curve with minimum < maximum or several drop precedences is approximated by the
  highest maximum, noted); without one, the port's buffer (``buffers.switch_port_bytes``);
- ingress (table ``bridge qoslab``): a port's QoS ``service-policy`` classes in order (access
  list entries top-down, ``match dscp``), each with its policer (``police rate``: over-rate
  packets dropped), ``set dscp`` (the DS field rewritten) and the traffic class (``set
  traffic-class``, else the class of the new DSCP, else the port's trust); unclassified packets
  by the port's trust: ``qos trust dscp`` -> the DSCP's traffic class (``qos map dscp``), ``qos
  trust cos`` (a switched port's default) or ``no qos trust`` -> the class of the port's default
  CoS (``qos cos``, 0; the testbed's frames are untagged); the DS field is never rewritten by
  trust (EOS rewrites DSCP only with ``qos rewrite dscp``, not emulated: noted);
- ``monitor session`` -> tc mirred, as on the Catalysts.
"""

from __future__ import annotations

from typing import Any

from ....eos import EosConfig, eos_port, neutral_port
from ....eos.config import DEFAULT_COS_TC
from ....ios.acl import Ace
from ....portnames import linux_ifname
from ....testbedplan import htb_quantum, switch_port_lines
from ....topology import Topology
from ...nftcompile import SET_SIZE, TABLE, NftPlan, ace_match
from ...tccompile import MIN_LIMIT_BYTES, PRIORITY_RESIDUAL, TcPlan, span_lines

N_QUEUES = 8
_UNIT = {"bytes": 1, "kbytes": 1024, "mbytes": 1 << 20, "segments": 1514}


def classid(q: int) -> str:
    """The HTB class of tx-queue ``q`` (0-7): ``1:2q``."""
    return f"1:2{q}"


def queue_of(cfg: EosConfig, tc: int) -> int:
    """The tx-queue of traffic class ``tc``."""
    return cfg.tc_txq.get(tc, tc)


def _txq(cfg: EosConfig, port: str) -> dict[int, list[str]]:
    intf = cfg.interfaces.get(port)
    return intf.txq if intf is not None else {}


def round_robin(cfg: EosConfig, port: str) -> set[int]:
    """The round-robin tx-queues of ``port``: those with ``no priority`` and every lower one."""
    rr = [q for q, lines in _txq(cfg, port).items() if "no priority" in lines]
    return set(range(max(rr) + 1)) if rr else set()


def _percent(lines: list[str], key: str) -> int | None:
    for line in lines:
        w = line.split()
        if line.startswith(key + " ") and w[len(key.split())].isdigit():
            return int(w[len(key.split())])
    return None


def _shape_bps(lines: list[str], link: int) -> int | None:
    for line in lines:
        w = line.split()
        if w[:2] == ["shape", "rate"]:
            unit = w[3] if len(w) > 3 else "kbps"
            if unit == "percent":
                return link * int(w[2]) // 100
            return int(w[2]) * {"kbps": 1000, "mbps": 1000000}[unit] if unit in ("kbps", "mbps") else None
    return None


def queue_limit(cfg: EosConfig, port: str, q: int, port_bytes: int, notes: list[str]) -> int:
    """The tail-drop bytes of tx-queue ``q`` of ``port`` (see the module doc)."""
    maxima = []
    for line in _txq(cfg, port).get(q, []):
        w = line.split()
        if w[:2] == ["random-detect", "drop"]:
            lo = int(w[w.index("minimum-threshold") + 1]) * _UNIT[w[w.index("minimum-threshold") + 2]]
            hi = int(w[w.index("maximum-threshold") + 1]) * _UNIT[w[w.index("maximum-threshold") + 2]]
            maxima.append(hi)
            if lo != hi or "drop-precedence" in w:
                notes.append(f"approximated: interface {port} tx-queue {q}: `{line}` is a tail drop at {hi} bytes")
    return max(MIN_LIMIT_BYTES, min(max(maxima), port_bytes) if maxima else port_bytes)


def queue_rates(cfg: EosConfig, port: str, link: int) -> list[tuple[int, int, int]]:
    """(rate, ceil, HTB prio) in bits/s of tx-queues 0-7 of ``port`` (see the module doc)."""
    rr, txq = round_robin(cfg, port), _txq(cfg, port)
    strict = [q for q in range(N_QUEUES) if q not in rr]
    pool = int(link * PRIORITY_RESIDUAL) if strict else link
    pct = {q: _percent(txq.get(q, []), "bandwidth percent") for q in rr}
    left = max(0, 100 - sum(p for p in pct.values() if p))
    unset = [q for q in rr if not pct[q]]
    share = {q: pct[q] or max(1, left // max(1, len(unset))) for q in rr}
    total = sum(share.values()) or 1
    out = []
    for q in range(N_QUEUES):
        ceil = min(link, _shape_bps(txq.get(q, []), link) or link)
        rate = link - int(link * PRIORITY_RESIDUAL) if q in strict else pool * share[q] // total
        out.append((max(8000, min(rate, ceil)), max(8000, ceil), 7 - q if q in strict else 7))
    return out


def _port_lines(cfg: EosConfig, topo: Topology, port: str, dev: str, notes: list[str]) -> list[str]:
    intf = cfg.interfaces.get(port)
    link = min(topo.link.rate, _shape_bps(intf.lines, topo.link.rate) or topo.link.rate) if intf else topo.link.rate
    burst, quantum = topo.link.burst_bytes, htb_quantum(link)
    default_q = queue_of(cfg, cfg.cos_tc.get(_default_cos(cfg, port), DEFAULT_COS_TC[_default_cos(cfg, port)]))
    lines = [f"qdisc replace dev {dev} root handle 1: htb default 2{default_q}",
             f"class replace dev {dev} parent 1: classid 1:1 htb rate {link}bit ceil {link}bit "
             f"burst {burst}b cburst {burst}b quantum {quantum}"]
    for q, (rate, ceil, prio) in enumerate(queue_rates(cfg, port, link)):
        limit = queue_limit(cfg, port, q, topo.buffers.switch_port_bytes, notes)
        lines.append(f"class replace dev {dev} parent 1:1 classid {classid(q)} htb rate {rate}bit ceil {ceil}bit "
                     f"burst {burst}b cburst {burst}b prio {prio} quantum {min(quantum, htb_quantum(rate))}")
        lines.append(f"qdisc replace dev {dev} parent {classid(q)} handle 2{q}: bfifo limit {limit}")
    return lines


def _default_cos(cfg: EosConfig, port: str) -> int:
    intf = cfg.interfaces.get(port)
    return next((int(x.split()[2]) for x in (intf.lines if intf else []) if x.startswith("qos cos ")), 0)


def compile_eos_tc(cfg: EosConfig, topo: Topology) -> TcPlan:
    """EOS configuration -> tc plan for every host port of the switch (pure; see the module doc)."""
    cfg = cfg.with_profiles()  # an interface's service-profile's QoS lines and tx-queues
    plan, notes = TcPlan({}), list[str]()
    for h in topo.hosts:
        dev, port = linux_ifname(h.port), eos_port(h.port)
        plan.ports[dev] = _port_lines(cfg, topo, port, dev, notes) if port in cfg.interfaces else \
            switch_port_lines(topo, h.port)
    if any(len([q for q in range(N_QUEUES) if q not in round_robin(cfg, eos_port(h.port))]) > 1 for h in topo.hosts):
        notes.append("approximated: strict priority among several backlogged strict-priority tx-queues (HTB "
                     "shares the link between strict queues that are all within their assured rate)")
    if cfg.rewrite_dscp:
        notes.append("not emulated: qos rewrite dscp (the DS field keeps its value unless a policy sets it)")
    monitor: dict[int, dict[str, list[Any]]] = {}
    for i, name in enumerate(sorted(cfg.monitor), 1):
        s = cfg.monitor[name]
        srcs = [(neutral_port(p), d or "both") for p, d in sorted(s.sources.items()) if neutral_port(p)]
        monitor[i] = {"sources": srcs, "destinations": [n for p in s.destinations if (n := neutral_port(p))]}
    span_lines(monitor, plan)
    plan.notes = sorted(set(notes)) + plan.notes
    return plan


# --------------------------------------------------------------------------------------------- nftables
def _trust(cfg: EosConfig, port: str) -> str:
    intf = cfg.interfaces.get(port)
    lines = intf.lines if intf else []
    return "dscp" if "qos trust dscp" in lines else "none" if "no qos trust" in lines else "cos"


def _prio_of_tc(cfg: EosConfig, tc: int) -> str:
    return classid(queue_of(cfg, tc))


def trust_rules(cfg: EosConfig, port: str) -> list[str]:
    """The rules of a port's trust chain (see the module doc); the last catches non-IP frames."""
    cos = _default_cos(cfg, port)
    by_cos = _prio_of_tc(cfg, cfg.cos_tc.get(cos, DEFAULT_COS_TC[cos]))
    rules = []
    if _trust(cfg, port) == "dscp":
        items, start = [], 0
        for d in range(1, 65):
            if d == 64 or cfg.dscp_tc_of(d) != cfg.dscp_tc_of(start):
                rng = f"{start}" if d - 1 == start else f"{start}-{d - 1}"
                items.append(f"{rng} : {_prio_of_tc(cfg, cfg.dscp_tc_of(start))}")
                start = d
        rules.append("meta protocol ip meta priority set ip dscp map { " + ", ".join(items) + " } accept")
    return rules + [f"meta priority set {by_cos} accept"]


def _matches(cfg: EosConfig, cls: str, target: str, chains: dict[str, list[str]], sub: str,
             notes: list[str]) -> list[str]:
    """Rules that send a class's packets to chain ``target`` (an ACL with deny entries gets its
    own chain ``sub``, evaluated top-down)."""
    rules: list[str] = []
    for m in cfg.class_maps.get(cls, []):
        w = m.split()
        if w[:2] == ["match", "dscp"]:
            rules.append("ip dscp { " + ", ".join(w[2:]) + f" }} goto {target}")
            continue
        entries = cfg.acls.get(w[-1])
        if not entries:
            notes.append(f"class-map {cls}: access list {w[-1]} is not configured (matches nothing)")
            continue
        std = w[-1] in cfg.standard_acls
        aces = [_ace(e, std) for _, e in sorted(entries.items()) if not e.startswith("remark")]
        if any(a.action == "deny" for a in aces):
            chains[sub] = [f"{ace_match(a)} " + ("return" if a.action == "deny" else f"goto {target}") for a in aces]
            rules.append(f"jump {sub}")
        else:
            rules += [f"{ace_match(a)} goto {target}" for a in aces]
    if cls not in cfg.class_maps:
        notes.append(f"policy-map class {cls}: no such class-map (matches nothing)")
    return rules


def _ace(entry: str, standard: bool = False) -> Ace:
    from ....eos.acl import parse_entry

    ace, _ = parse_entry(entry, standard)
    assert ace is not None  # the interpreter only stores entries it parsed
    return ace


def _actions(cfg: EosConfig, neutral: str, cls: str, actions: list[str], tname: str) -> list[str]:
    """A class's action chain: policer, counter, DS field, queue (or the port's trust)."""
    tag = f"{neutral}|{cls}"
    rules, dscp, tc = [], None, None
    for a in actions:
        w = a.split()
        if w[0] == "police":
            rate = int(w[2]) * {"bps": 1, "kbps": 1000, "mbps": 1000000}[w[3]]
            burst = int(w[5]) * {"bytes": 1, "kbytes": 1024, "mbytes": 1 << 20}[w[6]]
            rules.append(f'limit rate over {rate // 8} bytes/second burst {burst} bytes counter drop comment '
                         f'"police-out|{tag}"')
        elif w[:2] == ["set", "dscp"]:
            dscp = int(w[2])
        elif w[:2] == ["set", "traffic-class"]:
            tc = int(w[2])
    kind = "police-in" if rules else "class"
    mark = f"ip dscp set {dscp} " if dscp is not None else ""
    if tc is None and dscp is not None:
        tc = cfg.dscp_tc_of(dscp)
    if tc is None:
        return rules + [f'counter {mark}comment "{kind}|{tag}"', f"goto {tname}"]
    return rules + [f'counter {mark}meta priority set {_prio_of_tc(cfg, tc)} accept comment "{kind}|{tag}"']


def _port_chains(cfg: EosConfig, neutral: str, notes: list[str]) -> dict[str, list[str]]:
    port, cid = eos_port(neutral), linux_ifname(neutral).replace("-", "_")
    tname = f"t_{cid}"
    chains: dict[str, list[str]] = {}
    main: list[str] = []
    intf = cfg.interfaces.get(port)
    policy = next((x.split()[-1] for x in (intf.lines if intf else []) if x.startswith("service-policy")), None)
    if policy is not None and policy not in cfg.policy_maps:
        notes.append(f"interface {port}: service-policy {policy} is not configured")
    for n, (cls, actions) in enumerate(cfg.policy_maps.get(policy or "", {}).items(), 1):
        aname = f"a_{cid}_{n}"
        main += _matches(cfg, cls, aname, chains, f"m_{cid}_{n}", notes)
        chains[aname] = _actions(cfg, neutral, cls, actions, tname)
    chains[tname] = trust_rules(cfg, port)
    return {f"in_{cid}": [*main, f"goto {tname}"], **chains}


def compile_eos_nft(cfg: EosConfig, topo: Topology) -> NftPlan:
    """EOS configuration -> the ``bridge qoslab`` ruleset (pure; see the module doc)."""
    cfg = cfg.with_profiles()
    notes: list[str] = []
    chains: dict[str, list[str]] = {}
    vmap = []
    for h in topo.hosts:
        chains.update(_port_chains(cfg, h.port, notes))
        vmap.append(f'"{linux_ifname(h.port)}" : jump in_{linux_ifname(h.port).replace("-", "_")}')
    forward = ["type filter hook forward priority 0; policy accept;",
               "meta protocol ip update @dscp_in { iifname . ip dscp }", "iifname vmap { " + ", ".join(vmap) + " }"]
    post = ["type filter hook postrouting priority 0; policy accept;",
            "meta protocol ip update @dscp_out { oifname . ip dscp }"]
    out = [f"table bridge {TABLE}", f"delete table bridge {TABLE}", f"table bridge {TABLE} {{"]
    for name, key in (("dscp_in", "iifname"), ("dscp_out", "oifname")):
        out.append(f"  set {name} {{ typeof {key} . ip dscp; flags dynamic; counter; size {SET_SIZE}; }}")
    for name, rules in {"forward": forward, "postrouting": post, **chains}.items():
        out += [f"  chain {name} {{", *[f"    {r}" for r in rules], "  }"]
    out.append("}")
    return NftPlan("\n".join(out) + "\n", sorted(set(notes)))
