"""Topology files (``playbooks/topologies/*.yaml``): hosts, the switch, links and buffers.

A topology describes one cluster: which host sits on which Catalyst port with which address,
the switch's management endpoint and SPAN destination ports, the link rate and buffer sizes.
The same file drives the embedded testbed (``environment: embedded``) and real-cluster
inventories (``environment: cluster``). Load with :func:`load_topology`.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .clusterconf import SlurmSettings, SshSettings, check_host
from .portnames import canonical_port, expand_ports
from .registry import PlatformModel, model_serves_eapi
from .scale.cpu import CpuBlock, check_cpu, online_cpus
from .scale.knobs import LINK_RATE_RANGE, MAX_QUEUE_BYTES, ScaleKnobs, scaled_buffers
from .units import parse_rate, parse_size
from .yamlio import FieldProblem, StrictModel, SubFieldProblem, load_model

#: RFC 2544 benchmarking range: the only addresses the embedded testbed may use.
TESTBED_NETWORK = ipaddress.IPv4Network("198.18.0.0/15")

_HOSTNAME = re.compile(r"^[a-z][a-z0-9-]{0,30}\Z")
_SWITCH_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,39}\Z")
#: Largest queue a topology may give a port or host (bytes): scale.knobs.MAX_QUEUE_BYTES (64 MiB).
MAX_BUFFER_BYTES = MAX_QUEUE_BYTES


class Host(StrictModel):
    """One cluster node: its name, its IPv4 interface address (with prefix), its switch port."""

    name: str
    address: ipaddress.IPv4Interface
    port: str
    cpu: float | None = Field(None, strict=True, gt=0, le=1024, description="CPU capacity, cores (cpu: block)")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _HOSTNAME.match(v):
            raise ValueError(f"host name {v!r} must be lower-case letters, digits and '-', at most 31 chars")
        return v

    @field_validator("port")
    @classmethod
    def _port(cls, v: str) -> str:
        return canonical_port(v)

    @property
    def ip(self) -> str:
        """The host's address without prefix, e.g. ``198.18.0.1``."""
        return str(self.address.ip)


class Management(StrictModel):
    """Where the switch's SSH CLI (and an EOS switch's eAPI: ``eapi_port``) listens; SSH algorithms."""

    host: str = "127.0.0.1"
    port: int = Field(22, ge=1, le=65535)
    eapi_port: int | None = Field(None, ge=1, le=65535)
    #: None: the switch model's own (3750: ``c3750``, 9300: ``iosxe17``); ``modern``: asyncssh's
    ssh_profile: Literal["c3750", "iosxe17", "modern"] | None = None

    @field_validator("host")
    @classmethod
    def _host(cls, v: str) -> str:
        return check_host(v)

    @model_validator(mode="after")
    def _ports_apart(self) -> Management:
        if self.eapi_port is not None and self.eapi_port == self.port:
            raise SubFieldProblem(("eapi_port",), f"{self.eapi_port} is also the SSH port (port): the switch serves "
                                                  "SSH and eAPI on two ports")
        return self


