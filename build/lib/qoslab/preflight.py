"""Pre-flight: is the cluster ready for this playbook? (``qoslab preflight PLAYBOOK``; also the
first step of every SSH or cluster campaign, its facts go into ``provenance.json``.)

Checks, each reported per node (``jp-3: ports: ...``):

- ``reach``: every node answers through the playbook's executor (over SSH: login, host key);
- ``versions``: Java, D-ITG, iperf3 the same on every node; ``jar``: the workload jar on each
  node is byte-identical (SHA-256) to this checkout's build;
- ``clock``: offset of each node's clock from this machine's (ms, the best of three round
  trips); a node further than ``max_clock_offset_ms`` from the median fails (D-ITG's one-way
  delays compare two clocks);
- ``ports``: the workload's RMI ports free on its hosts, D-ITG's signalling (TCP 9000) and data
  ports (UDP 10001+) free on the flood's receivers;
- ``leftovers``: no process of an earlier qoslab run on the node;
- ``link``: full duplex and the topology's link rate (the testbed: the HTB shaping rate of the
  host's interface; a cluster: the NIC's speed);
- ``switch``: reachable and of the topology's model (``show version``);
- ``span``: each SPAN destination the playbook captures on is wired to a capture interface that
  is up and carries no address (the testbed's SPAN namespace; a cluster's ``capture:`` host).
"""

from __future__ import annotations

import hashlib
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from qoslab.workloads.pool import JAR

from .errors import QoslabError
from .executors import Executor
from .executors.nodes import Nodes
from .portnames import linux_ifname
from .topology import Topology
from .trafficgen.definitions import DATA_PORT_BASE, FloodDefinition, load_flood
from .trafficgen.patterns import located_flows
from .trials.playbook import Playbook, resolve_path
from .units import parse_rate

#: A node whose clock is further than this from the median of all nodes fails (milliseconds).
MAX_CLOCK_OFFSET_MS = 20.0
#: D-ITG's signalling port (ITGRecv).
DITG_SIGNAL_PORT = 9000

_FACTS = r"""
echo "java=$(java -version 2>&1 | head -n1)"
v=$(dpkg-query -W -f '${Version}' d-itg 2>/dev/null) ||
  v=$(command -v ITGSend >/dev/null && echo unknown || echo missing)
echo "d_itg=$v"
echo "iperf3=$(iperf3 --version 2>/dev/null | head -n1 || echo missing)"
echo "kernel=$(uname -r)"
echo "jar=$(sha256sum JAR 2>/dev/null | cut -d' ' -f1)"
i=$(ip -o -4 addr show | awk '$4 ~ "^IP/" {print $2; exit}')
echo "iface=$i"
echo "speed=$(ethtool "$i" 2>/dev/null | sed -n 's/^[[:space:]]*Speed: //p')"
echo "duplex=$(ethtool "$i" 2>/dev/null | sed -n 's/^[[:space:]]*Duplex: //p')"
echo "shaping=$(tc class show dev "$i" 2>/dev/null | sed -n 's/.* rate \([^ ]*\) .*/\1/p' | head -n1)"
echo "listening=$(ss -Htlnu 2>/dev/null | awk '{print $1 "/" $5}' | tr '\n' ' ')"
"""


@dataclass
class Check:
    """One check on one node (``node`` is a host name, ``switch`` or ``cluster``)."""

    node: str
    check: str
    ok: bool
    detail: str


@dataclass
class PreflightReport:
    """All checks, the facts gathered per node, and the wall time (seconds)."""

    checks: list[Check] = field(default_factory=list)
    facts: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0

    def add(self, node: str, check: str, ok: bool, detail: str) -> None:
        """Record one check's outcome."""
        self.checks.append(Check(node, check, ok, detail))

    @property
    def failures(self) -> list[Check]:
        """The checks that failed."""
        return [c for c in self.checks if not c.ok]

    def to_json(self) -> dict[str, Any]:
        """The report as plain data (for provenance.json)."""
        return {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "seconds": round(self.seconds, 3),
                "passed": not self.failures, "checks": [asdict(c) for c in self.checks], "facts": self.facts}

    def raise_for_failures(self) -> None:
        """Raise QoslabError naming node and check of every failure (nothing when all passed)."""
        if self.failures:
            raise QoslabError("pre-flight failed: " + "; ".join(f"{c.node}: {c.check}: {c.detail}"
                                                                  for c in self.failures))


def _facts(ex: Executor, ip: str, root: str) -> dict[str, str]:
    jar = f"{str(root).rstrip('/')}/{JAR.relative_to(JAR.parents[2]).as_posix()}"
    script = _FACTS.replace("JAR", jar).replace("^IP/", f"^{ip}/")
    out = ex.run(["sh", "-c", script], timeout=30).stdout
    return {k: v.strip() for k, _, v in (line.partition("=") for line in out.splitlines()) if k}


