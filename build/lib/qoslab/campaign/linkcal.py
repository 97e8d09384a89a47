"""The link rate chosen by measurement (``qoslab testbed calibrate PLAYBOOK``).

The embedded testbed is a scale model: the faster its links, the more of this machine's cores the
flood and its forwarding take, until the cores, not the links, are the bottleneck (docs/lab-notes.md,
"The CPU confound and the link rate"). Calibration runs the playbook's **congested** conditions
briefly (``trials`` each, no capture, no warm-up) on a topology variant at each rate of a ladder,
lowest first, and judges every trial with the fidelity monitor (:mod:`.fidelity`). The chosen
rate is the highest at which every trial was ``ok``; the ladder stops at the first rate that is
not (a faster link only costs more CPU). A trial invalid *only* because processes outside the
testbed took CPU (on a shared machine: someone's build) says nothing about the rate: it is
counted as ``contaminated`` and left out of the judgement, as long as every condition keeps an
``ok`` trial at that rate. It writes into its folder:

- ``rate-<RATE>/``: a campaign folder per rate tried (trials, fidelity columns, provenance);
- ``topology.yaml``: the playbook's topology at the chosen rate (name suffixed with the rate, as
  a sweep's variant, :func:`.sweep.variant_topology`); use it as the playbook's ``topology:``;
- ``calibration.json``: the machine's facts (cores, CPU model, memory, kernel), the settings and,
  per rate, each trial's verdict and fidelity numbers.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import QoslabError
from ..trials.playbook import resolve_path
from ..trials.store import Store, TrialRow
from ..yamlio import dump_yaml, read_yaml
from .checks import load_playbook
from .folder import create
from .runner import Runner
from .sweep import rate_label, variant_topology

#: The default ladder (bits/s): 10 to 200 Mbit/s (issue 33: with kernel-paced floods the flood no
#: longer busy-waits, so the ladder reaches past 100 Mbit/s; it stops at the first rate not ok).
DEFAULT_RATES = (10_000_000, 20_000_000, 50_000_000, 100_000_000, 200_000_000)
#: Per-trial numbers kept as evidence (fidelity columns).
EVIDENCE = ("fidelity_port_util", "fidelity_flood_ratio", "fidelity_pacing_error", "fidelity_outside_cores",
            "fidelity_idle_median", "fidelity_cpu_wait_share", "fidelity_emulation_share", "fidelity_psi_some",
            "fidelity_samples", "fidelity_host_cpu_loss", "host_cpu_use", "host_throttled", "rx_cpu_share",
            "rx_cost_us", "rx_socket_drops")


def machine_facts() -> dict[str, Any]:
    """Cores, CPU model, memory (GiB) and kernel of this machine."""
    model = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kib = next(int(x.split()[1]) for x in Path("/proc/meminfo").read_text().splitlines()
                       if x.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError):
        mem_kib = 0
    return {"nproc": os.cpu_count(), "cpu_model": model, "memory_gib": round(mem_kib / 2**20, 1),
            "kernel": platform.release(), "hostname": platform.node()}


def trial_evidence(r: TrialRow) -> dict[str, Any]:
    """One trial of a calibration rate: condition, status, render time, verdict, reasons, numbers."""
    return {"idx": r.idx, "condition": r.condition, "status": r.status, "elapsed_s": r.elapsed_s,
            "fidelity": r.get("fidelity"), "reasons": json.loads(r.get("fidelity_reasons") or "[]"),
            **{k.removeprefix("fidelity_"): r.get(k) for k in EVIDENCE}}


def contaminated(t: dict[str, Any]) -> bool:
    """A trial invalid only because processes outside the testbed took CPU (other users' work on a
    shared machine): evidence about that moment, not about the link rate. Pure."""
    return t["fidelity"] == "invalid" and {r.get("check") for r in t["reasons"]} == {"outside_cores"}


def rate_ok(trials: list[dict[str, Any]]) -> bool:
    """Every trial done, every trial not :func:`contaminated` judged ``ok``, and every condition
    with at least one ``ok`` trial. Pure."""
    if not trials or any(t["status"] != "done" for t in trials):
        return False
    if any(t["fidelity"] != "ok" and not contaminated(t) for t in trials):
        return False
    conditions = {t["condition"] for t in trials}
    return all(any(t["fidelity"] == "ok" for t in trials if t["condition"] == c) for c in conditions)


def _run_rate(playbook: Path, data: dict[str, Any], bps: int, out: Path, trials: int,
              log: Callable[[str], None]) -> dict[str, Any]:
    folder = out / f"rate-{rate_label(bps)}"
    t0 = time.monotonic()
    if not (folder / "trials.sqlite").exists():
        pb = load_playbook(playbook)
        congested = [c for c in pb.conditions if c.congestion]
        if not congested:
            raise QoslabError(f"{playbook}: no congested condition to calibrate with")
        folder.mkdir(parents=True, exist_ok=True)
        topo = folder / "topology.yaml"
        topo.write_text(dump_yaml(variant_topology(data, bps)))
        pb = pb.model_copy(update={"name": f"calibrate-{rate_label(bps)}", "topology": str(topo.resolve()),
                                   "conditions": congested, "baseline": congested[0].name, "trials": trials,
                                   "warmup": 0, "capture": "off", "seed": 25, "retries": 1,
                                   "derive": None})  # the rate first: a derive: block's rules run at it later
        create(pb, playbook, folder).close()
    Runner(folder, log=log).run().close()
    with Store(folder / "trials.sqlite", readonly=True) as st:
        rows = [trial_evidence(r) for r in st.trials(warmup=False)]
    return {"rate_bps": bps, "rate": rate_label(bps), "ok": rate_ok(rows),
            "contaminated": sum(1 for r in rows if contaminated(r)), "seconds": round(time.monotonic() - t0, 1),
            "verdicts": {v: sum(1 for r in rows if r["fidelity"] == v)
                         for v in ("ok", "degraded", "invalid", "unknown", None)}, "trials": rows}


def calibrate_link(playbook: Path, out: Path, rates: list[int] | None = None, trials: int = 2,
                   log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Run the ladder (see the module doc) and write ``topology.yaml`` and ``calibration.json``
    into ``out``; returns calibration.json's content (``chosen_rate_bps`` None when no rate was
    ok: then no topology is written). Raises QoslabError/ConfigError for a bad playbook."""
    t0 = time.monotonic()
    pb = load_playbook(playbook)
    data, _ = read_yaml(resolve_path(pb.topology))
    out.mkdir(parents=True, exist_ok=True)
    evidence: list[dict[str, Any]] = []
    for bps in sorted(rates or DEFAULT_RATES):
        log(f"calibrating at {rate_label(bps)}/s ...")
        ev = _run_rate(playbook, data, bps, out, trials, log)
        ev["verdicts"] = {str(k).lower(): v for k, v in ev["verdicts"].items()}
        evidence.append(ev)
        log(f"{rate_label(bps)}/s: {'ok' if ev['ok'] else 'NOT ok'} {ev['verdicts']} in {ev['seconds']:.0f} s")
        if not ev["ok"]:
            break
    ok = [e["rate_bps"] for e in evidence if e["ok"]]
    chosen = max(ok) if ok else None
    (out / "topology.yaml").unlink(missing_ok=True)
    if chosen is not None:
        topo = variant_topology(data, chosen)
        topo["description"] = f"{data.get('description', '')} [link rate chosen by `qoslab testbed calibrate` " \
                              f"on {machine_facts()['nproc']} cores: {rate_label(chosen)}/s]".strip()
        (out / "topology.yaml").write_text(dump_yaml(topo))
    result = {"playbook": str(playbook), "topology": pb.topology, "machine": machine_facts(),
              "trials_per_condition": trials, "rates_bps": sorted(rates or DEFAULT_RATES),
              "chosen_rate_bps": chosen, "chosen_rate": rate_label(chosen) if chosen else None,
              "topology_file": str(out / "topology.yaml") if chosen else None,
              "thresholds": pb.fidelity.model_dump(), "seconds": round(time.monotonic() - t0, 1),
              "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "evidence": evidence}
    (out / "calibration.json").write_text(json.dumps(result, indent=1) + "\n")
    return result
