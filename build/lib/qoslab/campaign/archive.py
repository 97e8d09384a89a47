"""``qoslab campaign archive``: the part of a campaign folder worth committing beside a paper or
in ``docs/results/``, copied to a new folder: what the report, the statistics and a re-check
(``qoslab report``, scipy on ``trials.sqlite``) need, without the packet captures, logs, switch
backups and rendered report (a 120-trial campaign: about 224 MB down to about 2 MB).

What is kept (:func:`plan`, pure): the store, playbook, provenance, input snapshot (``inputs/``,
whose SHA-256s must still hold: :func:`qoslab.campaign.snapshot.verify`), the statistics and
figures, the trial tables, a derivation's records (``derive/``: the derived topology, and each
step's playbook, provenance and store) and, for the trials with a capture, the call and flow
summaries (``trials/NNNN/capture/{calls.jsonl,summary.json,timeseries.csv}``,
``trials/NNNN/workload/{workload-calls.jsonl,workload-result.json}``). In each store, every
trial's fidelity record loses its per-interval port series (``ports``: the switch port's bytes,
backlog and drops per fidelity interval, the largest part of a store; the per-trial checks and
their verdicts stay) unless ``keep_port_series``. The source folder's absolute path in a copied
text file (a capture summary names its pcap) becomes relative to the folder.

Reads the source only, under its folder lock (:class:`.folder.FolderLock`: a running campaign is
refused, a finished one is not changed); writes ``DEST.partial`` and renames it to ``DEST`` once
whole, so a killed archive leaves no half-made ``DEST``. ``DEST`` must not exist.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import QoslabError
from ..trials.store import Store
from .folder import FolderLock, load_campaign_playbook, read_provenance
from .snapshot import verify

#: The campaign folder's own files kept (names or glob patterns, relative to the folder).
TOP = ("playbook.yaml", "provenance.json", "stats*.json", "calls-stats.json", "censoring.json", "figures.json",
       "fig-*.png", "trials.csv", "trials-network.csv")
#: A derivation's files kept (:mod:`.onmachine`): its record, its topologies, and per step folder.
DERIVE_TOP = ("derivation.json", "topology*.yaml")
DERIVE_STEP = ("playbook.yaml", "provenance.json", "trials.sqlite", "derive/topology.yaml")
#: A captured trial's summaries kept.
TRIAL_FILES = ("capture/calls.jsonl", "capture/summary.json", "capture/timeseries.csv",
               "workload/workload-calls.jsonl", "workload/workload-result.json")
#: Stores, copied through SQLite (:meth:`qoslab.trials.store.Store.backup_to`), not byte for byte.
STORES = ("trials.sqlite",)
#: Suffixes of the copied text files whose source-folder paths are made relative.
TEXT = (".json", ".jsonl", ".yaml", ".csv")
#: Largest text file rewritten in memory (bytes); a larger one is copied as is.
MAX_TEXT_BYTES = 64 << 20


@dataclass
class ArchiveReport:
    """What :func:`archive` did: ``files`` copied (relative paths), ``bytes_in`` of the source
    folder (every file), ``bytes_out`` of the archive, ``stripped`` trial rows whose port series
    went, ``relative`` files in which the source's path was made relative."""

    dest: Path
    files: list[str] = field(default_factory=list)
    bytes_in: int = 0
    bytes_out: int = 0
    stripped: int = 0
    relative: list[str] = field(default_factory=list)


def _glob(folder: Path, patterns: Iterable[str]) -> list[Path]:
    out: list[Path] = []
    for pat in patterns:
        out.extend(p for p in sorted(folder.glob(pat)) if p.is_file() and not p.is_symlink())
    return out


def plan(src: Path) -> list[str]:
    """The files of campaign folder ``src`` an archive copies, relative to it, in copy order
    (the module doc; ``trials.sqlite`` files included). Reads the folder's listing only."""
    files = _glob(src, (*TOP, *STORES))
    inputs = src / "inputs"
    if inputs.is_dir():
        files += [p for p in sorted(inputs.rglob("*")) if p.is_file() and not p.is_symlink()]
    derive = src / "derive"
    if derive.is_dir():
        files += _glob(derive, DERIVE_TOP)
        for step in sorted(d for d in derive.iterdir() if d.is_dir() and not d.is_symlink()):
            files += _glob(step, DERIVE_STEP)
    trials = src / "trials"
    if trials.is_dir():
        for tdir in sorted(d for d in trials.iterdir() if d.is_dir() and d.name.isdigit()):
            if (tdir / "capture").is_dir():
                files += _glob(tdir, TRIAL_FILES)
    return [p.relative_to(src).as_posix() for p in files]


