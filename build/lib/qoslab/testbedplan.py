"""The embedded testbed as data: names, the build plan and the egress shaping of every link.

This is qoslab's pure bottom layer: nothing here reads or changes the machine, and it sits below
every package that names a testbed's parts (a base module: it imports only ``portnames`` and
``topology``). The testbed (:mod:`qoslab.testbed`) applies the plan; the executors find the
namespaces under :data:`NETNS_DIR`, the switch client finds the virtual switch's state folder
(:func:`vswitch_dir`); the tc compiler of the virtual Catalyst
(:mod:`qoslab.vswitch.tccompile`) reuses :func:`shaping_lines` and :func:`htb_quantum`, so the
switch-port queues have one definition. Their owner at run time is the virtual Catalyst: the
testbed builds the host ends of every link and the SPAN ports, the virtual Catalyst builds the
switch ports' egress from its running-config (a factory-default switch = one FIFO per port,
exactly :func:`switch_port_lines`).

Names (docs/DESIGN.md, "The embedded testbed"):

- host namespace ``qsl-<topology>-<host>`` with one interface ``eth0``;
- switch namespace ``qsl-<topology>@switch``: bridge ``br0``, one veth per host named after its
  Catalyst port (``Gi1/0/3`` -> ``Gi1-0-3``, ifalias ``GigabitEthernet1/0/3``);
- SPAN namespace ``qsl-<topology>@span``: far ends of the SPAN destination ports (captures listen here).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .portnames import linux_ifname, long_port
from .topology import Topology

#: Where ``ip netns`` keeps named namespaces.
NETNS_DIR = Path("/run/netns")
#: Run-time state of testbeds and virtual switches (state files, credentials, locks).
STATE_DIR = Path("/run/qoslab")
#: The host side of every link.
HOST_IF = "eth0"
#: The bridge standing for the switch's forwarding plane.
BRIDGE = "br0"


def host_namespace(topology: str, host: str) -> str:
    """Namespace of a host: ``qsl-ecenet-jp-1``."""
    return f"qsl-{topology}-{host}"


def switch_namespace(topology: str) -> str:
    """Namespace holding the bridge that stands for the switch: ``qsl-ecenet@switch``."""
    return f"qsl-{topology}@switch"


def span_namespace(topology: str) -> str:
    """Namespace holding the far ends of the SPAN destination ports: ``qsl-ecenet@span``."""
    return f"qsl-{topology}@span"


def owns_namespace(topology: str, ns: str) -> bool:
    """True when ``ns`` belongs to the testbed of ``topology`` (built now or left by a crash)."""
    return ns.startswith(f"qsl-{topology}-") or ns.startswith(f"qsl-{topology}@")


def vswitch_dir(topology: str) -> Path:
    """State folder of the virtual Catalyst of ``topology``: credentials, host key,
    startup-config, flash: file system, server log."""
    return STATE_DIR / f"vswitch-{topology}"


def htb_quantum(rate_bps: int) -> int:
    """HTB quantum (bytes) for a class of ``rate_bps`` bits/s: rate/8/10 (HTB's r2q = 10),
    at least one full frame (1514 B) and at most 200000 B (above it HTB warns "quantum is big")."""
    return min(200_000, max(1514, rate_bps // 8 // 10))


def shaping_lines(dev: str, rate_bps: int, burst_bytes: int, limit_bytes: int) -> list[str]:
    """tc lines shaping ``dev``'s egress to ``rate_bps`` bits/s: HTB root ``1:``, one class
    ``1:1`` (rate = ceil = link rate, burst = cburst = ``burst_bytes``), bfifo of
    ``limit_bytes`` bytes as its queue (handle ``10:``). Pure."""
    return [
        f"qdisc replace dev {dev} root handle 1: htb default 1",
        f"class replace dev {dev} parent 1: classid 1:1 htb rate {rate_bps}bit ceil {rate_bps}bit "
        f"burst {burst_bytes}b cburst {burst_bytes}b quantum {htb_quantum(rate_bps)}",
        f"qdisc replace dev {dev} parent 1:1 handle 10: bfifo limit {limit_bytes}",
    ]


#: Minor (hex) of a host link's leaf class, HTB's default (:func:`host_shaping_lines`).
HOST_LEAF_MINOR = "10"


def host_shaping_lines(dev: str, rate_bps: int, burst_bytes: int, limit_bytes: int) -> list[str]:
    """tc lines shaping a testbed host's egress (``dev``) to ``rate_bps`` bits/s, one level deeper
    than :func:`shaping_lines` so that a kernel-paced flood can have a class of its own under the
    link (:mod:`qoslab.trafficgen.kernelpace`): HTB root ``1:`` with default ``10``, class ``1:1``
    at the link rate, its child ``1:10`` (rate = ceil = link rate) holding the host queue, a bfifo
    of ``limit_bytes`` bytes (handle ``10:``). Without a flood class the two levels shape alike:
    one FIFO at the link rate. Pure."""
    q = htb_quantum(rate_bps)
    return [
        f"qdisc replace dev {dev} root handle 1: htb default {HOST_LEAF_MINOR}",
        f"class replace dev {dev} parent 1: classid 1:1 htb rate {rate_bps}bit ceil {rate_bps}bit "
        f"burst {burst_bytes}b cburst {burst_bytes}b quantum {q}",
        f"class replace dev {dev} parent 1:1 classid 1:{HOST_LEAF_MINOR} htb rate {rate_bps}bit ceil {rate_bps}bit "
        f"burst {burst_bytes}b cburst {burst_bytes}b quantum {q} prio 0",
        f"qdisc replace dev {dev} parent 1:{HOST_LEAF_MINOR} handle {HOST_LEAF_MINOR}: bfifo limit {limit_bytes}",
    ]


def switch_port_lines(topo: Topology, port: str) -> list[str]:
    """Egress of a switch port (Catalyst name) with QoS off: one FIFO of the topology's switch
    buffer at the link rate (what a factory-default 3750 port does, scaled). Pure."""
    return shaping_lines(linux_ifname(port), topo.link.rate, topo.link.burst_bytes, topo.buffers.switch_port_bytes)


def route_lines(topo: Topology, host: str) -> list[str]:
    """``ip -batch`` lines that put the topology's ``scale:`` route knobs (``rto_min``,
    ``quickack``) on the host's connected route, run after its link is up; none without knobs. Pure."""
    opts = topo.scale.route_options() if topo.scale is not None else []
    if not opts:
        return []
    h = topo.host(host)
    return [f"route replace {h.address.network} dev {HOST_IF} proto kernel scope link src {h.ip} {' '.join(opts)}"]


