"""The documentation site cannot drift from the code (issue 53): every generated page (CLI
reference, schemas, platform matrix, command outputs) equals what scripts/docs_gen.py makes from
this checkout, and no README or page names a path of a particular machine."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import docs_gen  # noqa: E402

#: Absolute paths of one machine: a checkout or worktree under /work, root's home, pytest's tmp.
MACHINE_PATH = re.compile(r"(?<![\w.~-])(/work/|/root/|/tmp/pytest-)")
#: Text files of README and docs/ (report.html files are notebook outputs, kept as the run made them).
TEXT = {".md", ".txt", ".yml", ".yaml", ".py", ".sh", ".json", ".csv", ".jsonl"}


@pytest.fixture(scope="module")
def generated() -> dict[Path, str]:
    return docs_gen.pages()


def test_generated_pages_match_the_code(generated: dict[Path, str]) -> None:
    assert docs_gen.drift(generated) == []


def test_a_drifted_page_is_named(generated: dict[Path, str], tmp_path: Path) -> None:
    for rel, text in generated.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    page = Path("docs/snippets/switch-render-thesis.txt")
    (tmp_path / page).write_text(generated[page].replace("mls qos\n", "mls qos trust dscp\n", 1), encoding="utf-8")
    (tmp_path / "docs/reference/cli.md").unlink()
    assert docs_gen.drift(generated, tmp_path) == [
        "docs/reference/cli.md: missing (the code changed it): run .venv/bin/python scripts/docs_gen.py",
        f"{page}: out of date (the code changed it): run .venv/bin/python scripts/docs_gen.py"]


def test_every_schema_field_is_described(generated: dict[Path, str]) -> None:
    # docs_schemas raises MissingDescription for a field described nowhere: the pages exist, and
    # no table row has an empty description cell
    pages = [t for p, t in generated.items() if "schemas" in p.parts]
    assert len(pages) == 5
    rows = [r for t in pages for r in t.splitlines() if r.startswith("| `")]
    assert rows and not [r for r in rows if r.rstrip().endswith("|  |")]


def machine_paths(root: Path) -> list[str]:
    """``file:line: path`` of every machine path in README.md and the text files of docs/."""
    files = [root / "README.md", *sorted(p for p in (root / "docs").rglob("*") if p.suffix in TEXT)]
    hits = []
    for f in files:
        for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if MACHINE_PATH.search(line):
                hits.append(f"{f.relative_to(root)}:{n}: {line.strip()[:120]}")
    return hits


def test_no_path_of_a_particular_machine() -> None:
    assert machine_paths(ROOT) == []


def test_the_path_check_sees_a_machine_path(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("run from the checkout's root\n")
    (tmp_path / "docs" / "a.md").write_text("ok: ../shared/x, ~/work/y\n`git clone /work/main /tmp/f`\n")
    (tmp_path / "docs" / "b.txt").write_text("see /tmp/pytest-of-root/pytest-3/x\n")
    assert [h.split(": ")[0] for h in machine_paths(tmp_path)] == ["docs/a.md:2", "docs/b.txt:1"]


def test_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    assert "make run" in readme and "make test" in readme
