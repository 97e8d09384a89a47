"""Everything a playbook references, checked before a campaign folder is made: the topology,
flood and profile files load; the hosts exist; the profiles render for the workload hosts; the
capture port is a SPAN destination that every captured condition's profile mirrors to; the
switch device is known. Each problem is a ConfigError naming the playbook's file, line and field.
:func:`load_playbook` reads a playbook and runs these checks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError, QoslabError
from ..platforms import get_platform, platform_for_model
from ..portnames import canonical_port
from ..profiles import load_profile
from ..scale.cpu import budget_sum_problem
from ..switch.backends import check_device_files, device_kind
from ..topology import Topology, load_topology
from ..trafficgen import FloodDefinition, load_flood, resolve
from ..trafficgen.ditg import SIGNAL_PORT
from ..trials.comparisons import plan_comparisons
from ..trials.playbook import Playbook, resolve_path
from ..yamlio import config_error, load_model
from .snapshot import input_path


def check_references(pb: Playbook, path: Path) -> None:
    """Raise ConfigError for the first reference of ``pb`` (read from ``path``) that does not hold.
    A reference under ``derive/`` is the playbook's own folder's (a campaign folder's playbook:
    :func:`.snapshot.input_path`), any other resolves against the repository."""

    def fail(loc: tuple[Any, ...], msg: str) -> ConfigError:
        return config_error(path, loc, msg)

    topo_path = _input(pb.topology, path, ("topology",), fail)
    if not topo_path.is_file():
        raise fail(("topology",), f"no topology file {pb.topology}")
    try:
        topo = load_topology(topo_path)
    except ConfigError as e:
        raise fail(("topology",), str(e)) from None
    if pb.executor == "netns" and topo.environment != "embedded":
        raise fail(("executor",), f"topology {topo.name} is a real cluster: use `executor: ssh`")
    for kind in sorted({pb.workload_of(c).kind for c in pb.conditions} & set(KIND_EXECUTORS)):
        if pb.executor not in KIND_EXECUTORS[kind]:
            raise fail(("executor",), f"{pb.executor}: kind {kind} runs only on the "
                                      f"{' or '.join(sorted(KIND_EXECUTORS[kind]))} executor (the embedded testbed's "
                                      "namespaces, or a Slurm allocation: srun or mpirun through Slurm)")
    for i, c in enumerate(pb.conditions):
        w = pb.workload_of(c)
        if pb.executor != "slurm" and getattr(w, "launcher", None) == "srun":
            loc: tuple[Any, ...] = ("conditions", i, "workload") if c.workload and "launcher" in c.workload \
                else ("workload", "launcher")
            raise fail(loc, f"launcher srun starts the ranks through Slurm: it needs `executor: slurm`, "
                            f"not {pb.executor}")
    if pb.executor == "ssh" and topo.environment == "cluster" and (topo.ssh is None or topo.ssh.known_hosts is None):
        raise fail(("executor",), f"topology {topo.name} says nothing about SSH: give it `ssh:` with known_hosts "
                                  "(the nodes' pinned host keys)")
    if pb.executor == "slurm":
        _check_slurm(topo)
    try:
        if device_kind(pb.device) == "catalyst":  # checked as the push reads it, before any folder
            check_device_files(str(_input(pb.device, path, ("device",), fail)), topo)
    except QoslabError as e:
        raise fail(("device",), str(e)) from None
    _check_hosts(pb, topo, fail)
    dsts: set[str] = set()
    for ref in pb.floods():
        dsts |= _check_flood(pb, topo, fail, ref, path)
    _check_budgets(pb, topo, dsts, fail)
    for i in range(len(pb.conditions)):
        _check_profile(pb, topo, i, fail)
    _check_stopping(pb, fail)
    if pb.derive is not None:
        _check_derive(pb, topo, fail)


def _check_slurm(topo: Topology) -> None:
    """A ``slurm:`` block's node list must hold the topology's hosts (by name, or one node per host
    by order): ConfigError at the topology's ``slurm.nodes`` line naming both lists."""
    s = topo.slurm
    if s is None or not s.nodes:
        return
    where = topo.source or topo.name
    if len(s.nodes) < len(topo.hosts):
        raise config_error(where, ("slurm", "nodes"), f"{len(s.nodes)} node(s) ({', '.join(s.nodes)}) for the "
                                                      f"{len(topo.hosts)} hosts ({', '.join(topo.host_names)})")
    missing = [h for h in topo.host_names if h not in s.nodes]
    if s.bind == "name" and missing:
        raise config_error(where, ("slurm", "nodes"), f"nodes {', '.join(s.nodes)} do not include the host(s) "
                                                      f"{', '.join(missing)} (bind: name)")


