"""The embedded testbed: a whole cluster inside one Linux machine.

Every host of a topology is a network namespace ``qsl-<topology>-<host>`` with one interface
``eth0``; the switch is a Linux bridge ``br0`` in namespace ``qsl-<topology>@switch`` with one
veth port per host, named after the Catalyst interface it stands for (``Gi1/0/3`` -> ``Gi1-0-3``,
ifalias ``GigabitEthernet1/0/3``). SPAN destination ports are veths that are *not* bridged;
their far ends live in ``qsl-<topology>@span`` under the same name, where captures listen.
Every link is shaped to the topology's link rate with HTB at both ends, with an explicit burst
(DESIGN.md: the 1600 B default drops paced traffic below the link rate) and a byte-limited FIFO.

Building is split into a pure :func:`build_plan` (topology -> ip/tc batch lines) and
:class:`Testbed`, which applies the plan with ``ip -batch``/``tc -batch`` and tears it down.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .errors import EnvironmentProblem, QoslabError
from .executor import NetnsExecutor
from .topology import Topology, linux_ifname, long_port

NETNS_DIR = Path("/run/netns")
STATE_DIR = Path("/run/qoslab")
REQUIRED_TOOLS = ("ip", "tc", "ethtool", "ping", "sysctl")
#: tc kinds the testbed and the virtual Catalyst's tc compiler depend on.
REQUIRED_TC = ("htb", "bfifo", "u32", "mirred")
HOST_IF = "eth0"
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
    - ``tc``: per namespace ``tc -batch`` lines (HTB at the link rate, explicit burst, bfifo).
    """

    __test__ = False  # not a pytest test class


    namespaces: list[str]
    root_ip: list[str]
    links: list[str]
    prepare: dict[str, list[list[str]]]
    ip: dict[str, list[str]]
    tc: dict[str, list[str]]