def _clock(ex: Executor) -> tuple[float, float]:
    """(offset ms of the node's clock from ours, round trip ms) of the best of three tries."""
    best: tuple[float, float] | None = None
    for _ in range(3):
        t0 = time.time()
        remote = float(ex.run(["date", "+%s.%N"], timeout=10).stdout.strip())
        t1 = time.time()
        sample = ((remote - (t0 + t1) / 2) * 1000, (t1 - t0) * 1000)
        if best is None or sample[1] < best[1]:
            best = sample
    assert best is not None
    return best


def _wanted_ports(pb: Playbook, topo: Topology, flood: FloodDefinition | None) -> dict[str, set[str]]:
    """Host -> ``proto/port`` that must be free: the workloads' RMI ports, D-ITG's ports
    (``flood``: the campaign's flood; None = the playbook's file)."""
    want: dict[str, set[str]] = {}
    for c in pb.conditions:
        wl = pb.workload_of(c)
        for h in wl.hosts:
            want.setdefault(h, set()).update({f"{proto}/{port}" for _f, proto, port in wl.listen_ports()})
    for ref in pb.floods():
        defn = flood if flood is not None and len(pb.floods()) == 1 else load_flood(resolve_path(ref))
        for i, f in enumerate(located_flows(defn)):
            want.setdefault(f[0].dst, set()).update({f"tcp/{DITG_SIGNAL_PORT}", f"udp/{DATA_PORT_BASE + i}"})
    return want


def _taken(listening: str, ip: str) -> set[str]:
    """``proto/port`` bound on ``ip`` or a wildcard, from ``ss -Htlnu`` (``tcp/198.18.0.2:1099`` words)."""
    out = set()
    for word in listening.split():
        proto, _, local = word.partition("/")
        addr, _, port = local.rpartition(":")
        if addr.strip("[]").split("%")[0] in (ip, "0.0.0.0", "*", "::"):
            out.add(f"{proto}/{port}")
    return out


def _node_checks(report: PreflightReport, host: str, facts: dict[str, str], topo: Topology,
                 want: set[str], local_jar: str, leftovers: list[int]) -> None:
    ip = topo.host(host).ip
    if facts.get("jar") != local_jar:
        got = facts.get("jar") or "missing"
        report.add(host, "jar", False, f"workload jar sha256 {got[:12]} is not this checkout's {local_jar[:12]}")
    else:
        report.add(host, "jar", True, f"sha256 {local_jar[:12]}")
    busy = sorted(want & _taken(facts.get("listening", ""), ip))
    report.add(host, "ports", not busy, f"already in use: {', '.join(busy)}" if busy else
               f"{len(want)} free" if want else "none needed")
    report.add(host, "leftovers", not leftovers, f"processes of an earlier qoslab run: {leftovers}" if leftovers
               else "none")
    report.add(host, *_link(facts, topo))


def _link(facts: dict[str, str], topo: Topology) -> tuple[str, bool, str]:
    iface, duplex = facts.get("iface", ""), facts.get("duplex", "")
    if not iface:
        return "link", False, f"no interface with {topo.name}'s address"
    if duplex and duplex.lower() != "full":
        return "link", False, f"{iface} is {duplex} duplex"
    if topo.environment == "embedded":
        rate = parse_rate(facts["shaping"]) if facts.get("shaping") else 0
        return "link", rate == topo.link.rate, f"{iface} shaped to {facts.get('shaping') or 'nothing'}, " \
                                               f"topology {topo.link.rate / 1e6:g} Mbit/s"
    m = re.match(r"(\d+)Mb/s", facts.get("speed", ""))
    speed = int(m.group(1)) * 1_000_000 if m else 0
    return "link", speed == topo.link.rate, f"{iface} {facts.get('speed') or 'speed unknown'} " \
                                            f"{duplex or ''}, topology {topo.link.rate / 1e6:g} Mbit/s"


def _versions(report: PreflightReport, facts: dict[str, dict[str, str]]) -> None:
    for key in ("java", "d_itg", "iperf3"):
        values = {h: f.get(key, "") for h, f in facts.items()}
        common = statistics.mode(values.values()) if values else ""
        for h, v in values.items():
            if "missing" in v or not v:
                report.add(h, "versions", False, f"{key} missing")
            elif v != common:
                report.add(h, "versions", False, f"{key} {v!r}, the other nodes {common!r}")
    for h in facts:
        if not any(c.node == h and c.check == "versions" for c in report.checks):
            report.add(h, "versions", True, f"java {facts[h].get('java', '')[:40]}, d-itg {facts[h].get('d_itg')}")


def _clocks(report: PreflightReport, clocks: dict[str, tuple[float, float]], max_ms: float) -> None:
    if not clocks:
        return
    med = statistics.median(o for o, _ in clocks.values())
    for h, (off, rtt) in clocks.items():
        dev = abs(off - med) - rtt / 2  # what the round trip cannot explain
        report.add(h, "clock", dev <= max_ms, f"offset {off:+.1f} ms (round trip {rtt:.1f} ms), "
                                              f"{abs(off - med):.1f} ms from the median")