@dataclass(frozen=True)
class TestbedPlan:
    """What building a testbed does, as data (no side effects), in the order it is applied.

    - ``namespaces``: every namespace, switch first.
    - ``root_ip``: ``ip -batch`` lines run in this machine's namespace (``netns add``).
    - ``links``: ``ip -batch`` lines run in the switch namespace: bridge, veth pairs (peers are
      created directly in their host/span namespace, nothing touches the root namespace).
    - ``prepare``: per namespace, commands run inside it before links go up (IPv6 off so no
      DAD/MLD noise, offloads off for wire-size frames).
    - ``ip``: per namespace ``ip -batch`` lines (addresses, link up).
    - ``tc``: per namespace ``tc -batch`` lines: the host ends of every link (HTB at the link
      rate, explicit burst, bfifo). The switch ports' egress belongs to the virtual Catalyst
      (:func:`switch_port_lines` until it applies its own plan); ``switch_tc`` holds those
      factory-default lines for a testbed started without the virtual switch.
    """

    __test__ = False  # not a pytest test class

    namespaces: list[str]
    root_ip: list[str]
    links: list[str]
    prepare: dict[str, list[list[str]]]
    ip: dict[str, list[str]]
    tc: dict[str, list[str]]
    switch_tc: list[str]


def build_plan(topo: Topology) -> TestbedPlan:
    """Topology -> :class:`TestbedPlan`. Pure: reads nothing, changes nothing."""
    sw, span = switch_namespace(topo.name), span_namespace(topo.name)
    hosts = {h.name: host_namespace(topo.name, h.name) for h in topo.hosts}
    namespaces = [sw] + ([span] if topo.switch.span_destinations else []) + list(hosts.values())
    no_v6 = ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]
    offload_off = ["tso", "off", "gso", "off", "gro", "off"]

    links = [f"link add {BRIDGE} type bridge stp_state 0 forward_delay 0 mcast_snooping 0"]
    prepare: dict[str, list[list[str]]] = {ns: [no_v6] for ns in namespaces}
    ip: dict[str, list[str]] = {sw: [f"link set {BRIDGE} up"]}
    tc: dict[str, list[str]] = {}
    switch_tc: list[str] = []
    for h in topo.hosts:
        port, ns = linux_ifname(h.port), hosts[h.name]
        links += [
            f"link add {port} type veth peer name {HOST_IF} netns {ns}",
            f'link set {port} master {BRIDGE} alias "{long_port(h.port)}"',
        ]
        ip[sw].append(f"link set {port} up")
        ip[ns] = ["link set lo up", f"addr add {h.address} dev {HOST_IF}", f"link set {HOST_IF} up",
                  *route_lines(topo, h.name)]
        switch_tc += switch_port_lines(topo, h.port)
        tc[ns] = host_shaping_lines(HOST_IF, topo.link.rate, topo.link.burst_bytes, topo.buffers.host_bytes)
        if not topo.link.offloads:
            prepare[ns].append(["ethtool", "-K", HOST_IF, *offload_off])
            prepare[sw].append(["ethtool", "-K", port, *offload_off])
    for p in topo.switch.span_destinations:
        dev = linux_ifname(p)
        links += [
            f"link add {dev} type veth peer name {dev} netns {span}",
            f'link set {dev} alias "{long_port(p)} (SPAN destination)"',
        ]
        ip[sw].append(f"link set {dev} up")
        ip.setdefault(span, []).append(f"link set {dev} up")
    return TestbedPlan(
        namespaces=namespaces,
        root_ip=[f"netns add {ns}" for ns in namespaces],
        links=links,
        prepare=prepare,
        ip=ip,
        tc=tc,
        switch_tc=switch_tc,
    )