class Switch(StrictModel):
    """The Catalyst: model, hostname, management endpoint, its ports and SPAN destinations."""

    model: PlatformModel = "WS-C3750G-24T"
    hostname: str = "Switch"

    @field_validator("model", "hostname")
    @classmethod
    def _word(cls, v: str) -> str:
        if not _SWITCH_NAME.match(v):
            raise ValueError(f"{v!r}: 1-40 letters, digits, '_', '.', '-', starting with a letter (IOS name)")
        return v
    management: Management = Management()
    ports: list[str] = Field(default_factory=lambda: expand_ports("Gi1/0/1-24"))
    span_destinations: list[str] = Field(default_factory=list)
    datapath: Literal["bridge", "ingress"] = Field(
        "bridge", description="how the embedded switch moves packets: bridge = Linux bridge + nftables bridge "
        "table; ingress (experimental, issue 52: not yet shown to count, police and queue as the bridge does) = "
        "nftables netdev ingress chains forwarding by the static host-to-port map")

    @field_validator("ports", mode="before")
    @classmethod
    def _ports(cls, v: object) -> list[str]:
        specs = [v] if isinstance(v, str) else v
        if not isinstance(specs, list):
            raise ValueError("ports must be a list of interface names or ranges like Gi1/0/1-24")
        out: list[str] = []
        for spec in specs:
            out.extend(expand_ports(str(spec)))
        if len(set(out)) != len(out):
            dup = sorted({p for p in out if out.count(p) > 1})
            raise ValueError(f"port listed twice: {', '.join(dup)}")
        return out

    @field_validator("span_destinations", mode="before")
    @classmethod
    def _span(cls, v: object) -> list[str]:
        if not isinstance(v, list):
            raise ValueError("span_destinations must be a list of interface names")
        return [canonical_port(str(p)) for p in v]

    @model_validator(mode="after")
    def _span_known(self) -> Switch:
        for i, p in enumerate(self.span_destinations):
            if p not in self.ports:
                raise SubFieldProblem(("span_destinations", i),
                                      f"SPAN destination {p} is not one of the switch's ports")
        return self


class Link(StrictModel):
    """Every host link: rate (bits/s), HTB burst (ms at the link rate), NIC offloads."""

    rate: int = Field(50_000_000, description="bits/s")
    burst_ms: float = Field(2.5, gt=0, le=100, description="HTB burst/cburst as milliseconds at the link rate")
    offloads: bool = Field(
        False,
        description="TSO/GSO/GRO on host interfaces. false = wire-size frames on the wire and in captures",
    )

    @field_validator("rate", mode="before")
    @classmethod
    def _rate(cls, v: object) -> int:
        bits = parse_rate(v)  # type: ignore[arg-type]
        lo, hi = LINK_RATE_RANGE
        if not lo <= bits <= hi:
            raise ValueError(f"link rate {v!r} is outside {lo} bit/s to {hi // 10**9} Gbit/s")
        return bits

    @property
    def burst_bytes(self) -> int:
        """HTB burst in bytes: ``rate/8 * burst_ms``, at least two full frames (3028 B)."""
        return max(3028, int(self.rate / 8 * self.burst_ms / 1000))


class Buffers(StrictModel):
    """Queue limits in bytes: per switch egress port (QoS off) and per host NIC egress queue."""

    switch_port_bytes: int = 131072
    host_bytes: int = 131072

    @field_validator("switch_port_bytes", "host_bytes", mode="before")
    @classmethod
    def _size(cls, v: object) -> int:
        size = parse_size(v)  # type: ignore[arg-type]
        if size > MAX_BUFFER_BYTES:
            raise ValueError(f"buffer {v!r} is larger than {MAX_BUFFER_BYTES} bytes")
        return size


class CaptureWiring(StrictModel):
    """Where a real cluster captures: ``host`` has a NIC on each SPAN destination port
    (``interfaces``: port -> interface name on that host, e.g. ``Gi1/0/21: eth1``)."""

    host: str
    interfaces: dict[str, str]

    @field_validator("interfaces")
    @classmethod
    def _ports(cls, v: dict[str, str]) -> dict[str, str]:
        return {canonical_port(k): i for k, i in v.items()}


