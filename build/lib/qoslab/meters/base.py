"""Per-trial measurement as plug-ins: the :class:`Meter` protocol, the trial's view a meter gets
(:class:`TrialContext`), :class:`BaseMeter`, and :class:`MeterSet`, which runs every registered
meter through a trial's phases. The built-in meters live beside this module, each with the code
that computes its columns.

A trial (:func:`qoslab.campaign.trial.run_trial`) calls, in this order::

    begin(ctx)         after the switch push, before capture and flood start
    traffic_begin(ctx) optional: the capture runs, no trial traffic yet (flood, workload)
    window_begin(ctx)  every worker listens and the manager JVM is about to start
                       (ctx.workers and ctx.flood are set)
    window_end(ctx)    the manager has exited (ctx.result is set)
    traffic_end(ctx)   optional: flood and workload have stopped and the flood's packets have left
                       the queues; the flood's receivers may still be decoding (ctx.flood_result
                       not set yet) and the capture stopping (called from a thread other than
                       the trial's)
    end(ctx)           flood and capture have stopped (ctx.flood_result, ctx.capture_summary set)
    columns(ctx)       -> the meter's store columns for the trial row
    close()            always, also after a failed trial (idempotent)

A meter declares its store columns in the class attribute ``COLUMNS`` (name -> SQLite type:
``REAL``, ``INTEGER`` or ``TEXT``); the store (:mod:`qoslab.trials.store`) adds them to ``trials`` when a
campaign folder is opened, so adding a meter is one module and one registration::

    from qoslab.registry import meters
    meters.register("mymeter", "mypkg.mymeter:MyMeter")        # or an entry point in "qoslab.meters"

A meter must never fail a trial: an exception in a hook is caught by :class:`MeterSet`, logged,
and the meter's columns are left NULL for that trial (its ``error`` names the hook). Meters run
in registration order (built-ins: ``switch``, ``cpu``, ``capture``, ``fidelity``, ``calls``, ``rtt``).

Built-in meters (their column definitions live with the code that computes them):

- ``switch`` (:class:`qoslab.meters.switch.SwitchMeter`): the switch's QoS counters of the trial's
  ports before/after (:mod:`.evidence`, columns ``switch_json``, ``switch_drops_q1..q4``, ``switch_policer_out``),
  read in the background: 'before' while the capture starts (complete at ``traffic_begin``),
  'after' while the capture stops (from ``traffic_end``);
- ``cpu`` (:class:`qoslab.meters.cpu.CpuMeter`): CPU time of flood, workers, forwarding and other load over the
  workload window (:mod:`.cpu`, columns ``cpu_*``); NULL off the embedded testbed;
- ``capture`` (:class:`qoslab.meters.drops.CaptureDropsMeter`): the live capture's packet accounting (:mod:`.drops`,
  columns ``capture_*``); NULL for trials without a capture;
- ``fidelity`` (:class:`qoslab.meters.fidelity.FidelityMeter`): whether the trial was emulated
  faithfully (CPU headroom, bottleneck departure rate, flood rate; columns ``fidelity*``);
- ``rtt`` (:class:`qoslab.meters.rtt.RttMeter`): the base RTT from the workload's first host to its
  second, pinged before the capture in the baseline condition's trials (:mod:`.rtt`, columns ``base_rtt_*``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable


@dataclass
class TrialContext:
    """What a meter sees of one trial. Set by the trial as it goes (see the module doc for when):

    - ``condition`` (name), ``congestion`` (whether the flood runs), ``trial_dir`` (its artifacts);
    - ``local``: the trial's processes run on this machine (the embedded testbed), so /proc,
      tc and nftables describe them;
    - ``switch``: the :class:`qoslab.switch.backends.SwitchDevice`; ``ports``: the switch ports
      (short names) of the workload's and the flood's hosts, in topology order;
    - ``flood``: the running traffic generator (None without congestion); ``workers``: ``{host:
      BackgroundProcess}`` of the worker JVMs; ``result``: the workload's result dict;
      ``flood_result``: the generator's FloodResult; ``drained``: whether the flood's packets
      left the queues after its senders stopped (None: not waited for, no flood or no testbed);
      ``capture_summary``: the capture's summary.json as a dict (None without a capture);
    - ``log``: a callback for one line of campaign log;
    - ``topology`` (:class:`qoslab.topology.Topology`) and ``playbook``
      (:class:`qoslab.trials.playbook.Playbook`) of the campaign (None when not given), for
      meters that need the link rate, the testbed's names or their own playbook settings;
    - ``plan``: the trial's :class:`qoslab.campaign.trialplan.TrialPlan` (hosts, ports, workload
      settings) and ``executor_of``: host name -> its :class:`qoslab.executors.Executor`, for
      meters that run a command on a node (None when not given).
    """

    condition: str
    congestion: bool
    trial_dir: Path
    local: bool
    switch: Any
    ports: list[str]
    flood: Any = None
    workers: Mapping[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)
    flood_result: Any = None
    drained: bool | None = None
    capture_summary: dict[str, Any] | None = None
    log: Callable[[str], None] = lambda s: None
    topology: Any = None
    playbook: Any = None
    plan: Any = None
    executor_of: Callable[[str], Any] | None = None


@runtime_checkable
class Meter(Protocol):
    """A per-trial measurement (see the module doc for the order of calls). ``COLUMNS``: the
    store columns it fills (name -> SQLite type). Hooks may raise; :class:`MeterSet` contains it."""

    COLUMNS: ClassVar[Mapping[str, str]]

    def begin(self, ctx: TrialContext) -> None: ...
    def window_begin(self, ctx: TrialContext) -> None: ...
    def window_end(self, ctx: TrialContext) -> None: ...
    def end(self, ctx: TrialContext) -> None: ...
    def columns(self, ctx: TrialContext) -> dict[str, Any]: ...
    def close(self) -> None: ...


class BaseMeter:
    """Convenience base: every hook does nothing; a meter overrides what it needs."""

    COLUMNS: ClassVar[Mapping[str, str]] = {}

    def __init__(self, ctx: TrialContext) -> None:
        self.ctx = ctx

    def begin(self, ctx: TrialContext) -> None:
        """After the push, before capture and flood."""

    def window_begin(self, ctx: TrialContext) -> None:
        """The workers listen; the manager is about to start."""

    def window_end(self, ctx: TrialContext) -> None:
        """The manager has exited."""

    def end(self, ctx: TrialContext) -> None:
        """Flood and capture have stopped."""

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        """The trial row's columns (every declared column; None for what was not measured)."""
        return dict.fromkeys(self.COLUMNS)

    def close(self) -> None:
        """Release threads and files (idempotent)."""