def shaping_lines(dev: str, rate_bps: int, burst_bytes: int, limit_bytes: int) -> list[str]:
    """tc lines shaping ``dev``'s egress to ``rate_bps`` bits/s: HTB root ``1:``, one class
    ``1:1`` (rate = ceil = link rate, burst = cburst = ``burst_bytes``), bfifo of
    ``limit_bytes`` as its queue. The quantum is set explicitly (HTB warns for rate/r2q > 200000)."""
    quantum = min(200_000, max(1514, rate_bps // 8 // 10))
    return [
        f"qdisc replace dev {dev} root handle 1: htb default 1",
        f"class replace dev {dev} parent 1: classid 1:1 htb rate {rate_bps}bit ceil {rate_bps}bit "
        f"burst {burst_bytes}b cburst {burst_bytes}b quantum {quantum}",
        f"qdisc replace dev {dev} parent 1:1 handle 10: bfifo limit {limit_bytes}",
    ]


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
    tc: dict[str, list[str]] = {sw: []}
    for h in topo.hosts:
        port, ns = linux_ifname(h.port), hosts[h.name]
        links += [
            f"link add {port} type veth peer name {HOST_IF} netns {ns}",
            f'link set {port} master {BRIDGE} alias "{long_port(h.port)}"',
        ]
        ip[sw].append(f"link set {port} up")
        ip[ns] = ["link set lo up", f"addr add {h.address} dev {HOST_IF}", f"link set {HOST_IF} up"]
        tc[sw] += shaping_lines(port, topo.link.rate, topo.link.burst_bytes, topo.buffers.switch_port_bytes)
        tc[ns] = shaping_lines(HOST_IF, topo.link.rate, topo.link.burst_bytes, topo.buffers.host_bytes)
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
        tc={ns: lines for ns, lines in tc.items() if lines},
    )


# ---------------------------------------------------------------------------------------------
# Running batches


def _batch_error(tool: str, ns: str | None, lines: list[str], stderr: str) -> str:
    where = f" in namespace {ns}" if ns else ""
    m = re.search(r"Command failed -:(\d+)", stderr)
    first = stderr.strip().splitlines()[0] if stderr.strip() else "no error output"
    if m and 0 < int(m.group(1)) <= len(lines):
        return f"`{tool} {lines[int(m.group(1)) - 1]}`{where} failed: {first}"
    return f"`{tool} -batch`{where} failed: {first}"


def _run_batches(jobs: list[tuple[str, str | None, list[str]]]) -> None:
    """Run ``(tool, namespace, lines)`` batches concurrently (``tool -n NS -batch -``).
    Raises QoslabError naming the failing line and namespace."""
    procs = []
    for tool, ns, lines in jobs:
        argv = [tool] + (["-n", ns] if ns else []) + ["-batch", "-"]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append((p, tool, ns, lines))
    errors = []
    for p, tool, ns, lines in procs:
        _, err = p.communicate("\n".join(lines) + "\n")
        if p.returncode != 0:
            errors.append(_batch_error(tool, ns, lines, err))
    if errors:
        raise QoslabError("; ".join(errors))


def _run_in_namespaces(jobs: dict[str, list[list[str]]]) -> None:
    """Run each namespace's command list inside it (one ``sh`` per namespace, concurrently)."""
    procs = []
    for ns, cmds in jobs.items():
        script = " && ".join(shlex.join(c) for c in cmds)
        p = subprocess.Popen(["ip", "netns", "exec", ns, "sh", "-c", script],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append((ns, script, p))
    errors = []
    for ns, script, p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            errors.append(f"in namespace {ns}: `{script}` failed: {err.strip() or p.returncode}")
    if errors:
        raise QoslabError("; ".join(errors))


def _json(argv: list[str]) -> list[dict]:
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        raise QoslabError(f"`{' '.join(argv)}` failed: {out.stderr.strip()}")
    return json.loads(out.stdout or "[]")


# ---------------------------------------------------------------------------------------------
# Capabilities


@dataclass(frozen=True)
class Capabilities:
    """Which traffic-control kinds this kernel has (probed once per kernel release, cached in
    /run/qoslab). ``qdiscs``/``filters``/``actions``/``links``: kind -> available."""

    kernel: str
    qdiscs: dict[str, bool]
    filters: dict[str, bool]
    actions: dict[str, bool]
    links: dict[str, bool]

    def missing_required(self) -> list[str]:
        """Required kinds (REQUIRED_TC) this kernel lacks."""
        have = {**self.qdiscs, **self.filters, **self.actions}
        return [k for k in REQUIRED_TC if not have.get(k, False)]


_QDISC_PROBES = {
    "htb": "htb default 1", "tbf": "tbf rate 1mbit burst 10kb latency 50ms", "bfifo": "bfifo limit 10000",
    "pfifo": "pfifo limit 100", "pfifo_fast": "pfifo_fast", "prio": "prio", "ets": "ets bands 2",
    "drr": "drr", "netem": "netem delay 1ms", "fq_codel": "fq_codel", "sfq": "sfq",
    "red": "red limit 100000 avpkt 1000 bandwidth 1mbit", "fq": "fq",
}
_FILTER_PROBES = {
    "u32": "u32 match ip dsfield 0xa0 0xfc flowid 1:1",
    "flower": "flower ip_proto udp flowid 1:1",
    "matchall": "matchall flowid 1:1",
}
_ACTION_PROBES = {
    "mirred": "mirred egress mirror dev probe1", "pedit": "pedit ex munge ip dsfield set 0xa0",
    "skbedit": "skbedit priority 1", "police": "police rate 1mbit burst 10k drop", "gact": "drop",
}


def probe_capabilities(refresh: bool = False) -> Capabilities:
    """Probe which qdiscs, filters, actions and link kinds work here, in a throw-away namespace
    (adds then deletes each on a veth). Cached per kernel release in /run/qoslab/caps.json.
    Raises EnvironmentProblem when not root or namespaces cannot be created."""
    require_root()
    kernel = os.uname().release
    cache = STATE_DIR / "caps.json"
    if not refresh and cache.exists():
        try:
            data = json.loads(cache.read_text())
            if data.get("kernel") == kernel:
                return Capabilities(**data)
        except (ValueError, TypeError):
            pass
    ns = f"qsl-probe-{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", ns], capture_output=True, text=True)
    if r.returncode != 0:
        raise EnvironmentProblem(f"cannot create a network namespace (`ip netns add`): {r.stderr.strip()}")
    try:
        _run_batches([("ip", ns, ["link add probe0 type veth peer name probe1", "link set probe0 up",
                                  "link set probe1 up"])])
        lines: list[str] = []
        index: dict[int, tuple[str, str]] = {}
        for kind, args in _QDISC_PROBES.items():
            index[len(lines) + 1] = ("qdisc", kind)
            lines += [f"qdisc add dev probe0 root handle 1: {args}", "qdisc del dev probe0 root"]
        lines.append("qdisc add dev probe0 root handle 1: htb default 1")
        for kind, args in _FILTER_PROBES.items():
            index[len(lines) + 1] = ("filter", kind)
            lines.append(f"filter add dev probe0 parent 1: protocol ip pref 10 {args}")
            lines.append("filter del dev probe0 parent 1: pref 10")
        for kind, args in _ACTION_PROBES.items():
            index[len(lines) + 1] = ("action", kind)
            lines.append(f"filter add dev probe0 parent 1: protocol ip pref 20 u32 match u32 0 0 action {args}")
            lines.append("filter del dev probe0 parent 1: pref 20")
        p = subprocess.run(["tc", "-n", ns, "-force", "-batch", "-"], input="\n".join(lines) + "\n",
                           capture_output=True, text=True)
        failed = {int(n) for n in re.findall(r"Command failed -:(\d+)", p.stderr)}
        found: dict[str, dict[str, bool]] = {"qdisc": {}, "filter": {}, "action": {}}
        for line_no, (what, kind) in index.items():
            found[what][kind] = line_no not in failed
        links = {}
        for kind in ("veth", "bridge", "ifb", "dummy"):
            r = subprocess.run(["ip", "-n", ns, "link", "add", f"probe-{kind}", "type", kind],
                               capture_output=True, text=True)
            links[kind] = r.returncode == 0 or kind == "veth"
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    caps = Capabilities(kernel, found["qdisc"], found["filter"], found["action"], links)
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(asdict(caps)))
    return caps