class Topology(StrictModel):
    """A whole cluster. ``embedded``: namespaces, every address in 198.18.0.0/15 (RFC 2544), the
    management endpoint on loopback. ``cluster``: must declare ``experiment_network`` (floods go
    nowhere else) and ``flood_rate_cap`` (bits/s on the wire, a whole flood). ``scale``: the scale
    model's knobs (:mod:`qoslab.scale.knobs`; its queue times become ``buffers`` bytes). ``cpu``:
    the hosts' and the switch's cores and the hosts' capacities (:mod:`qoslab.scale.cpu`)."""

    name: str
    description: str = ""
    environment: Literal["embedded", "cluster"] = "embedded"
    experiment_network: ipaddress.IPv4Network | None = None
    flood_rate_cap: int | None = Field(None, description="bits/s on the wire, all flows of a flood together")
    link: Link = Link()
    buffers: Buffers = Buffers()
    switch: Switch = Switch()
    hosts: list[Host]
    ssh: SshSettings | None = None
    slurm: SlurmSettings | None = None
    capture: CaptureWiring | None = None
    scale: ScaleKnobs | None = None
    cpu: CpuBlock | None = None
    source: str | None = Field(None, exclude=True, description="file this topology was read from")

    @field_validator("flood_rate_cap", mode="before")
    @classmethod
    def _cap(cls, v: object) -> int | None:
        return None if v is None else parse_rate(v)  # type: ignore[arg-type]

    @property
    def network(self) -> ipaddress.IPv4Network:
        """The experiment network: ``experiment_network``, or 198.18.0.0/15 on the embedded testbed."""
        return self.experiment_network or TESTBED_NETWORK

    @field_validator("name")
    @classmethod
    def _tname(cls, v: str) -> str:
        if not re.match(r"^[a-z][a-z0-9]{0,11}$", v):
            raise ValueError("topology name must be 1-12 lower-case letters/digits, starting with a letter")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Topology:
        if not self.hosts:
            raise FieldProblem(("hosts",), "a topology needs at least one host")
        embedded = self.environment == "embedded"
        self._cluster_safety()
        if self.switch.management.eapi_port is not None and not model_serves_eapi(self.switch.model):
            raise FieldProblem(("switch", "management", "eapi_port"),
                               f"a {self.switch.model} serves no eAPI (only an EOS switch does): remove eapi_port")
        if embedded and not _is_loopback(self.switch.management.host):
            raise FieldProblem(("switch", "management", "host"),
                               f"{self.switch.management.host} must be a loopback address (an IP such as 127.0.0.1) "
                               "on the embedded testbed (a name like localhost is not resolved)")
        seen: dict[str, str] = {}
        for i, h in enumerate(self.hosts):
            if embedded and (h.address.ip not in TESTBED_NETWORK or not h.address.network.subnet_of(TESTBED_NETWORK)):
                raise FieldProblem(("hosts", i, "address"),
                                   f"{h.address} is outside {TESTBED_NETWORK}, the only range the embedded "
                                   "testbed may use (RFC 2544 benchmarking range)")
            for key, what in ((h.name, "name"), (h.ip, "address"), (h.port, "port")):
                tag = f"{what}:{key}"
                if tag in seen:
                    raise FieldProblem(("hosts", i, what), f"duplicate {what} {key} (hosts {seen[tag]} and {h.name})")
                seen[tag] = h.name
            if h.port not in self.switch.ports:
                raise FieldProblem(("hosts", i, "port"),
                                   f"host {h.name}: port {h.port} is not one of the switch's ports")
            if h.port in self.switch.span_destinations:
                raise FieldProblem(("hosts", i, "port"), f"host {h.name}: port {h.port} is a SPAN destination port")
            if h.address.network != self.hosts[0].address.network:
                raise FieldProblem(("hosts", i, "address"),
                                   f"{h.address} is not in the subnet of {self.hosts[0].name} "
                                   f"({self.hosts[0].address.network}); the switch is one VLAN")
            if h.address.ip in (h.address.network.network_address, h.address.network.broadcast_address):
                raise FieldProblem(("hosts", i, "address"),
                                   f"{h.ip} is the network or broadcast address of {h.address.network}")
            if h.address.ip not in self.network:
                raise FieldProblem(("hosts", i, "address"), f"{h.ip} is outside the experiment network {self.network}")
        self._capture_wiring()
        check_cpu(self.cpu, {h.name: h.cpu for h in self.hosts}, _online() if self.cpu else None, self.environment)
        update = scaled_buffers(self.scale, self.link.rate, self.buffers.model_dump(), self.buffers.model_fields_set)
        return self.model_copy(update={"buffers": self.buffers.model_copy(update=update)}) if update else self

    def _cluster_safety(self) -> None:
        if self.environment != "cluster":
            if self.experiment_network is not None and not self.experiment_network.subnet_of(TESTBED_NETWORK):
                raise FieldProblem(("experiment_network",),
                                   f"must lie inside {TESTBED_NETWORK} on the embedded testbed")
            return
        for name, what in (("experiment_network", "its experiment network (CIDR, e.g. 5.1.1.0/24): floods go "
                                                  "nowhere else"),
                           ("flood_rate_cap", "a flood rate cap (bits/s on the wire of a whole flood, e.g. 5Gbit)")):
            if getattr(self, name) is None:
                raise FieldProblem((name,), f"a cluster topology must declare {what}")
        for bad in ("is_multicast", "is_loopback", "is_unspecified", "is_link_local"):
            if getattr(self.experiment_network, bad):
                raise FieldProblem(("experiment_network",), f"{self.experiment_network} is not a unicast network")

    def _capture_wiring(self) -> None:
        if self.capture is None:
            return
        if self.capture.host not in self.host_names:
            raise FieldProblem(("capture", "host"), f"no host {self.capture.host!r} ({', '.join(self.host_names)})")
        for port in self.capture.interfaces:
            if port not in self.switch.span_destinations:
                raise FieldProblem(("capture", "interfaces"), f"{port} is not a SPAN destination of the switch")

    def host(self, name: str) -> Host:
        """The host called ``name``; raises KeyError naming the known hosts."""
        for h in self.hosts:
            if h.name == name:
                return h
        raise KeyError(f"no host {name!r} in topology {self.name} (hosts: {', '.join(self.host_names)})")

    @property
    def host_names(self) -> list[str]:
        """Host names in file order."""
        return [h.name for h in self.hosts]

    def host_by_ip(self, ip: str) -> Host | None:
        """The host whose address is ``ip``, or None."""
        return next((h for h in self.hosts if h.ip == ip), None)