def _check_stopping(pb: Playbook, fail: Any) -> None:
    """A sequential rule on the recovery needs a matrix with one
    (:func:`qoslab.trials.comparisons.plan_comparisons`)."""
    seq = pb.sequential
    if seq is not None and seq.stop.metric == "recovery" and not plan_comparisons(pb)[1]:
        raise fail(("trials", "stop", "metric"), "this matrix has no recovery (it needs a baseline, the congested "
                                                 "baseline profile and a congested other profile): use `metric: mean`")


def _check_hosts(pb: Playbook, topo: Topology, fail: Any) -> None:
    for i, c in enumerate(pb.conditions):
        loc: tuple[Any, ...] = ("conditions", i, "workload", "hosts") if "hosts" in c.workload else ("workload",
                                                                                                   "hosts")
        for h in pb.workload_of(c).hosts:
            if h not in topo.host_names:
                raise fail(loc, f"no host {h!r} in topology {topo.name} (hosts: {', '.join(topo.host_names)})")
    if pb.capture == "off":
        return
    if pb.capture_port not in topo.switch.span_destinations:
        raise fail(("capture_port",), f"{pb.capture_port} is not a SPAN destination of {topo.name} "
                                      f"({', '.join(topo.switch.span_destinations) or 'none'})")
    if pb.capture_host is not None and pb.capture_host not in topo.host_names:
        raise fail(("capture_host",), f"no host {pb.capture_host!r} in topology {topo.name}")


#: Workload kinds that run only on some executors: ``mpi`` (qoslab.workloads.mpi) on ``netns``
#: (mpirun's agent enters the hosts' namespaces) and ``slurm`` (srun --mpi=X or mpirun in the allocation).
KIND_EXECUTORS = {"mpi": frozenset({"netns", "slurm"})}


def _check_budgets(pb: Playbook, topo: Topology, dsts: set[str], fail: Any) -> None:
    """With the topology's ``cpu:`` block, the hosts the campaign runs on (its workload hosts and
    its floods' destinations, whose receivers run in their budgets) must fit the hosts' cores
    together (:func:`qoslab.scale.cpu.budget_sum_problem`): else they could not all get their
    capacity at once and the CPU model would not hold."""
    if topo.cpu is None:
        return
    used = {h for c in pb.conditions for h in pb.workload_of(c).hosts} | dsts
    why = budget_sum_problem(topo.cpu, {h.name: h.cpu for h in topo.hosts}, used)
    if why is not None:
        raise fail(("topology",), f"{pb.topology}: {why}")


def _input(ref: str, path: Path, loc: tuple[Any, ...], fail: Any) -> Path:
    """Where the playbook at ``path`` finds its input ``ref`` (:func:`.snapshot.input_path` with the
    playbook's folder); a ``derive/`` reference that is no regular file inside it fails at ``loc``."""
    try:
        return input_path(ref, path.parent)
    except ConfigError as e:
        raise fail(loc, str(e)) from None