def require_root() -> None:
    """Raise EnvironmentProblem unless running as root with the testbed's tools on PATH."""
    if os.geteuid() != 0:
        raise EnvironmentProblem("the embedded testbed needs root (network namespaces, tc): run as root")
    missing = [t for t in REQUIRED_TOOLS if shutil.which(t) is None]
    if missing:
        raise EnvironmentProblem(f"missing tools: {', '.join(missing)} (run `make setup`)")


# ---------------------------------------------------------------------------------------------
# Processes inside namespaces


def _netns_inode(ns: str) -> int | None:
    try:
        return (NETNS_DIR / ns).stat().st_ino
    except OSError:
        return None


def namespace_pids(namespaces: list[str]) -> dict[str, list[int]]:
    """PIDs of the processes living in each namespace (what ``ip netns pids`` reports, for all
    namespaces in one pass over /proc)."""
    inodes = {ino: ns for ns in namespaces if (ino := _netns_inode(ns)) is not None}
    out: dict[str, list[int]] = {ns: [] for ns in namespaces}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            ino = os.stat(f"/proc/{entry.name}/ns/net").st_ino
        except OSError:
            continue
        if ino in inodes:
            out[inodes[ino]].append(int(entry.name))
    return out


def _kill_pids(pids: list[int], grace_s: float = 2.0) -> list[int]:
    """SIGTERM each PID, SIGKILL what is left after ``grace_s``; returns the PIDs signalled."""
    sent = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            sent.append(pid)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace_s
    alive = list(sent)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [p for p in alive if _alive(p)]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return sent


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def list_namespaces() -> list[str]:
    """Names of all named network namespaces on this machine."""
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir())
    except FileNotFoundError:
        return []


# ---------------------------------------------------------------------------------------------
# The testbed


@dataclass
class UpReport:
    """What ``up`` did: ``built`` (False = it was already up), ``stale_removed`` (namespaces of
    an earlier crashed run), ``seconds`` (wall time)."""

    built: bool
    stale_removed: list[str]
    seconds: float


@dataclass
class DownReport:
    """What ``down`` removed: namespaces, PIDs of processes ended inside them, wall seconds."""

    namespaces: list[str]
    killed_pids: list[int]
    seconds: float


@dataclass
class PortStatus:
    """One interface's state and counters (packets, bytes) and its root qdisc's stats."""

    namespace: str
    ifname: str
    alias: str
    state: str
    tx_packets: int
    tx_bytes: int
    rx_packets: int
    rx_bytes: int
    qdiscs: list[str]
    qdisc_drops: int
    qdisc_backlog_bytes: int


