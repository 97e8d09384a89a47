"""Runs a playbook's ``derive:`` rules on this machine before its trials (issue 48; the rules and
their constants: :mod:`qoslab.scale.onmachine`, docs/scale-model.md).

Each measurement is a small campaign of its own under the campaign folder's ``derive/`` (no
capture, no warm-up, seed 48), run and resumed like any campaign, so a kill during the derivation
loses at most the trial it cut (run the same command with the same ``--out`` again):

- ``derive/rx-cost/``: the playbook's congested conditions, ``rx_cost_trials`` each, on the
  playbook's topology: this machine's ``rx_cost_us`` (median of the trials the fidelity monitor
  judged ``ok``, or of all done trials when none was);
- ``derive/pilot-ssN/``: the baseline condition, ``pilot_trials`` trials at supersample N, on the
  topology with the derived host capacity (``derive/topology-pilot.yaml``, copied to the pilot
  campaign's own ``derive/topology.yaml``);
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
from pathlib import Path
from typing import Any

from ..errors import ConfigError, QoslabError
from ..scale.derive import RealCluster, load_real_cluster
from ..scale.onmachine import (
    choose_supersample,
    derive_scale,
    derived_topology,
    differences,
    host_cores,
    next_pilot,
    values,
)
from ..topology import load_topology
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
    capture, no warm-up; returns its done trials as {condition, elapsed_s, fidelity, rx_cost_us}."""
    if not (folder / "trials.sqlite").exists():
        sub = pb.model_copy(update={"warmup": 0, "capture": "off", "seed": SEED, "retries": 1, "derive": None,
                                    **update})
        create(sub, pb_path, folder).close()
    Runner(folder, log=log).run().close()
    with Store(folder / "trials.sqlite", readonly=True) as st:
        rows = st.trials(warmup=False)
        return [{"condition": r.condition, "elapsed_s": r.elapsed_s, "fidelity": r.get("fidelity"),
                 "rx_cost_us": r.get("rx_cost_us")} for r in rows if r.status == "done"]


def _rx_cost(rows: list[dict[str, Any]], folder: Path) -> float:
    ok = [r for r in rows if r["fidelity"] == "ok" and r["rx_cost_us"] is not None]
    use = ok or [r for r in rows if r["rx_cost_us"] is not None]
    if not use:
        raise QoslabError(f"{folder}: no congested trial measured rx_cost_us (see `qoslab campaign status {folder}`)")
    return round(float(statistics.median(r["rx_cost_us"] for r in use)), 3)


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
    ``derive/topology.yaml``, the derived supersample, no ``derive``) and the derivation's record.
    Raises ConfigError for a bad real cluster file, QoslabError when a rule cannot be met (no
    receive cost measured, even the smallest supersample too slow)."""
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
    rx = _rx_cost(rx_rows, work / "rx-cost")
    try:
        cores = host_cores(real, rate, rx, spec.max_host_cores)
    except ValueError as e:
        raise ConfigError(f"{spec.real}: {e}") from None
    log(f"derive (rule 2): rx_cost_us {rx:g} -> host_cores {cores:g}")
    pilot_topo = dump_yaml(derived_topology(data, cores))
    (work / "topology-pilot.yaml").write_text(pilot_topo)
    pilots: dict[int, list[float]] = {}
    bcond = [c for c in pb.conditions if c.name == base]
    while (ss := next_pilot(pilots, spec)) is not None:
        log(f"derive (rule 3): pilot at supersample {ss}, {spec.pilot_trials} uncongested trial(s)")
        wl = pb.workload.model_copy(update={"supersample": ss})
        pilot = work / f"pilot-ss{ss}"
        if not (pilot / "trials.sqlite").exists():  # a made pilot runs from its snapshot
            (pilot / DERIVED).mkdir(parents=True, exist_ok=True)
            (pilot / DERIVED / "topology.yaml").write_text(pilot_topo)
        rows = _measure(pb, pb_path, pilot, {"conditions": bcond, "baseline": base, "trials": spec.pilot_trials,
                                             "topology": f"{DERIVED}/topology.yaml", "workload": wl}, log)
        pilots[ss] = [r["elapsed_s"] for r in rows if r["elapsed_s"] is not None]
        if not pilots[ss]:
            raise QoslabError(f"{pilot}: no pilot trial finished")
        log(f"derive (rule 3): supersample {ss}: {statistics.mean(pilots[ss]):.3f} s")
    try:
        ss, t_unc = choose_supersample(pilots, spec.max_uncongested_s)
    except ValueError as e:
        raise QoslabError(f"{pb_path}: derive: {e}") from None
    d = derive_scale(real, rate, rx, round(t_unc, 3))
    final = derived_topology(data, cores, d)
    (work / "topology.yaml").write_text(dump_yaml(final))
    committed = values(data, getattr(pb.workload, "supersample", 1))
    derived = values(final, ss)
    record = {"rules": "docs/scale-model.md, thesis-faithful-cpu: the rules 2-4 (qoslab.scale.onmachine)",
              "real": spec.real, "spec": spec.model_dump(mode="json"), "link_rate_bps": rate,
              "rx_cost_us": rx, "rx_cost_trials": rx_rows, "pilots": pilots, "uncongested_s": round(t_unc, 3),
              "time_scale": d.time_scale, "derived": derived, "committed": committed,
              "differs": differences(committed, derived), "deviations": d.deviations,
              "machine": machine_facts(), "seconds": round(time.monotonic() - t0, 1)}
    (work / "derivation.json").write_text(json.dumps(record, indent=1) + "\n")
    return derived_playbook(pb, ss), record


def derived_playbook(pb: Playbook, supersample: int) -> Playbook:
    """``pb`` as its campaign runs it after the derivation: the topology ``derive/topology.yaml``
    (relative to the campaign folder, :func:`.snapshot.input_path`), the derived supersample, no
    ``derive`` block."""
    return pb.model_copy(update={"topology": f"{DERIVED}/topology.yaml", "derive": None,
                                 "workload": pb.workload.model_copy(update={"supersample": supersample})})


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
    out = [f"scale model derived on this machine: host_cores {v['host_cores']:g} (rx_cost_us "
           f"{record['rx_cost_us']:g}), supersample {v['supersample']} (uncongested {record['uncongested_s']:g} s), "
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
