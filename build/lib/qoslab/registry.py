"""Backends registered by name, as Nornir registers its plugins.

qoslab has seven kinds of backend, each a :class:`typing.Protocol` in its own module:

- ``executor`` (:class:`qoslab.executors.Executor`): runs commands on a node: ``netns``,
  ``local`` (and ``ssh`` for real clusters);
- ``generator`` (:class:`qoslab.trafficgen.base.TrafficGenerator`): makes congestion:
  ``ditg`` (D-ITG, the default), ``iperf3``;
- ``switch`` (:class:`qoslab.switch.backends.SwitchDevice`): the switch a profile is pushed to:
  ``virtual`` (the embedded testbed's virtual Catalyst), ``catalyst`` (a real IOS switch);
- ``platform`` (:class:`qoslab.platforms.base.Platform`): a switch family's dialect, rendering
  and counters: ``catalyst3750``, ``catalyst9300``, ``arista_eos``;
- ``dialect`` (:class:`qoslab.vswitch.dialects.Dialect`): a platform's CLI on the virtual
  switch: ``c3750``, ``c9300``, ``eos``;
- ``meter`` (:class:`qoslab.meters.base.Meter`): a per-trial measurement with its own store
  columns: ``switch`` (QoS counters), ``cpu`` (CPU time), ``capture`` (capture drops), ``calls`` (per-call
  latency, manager and wire), ``fidelity`` (was the trial emulated faithfully);
- ``workload`` (:class:`qoslab.workloads.base.Workload`): what a trial measures: ``raytracer``
  (the default), ``matmul``, ``pingpong``, ``command`` (the user's own program).

Playbooks, topologies and flood files name backends by these names; :meth:`Registry.get` turns a
name into the backend's factory (a class or function), or raises ConfigError listing the names it
knows. A third party adds a backend without touching qoslab by declaring a Python entry point in
the group ``qoslab.<kind>s`` (``qoslab.executors``, ``qoslab.generators``, ``qoslab.switches``,
``qoslab.meters``, ``qoslab.workloads``)::

    [project.entry-points."qoslab.generators"]
    trex = "mypkg.trex:TrexGenerator"

Built-in backends register themselves lazily: the registry knows their ``module:attribute`` and
imports the module on first use, so naming a backend never imports the others.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Annotated, Generic, TypeVar

from pydantic import AfterValidator

from .errors import ConfigError

F = TypeVar("F", bound=Callable[..., object])


class Registry(Generic[F]):
    """Name -> factory of one kind of backend.

    ``kind`` is the singular noun used in messages (``generator``); entry points are read from the
    group ``qoslab.<kind>s``. Factories are registered directly (:meth:`register`) or by a
    ``"package.module:attr"`` reference imported on first :meth:`get`.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.group = f"qoslab.{kind}s"
        self._refs: dict[str, str] = {}
        self._loaded: dict[str, F] = {}
        self._entry_points_read = False

    def register(self, name: str, factory: F | str) -> None:
        """Register ``factory`` (or a ``"module:attr"`` reference to it) under ``name``.
        Raises ValueError when the name is taken by another factory."""
        if not name or not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"{self.kind} backend name {name!r}: letters, digits, '-' and '_' only")
        if isinstance(factory, str):
            if name in self._refs and self._refs[name] != factory:
                raise ValueError(f"{self.kind} backend {name!r} is registered already ({self._refs[name]})")
            self._refs[name] = factory
        else:
            if name in self._loaded and self._loaded[name] is not factory:
                raise ValueError(f"{self.kind} backend {name!r} is registered already")
            self._loaded[name] = factory

    def _read_entry_points(self) -> None:
        if self._entry_points_read:
            return
        self._entry_points_read = True
        for ep in entry_points(group=self.group):
            if ep.name not in self._refs and ep.name not in self._loaded:
                self._refs[ep.name] = ep.value

    def names(self) -> list[str]:
        """Every registered name (built-in and entry points), sorted."""
        self._read_entry_points()
        return sorted(set(self._refs) | set(self._loaded))

    def names_in_order(self) -> list[str]:
        """Every registered name in registration order (built-ins, then entry points, then names
        registered with a factory object): the order meters run in."""
        self._read_entry_points()
        return list(dict.fromkeys([*self._refs, *self._loaded]))

    def unregister(self, name: str) -> None:
        """Forget ``name`` (a test's own backend, registered for the test). Unknown names are ignored."""
        self._refs.pop(name, None)
        self._loaded.pop(name, None)

    def get(self, name: str) -> F:
        """The factory registered as ``name``. Raises ConfigError naming the known backends for an
        unknown name, or the module at fault when a registered one cannot be imported."""
        if name in self._loaded:
            return self._loaded[name]
        self._read_entry_points()
        ref = self._refs.get(name)
        if ref is None:
            raise ConfigError(f"unknown {self.kind} {name!r} (known: {', '.join(self.names()) or 'none'})")
        module, _, attr = ref.partition(":")
        try:
            obj = importlib.import_module(module)
            for part in attr.split(".") if attr else []:
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as e:
            raise ConfigError(f"{self.kind} {name!r} ({ref}) cannot be loaded: {e}") from None
        self._loaded[name] = obj  # type: ignore[assignment]
        return obj  # type: ignore[return-value]


