"""Runs a playbook's ``derive:`` rules on this machine before its trials (issue 48; the rules and
their constants: :mod:`qoslab.scale.onmachine`, docs/scale-model.md).

Each measurement is a small campaign of its own under the campaign folder's ``derive/`` (no
capture, no warm-up, seed 48), run and resumed like any campaign, so a kill during the derivation
loses at most the trial it cut (run the same command with the same ``--out`` again):

- ``derive/rx-cost/``: the playbook's congested conditions, ``rx_cost_trials`` each, on the
  playbook's topology: this machine's ``rx_cost_us`` (median of the trials the fidelity monitor
  judged ``ok``, or of all done trials when none was);
- ``derive/rx-share-K/`` (rule 2b, ``rx_share_tolerance`` given): the same congested trials on the
  topology with the K-th capacity the rule derived (``derive/topology.yaml`` of that campaign):
  the flooded hosts' receive CPU share there (median ``rx_cpu_share``, the same choice of trials);
- ``derive/pilot-ssN/``: the baseline condition, ``pilot_trials`` trials at supersample N, on the
  topology with the derived host capacity (``derive/topology-pilot.yaml``, copied to the pilot
  campaign's own ``derive/topology.yaml``); under rule 3b (``network_share`` given)
  ``derive/pilot-raysN/`` at N rays per pixel, each trial's bytes read from its
  ``trials/NNNN/workload/workload-result.json`` (the manager's ``bytes_sent`` + ``bytes_received``);
- ``derive/topology.yaml``: the topology the campaign then runs (host capacity and scale knobs
  derived), and ``derive/derivation.json``: the measurements, the values, the committed values
  they replace and which differ; the same record goes into the campaign's ``provenance.json``
  (key ``derivation``).

The derived playbooks (the campaign's and each pilot's ``playbook.yaml``) name their topology
``derive/topology.yaml``, relative to their own folder (:func:`.snapshot.input_path`), never by
the absolute path of the folder they were made in: a campaign folder moved or committed elsewhere
keeps a playbook that names its own files, with the SHA-256 its snapshot recorded.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, QoslabError
from ..scale.derive import RealCluster, load_real_cluster, target_rx_share
from ..scale.onmachine import (
    DeriveSpec,
    Pilot,
    choose_host_cores,
    choose_rays,
    choose_supersample,
    derive_scale,
    derived_topology,
    differences,
    host_cores,
    next_host_cores,
    next_pilot,
    next_rays,
    pilot_share,
    share_held,
    values,
)
from ..topology import load_topology
from ..trials.layout import workload_result
from ..trials.playbook import Playbook, resolve_path
from ..trials.store import Store
from ..yamlio import dump_yaml, read_yaml
from .folder import create, process_commit
from .linkcal import machine_facts
from .runner import Runner
from .snapshot import DERIVED

#: The seed of the derivation's own campaigns (the issue's number: fixed before any of them ran).
SEED = 48


def _measure(pb: Playbook, pb_path: Path, folder: Path, update: dict[str, Any],
             log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Run (or resume) one measuring campaign in ``folder``: ``pb`` with ``update`` applied, no
    capture, no warm-up; returns its done trials as {condition, elapsed_s, fidelity, rx_cost_us,
    rx_cpu_share, run_bytes} (run_bytes: the manager's RMI socket bytes, both directions; None without a result)."""
    if not (folder / "trials.sqlite").exists():
        sub = pb.model_copy(update={"warmup": 0, "capture": "off", "seed": SEED, "retries": 1, "derive": None,
                                    **update})
        create(sub, pb_path, folder).close()
    Runner(folder, log=log).run().close()
    with Store(folder / "trials.sqlite", readonly=True) as st:
        rows = st.trials(warmup=False)
        return [{"condition": r.condition, "elapsed_s": r.elapsed_s, "fidelity": r.get("fidelity"),
                 "rx_cost_us": r.get("rx_cost_us"), "rx_cpu_share": r.get("rx_cpu_share"),
                 "run_bytes": _run_bytes(folder, r.idx)}
                for r in rows if r.status == "done"]


