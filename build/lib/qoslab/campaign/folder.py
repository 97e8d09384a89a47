"""A campaign folder: made once with its resolved playbook, a snapshot of its inputs, provenance
and schedule; every run of it (the first and each ``--resume``) adds a segment to the provenance.

The snapshot (``inputs/``: the topology, flood, QoS profile and device files as they were when
the campaign was made, byte for byte, with their SHA-256 in ``inputs/manifest.json``, beside the
hashes of the folder's playbook and of the workload's files: :mod:`.snapshot`) is what the
runner reads, so a resumed campaign never mixes in files edited in the working tree since; a run
checks all of it (:func:`check_folder`) before it writes anything.
"""

from __future__ import annotations

import calendar
import fcntl
import functools
import json
import os
import random
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError, QoslabError
from ..topology import repo_root
from ..trials.fsguard import check_entries
from ..trials.playbook import Playbook, schedule
from ..trials.store import Store
from ..yamlio import dump_yaml, load_model
from .snapshot import INPUTS, MANIFEST, take, verify

__all__ = ["INPUTS", "MANIFEST", "FolderLock", "check_folder", "create", "host_facts", "inputs", "live_run",
           "load_campaign_playbook", "process_commit", "provenance", "read_provenance", "record_preflight",
           "record_segment", "with_trials"]



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


@functools.cache
def process_commit() -> str:
    """The qoslab commit this process runs from (``+dirty`` when its working tree had changes),
    read from git once, at the first call: every campaign entry point calls it before its first
    derivation or trial (:func:`.onmachine.create_campaign`, :func:`create`, the runner), so each
    provenance segment names the code the run started with, not a commit made while it ran."""
    return _commit()