def meter_columns() -> dict[str, str]:
    """Store columns of every registered meter (name -> SQLite type), in registration order.
    Raises ConfigError when a registered meter cannot be loaded, ValueError when two meters
    declare one column with different types."""
    from qoslab.registry import meters

    out: dict[str, str] = {}
    for name in meters.names():
        for col, typ in getattr(meters.get(name), "COLUMNS", {}).items():
            if out.get(col, typ) != typ:
                raise ValueError(f"meter {name!r} declares column {col!r} as {typ}, another meter as {out[col]}")
            out[col] = typ
    return out


def _update(into: dict[str, Any], columns: Callable[[TrialContext], dict[str, Any]], ctx: TrialContext) -> None:
    into.update(columns(ctx))


class MeterSet:
    """Every registered meter of one trial, run through its phases; a hook that raises is logged
    and that meter's columns become NULL (``errors`` keeps ``meter.hook: message``). ``seconds``:
    wall time per meter (seconds, all hooks together), for the trial's ``phases_json``."""

    def __init__(self, ctx: TrialContext, names: list[str] | None = None) -> None:
        from qoslab.registry import meters

        self.ctx = ctx
        self.meters: dict[str, Meter] = {}
        self.failed: set[str] = set()
        self.errors: list[str] = []
        self.seconds: dict[str, float] = {}
        for name in names if names is not None else meters.names_in_order():
            self._guard(name, "create", partial(self._create, name, meters.get))

    def _create(self, name: str, factory_of: Callable[[str], Callable[..., object]]) -> None:
        meter = factory_of(name)(self.ctx)
        if not isinstance(meter, Meter):
            raise TypeError(f"{type(meter).__name__} is not a Meter (begin, window_begin, window_end, end, columns, "
                            "close, COLUMNS)")
        self.meters[name] = meter

    def _guard(self, name: str, hook: str, call: Callable[[], object]) -> None:
        t = time.monotonic()
        try:
            call()
        except Exception as e:  # noqa: BLE001 - a meter never fails a trial
            self.failed.add(name)
            self.errors.append(f"{name}.{hook}: {e}")
            self.ctx.log(f"meter {name} failed in {hook}: {e} (its columns stay NULL for this trial)")
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.monotonic() - t

    def _each(self, hook: str) -> None:
        for name, m in self.meters.items():
            if name not in self.failed and callable(getattr(m, hook, None)):  # traffic_* are optional
                self._guard(name, hook, partial(getattr(m, hook), self.ctx))

    def begin(self) -> None:
        """Every meter's ``begin``."""
        self._each("begin")

    def traffic_begin(self) -> None:
        """Every meter's ``traffic_begin`` (where it has one)."""
        self._each("traffic_begin")

    def traffic_end(self) -> None:
        """Every meter's ``traffic_end`` (where it has one)."""
        self._each("traffic_end")

    def window_begin(self) -> None:
        """Every meter's ``window_begin``."""
        self._each("window_begin")

    def window_end(self) -> None:
        """Every meter's ``window_end``."""
        self._each("window_end")

    def end(self) -> None:
        """Every meter's ``end``."""
        self._each("end")

    def close(self) -> None:
        """Every meter's ``close`` (also the failed ones'; errors logged)."""
        for name, m in self.meters.items():
            self._guard(name, "close", m.close)

    def columns(self) -> dict[str, Any]:
        """The trial row's columns of every meter: each declared column, NULL for a failed meter's
        and for keys a meter returned but did not declare (those are logged)."""
        out: dict[str, Any] = {}
        for name, m in self.meters.items():
            declared = type(m).COLUMNS
            vals: dict[str, Any] = {}
            if name not in self.failed:
                self._guard(name, "columns", partial(_update, vals, m.columns, self.ctx))
            extra = set(vals) - set(declared)
            if extra:
                self.ctx.log(f"meter {name} returned undeclared columns {sorted(extra)}: left out")
            out.update({c: (vals.get(c) if name not in self.failed else None) for c in declared})
        return out
