"""The malformed-file corpus (tests/data/malformed/, written by its make_corpus.py): every file goes
through the real CLI (``qoslab topology validate``, ``flood validate``, ``switch render``,
``campaign run``, ``testbed scale --from``) and must give one line ``error: FILE:LINE: FIELD: ...`` naming the line and field
its ``# expect:`` header gives, no stack trace, at most 5 s and 200 MB RSS; a malformed playbook
never creates its campaign folder (issue 14: items 2, 3, 6 and the acceptance's corpus)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

CORPUS = REPO / "tests" / "data" / "malformed"
DRIVER = Path(__file__).parent / "corpus_driver.py"
KINDS = ("topology", "flood", "profile", "playbook", "real")
MAX_S, MAX_RSS_KB = 5.0, 200 * 1024
EXIT = {"topology": 1, "flood": 1, "profile": 2, "playbook": 2, "real": 2}
#: Most characters of the problem's text after ``FILE:LINE: FIELD:`` (a hostile value is clipped,
#: qoslab.yamlio.clip; a few problems list the alternatives or a second problem).
MAX_PROBLEM = 600


def _files() -> list[tuple[str, Path]]:
    return [(k, f) for k in KINDS for f in sorted((CORPUS / k).glob("*.yaml"))]


def _expect(f: Path) -> tuple[int, str]:
    m = re.match(rb"# expect: (\d+) (.+)\n", f.read_bytes())
    assert m, f"{f}: no '# expect: LINE FIELD' header"
    return int(m.group(1)), m.group(2).decode()


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus-out")
    items = [f"{k}={f.relative_to(REPO)}" for k, f in _files()]
    items += ["cli=campaign run playbooks/quick.yaml --trials -5", "cli=campaign run playbooks/quick.yaml --trials 1"]
    r = subprocess.run([sys.executable, str(DRIVER), str(out), *items], capture_output=True, text=True, cwd=REPO,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    recs = json.loads(r.stdout)
    return {rec["file"]: rec for rec in recs}, out


def test_the_corpus_is_large_and_covers_every_kind():
    files = _files()
    assert len(files) >= 100
    assert all(sum(k == kind for k, _ in files) >= 20 for kind in KINDS)


@pytest.mark.parametrize("kind,f", _files(), ids=[f"{k}/{f.name}" for k, f in _files()])
def test_malformed_file_gives_one_line_naming_file_line_and_field(records, kind, f):
    recs, out = records
    rel = str(f.relative_to(REPO))
    rec = recs[rel]
    line, field = _expect(f)
    lines = [l for l in rec["stderr"].splitlines() if l.strip()]
    assert "Traceback" not in rec["stderr"] and len(lines) == 1, rec["stderr"]
    assert rec["code"] == EXIT[kind], rec
    want = f"error: {rel}:{line}: {field}"
    if field == "YAML syntax error":  # the parser names the line where it noticed (at most 3 further)
        m = re.match(rf"error: {re.escape(rel)}:(\d+): YAML syntax error: ", lines[0])
        assert m and line <= int(m.group(1)) <= line + 3, lines[0]
    else:
        assert lines[0].startswith(want + ":") or lines[0].startswith(want + "..."), (lines[0], want)
    assert len(lines[0]) <= len(f"error: {rel}:{line}: {field}: ") + MAX_PROBLEM, f"{len(lines[0])} characters"
    assert rec["seconds"] < MAX_S and rec["maxrss_kb"] < MAX_RSS_KB, rec
    assert not list(Path(out).glob("c*")), "a campaign folder was created for a malformed playbook"


def test_trials_option_is_validated_before_anything_is_made(records):
    recs, out = records
    for bad in ("-5", "1"):
        rec = recs[f"campaign run playbooks/quick.yaml --trials {bad}"]
        assert rec["code"] == 2 and rec["stderr"].startswith(f"error: --trials {bad}: Input should be"), rec
    assert not list(Path(out).glob("c*"))