#: Executors: ``factory(node: str, **settings) -> Executor``.
executors: Registry[Callable[..., object]] = Registry("executor")
executors.register("netns", "qoslab.executors.local:NetnsExecutor")
executors.register("local", "qoslab.executors.local:LocalExecutor")
executors.register("ssh", "qoslab.executors.ssh:SshExecutor")
executors.register("slurm", "qoslab.executors.slurm:SlurmExecutor")

#: Traffic generators: ``factory(defn, topology, executor_of, out_dir, **options) -> TrafficGenerator``.
generators: Registry[Callable[..., object]] = Registry("generator")
generators.register("ditg", "qoslab.trafficgen.ditg:DitgGenerator")
generators.register("iperf3", "qoslab.trafficgen.iperf3:Iperf3Generator")

#: Switch devices: ``factory(topology, spec) -> SwitchDevice``.
switches: Registry[Callable[..., object]] = Registry("switch")
switches.register("virtual", "qoslab.switch.backends:VirtualSwitch")
switches.register("catalyst", "qoslab.switch.backends:CatalystSwitch")

#: Switch platforms: ``factory() -> qoslab.platforms.Platform`` (render, QoS lines, counters, dialect);
#: a topology's ``switch.model`` or a device file's ``platform:`` names one.
platforms: Registry[Callable[..., object]] = Registry("platform")
platforms.register("catalyst3750", "qoslab.platforms.catalyst3750:Catalyst3750")
platforms.register("catalyst9300", "qoslab.platforms.catalyst9300:Catalyst9300")
platforms.register("arista_eos", "qoslab.platforms.arista_eos:AristaEos")

#: Device-file ``platform:`` values of earlier releases (Netmiko device types) -> platform names.
PLATFORM_ALIASES = {"cisco_ios": "catalyst3750", "cisco_xe": "catalyst9300"}


def platform_of_model(model: str) -> str | None:
    """The platform a switch model means: a registered platform's name or alias as it is, else
    the platform whose ``model_prefixes`` (a class attribute of its factory, upper case) start
    ``model`` (``WS-C3750G-24T`` -> ``catalyst3750``, ``C9300-24T`` -> ``catalyst9300``); None
    when no registered platform claims it (``Nexus9000``). Imports the platforms' modules."""
    if model in platforms.names():
        return model
    if model in PLATFORM_ALIASES:
        return PLATFORM_ALIASES[model]
    for name in platforms.names():
        if any(model.upper().startswith(p) for p in getattr(platforms.get(name), "model_prefixes", ())):
            return name
    return None


def model_serves_eapi(model: str) -> bool:
    """True when the switch ``model``'s platform speaks eAPI (its virtual dialect's ``eapi``: EOS);
    imports that platform's and dialect's modules."""
    plat = platform_of_model(model)
    dialect = getattr(platforms.get(plat), "dialect", None) if plat is not None else None
    return isinstance(dialect, str) and bool(getattr(dialects.get(dialect), "eapi", False))


def claimed_model(model: str) -> str:
    """``model`` when a registered platform claims it (:func:`platform_of_model`), else ValueError
    naming the platforms: profiles render and meters read for a platform, so a switch model none
    drives (``Nexus9000``) would be accepted and then mean nothing."""
    if platform_of_model(model) is None:
        raise ValueError(f"switch model {model!r}: no platform claims it (platforms: {', '.join(platforms.names())}; "
                         "e.g. WS-C3750G-24T, C9300-24T)")
    return model


#: A topology's ``switch.model``: a string some registered platform claims.
PlatformModel = Annotated[str, AfterValidator(claimed_model)]

#: Virtual switch dialects: ``factory() -> qoslab.vswitch.dialects.Dialect`` (one platform's CLI
#: on the virtual switch: EXEC table, show outputs, prompts, grammar, SSH algorithms); a platform's
#: ``dialect`` names one, the topology's ``switch.model`` picks it.
dialects: Registry[Callable[..., object]] = Registry("dialect")
dialects.register("c3750", "qoslab.vswitch.dialects.catalyst3750:Catalyst3750")
dialects.register("c9300", "qoslab.vswitch.dialects.catalyst9300:Catalyst9300")
dialects.register("eos", "qoslab.vswitch.dialects.eos:Eos")

#: Per-trial meters: ``factory(ctx: TrialContext) -> Meter``; every registered meter runs in every
#: trial, in registration order, and its ``COLUMNS`` become store columns.
meters: Registry[Callable[..., object]] = Registry("meter")
meters.register("switch", "qoslab.meters.switch:SwitchMeter")
meters.register("cpu", "qoslab.meters.cpu:CpuMeter")
meters.register("capture", "qoslab.meters.drops:CaptureDropsMeter")
meters.register("fidelity", "qoslab.meters.fidelity:FidelityMeter")
meters.register("calls", "qoslab.meters.calls:CallMeter")
meters.register("rtt", "qoslab.meters.rtt:RttMeter")

#: Workloads: ``factory() -> Workload``; a playbook's ``workload: {kind: NAME, ...}`` names one.
workloads: Registry[Callable[..., object]] = Registry("workload")
workloads.register("raytracer", "qoslab.workloads.raytracer:Raytracer")
workloads.register("matmul", "qoslab.workloads.matmul:Matmul")
workloads.register("pingpong", "qoslab.workloads.pingpong:Pingpong")
workloads.register("sort", "qoslab.workloads.sort:Sort")
workloads.register("mpj", "qoslab.workloads.mpj:Mpj")
workloads.register("command", "qoslab.workloads.command:Command")
workloads.register("mpi", "qoslab.workloads.mpi:Mpi")