def without_port_series(fidelity_json: str) -> str:
    """A trial's fidelity record (JSON text) without its ``ports`` series; other text unchanged
    (a record that is not a JSON object is kept as it is). Pure."""
    try:
        rec = json.loads(fidelity_json)
    except ValueError:
        return fidelity_json
    if not isinstance(rec, dict) or "ports" not in rec:
        return fidelity_json
    rec.pop("ports")
    return json.dumps(rec, sort_keys=True)


def relative_text(text: str, src: Path) -> str:
    """``text`` with the absolute path of ``src`` (and of its real location) cut to paths relative
    to the folder (``/abs/src/trials/0004/x.pcap`` -> ``trials/0004/x.pcap``). Pure."""
    for prefix in dict.fromkeys((str(src.absolute()), str(src.resolve()))):
        # the folder itself or a path under it; not another name that starts the same (/a/camp2)
        text = re.sub(re.escape(prefix) + r"(/|(?![\w.\-]))", lambda m: "" if m.group(1) else ".", text)
    return text


def _size(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _copy(src: Path, part: Path, rel: str, keep_port_series: bool, report: ArchiveReport) -> None:
    s, d = src / rel, part / rel
    d.parent.mkdir(parents=True, exist_ok=True)
    if s.name in STORES:
        with Store(s, readonly=True) as st:
            n = [0]

            def strip(js: str) -> str:
                out = without_port_series(js)
                n[0] += out != js
                return out

            st.backup_to(d, None if keep_port_series else strip)
        report.stripped += n[0]
    elif s.suffix in TEXT and s.stat().st_size <= MAX_TEXT_BYTES:
        text = s.read_bytes().decode("utf-8", errors="surrogateescape")
        new = relative_text(text, src)
        d.write_bytes(new.encode("utf-8", errors="surrogateescape"))
        if new != text:
            report.relative.append(rel)
    else:
        shutil.copyfile(s, d)
    report.files.append(rel)


def archive(src: Path, dest: Path, keep_port_series: bool = False) -> ArchiveReport:
    """Copy the committable part of campaign folder ``src`` to the new folder ``dest`` (module
    doc). Raises QoslabError, with ``dest`` not made and ``src`` unchanged, when: ``src`` is not
    a campaign folder (no store, playbook or provenance; an input changed since its snapshot: the
    file at fault named),
    a run of it is going on (its folder lock), ``dest`` exists or lies inside ``src``, or a copy
    fails (the file named)."""
    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        raise QoslabError(f"{src}: no such campaign folder")
    if dest.exists() or dest.is_symlink():
        raise QoslabError(f"{dest}: exists already; an archive goes to a new folder (nothing was written)")
    if dest.absolute().resolve().is_relative_to(src.resolve()):
        raise QoslabError(f"{dest}: inside the campaign folder {src}; archive it elsewhere")
    part = dest.with_name(dest.name + ".partial")
    if part.exists() or part.is_symlink():
        raise QoslabError(f"{part}: left by an earlier archive that did not end; remove it, then archive again")
    lock = FolderLock(src)  # a running campaign is refused here, naming the folder
    try:
        if not (src / "trials.sqlite").is_file():
            raise QoslabError(f"{src} holds no campaign (no trials.sqlite)")
        load_campaign_playbook(src)
        read_provenance(src)
        verify(src, workload_files=False)
        report = ArchiveReport(dest=dest, bytes_in=_size(src))
        part.mkdir(parents=True)
        try:
            for rel in plan(src):
                try:
                    _copy(src, part, rel, keep_port_series, report)
                except OSError as e:
                    raise QoslabError(f"{src / rel}: cannot copy to {part / rel}: {e.strerror or e}") from None
            verify(part, workload_files=False)  # the copied snapshot holds: what `qoslab report` checks
            os.rename(part, dest)
        except BaseException:
            shutil.rmtree(part, ignore_errors=True)
            raise
    finally:
        lock.release()
    report.bytes_out = _size(dest)
    return report