@dataclass
class TestbedStatus:
    """``up`` (bool), per-host interface status, switch port status, SPAN port status, and
    whether something listens on the management endpoint."""

    __test__ = False  # not a pytest test class


    name: str
    up: bool
    namespaces: list[str]
    hosts: dict[str, PortStatus] = field(default_factory=dict)
    switch_ports: dict[str, PortStatus] = field(default_factory=dict)
    management: str = ""
    management_listening: bool = False


class Testbed:
    """The embedded testbed of one topology. ``up``/``down`` are idempotent; :meth:`executor`
    gives the executor of a host."""

    __test__ = False  # not a pytest test class


    def __init__(self, topology: Topology):
        if topology.environment != "embedded":
            raise QoslabError(
                f"topology {topology.name} is for a real cluster (environment: cluster); "
                "the embedded testbed only builds environment: embedded topologies"
            )
        self.topo = topology
        self.plan = build_plan(topology)
        self.switch_ns = switch_namespace(topology.name)
        self.span_ns = span_namespace(topology.name)
        self.state_file = STATE_DIR / f"testbed-{topology.name}.json"
        self.with_switch = True
        self._switch_pid: int | None = None

    # -- helpers ------------------------------------------------------------------------------
    def namespace(self, host: str) -> str:
        """Namespace of ``host``; raises QoslabError for an unknown host."""
        try:
            return host_namespace(self.topo.name, self.topo.host(host).name)
        except KeyError as e:
            raise QoslabError(str(e.args[0])) from None

    def executor(self, host: str) -> NetnsExecutor:
        """Executor running commands inside ``host``'s namespace."""
        return NetnsExecutor(host, self.namespace(host))

    def existing(self) -> list[str]:
        """Namespaces of this testbed that exist now (complete or left by a crash)."""
        return [ns for ns in list_namespaces() if owns_namespace(self.topo.name, ns)]

    def is_up(self) -> bool:
        """True when the state file says a build completed and all its namespaces exist."""
        try:
            state = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return False
        return state.get("status") == "up" and set(self.plan.namespaces) <= set(list_namespaces())

    # -- up / down ----------------------------------------------------------------------------
    def up(self) -> UpReport:
        """Build the testbed (idempotent: a complete testbed is left as it is; leftovers of a
        crashed run are removed first). On any error or interrupt, everything built is removed
        and the error re-raised. Raises EnvironmentProblem (not root, tools or tc kinds
        missing) or QoslabError naming the failing command."""
        t0 = time.monotonic()
        require_root()
        caps = probe_capabilities()
        missing = caps.missing_required()
        if missing:
            raise EnvironmentProblem(
                f"this kernel lacks tc {', '.join(missing)} (needed by the testbed); "
                "see `qoslab testbed caps`"
            )
        if self.is_up():
            return UpReport(False, [], time.monotonic() - t0)
        stale = self.existing()
        if stale:
            self._remove(stale)
        try:
            STATE_DIR.mkdir(parents=True, exist_ok=True)
            self._write_state("building")
            p = self.plan
            _run_batches([("ip", None, p.root_ip)])
            _run_batches([("ip", self.switch_ns, p.links)])
            _run_in_namespaces(p.prepare)
            _run_batches([("ip", ns, lines) for ns, lines in p.ip.items()])
            _run_batches([("tc", ns, lines) for ns, lines in p.tc.items()])
            if self.with_switch:
                self._start_switch()
            self._write_state("up")
        except BaseException:
            self._remove(self.existing())
            self.state_file.unlink(missing_ok=True)
            raise
        return UpReport(True, stale, time.monotonic() - t0)

    def down(self) -> DownReport:
        """Remove the testbed: end every process inside its namespaces (SIGTERM, then SIGKILL),
        delete the namespaces (and with them every veth and the bridge) and the state file.
        Idempotent. Raises QoslabError if a namespace survives."""
        t0 = time.monotonic()
        require_root()
        existing = self.existing()
        killed = self._remove(existing)
        self.state_file.unlink(missing_ok=True)
        shutil.rmtree(STATE_DIR / f"vswitch-{self.topo.name}", ignore_errors=True)
        left = self.existing()
        if left:
            raise QoslabError(f"namespaces survived `down`: {', '.join(left)}")
        return DownReport(existing, killed, time.monotonic() - t0)

    def _start_switch(self) -> None:
        """Start the virtual Catalyst (``qoslab switch serve``) in the background, fresh state
        (factory config, new credentials and host key), and wait until it accepts connections."""
        import sys

        d = STATE_DIR / f"vswitch-{self.topo.name}"
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        mg = self.topo.switch.management
        if _listening(mg.host, mg.port):
            raise QoslabError(f"management endpoint {mg.host}:{mg.port} is already in use (another testbed "
                              "or virtual switch?)")
        log = open(d / "serve.log", "ab")
        import yaml

        topo_file = d / "topology.yaml"  # the resolved topology (names and overrides as built)
        topo_file.write_text(yaml.safe_dump(self.topo.model_dump(mode="json"), sort_keys=False))
        argv = [sys.executable, "-m", "qoslab", "switch", "serve", "-t", str(topo_file)]
        p = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self._switch_pid = p.pid
        deadline = time.monotonic() + 15
        while not _listening(mg.host, mg.port):
            if p.poll() is not None or time.monotonic() > deadline:
                tail = (d / "serve.log").read_text(errors="replace").strip().splitlines()[-2:]
                raise QoslabError(f"the virtual Catalyst did not start: {' / '.join(tail) or 'no output'}")
            time.sleep(0.05)

    def _stop_switch(self) -> list[int]:
        """End the virtual Catalyst this testbed started (PID from the state file; its command
        line is checked so a reused PID is never signalled)."""
        pid = self._switch_pid
        if pid is None:
            try:
                pid = json.loads(self.state_file.read_text()).get("switch_pid")
            except (OSError, ValueError):
                pid = None
        if not pid:
            return []
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return []
        if b"serve" not in cmd or not any(b"qoslab" in c for c in cmd):
            return []
        return _kill_pids([pid])

    def _remove(self, namespaces: list[str]) -> list[int]:
        killed = self._stop_switch()
        if not namespaces:
            return killed
        pids = [pid for pids in namespace_pids(namespaces).values() for pid in pids]
        killed += _kill_pids(pids)
        subprocess.run(["ip", "-force", "-batch", "-"], input="".join(f"netns del {ns}\n" for ns in namespaces),
                       capture_output=True, text=True)
        return killed

    def _write_state(self, status: str) -> None:
        state = {"status": status, "topology": self.topo.source, "name": self.topo.name,
                 "namespaces": self.plan.namespaces, "pid": os.getpid(), "time": time.time(),
                 "switch_pid": self._switch_pid}
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        tmp.replace(self.state_file)

    # -- status -------------------------------------------------------------------------------
    def status(self) -> TestbedStatus:
        """Interfaces, qdiscs and counters of every host and switch port (reads the kernel)."""
        mgmt = self.topo.switch.management
        st = TestbedStatus(self.topo.name, self.is_up(), self.existing(), management=f"{mgmt.host}:{mgmt.port}")
        st.management_listening = _listening(mgmt.host, mgmt.port)
        if not st.up:
            return st
        for h in self.topo.hosts:
            ns = self.namespace(h.name)
            st.hosts[h.name] = _port_status(ns, "eth0")
        for dev in [linux_ifname(h.port) for h in self.topo.hosts] + [
            linux_ifname(p) for p in self.topo.switch.span_destinations
        ]:
            st.switch_ports[dev] = _port_status(self.switch_ns, dev)
        return st

    # -- connectivity -------------------------------------------------------------------------
    def port_bytes_sent(self, ports: list[str]) -> dict[str, int]:
        """Bytes sent so far by the root qdisc of each switch port (its egress toward the host;
        Catalyst names such as ``Gi1/0/1``). Raises QoslabError if tc fails."""
        out = {}
        for p in ports:
            qdiscs = _json(["tc", "-n", self.switch_ns, "-j", "-s", "qdisc", "show", "dev", linux_ifname(p)])
            out[p] = next((q.get("bytes", 0) for q in qdiscs if q.get("root")), 0)
        return out

    def wait_ports_saturated(self, ports: list[str], timeout_s: float, share: float = 0.95,
                             window_s: float = 0.1) -> bool:
        """Wait until every port in ``ports`` sends at least ``share`` of the link rate (bits/s,
        measured over ``window_s`` seconds from the qdisc byte counters): the flood is established.
        Returns True then, or False after ``timeout_s`` seconds.

        Why not "the queue overflows": every host link is shaped at the link rate at both ends, so a
        flood above the link rate loses its excess at the sender's own egress (as a real NIC would)
        and arrives at the switch port at exactly the link rate; the switch port's queue only
        overflows once the workload adds its traffic."""
        deadline = time.monotonic() + timeout_s
        need = share * self.topo.link.rate * window_s / 8
        prev, t_prev = self.port_bytes_sent(ports), time.monotonic()
        while True:
            time.sleep(window_s)
            now, t_now = self.port_bytes_sent(ports), time.monotonic()
            scale = window_s / max(t_now - t_prev, 1e-6)
            if all((now[p] - prev[p]) * scale >= need for p in ports):
                return True
            if t_now >= deadline:
                return False
            prev, t_prev = now, t_now

    def ping_matrix(self, count: int = 1, timeout_s: float = 2.0) -> dict[tuple[str, str], float | None]:
        """Ping every host from every other host (all ordered pairs, concurrently).
        Returns ``{(src, dst): rtt_ms or None when unreachable}``."""
        procs = {}
        for src in self.topo.hosts:
            for dst in self.topo.hosts:
                if src.name == dst.name:
                    continue
                argv = ["ip", "netns", "exec", self.namespace(src.name), "ping", "-n", "-q",
                        "-c", str(count), "-W", f"{timeout_s:g}", dst.ip]
                procs[(src.name, dst.name)] = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                                               stderr=subprocess.DEVNULL, text=True)
        out: dict[tuple[str, str], float | None] = {}
        for pair, p in procs.items():
            text, _ = p.communicate()
            m = re.search(r"= [\d.]+/([\d.]+)/", text)
            out[pair] = float(m.group(1)) if (p.returncode == 0 and m) else None
        return out

    def iperf_tcp(self, src: str, dst: str, seconds: float = 5.0, port: int = 5201) -> dict:
        """TCP throughput ``src`` -> ``dst`` measured by iperf3 (server on ``dst``, one test).
        Returns ``{"bits_per_second": received rate (bits/s), "retransmits": n, "seconds": s}``.
        Raises QoslabError when iperf3 fails."""
        dst_ip = self.topo.host(dst).ip
        server_ex, client_ex = self.executor(dst), self.executor(src)
        server = server_ex.start(["iperf3", "-s", "-1", "-B", dst_ip, "-p", str(port)])
        try:
            _wait_listening(server_ex, dst_ip, port)
            res = client_ex.run(["iperf3", "-c", dst_ip, "-p", str(port), "-t", f"{seconds:g}", "-J"],
                                timeout=seconds + 20, check=False)
            try:
                data = json.loads(res.stdout)
            except ValueError:
                raise QoslabError(f"iperf3 {src} -> {dst}: unreadable output: {res.stderr.strip()[:200]}") from None
            if "error" in data:
                raise QoslabError(f"iperf3 {src} -> {dst}: {data['error']}")
            end = data["end"]
            return {"bits_per_second": end["sum_received"]["bits_per_second"],
                    "retransmits": end["sum_sent"].get("retransmits", 0),
                    "seconds": end["sum_received"]["seconds"]}
        finally:
            server_ex.stop(server)


