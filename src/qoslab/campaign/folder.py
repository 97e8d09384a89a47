"""A campaign folder: made once with its resolved playbook, provenance and schedule."""

from __future__ import annotations

import json
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from ..errors import QoslabError
from ..topology import repo_root
from .playbook import Playbook, schedule
from .store import Store


def _version(cmd: list[str]) -> str:
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return ((r.stdout or "") + (r.stderr or "")).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def provenance(seed: int) -> dict[str, Any]:
    """Tool versions, kernel, qoslab commit and the random seed of a campaign."""
    return {
        "seed": seed,
        "qoslab_commit": _version(["git", "-C", str(repo_root()), "rev-parse", "HEAD"]),
        "kernel": os.uname().release,
        "java": _version(["java", "-version"]),
        "d_itg": _version(["dpkg-query", "-W", "-f", "${Version}", "d-itg"]),
        "iperf3": _version(["iperf3", "--version"]),
        "iproute2": _version(["ip", "-V"]),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def with_trials(pb: Playbook, trials: int | None) -> Playbook:
    """``pb`` with another number of trials per condition, validated like the file's value.
    Raises QoslabError for a value the playbook would refuse."""
    if trials is None:
        return pb
    try:
        return Playbook.model_validate({**pb.model_dump(), "trials": trials})
    except ValidationError as e:
        raise QoslabError(f"--trials {trials}: {e.errors()[0]['msg']}") from None


def create(pb: Playbook, pb_path: Path, out: Path, trials: int | None = None) -> Store:
    """Make a new campaign folder with its schedule. Raises QoslabError if it already exists."""
    if (out / "trials.sqlite").exists():
        raise QoslabError(f"{out} already holds a campaign: resume it with --resume {out}")
    pb = with_trials(pb, trials)
    out.mkdir(parents=True, exist_ok=True)
    seed = pb.seed if pb.seed is not None else random.SystemRandom().randrange(2**31)
    pb = pb.model_copy(update={"seed": seed})
    (out / "playbook.yaml").write_text(yaml.safe_dump(pb.model_dump(mode="json"), sort_keys=False))
    (out / "provenance.json").write_text(json.dumps({**provenance(seed), "playbook": str(pb_path)}, indent=1))
    # the store appears complete or not at all: a kill during create leaves no half-made schedule
    tmp = out / "trials.sqlite.new"
    for side in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
        side.unlink(missing_ok=True)
    building = Store(tmp)
    building.init(schedule(pb, seed), {"name": pb.name, "seed": seed})
    building.close()
    tmp.replace(out / "trials.sqlite")
    return Store(out / "trials.sqlite")


def load_campaign_playbook(folder: Path) -> Playbook:
    """The resolved playbook a campaign folder was made with. Raises QoslabError when missing or invalid."""
    path = folder / "playbook.yaml"
    try:
        return Playbook.model_validate(yaml.safe_load(path.read_text()))
    except (OSError, yaml.YAMLError) as e:
        raise QoslabError(f"{path}: cannot read the campaign's playbook: {e}") from None
    except ValidationError as e:
        raise QoslabError(f"{path}: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from None
