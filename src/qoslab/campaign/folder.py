"""A campaign folder: made once with its resolved playbook, a snapshot of its inputs, provenance
and schedule; every run of it (the first and each ``--resume``) adds a segment to the provenance.

The snapshot (``inputs/``: the topology, flood, QoS profile and device files as they were when
the campaign was made, byte for byte, with their SHA-256 in ``inputs/manifest.json``) is what the
runner reads, so a resumed campaign never mixes in files edited in the working tree since.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError, QoslabError
from ..profiles import profile_path
from ..registry import switches
from ..topology import repo_root
from ..yamlio import dump_yaml, load_model
from .playbook import Playbook, resolve_path, schedule
from .store import Store

INPUTS = "inputs"
MANIFEST = "inputs/manifest.json"


def _version(cmd: list[str]) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return ((r.stdout or "") + (r.stderr or "")).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def _commit() -> str:
    """The qoslab commit this code runs from, ``+dirty`` when the working tree has changes."""
    head = _version(["git", "-C", str(repo_root()), "rev-parse", "HEAD"])
    try:
        r = subprocess.run(["git", "-C", str(repo_root()), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, timeout=20)
        dirty = bool(r.stdout.strip())
    except (OSError, subprocess.TimeoutExpired):
        dirty = False
    return head + ("+dirty" if dirty else "")


def host_facts() -> dict[str, Any]:
    """What a run's results depend on besides the inputs: qoslab commit, kernel, host name, CPUs
    and tool versions, and the time (UTC)."""
    return {
        "qoslab_commit": _commit(),
        "kernel": os.uname().release,
        "host": socket.gethostname(),
        "cpus": os.cpu_count(),
        "java": _version(["java", "-version"]),
        "d_itg": _version(["dpkg-query", "-W", "-f", "${Version}", "d-itg"]),
        "iperf3": _version(["iperf3", "--version"]),
        "iproute2": _version(["ip", "-V"]),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def provenance(seed: int) -> dict[str, Any]:
    """Tool versions, kernel, qoslab commit and the random seed of a campaign."""
    return {"seed": seed, **host_facts()}


def with_trials(pb: Playbook, trials: int | None) -> Playbook:
    """``pb`` with another number of trials per condition, validated like the file's value.
    Raises QoslabError for a value the playbook would refuse."""
    if trials is None:
        return pb
    try:
        return Playbook.model_validate({**pb.model_dump(), "trials": trials})
    except ValidationError as e:
        hint = " (one trial per condition gives no statistics: --smoke tries a campaign once)" if trials == 1 else ""
        raise QoslabError(f"--trials {trials}: {e.errors()[0]['msg']}{hint}") from None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _snapshot(pb: Playbook, out: Path) -> dict[str, Any]:
    """Copy the playbook's input files into ``out/inputs/``; returns the manifest (role -> {ref,
    file (relative to the campaign folder), sha256})."""
    d = out / INPUTS
    (d / "profiles").mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"profiles": {}}

    def take(ref: str, src: Path, rel: str) -> dict[str, str]:
        shutil.copyfile(src, out / rel)
        return {"ref": ref, "file": rel, "sha256": _sha256(out / rel)}

    manifest["topology"] = take(pb.topology, resolve_path(pb.topology), f"{INPUTS}/topology.yaml")
    floods = pb.floods()
    if floods:  # the playbook's own flood keeps its old place (inputs/flood.yaml); a factorial's in floods/
        manifest["floods"] = {}
        for i, ref in enumerate(floods):
            stem = re.sub(r"[^A-Za-z0-9._-]", "_", Path(ref).stem)[:40] or "flood"
            rel = f"{INPUTS}/flood.yaml" if ref == pb.flood else f"{INPUTS}/floods/{i:02d}-{stem}.yaml"
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            manifest["floods"][ref] = take(ref, resolve_path(ref), rel)
        if pb.flood in manifest["floods"]:
            manifest["flood"] = manifest["floods"][pb.flood]
    for c in pb.conditions:
        if c.profile not in manifest["profiles"]:
            stem = re.sub(r"[^A-Za-z0-9._-]", "_", Path(c.profile).stem)[:40] or "profile"
            rel = f"{INPUTS}/profiles/{len(manifest['profiles']):02d}-{stem}.yaml"
            manifest["profiles"][c.profile] = take(c.profile, profile_path(c.profile), rel)
    if pb.device not in switches.names() and pb.device != "testbed":
        manifest["device"] = take(pb.device, resolve_path(pb.device), f"{INPUTS}/device.yaml")
    return manifest


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def create(pb: Playbook, pb_path: Path, out: Path, trials: int | None = None, smoke: bool = False) -> Store:
    """Make a new campaign folder: the resolved playbook, the inputs' snapshot, provenance and
    the schedule (``trials.sqlite`` appears last, complete, so a kill while making the folder
    leaves none that looks like a campaign). ``smoke``: schedule one trial per condition and no
    warm-up (meta ``smoke``: a try-out without statistics; ``trials`` must then be 1 or None).
    Raises QoslabError if the folder already holds a campaign."""
    if (out / "trials.sqlite").exists():
        raise QoslabError(f"{out} already holds a campaign: resume it with --resume {out}")
    if smoke and trials not in (None, 1):
        raise QoslabError(f"--smoke runs one trial per condition: give --trials 1 or no --trials (not {trials})")
    pb = with_trials(pb, None if smoke else trials)
    out.mkdir(parents=True, exist_ok=True)
    seed = pb.seed if pb.seed is not None else random.SystemRandom().randrange(2**31)
    pb = pb.model_copy(update={"seed": seed})
    (out / "playbook.yaml").write_text(dump_yaml(pb.model_dump(mode="json")))
    manifest = _snapshot(pb, out)
    _write_json(out / MANIFEST, manifest)
    _write_json(out / "provenance.json", {**provenance(seed), "playbook": str(pb_path), "inputs": manifest,
                                          "segments": []})
    tmp = out / "trials.sqlite.new"  # with its -wal/-shm side files of a killed earlier attempt
    for stale in out.glob("trials.sqlite.new*"):
        stale.unlink()
    store = Store(tmp)
    plan = pb.model_copy(update={"trials": 1, "warmup": 0}) if smoke else pb
    store.init(schedule(plan, seed), {"name": pb.name, "seed": seed, **({"smoke": True} if smoke else {})})
    store.close()
    tmp.replace(out / "trials.sqlite")
    return Store(out / "trials.sqlite")


def load_campaign_playbook(folder: Path) -> Playbook:
    """The resolved playbook a campaign folder was made with. Raises ConfigError (file, line,
    field) when it is missing or invalid."""
    return load_model(folder / "playbook.yaml", Playbook)


def inputs(folder: Path) -> dict[str, Any] | None:
    """The folder's input snapshot manifest (see :func:`create`), or None for a campaign made by
    an older qoslab (no snapshot: its inputs are read from the working tree). Raises ConfigError
    when a snapshot file is missing or was changed since."""
    path = folder / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: unreadable input manifest: {e}") from None
    entries = [v for k, v in manifest.items() if k not in ("profiles", "floods")] + \
        list(manifest["profiles"].values()) + list(manifest.get("floods", {}).values())
    for entry in entries:
        f = folder / entry["file"]
        if not f.is_file() or _sha256(f) != entry["sha256"]:
            raise ConfigError(f"{f}: the campaign's snapshot of {entry['ref']} is missing or was changed since "
                              "the campaign was made")
    return manifest


def record_segment(folder: Path, note: dict[str, Any]) -> dict[str, Any]:
    """Append a run segment (host facts, this run's PID and ``note``) to the folder's
    provenance.json; returns the segment."""
    path = folder / "provenance.json"
    try:
        prov = json.loads(path.read_text())
    except (OSError, ValueError):
        prov = {}
    seg = {**host_facts(), "pid": os.getpid(), **note}
    prov.setdefault("segments", []).append(seg)
    _write_json(path, prov)
    return seg


def record_preflight(folder: Path, report: dict[str, Any]) -> None:
    """Put a pre-flight report (checks and per-node facts) into the last run segment of the
    folder's provenance.json (a folder without segments gets one)."""
    path = folder / "provenance.json"
    try:
        prov = json.loads(path.read_text())
    except (OSError, ValueError):
        prov = {}
    segments = prov.setdefault("segments", [])
    if not segments:
        segments.append({"pid": os.getpid()})
    segments[-1]["preflight"] = report
    _write_json(path, prov)