def _wait_listening(ex: NetnsExecutor, ip: str, port: int, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        r = ex.run(["ss", "-Htln", f"src {ip}:{port}"], check=False, timeout=5)
        if r.stdout.strip():
            return
        time.sleep(0.05)
    raise QoslabError(f"on {ex.node}: nothing listens on {ip}:{port} after {timeout_s:g} s")


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.3):
            return True
    except OSError:
        return False


def _port_status(ns: str, dev: str) -> PortStatus:
    link = _json(["ip", "-n", ns, "-j", "-s", "link", "show", "dev", dev])[0]
    qdiscs = _json(["tc", "-n", ns, "-j", "-s", "qdisc", "show", "dev", dev])
    stats = link.get("stats64", link.get("stats", {}))
    root = next((q for q in qdiscs if q.get("root")), {})
    return PortStatus(
        namespace=ns,
        ifname=dev,
        alias=link.get("ifalias", ""),
        state=link.get("operstate", "?"),
        tx_packets=stats.get("tx", {}).get("packets", 0),
        tx_bytes=stats.get("tx", {}).get("bytes", 0),
        rx_packets=stats.get("rx", {}).get("packets", 0),
        rx_bytes=stats.get("rx", {}).get("bytes", 0),
        qdiscs=[f"{q['kind']} {q['handle']}" for q in qdiscs],
        qdisc_drops=root.get("drops", 0),
        qdisc_backlog_bytes=root.get("backlog", 0),
    )