def host_facts() -> dict[str, Any]:
    """What a run's results depend on besides the inputs: qoslab commit (:func:`process_commit`),
    kernel, host name, CPUs and tool versions, and the time (UTC)."""
    return {
        "qoslab_commit": process_commit(),
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
    process_commit()  # the code this process started with, before anything is made
    if (out / "trials.sqlite").exists():
        raise QoslabError(f"{out} already holds a campaign: resume it with --resume {out}")
    if pb.derive is not None:  # its values are measured first (campaign.onmachine), never silently committed ones
        raise QoslabError(f"{pb_path}: a playbook with a derive: block runs through `qoslab campaign run` (which "
                          "derives its values here first); remove the block to run the committed values")
    if smoke and trials not in (None, 1):
        raise QoslabError(f"--smoke runs one trial per condition: give --trials 1 or no --trials (not {trials})")
    pb = with_trials(pb, None if smoke else trials)
    out.mkdir(parents=True, exist_ok=True)
    seed = pb.seed if pb.seed is not None else random.SystemRandom().randrange(2**31)
    pb = pb.model_copy(update={"seed": seed})
    (out / "playbook.yaml").write_text(dump_yaml(pb.model_dump(mode="json")))
    manifest = take(pb, pb_path, out)
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
    field) when it is missing, not a regular file (a FIFO is never opened) or invalid."""
    path = folder / "playbook.yaml"
    if path.exists() and not path.is_file():
        raise ConfigError(f"{path}: not a regular file (a FIFO, device or folder is not a playbook)")
    return load_model(path, Playbook)


def inputs(folder: Path, workload_files: bool = True) -> dict[str, Any] | None:
    """The folder's input snapshot manifest, every copy (and with ``workload_files`` every
    workload file) checked (:func:`.snapshot.verify`), or None for a campaign made by an older
    qoslab (no snapshot: its inputs are read from the working tree). Reads only. Raises
    ConfigError naming the file when one is missing or was changed since, or the manifest is broken."""
    return verify(folder, workload_files)


def check_folder(folder: Path) -> tuple[Playbook, dict[str, Any] | None]:
    """Everything a run of the campaign in ``folder`` checks before it writes a byte (issue 45):
    every entry in it is a regular file or folder (no symbolic link, pipe or device: a run's
    writes stay inside it, :func:`.fsguard.check_entries`), its store is a qoslab campaign store
    (opened read-only), its playbook loads, every input is
    what the snapshot holds (:func:`inputs`), its provenance is readable (:func:`read_provenance`),
    and the store's conditions are the playbook's.
    Returns (playbook, manifest or None). Raises QoslabError (ConfigError naming the file) with
    the folder unchanged."""
    db = folder / "trials.sqlite"
    if not db.exists() and not db.is_symlink():
        raise QoslabError(f"{folder} holds no campaign (no trials.sqlite)")
    with Store(db, readonly=True) as st:
        scheduled = st.conditions()
    pb = load_campaign_playbook(folder)
    read_provenance(folder)  # a run adds its segment to it: a broken one is refused, not overwritten
    manifest = inputs(folder)
    names = [c.name for c in pb.conditions]
    odd = [c for c in scheduled if c not in names] or [c for c in names if c not in scheduled]
    if odd:
        where = "the store's schedule" if odd[0] in scheduled else "the playbook"
        raise ConfigError(f"{folder / 'playbook.yaml'}: conditions: {odd[0][:80]!r} is only in {where} (store: "
                          f"{', '.join(scheduled)[:200]}); the folder's playbook is not the one its trials were "
                          "scheduled from")
    check_entries(folder)  # and every other file a run writes a regular file inside the folder (issue 50)
    return pb, manifest


#: The provenance fields a report reads (the notebook's header line).
PROVENANCE_FIELDS = {"seed": int, "qoslab_commit": str, "kernel": str}


def read_provenance(folder: Path) -> dict[str, Any]:
    """The folder's provenance.json, checked for what a report reads (:data:`PROVENANCE_FIELDS`).
    Reads a regular file only. Raises ConfigError naming the file and the field."""
    path = folder / "provenance.json"
    if not path.is_file():
        raise ConfigError(f"{path}: missing or not a regular file (every campaign folder has its provenance)")
    try:
        prov = json.loads(path.read_bytes()[:1 << 22])
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: not readable JSON: {str(e)[:200]}") from None
    if not isinstance(prov, dict):
        raise ConfigError(f"{path}: (top level): a JSON object, not {type(prov).__name__}")
    for key, typ in PROVENANCE_FIELDS.items():
        if not isinstance(prov.get(key), typ) or isinstance(prov.get(key), bool):
            raise ConfigError(f"{path}: {key}: missing or not a {typ.__name__}")
    return prov


def _started_at(pid: int) -> float | None:
    """Unix time at which process ``pid`` started (/proc/PID/stat's starttime after /proc/stat's
    btime, to the clock tick), None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        ticks = int(stat[stat.rindex(")") + 2:].split()[19])  # field 22, counted from the state (field 3)
        btime = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                     if line.startswith("btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return btime + ticks / os.sysconf("SC_CLK_TCK")


def live_run(folder: Path) -> int | None:
    """The PID of a run of the campaign in ``folder`` that is still alive, else None: the last run
    segment's ``pid`` when that process exists, runs qoslab and started no later than the segment
    was recorded (a later process that reused the PID is not the run; 2 s for the segment time's
    whole seconds). A killed run leaves its trial ``running`` in the store: this tells the two apart."""
    try:
        prov = json.loads((folder / "provenance.json").read_bytes()[:1 << 22]) \
            if (folder / "provenance.json").is_file() else {}
        seg = prov["segments"][-1]
        pid, when = int(seg["pid"]), calendar.timegm(time.strptime(seg["time"], "%Y-%m-%dT%H:%M:%SZ"))
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    started = _started_at(pid)
    return pid if started is not None and started <= when + 2 and b"qoslab" in cmd else None


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
    record_segment_fact(folder, "preflight", report)


def record_segment_fact(folder: Path, key: str, value: Any) -> None:
    """Put ``value`` (JSON-able) under ``key`` into the last run segment of the folder's
    provenance.json (a folder without segments gets one)."""
    path = folder / "provenance.json"
    try:
        prov = json.loads(path.read_text())
    except (OSError, ValueError):
        prov = {}
    segments = prov.setdefault("segments", [])
    if not segments:
        segments.append({"pid": os.getpid()})
    segments[-1][key] = value
    _write_json(path, prov)


class FolderLock:
    """The exclusive lock of one campaign folder for a run: ``flock`` on the folder's own directory
    (no file is written, so taking it writes nothing into a folder that may still be refused; the
    kernel drops it when the process ends, even after SIGKILL). Held from before the run's first
    write (the store's open, which may migrate it on a copy) to its end, so two runs of one folder
    never migrate, resume or write it at once. The lock is per process, as POSIX record locks are:
    a second ``FolderLock`` of the same folder in the same process shares it (counted), another
    process is refused. Raises QoslabError naming the folder when another process holds it; a file
    system that cannot lock leaves :attr:`unsupported` set instead."""

    _held: dict[tuple[int, int], list[int]] = {}  # (st_dev, st_ino) -> [fd, holders] in this process
    _mutex = threading.Lock()

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        #: why the folder's file system took no lock (e.g. "No locks available" on an NFS mount
        #: without lockd), else None: the run goes on, two runs of the folder are not kept apart
        self.unsupported: str | None = None
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        st = os.fstat(fd)
        self._key: tuple[int, int] | None = (st.st_dev, st.st_ino)
        with self._mutex:
            if self._key in self._held:
                os.close(fd)
                self._held[self._key][1] += 1
                return
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                self._key = None
                raise QoslabError(f"campaign folder {folder} is in use by another run of it (wait for it to "
                                  f"end, or see `qoslab campaign status {folder}`)") from None
            except OSError as e:  # a file system without flock (some NFS mounts): run, unguarded, and say so
                self.unsupported = f"{e.strerror or e}"
            self._held[self._key] = [fd, 1]

    def release(self) -> None:
        """Drop this holder (idempotent); the lock goes with the process's last holder."""
        with self._mutex:
            if self._key is None:
                return
            entry = self._held[self._key]
            entry[1] -= 1
            if entry[1] == 0:
                os.close(entry[0])
                del self._held[self._key]
            self._key = None
