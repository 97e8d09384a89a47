"""The switch's ``ingress`` data path (topology ``switch.datapath: ingress``, issue 52): the
dialect's ``bridge qoslab`` ruleset (:mod:`qoslab.vswitch.nftcompile`, the EOS dialect's
``datapath``) rewritten into a ``netdev qoslab`` table whose chains run on each switch port's
ingress hook and forward a packet straight to the egress port of its destination host (``fwd
to``), so known unicast IPv4 skips the Linux bridge and its two netfilter hooks.
:func:`compile_ingress` is pure: (bridge NftPlan, topology) -> NftPlan of both tables.

Per host port ``P`` (Linux name), base chain ``p_P`` (``hook ingress device P``):

- not IPv4, or an IPv4 destination that is not another testbed host (ARP, broadcast, multicast,
  the SVI's address): ``accept`` -> the bridge, where the unchanged ``bridge qoslab`` table does
  what it did before (slow path; the bridge also keeps learning MAC addresses from ARP for
  ``show mac address-table``);
- else the bridge table's ``forward`` rules for this port, verbatim: ``dscp_in`` counted, then
  ``goto`` the port's classification chain (the ``iifname vmap`` entry of ``P``), or ``to_port`` when
  the port has none (QoS off);
- every chain of the bridge table but its two base chains is copied verbatim (ACL classes,
  policers, marking, trust, comments for :mod:`.counters`), except that a rule ending in the
  verdict ``accept`` (a label was given) ends in ``goto to_port`` instead;
- ``to_port``: ``ip daddr vmap`` host address -> ``o_Q`` of the host's port ``Q``; ``o_Q`` runs the
  bridge table's ``postrouting`` rules with ``oifname`` replaced by ``"Q"`` (``dscp_out``
  counted after the rewrite) and ``fwd to "Q"``: the packet enters ``Q``'s egress qdiscs (tc
  plan unchanged: SRR, expedite, bfifo tail drop; SPAN ``tx`` mirrors at ``Q``'s clsact egress
  and ``rx`` mirrors at ``P``'s clsact ingress, which runs before this hook, as before).

Both tables count into sets and rule counters of the same names and comments, so
:func:`qoslab.vswitch.counters.read_nft` over the two tables adds them up. A policed class has one token
bucket per table: slow-path packets (IPv4 not to a host) use the bridge table's.
"""

from __future__ import annotations

import re

from ..errors import QoslabError
from ..portnames import linux_ifname
from ..topology import Topology
from .nftcompile import TABLE, NftPlan

#: The family of the ingress path's table (the bridge path's is ``bridge``).
FAMILY = "netdev"

_CHAIN = re.compile(r"^  chain (\S+) \{$")
_SET = re.compile(r"^  set \S+ \{.*\}$")
_VMAP = re.compile(r'"([^"]+)" : jump (\w+)')
_ACCEPT = re.compile(r"\baccept(?P<comment> comment \"[^\"]*\")?$")


def _parse(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """(set lines, chain name -> rule lines) of a ``table bridge qoslab { ... }`` ruleset as
    :mod:`.nftcompile` writes it (two-space chain indent, four-space rules). Raises QoslabError
    naming the line it cannot place."""
    sets: list[str] = []
    chains: dict[str, list[str]] = {}
    current: list[str] | None = None
    for n, line in enumerate(text.splitlines(), 1):
        m = _CHAIN.match(line)
        if m:
            current = chains.setdefault(m.group(1), [])
        elif line == "  }":
            current = None
        elif current is not None and line.startswith("    "):
            current.append(line.strip())
        elif _SET.match(line):
            sets.append(line.strip())
        elif not (line.startswith("table ") or line.startswith("delete table ") or line in ("}", "")):
            raise QoslabError(f"bridge ruleset line {n}: `{line.strip()}` is not a set, chain or rule")
    for base in ("forward", "postrouting"):
        if base not in chains:
            raise QoslabError(f"bridge ruleset: no chain {base}")
    return sets, chains


def _chain_id(dev: str) -> str:
    return dev.replace("-", "_")


def compile_ingress(bridge: NftPlan, topo: Topology) -> NftPlan:
    """The ``ingress`` path's ruleset: ``bridge``'s text (kept: the slow path) followed by the
    ``netdev qoslab`` table built from it (see the module doc); one ``nft -f`` transaction. Pure.
    Raises QoslabError when ``bridge`` is not a ruleset of :mod:`.nftcompile`'s shape."""
    sets, chains = _parse(bridge.text)
    forward = [r for r in chains.pop("forward") if not r.startswith("type ")]
    post = [r for r in chains.pop("postrouting") if not r.startswith("type ")]
    entry: dict[str, str] = {}
    for r in forward:
        entry.update(dict(_VMAP.findall(r)) if r.startswith("iifname vmap") else {})
    count_in = [r for r in forward if not r.startswith("iifname vmap")]
    hosts = [(linux_ifname(h.port), str(h.ip)) for h in topo.hosts]
    out = [f"table {FAMILY} {TABLE}", f"delete table {FAMILY} {TABLE}", f"table {FAMILY} {TABLE} {{"]
    out += [f"  {s}" for s in sets]
    body: dict[str, list[str]] = {}
    for dev, _ in hosts:
        others = [ip for d, ip in hosts if d != dev]
        rules = [f'type filter hook ingress device "{dev}" priority 0; policy accept;', "meta protocol != ip accept"]
        if others:
            rules += ["ip daddr != { " + ", ".join(others) + " } accept", *count_in,
                      f"goto {entry[dev]}" if dev in entry else "goto to_port"]
        else:
            rules.append("accept")
        body[f"p_{_chain_id(dev)}"] = rules
    for name, rules in chains.items():
        body[name] = [_ACCEPT.sub(r"goto to_port\g<comment>", r) for r in rules]
    body["to_port"] = ["ip daddr vmap { " + ", ".join(f"{ip} : goto o_{_chain_id(d)}" for d, ip in hosts) + " }",
                   "accept"]
    for dev, _ in hosts:
        body[f"o_{_chain_id(dev)}"] = [*(r.replace("oifname", f'"{dev}"') for r in post), f'fwd to "{dev}"']
    for name, rules in body.items():
        out.append(f"  chain {name} {{")
        out += [f"    {r}" for r in rules]
        out.append("  }")
    out.append("}")
    return NftPlan(bridge.text + "\n".join(out) + "\n", list(bridge.notes))

