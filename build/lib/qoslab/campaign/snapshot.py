"""A campaign folder's snapshot of its inputs (``inputs/``, ``inputs/manifest.json``): taken once
when the folder is made, checked before every run of it writes anything (issue 45: "a run does
only what the snapshot holds").

The manifest maps each input to ``{ref, file, sha256}`` (``ref``: how the playbook named it;
``file``: the copy, relative to the campaign folder): ``topology``, ``flood`` / ``floods``,
``profiles`` (reference -> entry), ``device`` (a device file), ``playbook`` (the folder's
resolved ``playbook.yaml`` itself; ``ref`` is the user's playbook), and ``workload_files``
(``{ref, path, sha256}``: the files a ``command`` or ``mpi`` workload's templates run, named as
``{root}/...`` or by an absolute path, hashed where they are: they run on the nodes from the
qoslab checkout, so a resume checks them in place instead of copying them). Folders made before
a key existed lack it and are read as before.

A playbook's references resolve against the repository (:func:`resolve_path`), but for one kind:
a relative reference under ``derive/`` names the campaign folder's own ``derive/`` folder, where
the derivation of a ``derive:`` block wrote the inputs the campaign runs (:mod:`.onmachine`,
``derive/topology.yaml``). So a folder's ``playbook.yaml`` names them relative to itself, and the
folder keeps its meaning (and its playbook its SHA-256) when it is moved or committed elsewhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..profiles import profile_path
from ..registry import switches
from ..topology import repo_root
from ..trials.playbook import Playbook, resolve_path

INPUTS = "inputs"
MANIFEST = "inputs/manifest.json"
#: Bytes of manifest.json read at most (a real one is a few kB).
MAX_MANIFEST_BYTES = 1 << 20
#: The workload settings that are command templates (``command``: head, worker; ``mpi``: program, args).
TEMPLATE_FIELDS = ("head", "worker", "program", "args")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


#: The folder of a campaign's derived inputs; a playbook reference under it is the folder's own.
DERIVED = "derive"


def input_path(ref: str, folder: Path) -> Path:
    """Where the input a campaign playbook names as ``ref`` is: a relative reference under
    :data:`DERIVED` is ``folder/ref``, which must be a regular file inside ``folder`` (no ``..``,
    no symbolic link: ConfigError naming it otherwise); any other reference as in every playbook
    (:func:`resolve_path`: absolute as given, else relative to the repository)."""
    p = Path(ref)
    if p.is_absolute() or p.parts[:1] != (DERIVED,):
        return resolve_path(ref)
    q = folder / p
    if ".." in p.parts or q.is_symlink() or not q.is_file() or not q.resolve().is_relative_to(folder.resolve()):
        raise ConfigError(f"{q}: {ref[:200]!r} names the campaign folder's own derived input (under {DERIVED}/), "
                          "which must be a regular file inside the folder")
    return q


def sha256(path: Path) -> str:
    """SHA-256 (hex) of the regular file ``path``, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def workload_files(pb: Playbook) -> dict[str, Path]:
    """The files the workload's command templates name (any condition's settings): a word
    ``{root}/PATH`` (PATH in this qoslab checkout) or an absolute path, when it is a regular file
    here; word -> path. Words with other template variables are not files (they vary per node)."""
    out: dict[str, Path] = {}
    for s in [pb.workload, *(pb.workload_of(c) for c in pb.conditions)]:
        for name in TEMPLATE_FIELDS:
            text = getattr(s, name, None)
            try:
                words = shlex.split(text) if isinstance(text, str) else []
            except ValueError:
                continue
            for w in words:
                rest = w[len("{root}/"):] if w.startswith("{root}/") else w if w.startswith("/") else None
                if rest is None or "{" in rest or "}" in rest:
                    continue
                p = repo_root() / rest if w.startswith("{root}/") else Path(rest)
                if p.is_file():
                    out[w] = p
    return out


def take(pb: Playbook, pb_path: Path, out: Path) -> dict[str, Any]:
    """Copy the playbook's input files into ``out/inputs/`` and hash them, the folder's
    ``playbook.yaml`` (written before) and the workload's files; returns the manifest (see the
    module doc)."""
    d = out / INPUTS
    (d / "profiles").mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {"profiles": {}}

    def copy(ref: str, src: Path, rel: str) -> dict[str, str]:
        shutil.copyfile(src, out / rel)
        return {"ref": ref, "file": rel, "sha256": sha256(out / rel)}

    manifest["topology"] = copy(pb.topology, input_path(pb.topology, out), f"{INPUTS}/topology.yaml")
    floods = pb.floods()
    if floods:  # the playbook's own flood keeps its old place (inputs/flood.yaml); a factorial's in floods/
        manifest["floods"] = {}
        for i, ref in enumerate(floods):
            stem = re.sub(r"[^A-Za-z0-9._-]", "_", Path(ref).stem)[:40] or "flood"
            rel = f"{INPUTS}/flood.yaml" if ref == pb.flood else f"{INPUTS}/floods/{i:02d}-{stem}.yaml"
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            manifest["floods"][ref] = copy(ref, input_path(ref, out), rel)
        if pb.flood in manifest["floods"]:
            manifest["flood"] = manifest["floods"][pb.flood]
    for c in pb.conditions:
        if c.profile not in manifest["profiles"]:
            stem = re.sub(r"[^A-Za-z0-9._-]", "_", Path(c.profile).stem)[:40] or "profile"
            rel = f"{INPUTS}/profiles/{len(manifest['profiles']):02d}-{stem}.yaml"
            manifest["profiles"][c.profile] = copy(c.profile, profile_path(c.profile), rel)
    if pb.device not in switches.names() and pb.device != "testbed":
        manifest["device"] = copy(pb.device, input_path(pb.device, out), f"{INPUTS}/device.yaml")
    manifest["playbook"] = {"ref": str(pb_path), "file": "playbook.yaml", "sha256": sha256(out / "playbook.yaml")}
    manifest["workload_files"] = {w: {"ref": w, "path": str(p), "sha256": sha256(p)}
                                  for w, p in workload_files(pb).items()}
    return manifest