def _check_flood(pb: Playbook, topo: Topology, fail: Any, ref: str, path: Path) -> set[str]:
    """The flood file ``ref`` (the playbook's ``flood`` or a condition's/factor level's) of the
    playbook at ``path``; returns its destination hosts."""
    users = [i for i, c in enumerate(pb.conditions) if pb.flood_of(c) == ref]
    first = pb.conditions[users[0]]
    loc: tuple[Any, ...] = ("flood",) if first.flood is None else \
        (("factors", "flood") if pb.factors else ("conditions", users[0], "flood"))
    flood_path = _input(ref, path, loc, fail)
    if not flood_path.is_file():
        raise fail(loc, f"no flood file {ref}")
    try:
        defn: FloodDefinition = load_flood(flood_path)
        flows = resolve(defn, topo, require_confirmation=False)
    except ConfigError as e:
        raise fail(loc, str(e)) from None
    except QoslabError as e:
        raise fail(loc, f"{ref}: {e}") from None
    # the flood's ports on its receivers must not be the workload's RMI ports there
    for i, c in enumerate(pb.conditions):
        if i not in users:
            continue
        wl = pb.workload_of(c)
        taken = {SIGNAL_PORT: "D-ITG signalling"} | {f.port: f"flow {f.src} -> {f.dst}" for f in flows
                                                     if f.dst in wl.hosts}
        for field, _proto, port in wl.listen_ports():
            if port in taken and any(f.dst in wl.hosts for f in flows):
                loc = ("conditions", i, "workload", field) if field in c.workload else ("workload", field)
                raise fail(loc, f"port {port} is also the flood's ({taken[port]}) on the workload hosts")
    return {f.dst for f in flows}


def _condition_loc(pb: Playbook, i: int, field: str) -> tuple[Any, ...]:
    """Where condition ``i``'s ``field`` was written: its factor's line when the condition was
    generated from ``factors:`` with that factor, else the condition's own."""
    if pb.factors and field in pb.factors:
        return ("factors", field)
    return ("conditions", i, field)


def _check_profile(pb: Playbook, topo: Topology, i: int, fail: Any) -> None:
    c = pb.conditions[i]
    loc = _condition_loc(pb, i, "profile")
    try:
        prof = load_profile(c.profile)
        plat = get_platform(platform_for_model(topo.switch.model))
        plat.render(prof, topo, {"workload": pb.workload_of(c).hosts})
    except QoslabError as e:  # ConfigError included
        raise fail(loc, str(e)) from None
    if pb.capture != "off" and not any(canonical_port(s.destination) == pb.capture_port for s in prof.span):
        raise fail(loc,
                   f"profile {prof.name} mirrors nothing to the capture port {pb.capture_port}: add a `span:` "
                   f"session with destination {pb.capture_port} to it (SPAN comes from profiles only)")


def _check_derive(pb: Playbook, topo: Topology, fail: Callable[[tuple[Any, ...], str], ConfigError]) -> None:
    """A ``derive:`` block needs what its rules measure (qoslab.scale.onmachine): a readable real
    cluster file with ``rx_cost_us``, a topology with a ``cpu:`` block (the receive cost is a host
    budget's), a raytracer workload (supersample), an uncongested baseline and a congested condition."""
    from ..scale.derive import load_real_cluster

    spec = pb.derive
    assert spec is not None
    try:
        real = load_real_cluster(resolve_path(spec.real))
    except ConfigError as e:
        raise fail(("derive", "real"), str(e)) from None
    if real.rx_cost_us is None:
        raise fail(("derive", "real"), f"{spec.real} gives no rx_cost_us: the CPU rule (host capacity) needs it")
    if topo.cpu is None:
        raise fail(("derive",), f"topology {topo.name} has no cpu: block: the host capacity the rules derive is a "
                                "cpu: block's host_cores")
    if pb.workload.kind != "raytracer":
        raise fail(("derive",), f"workload kind {pb.workload.kind}: the pilot's rule sets the raytracer's supersample")
    base = next((c for c in pb.conditions if c.name == (pb.baseline or pb.conditions[0].name)), None)
    if base is None or base.congestion:
        raise fail(("baseline",), "the pilot runs the baseline condition: it must be uncongested")
    if not any(c.congestion for c in pb.conditions):
        raise fail(("conditions",), "the receive cost is measured in the congested conditions: the playbook has none")


def load_playbook(path: str | Path) -> Playbook:
    """Read a playbook (:class:`qoslab.trials.playbook.Playbook`) and check what it references
    (topology, flood and profile files, hosts of the topology, the capture port). Raises
    ConfigError naming file, line and field."""
    pb = load_model(path, Playbook)
    check_references(pb, Path(path))
    return pb