def _online() -> frozenset[int] | None:
    """This machine's online CPUs (/sys/devices/system/cpu/online; None when it cannot be read)."""
    try:
        return online_cpus(Path("/sys/devices/system/cpu/online").read_text())
    except OSError:
        return None


def _is_loopback(host: str) -> bool:
    """True for a loopback IP address literal (``127.0.0.2``, ``::1``); False for names and others."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def repo_root() -> Path:
    """The qoslab checkout this package runs from (src/qoslab/ -> repository root)."""
    return Path(__file__).resolve().parents[2]


def default_topology_path() -> Path:
    """``playbooks/topologies/ecenet.yaml`` in the checkout."""
    return repo_root() / "playbooks" / "topologies" / "ecenet.yaml"


def load_topology(path: str | Path | None = None, **overrides: object) -> Topology:
    """Read and validate a topology file (default: ecenet). ``overrides`` replace top-level
    fields before validation (e.g. ``name="t1234"`` for a test testbed).

    Raises ConfigError naming the file, line and field of every problem.
    """
    path = Path(path) if path else default_topology_path()
    topo = load_model(path, Topology, overrides=dict(overrides))
    return topo.model_copy(update={"source": str(path)})


def load_variant(name: str, management_port: int, path: str | Path | None = None, **overrides: object) -> Topology:
    """The topology at ``path`` (default ecenet) under another ``name`` with its virtual switch on
    ``management_port`` and no eAPI port, so several testbeds (tests, benchmarks) can be up at once."""
    base = load_topology(path)
    mg = {**base.switch.management.model_dump(mode="json"), "port": management_port, "eapi_port": None}
    switch = {**base.switch.model_dump(mode="json"), "management": mg}
    return load_topology(path, name=name, switch=switch, **overrides)