def _run_bytes(folder: Path, idx: int) -> int | None:
    """The manager's RMI bytes of trial ``idx`` (``bytes_sent`` + ``bytes_received`` of its
    workload-result.json), or None when the file or the counts are missing."""
    try:
        res = json.loads(workload_result(folder, idx).read_text())
        return int(res["bytes_sent"]) + int(res["bytes_received"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _median(rows: list[dict[str, Any]], folder: Path, key: str = "rx_cost_us", digits: int = 3) -> float:
    """The median ``key`` of the trials judged ``ok`` (of all done trials that have it when none
    was), rounded to ``digits``. Raises QoslabError naming ``folder`` when no trial has it."""
    ok = [r for r in rows if r["fidelity"] == "ok" and r[key] is not None]
    use = ok or [r for r in rows if r[key] is not None]
    if not use:
        raise QoslabError(f"{folder}: no congested trial measured {key} (see `qoslab campaign status {folder}`)")
    return round(float(statistics.median(r[key] for r in use)), digits)


def read_inputs(pb: Playbook) -> tuple[RealCluster, dict[str, Any], int]:
    """What the rules start from: the real cluster of ``pb.derive``, the topology file's plain data
    and its link rate (bits/s, as the topology model reads it: ``50Mbit`` or ``50000000``)."""
    assert pb.derive is not None
    data, _ = read_yaml(resolve_path(pb.topology))
    return load_real_cluster(resolve_path(pb.derive.real)), data, load_topology(resolve_path(pb.topology)).link.rate


def derive_on_machine(pb: Playbook, pb_path: Path, folder: Path,
                      log: Callable[[str], None] = lambda s: None) -> tuple[Playbook, dict[str, Any]]:
    """Apply ``pb.derive``'s rules on this machine in the campaign folder's ``derive/`` (see the
    module doc); returns the playbook to run (:func:`derived_playbook`: its topology
    ``derive/topology.yaml``, the derived supersample or rays per pixel, no ``derive``) and the
    derivation's record. Raises ConfigError for a bad real cluster file, QoslabError when a rule
    cannot be met (no receive cost measured, even the smallest workload too slow, a pilot without
    byte counts under rule 3b)."""
    spec = pb.derive
    if spec is None:
        raise QoslabError(f"{pb_path}: no derive: block")
    t0, work = time.monotonic(), folder / DERIVED
    real, data, rate = read_inputs(pb)
    work.mkdir(parents=True, exist_ok=True)
    congested = [c for c in pb.conditions if c.congestion]
    base = pb.baseline or pb.conditions[0].name
    log(f"derive (rule 2): this machine's receive cost, {spec.rx_cost_trials} congested trial(s) per condition")
    rx_rows = _measure(pb, pb_path, work / "rx-cost", {"conditions": congested, "baseline": congested[0].name,
                                                       "trials": spec.rx_cost_trials}, log)
    rx = _median(rx_rows, work / "rx-cost")
    try:
        cores = host_cores(real, rate, rx, spec.max_host_cores)
    except ValueError as e:
        raise ConfigError(f"{spec.real}: {e}") from None
    held: dict[str, Any] = {}
    if spec.rx_share_tolerance is not None:
        log(f"derive (rule 2): rx_cost_us {rx:g} at the committed capacity -> host_cores {cores:g}")
        first = {"rule2_rx_cost_us": rx, "rule2_host_cores": cores}
        cores, rx, held = _rule2b(_Pilot(pb, pb_path, work, "", base, log), spec, real, data, cores, congested)
        held = {**first, **held}
    pilot_data = derived_topology(data, cores)
    period, was = pilot_data["cpu"].get("period_ms"), (data.get("cpu") or {}).get("period_ms")
    longer = f", period_ms {was or 'default'} -> {period:g} (a quota of at least the kernel's 1 ms)" \
        if period is not None and period != was else ""
    log(f"derive (rule {'2b' if held else '2'}): rx_cost_us {rx:g} -> host_cores {cores:g}{longer}")
    pilot_topo = dump_yaml(pilot_data)
    (work / "topology-pilot.yaml").write_text(pilot_topo)
    pilot = _Pilot(pb, pb_path, work, pilot_topo, base, log)
    choice = _rule3(pilot, spec, pb_path) if spec.network_share is None else _rule3b(pilot, spec, rate, pb_path)
    d = derive_scale(real, rate, rx, round(choice.t_unc, 3))
    final = derived_topology(data, cores, d)
    (work / "topology.yaml").write_text(dump_yaml(final))
    committed, derived = values(data, *choice.committed(pb.workload)), values(final, *choice.derived)
    t_unc, rules = choice.t_unc, choice.rules
    if held:  # "2-4" -> "2, 2b, 3-4"; "2, 3b, 4" -> "2, 2b, 3b, 4"
        rules = "2, 2b, " + rules.replace("2-4", "3-4").replace("2, ", "", 1)
    record = {"rules": f"docs/scale-model.md, thesis-faithful-cpu: the rules {rules} (qoslab.scale.onmachine)",
              "real": spec.real, "spec": spec.model_dump(mode="json"), "link_rate_bps": rate,
              "rx_cost_us": rx, "rx_cost_trials": rx_rows, **held, **choice.record, "uncongested_s": round(t_unc, 3),
              "time_scale": d.time_scale, "derived": derived, "committed": committed,
              "differs": differences(committed, derived),
              "deviations": d.deviations + held.get("deviations", []) + choice.deviations,
              "machine": machine_facts(), "seconds": round(time.monotonic() - t0, 1)}
    (work / "derivation.json").write_text(json.dumps(record, indent=1) + "\n")
    return derived_playbook(pb, **choice.update), record


@dataclass(frozen=True)
class _Choice:
    """What rule 3 or rule 3b chose: the workload's ``update`` (supersample, rays), T (``t_unc``,
    seconds: the chosen pilot's mean uncongested run time), the derivation record's keys of that
    rule, its deviations, the rules' label, and the (supersample, rays) of :func:`values` for the
    derived workload (``derived``) and for the playbook's committed one (:meth:`committed`)."""

    update: dict[str, Any]
    t_unc: float
    record: dict[str, Any]
    deviations: list[str]
    rules: str
    derived: tuple[int, ...]

    def committed(self, wl: Any) -> tuple[int, ...]:
        """(supersample,) under rule 3, (1, rays per pixel) under rule 3b, of the workload ``wl``."""
        if "rays" in self.update:
            return 1, getattr(wl, "rays_per_pixel", 1)
        return (getattr(wl, "supersample", 1),)


class _Pilot:
    """Runs (or resumes) one pilot campaign of the baseline condition under ``derive/NAME/``."""

    def __init__(self, pb: Playbook, pb_path: Path, work: Path, topo: str, base: str,
                 log: Callable[[str], None]):
        self.pb, self.pb_path, self.work, self.topo, self.base, self.log = pb, pb_path, work, topo, base, log
        self.trials = pb.derive.pilot_trials if pb.derive else 3

    def run(self, name: str, update: dict[str, Any], topo: str | None = None, conditions: list[Any] | None = None,
            trials: int | None = None) -> list[dict[str, Any]]:
        """The done trials (:func:`_measure`) of ``derive/NAME/``: the baseline condition (or
        ``conditions``, the first as its baseline) with the workload ``update``d, ``trials`` (or the
        pilot's) per condition, on the topology text ``topo`` (or the pilot's)."""
        folder = self.work / name
        if not (folder / "trials.sqlite").exists():  # a made pilot runs from its snapshot
            (folder / DERIVED).mkdir(parents=True, exist_ok=True)
            (folder / DERIVED / "topology.yaml").write_text(self.topo if topo is None else topo)
        conds = conditions or [c for c in self.pb.conditions if c.name == self.base]
        wl = self.pb.workload.model_copy(update=update)
        sub = {"conditions": conds, "baseline": conds[0].name, "trials": trials or self.trials,
               "topology": f"{DERIVED}/topology.yaml", "workload": wl}
        rows = _measure(self.pb, self.pb_path, folder, sub, self.log)
        rows = [r for r in rows if r["elapsed_s"] is not None]
        if not rows:
            raise QoslabError(f"{folder}: no pilot trial finished")
        return rows


def _rule2b(runner: _Pilot, spec: DeriveSpec, real: RealCluster, data: dict[str, Any], cores: float,
            congested: list[Any]) -> tuple[float, float, dict[str, Any]]:
    """Rule 2b (the receive share held): measure at ``cores``, step to :func:`next_host_cores`
    until the share holds, the step changes nothing or ``rx_share_rounds`` ran out; returns the
    chosen (cores, its rx_cost_us) and the record's ``rx_share_target``, ``rx_rounds`` and
    ``deviations``."""
    assert spec.rx_share_tolerance is not None
    target, tol = target_rx_share(real), spec.rx_share_tolerance
    rounds: list[dict[str, Any]] = []
    for k in range(1, spec.rx_share_rounds + 1):
        runner.log(f"derive (rule 2b): round {k}: {spec.rx_cost_trials} congested trial(s) per condition at "
                   f"{cores:g} cores")
        name = f"rx-share-{k}"
        rows = runner.run(name, {}, dump_yaml(derived_topology(data, cores)), congested, spec.rx_cost_trials)
        share = _median(rows, runner.work / name, "rx_cpu_share", 4)
        rounds.append({"host_cores": cores, "rx_cpu_share": share, "rx_cost_us": _median(rows, runner.work / name),
                       "trials": rows})
        runner.log(f"derive (rule 2b): {cores:g} cores: receive CPU share {share:g} (target {target:.4f}, "
                   f"within {tol:g} of it: {'yes' if share_held(share, target, tol) else 'no'})")
        try:
            nxt = next_host_cores(cores, share, target, spec.max_host_cores)
        except ValueError as e:  # a share of 0: the flood's receivers used no CPU (see the campaign's status)
            raise QoslabError(f"{runner.work / name}: {e}") from None
        if share_held(share, target, tol) or nxt == cores:
            break
        cores = nxt
    chosen, share = choose_host_cores([(r["host_cores"], r["rx_cpu_share"]) for r in rounds], target)
    dev = [] if share_held(share, target, tol) else [
        f"receive CPU share {share:g} at {chosen:g} cores, not within {tol:g} of the target {target:.4f} after "
        f"{len(rounds)} round(s) of rule 2b"]
    rx = next(r["rx_cost_us"] for r in rounds if r["host_cores"] == chosen)
    return chosen, rx, {"rx_share_target": round(target, 4), "rx_cpu_share": share, "rx_rounds": rounds,
                        "deviations": dev}


def _rule3(pilot: _Pilot, spec: DeriveSpec, pb_path: Path) -> _Choice:
    """Rule 3 (the time cap): the supersample, T and the record's ``pilots``."""
    pilots: dict[int, list[float]] = {}
    while (ss := next_pilot(pilots, spec)) is not None:
        pilot.log(f"derive (rule 3): pilot at supersample {ss}, {spec.pilot_trials} uncongested trial(s)")
        pilots[ss] = [r["elapsed_s"] for r in pilot.run(f"pilot-ss{ss}", {"supersample": ss})]
        pilot.log(f"derive (rule 3): supersample {ss}: {statistics.mean(pilots[ss]):.3f} s")
    try:
        ss, t_unc = choose_supersample(pilots, spec.max_uncongested_s)
    except ValueError as e:
        raise QoslabError(f"{pb_path}: derive: {e}") from None
    return _Choice({"supersample": ss}, t_unc, {"pilots": pilots}, [], "2-4", (ss,))


def _rule3b(pilot: _Pilot, spec: DeriveSpec, rate: int, pb_path: Path) -> _Choice:
    """Rule 3b (the network share): the rays per pixel, T, the record's ``pilots``,
    ``pilot_bytes``, ``pilot_shares``, ``target_network_share`` and ``network_share``, and the
    deviations (the target out of the candidates' reach)."""
    assert spec.network_share is not None
    pilots: dict[int, Pilot] = {}
    shares: dict[int, float] = {}
    while (n := next_rays(pilots, spec, rate)) is not None:
        pilot.log(f"derive (rule 3b): pilot at {n} ray(s) per pixel, {spec.pilot_trials} uncongested trial(s)")
        rows = pilot.run(f"pilot-rays{n}", {"rays": n, "supersample": 1})
        pilots[n] = ([r["elapsed_s"] for r in rows], [r["run_bytes"] for r in rows if r["run_bytes"] is not None])
        try:
            t, b, shares[n] = pilot_share(pilots[n], rate)
        except ValueError as e:
            raise QoslabError(f"{pilot.work / f'pilot-rays{n}'}: {e}") from None
        pilot.log(f"derive (rule 3b): {n} ray(s): {t:.3f} s, {b:.0f} B, network share {shares[n]:.5f} "
                  f"(target {spec.network_share:g})")
    try:
        rays, t_unc, share = choose_rays(pilots, rate, spec.network_share, spec.max_uncongested_s)
    except ValueError as e:
        raise QoslabError(f"{pb_path}: derive: {e}") from None
    dev = []
    if rays == spec.candidates[0] and share < spec.network_share:
        dev.append(f"network share {share:.5f} below the target {spec.network_share:g} even at {rays} ray(s) per pixel")
    elif rays == max(pilots) and share > spec.network_share:
        dev.append(f"network share {share:.5f} above the target {spec.network_share:g} at {rays} rays per pixel, the "
                   f"most the pilot ran (candidates or max_uncongested_s {spec.max_uncongested_s:g} s ran out)")
    record = {"pilots": {k: list(v[0]) for k, v in pilots.items()},
              "pilot_bytes": {k: list(v[1]) for k, v in pilots.items()},
              "pilot_shares": {k: round(v, 6) for k, v in shares.items()},
              "target_network_share": spec.network_share, "network_share": round(share, 6)}
    return _Choice({"rays": rays, "supersample": 1}, t_unc, record, dev, "2, 3b, 4", (1, rays))


def derived_playbook(pb: Playbook, supersample: int, rays: int | None = None) -> Playbook:
    """``pb`` as its campaign runs it after the derivation: the topology ``derive/topology.yaml``
    (relative to the campaign folder, :func:`.snapshot.input_path`), the derived supersample (rule
    3) or rays per pixel (rule 3b), no ``derive`` block."""
    return pb.model_copy(update={"topology": f"{DERIVED}/topology.yaml", "derive": None,
                                 "workload": pb.workload.model_copy(update={"supersample": supersample,
                                                                            "rays": rays})})


def attach(folder: Path, record: dict[str, Any]) -> None:
    """Add the derivation's record to ``folder``'s provenance.json (key ``derivation``)."""
    path = folder / "provenance.json"
    prov = json.loads(path.read_text())
    prov["derivation"] = record
    tmp = path.with_suffix(".json.new")
    tmp.write_text(json.dumps(prov, indent=1) + "\n")
    tmp.replace(path)


def summary_lines(record: dict[str, Any]) -> list[str]:
    """What the console prints first: the derived values, and which differ from the committed ones."""
    v = record["derived"]
    work = (f"supersample {v['supersample']}" if "supersample" in v else
            f"{v['rays']} ray(s) per pixel (network share {record['network_share']:.5f}, target "
            f"{record['target_network_share']:g})")
    held = (f", receive share {record['rx_cpu_share']:g} of {record['rx_share_target']:g} "
            f"after {len(record['rx_rounds'])} round(s)") if record.get("rx_rounds") else ""
    out = [f"scale model derived on this machine: host_cores {v['host_cores']:g} (rx_cost_us "
           f"{record['rx_cost_us']:g}{held}), {work} (uncongested {record['uncongested_s']:g} s), "
           f"rto_min {v['rto_min_ms']:g} ms, switch queue {v['switch_queue_ms']:g} ms, s = {record['time_scale']:.4g}"]
    if record["differs"]:
        out.append("DIFFERS from the playbook's committed values: " + "; ".join(record["differs"]))
    else:
        out.append("the same as the playbook's committed values (within 5 %)")
    return out


def create_campaign(pb: Playbook, pb_path: Path, folder: Path, trials: int | None, smoke: bool,
                    log: Callable[[str], None]) -> None:
    """Make the campaign folder (:func:`.folder.create`); with a ``derive:`` block, first derive the
    scale model on this machine into ``folder/derive`` (a smoke try-out skips it: the committed
    values) and record it in the provenance."""
    process_commit()  # read before the derivation's trials: what every segment of this process names
    if pb.derive is None or smoke:
        if pb.derive is not None:
            log("smoke: derive: skipped, the playbook's committed values run")
        create(pb.model_copy(update={"derive": None}), pb_path, folder, trials, smoke=smoke).close()
        return
    if (folder / "trials.sqlite").exists():
        raise QoslabError(f"{folder} already holds a campaign: resume it with --resume {folder}")
    run, record = derive_on_machine(pb, pb_path, folder, log)
    for line in summary_lines(record):
        log(line)
    create(run, pb_path, folder, trials).close()
    attach(folder, record)