def _read_manifest(path: Path) -> Any:
    """manifest.json's data: a regular file of at most MAX_MANIFEST_BYTES of JSON (a FIFO or a
    device is refused by name, never opened). Raises ConfigError naming the file."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path}: not a regular file (a FIFO, device or folder is not an input manifest)")
    if st.st_size > MAX_MANIFEST_BYTES:
        raise ConfigError(f"{path}: {st.st_size} bytes, larger than a manifest can be ({MAX_MANIFEST_BYTES})")
    try:
        return json.loads(path.read_bytes()[:MAX_MANIFEST_BYTES + 1])
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: not a readable input manifest: {str(e)[:200]}") from None


def entries(manifest: dict[str, Any], path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """(field, entry) of every snapshot copy in ``manifest`` (read from ``path``), each entry
    checked for its shape: ``ref``, ``file`` (relative, inside the folder) and ``sha256`` (64 hex
    digits). Raises ConfigError ``MANIFEST: FIELD: ...`` for a missing or malformed one."""
    if not isinstance(manifest, dict):
        raise ConfigError(f"{path}: (top level): a JSON object of the campaign's inputs, not {type(manifest).__name__}")
    for need in ("topology", "profiles"):
        if need not in manifest:
            raise ConfigError(f"{path}: {need}: missing (every campaign snapshot has its {need})")
    for key, value in manifest.items():
        if key in ("profiles", "floods", "workload_files"):
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: {key}: a JSON object (reference -> entry), not {type(value).__name__}")
            if key != "workload_files":
                for ref, entry in value.items():
                    yield f"{key}.{ref}", _entry(entry, f"{key}.{ref}", path)
        elif key in ("topology", "flood", "device", "playbook"):
            yield key, _entry(value, key, path)
        else:
            raise ConfigError(f"{path}: {key[:80]}: not a field of an input manifest")


def _entry(entry: Any, field: str, path: Path, where: str = "file") -> dict[str, str]:
    """One entry's shape (see :func:`entries`; ``where``: ``file`` for a copy, ``path`` for a
    workload file)."""
    if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("ref", where, "sha256")):
        raise ConfigError(f"{path}: {field[:120]}: an entry {{ref, {where}, sha256}} of strings")
    if not _HEX64.match(entry["sha256"]):
        raise ConfigError(f"{path}: {field[:120]}.sha256: not a SHA-256 (64 hex digits)")
    rel = Path(entry[where])
    if where == "file" and (rel.is_absolute() or ".." in rel.parts or not rel.parts):
        raise ConfigError(f"{path}: {field[:120]}.file: {entry[where][:120]!r} is not a path inside the campaign "
                          "folder")
    if where == "path" and not rel.is_absolute():
        raise ConfigError(f"{path}: {field[:120]}.path: {entry[where][:120]!r} is not an absolute path")
    return entry


def verify(folder: Path, workload_files: bool = True) -> dict[str, Any] | None:
    """The folder's manifest (None for a folder made before snapshots), every copy checked
    against its SHA-256 and, with ``workload_files`` (a run: not a report, whose campaign ran
    what it ran whatever the program is now), every workload file against the hash it had when
    the folder was made. Reads only. Raises ConfigError naming the file at fault: the folder's
    copy that is missing or was changed, or the user's workload file that changed since (a
    resume runs only what the snapshot holds)."""
    path = folder / MANIFEST
    if not path.exists() and not path.is_symlink():
        return None
    manifest = _read_manifest(path)
    for field, entry in list(entries(manifest, path)):
        f = folder / entry["file"]
        if not f.is_file() or sha256(f) != entry["sha256"]:
            raise ConfigError(f"{f}: the campaign's snapshot ({field[:80]}) of {entry['ref'][:200]} is missing or was "
                              "changed since the campaign was made; a run uses only the snapshot: restore it, or start "
                              "a new campaign")
    for ref, entry in manifest.get("workload_files", {}).items() if workload_files else ():
        e = _entry(entry, f"workload_files.{ref}", path, where="path")
        p = Path(e["path"])
        if not p.is_file() or sha256(p) != e["sha256"]:
            raise ConfigError(f"{p}: the workload's {ref[:120]!r} is missing or was changed since the campaign was "
                              f"made (its SHA-256 is in {path}); a resume runs only what the campaign was made with: "
                              "restore the file, or start a new campaign")
    return manifest