def _switch(report: PreflightReport, device: str, topo: Topology) -> None:
    from .switch.backends import open_switch

    try:
        out = open_switch(device, topo).show(["show version"])["show version"]
    except QoslabError as e:
        report.add("switch", "switch", False, str(e))
        return
    report.facts["switch"] = {"show_version": out.splitlines()[:1]}
    report.add("switch", "switch", topo.switch.model in out,
               f"model {topo.switch.model}" if topo.switch.model in out else
               f"reachable, but not a {topo.switch.model}: {out.strip().splitlines()[:1]}")


def _span(report: PreflightReport, pb: Playbook, nodes: Nodes) -> None:
    if pb.capture == "off":
        return
    topo, port = nodes.topology, pb.capture_port
    if nodes.testbed is not None:
        ex: Executor = nodes.testbed.span_executor()
        where, iface = "span", linux_ifname(port)
    elif topo.capture is not None and port in topo.capture.interfaces:
        where, iface = topo.capture.host, topo.capture.interfaces[port]
        ex = nodes.executor_of(where)
    else:
        report.add("cluster", "span", False, f"the topology wires no capture interface to {port} (`capture:`)")
        return
    r = ex.run(["ip", "-o", "addr", "show", "dev", iface], check=False, timeout=10)
    link = ex.run(["cat", f"/sys/class/net/{iface}/operstate"], check=False, timeout=10).stdout.strip()
    if r.returncode != 0:
        report.add(where, "span", False, f"no interface {iface} for SPAN destination {port}")
    elif " inet " in r.stdout:
        report.add(where, "span", False, f"{iface} (SPAN destination {port}) has an IPv4 address")
    else:
        report.add(where, "span", link in ("up", "unknown"), f"{iface} wired to {port}, link {link}")


def preflight(pb: Playbook, nodes: Nodes, *, flood: FloodDefinition | None = None, device: str | None = None,
              max_clock_offset_ms: float = MAX_CLOCK_OFFSET_MS, check_switch: bool = True,
              log: Callable[[str], None] = lambda s: None) -> PreflightReport:
    """Run every check of the module doc on the playbook's hosts through ``nodes`` (whose
    topology is the one checked); ``flood`` and ``device`` are the campaign's (its input
    snapshot; None = the playbook's files). Returns the report (it never raises for a failed
    check: see :meth:`PreflightReport.raise_for_failures`)."""
    t0 = time.monotonic()
    topo = nodes.topology
    report = PreflightReport()
    want = _wanted_ports(pb, topo, flood)
    hosts = [h for h in topo.host_names if h in want or h in {w for c in pb.conditions
                                                              for w in pb.workload_of(c).hosts}]
    hosts = hosts or topo.host_names
    local_jar = hashlib.sha256(JAR.read_bytes()).hexdigest() if JAR.exists() else "not built here"

    def gather(ex: Executor) -> dict[str, Any]:
        try:
            ex.run(["true"], timeout=20)
        except QoslabError as e:
            return {"error": str(e)}
        out: dict[str, Any] = {"facts": _facts(ex, topo.host(ex.node).ip, str(ex.qoslab_root)),
                               "clock": _clock(ex)}
        out["leftovers"] = _leftovers(ex, nodes)
        for what in ("realtime", "timer_slack"):
            if callable(getattr(ex, "permits", None)):
                out.setdefault("permits", {})[what] = ex.permits(what)  # type: ignore[attr-defined]
        return out

    got = nodes.parallel(gather, hosts)
    for h, g in got.items():
        report.add(h, "reach", "error" not in g, g.get("error", f"through executor {nodes.kind}"))
    good = {h: g for h, g in got.items() if "error" not in g}
    for h, g in good.items():
        report.facts[h] = {**g["facts"], "clock_offset_ms": round(g["clock"][0], 2),
                           "round_trip_ms": round(g["clock"][1], 2), "permits": g.get("permits", {})}
        report.facts[h].pop("listening", None)
        _node_checks(report, h, g["facts"], topo, want.get(h, set()), local_jar, g["leftovers"])
    _versions(report, {h: g["facts"] for h, g in good.items()})
    _clocks(report, {h: g["clock"] for h, g in good.items()}, max_clock_offset_ms)
    if check_switch:
        _switch(report, device or pb.device, topo)
    _span(report, pb, nodes)
    report.seconds = time.monotonic() - t0
    log(f"pre-flight: {len(report.checks) - len(report.failures)}/{len(report.checks)} checks passed "
        f"on {len(hosts)} nodes in {report.seconds:.2f} s")
    return report


def _leftovers(ex: Executor, nodes: Nodes) -> list[int]:
    """PIDs of processes an earlier qoslab run left on the node of ``ex``."""
    scan = getattr(ex, "leftovers", None)
    if callable(scan):
        return list(scan(any_run=True))
    if nodes.testbed is not None:
        from .testbed.procs import namespace_pids

        ns = nodes.testbed.namespace(ex.node)
        keep = set(nodes.testbed.sshd_pids())
        return [p for p in namespace_pids([ns])[ns] if p not in keep]
    return []
