"""Issue 50, item 4 (and round 5's leftovers): ``campaign plan`` checks a playbook's device file as
the push would read it, before anything is made: host syntax (no shell metacharacter, not empty),
platform not empty, the credentials file's type and mode, known_hosts a regular readable bounded
file, each field its own type. Every case of tests/data/malformed/device/ (written by
make_corpus.py from cases_i50.py) and the named pipes made here are refused in one line naming the
device file's line and field; the valid base passes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

CORPUS = REPO / "tests" / "data" / "malformed" / "device"
DRIVER = Path(__file__).parent / "corpus_driver.py"
#: dummy login in the environment: the cases without a credentials file reach their own defect
ENV = {"QOSLAB_SWITCH_USERNAME": "corpus", "QOSLAB_SWITCH_PASSWORD": "corpus", "QOSLAB_SWITCH_SECRET": "corpus"}
PLAYBOOK = """name: devcorpus
topology: playbooks/topologies/ecenet.yaml
device: {device}
workload: {{hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}}
flood: traffic-gen/campaign-flood.yaml
conditions:
  - {{name: no congestion fifo, congestion: false, profile: fifo}}
  - {{name: congestion thesis, congestion: true, profile: thesis}}
trials: 3
"""


def _cases() -> list[Path]:
    return sorted(CORPUS.glob("*.yaml"))


def _expect(f: Path) -> tuple[int, str]:
    m = re.match(r"# expect: (\d+) (\S+)\n", f.read_text())
    assert m, f
    return int(m.group(1)), m.group(2)


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("devices")
    base = tmp / "valid.yaml"
    base.write_text(_cases()[0].read_text().split("\n", 1)[1].replace('"127.0.0.1; touch /tmp/qoslab-pwned"',
                                                                      "198.18.0.254"))
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    extra = {"valid": base}
    for name, text in (("credentials-a-fifo", f"credentials_file: {fifo}\n"), ("known-hosts-a-fifo", None)):
        dev = tmp / f"{name}.yaml"
        body = base.read_text()
        dev.write_text(body + text if text else body.replace(body.split("known_hosts: ")[1].split("\n")[0], str(fifo)))
        extra[name] = dev
    files = {str(f.relative_to(REPO)): f for f in _cases()} | {k: v for k, v in extra.items()}
    items = []
    for key, dev in files.items():
        pb = tmp / f"pb-{len(items)}.yaml"
        pb.write_text(PLAYBOOK.format(device=key if key.startswith("tests/") else dev))
        items.append(f"argv={json.dumps(['campaign', 'plan', str(pb)])}")
    r = subprocess.run([sys.executable, str(DRIVER), str(tmp / "out"), *items], capture_output=True, text=True,
                       cwd=REPO, timeout=300, env={**os.environ, **ENV})
    assert r.returncode == 0, r.stderr[-3000:]
    return dict(zip(files, json.loads(r.stdout), strict=True)), extra


def _one_line(rec: dict) -> str:
    lines = [x for x in rec["stderr"].splitlines() if x.strip()]
    assert "Traceback" not in rec["stderr"] and "internal error" not in rec["stderr"] and len(lines) == 1, rec
    assert rec["seconds"] < 5.0, rec
    return lines[0]


def test_the_corpus_has_every_case():
    assert len(_cases()) >= 13 and (CORPUS / "files" / "credentials-0644.json").stat().st_mode & 0o077


@pytest.mark.parametrize("f", _cases(), ids=[f.name for f in _cases()])
def test_a_hostile_device_file_is_refused_by_the_plan_naming_its_line_and_field(records, f):
    recs, _ = records
    rel = str(f.relative_to(REPO))
    line, field = _expect(f)
    rec = recs[rel]
    got = _one_line(rec)
    assert rec["code"] == 2 and f"device: {f}:{line}: {field}: " in got, got


@pytest.mark.parametrize("name,field", [("credentials-a-fifo", "credentials_file"), ("known-hosts-a-fifo", "known_hosts")])
def test_a_named_pipe_for_a_device_files_file_is_refused_unopened(records, name, field):
    recs, extra = records
    got = _one_line(recs[name])
    assert recs[name]["code"] == 2 and f"{extra[name]}:" in got and f": {field}: " in got and "named pipe" in got, got


def test_the_valid_base_passes_the_plan(records):
    recs, _ = records
    assert recs["valid"]["code"] == 0, recs["valid"]
