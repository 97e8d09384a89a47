"""The docs name modules that exist (issue 31): every ``src/qoslab`` path and every ``qoslab.x.y``
module DESIGN.md, the READMEs and the package docstrings name is in the tree, and the module map
of src/qoslab/README.md lists every package and module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "qoslab"
DOCS = [REPO / "docs" / "DESIGN.md", REPO / "README.md", SRC / "README.md", REPO / "analysis" / "README.md",
        REPO / "playbooks" / "README.md", REPO / "docs" / "getting-started.md",
        *sorted(REPO.glob("docs/how-to/*.md")), *sorted(REPO.glob("docs/explanation/*.md")),
        *sorted(REPO.glob("docs/archive/*.md"))]
PACKAGES = sorted(p.parent.name for p in SRC.glob("*/__init__.py"))
#: A path relative to src/qoslab as the docs write it: `campaign/trial.py`, `src/qoslab/meters/cpu.py`.
PATH = re.compile(r"(?<![\w/.-])(?:src/qoslab/)?((?:" + "|".join(PACKAGES) + r")/\w+\.py)\b")
#: A dotted module: qoslab.stats.recovery (an attribute after it, qoslab.stats.recovery.recovery_ratio, is allowed).
DOTTED = re.compile(r"(?<![\w.])qoslab((?:\.\w+)+)")
#: Entry-point groups (``qoslab.<kind>s``), not modules.
ENTRY_POINT_GROUPS = {"generators", "switches", "executors", "meters", "workloads", "platforms", "dialects"}


def _exists(dotted: list[str]) -> bool:
    """Whether some prefix of ``qoslab.<dotted>`` of length >= 1 is a module or package and the
    rest could be attributes (the first part must be a module)."""
    if len(dotted) == 1 and dotted[0] in ENTRY_POINT_GROUPS:
        return True
    for n in range(len(dotted), 0, -1):
        base = SRC.joinpath(*dotted[:n])
        if base.with_suffix(".py").exists() or (base / "__init__.py").exists():
            return True
    return False


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_module_a_doc_names_exists(doc):
    text = doc.read_text()
    bad = sorted({m for m in PATH.findall(text) if not (SRC / m).exists()})
    bad += sorted({f"qoslab{m}" for m in DOTTED.findall(text) if not _exists(m.lstrip(".").split("."))})
    assert not bad, f"{doc.relative_to(REPO)} names modules that do not exist: {bad}"


def test_docstrings_name_existing_modules():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        for m in DOTTED.findall(path.read_text()):
            parts = m.lstrip(".").split(".")
            if parts[0] and not _exists(parts):
                bad.append(f"{path.relative_to(REPO)}: qoslab{m}")
    assert not bad, "\n".join(sorted(set(bad)))


def test_the_module_map_lists_every_package_and_module():
    """src/qoslab/README.md's "Layers" map names every package and every module of the campaign,
    meters, stats, report and workloads packages (the ones a newcomer searches most)."""
    text = (SRC / "README.md").read_text()
    layers = text[text.index("## Layers"):text.index("## Import rules")]
    missing = [p for p in PACKAGES if f"{p}/" not in layers]
    for pkg in ("campaign", "meters", "stats", "report", "workloads"):
        for mod in sorted(p.stem for p in (SRC / pkg).glob("*.py") if p.stem != "__init__"):
            if not re.search(rf"\b{mod}\b", layers):
                missing.append(f"{pkg}/{mod}.py")
    assert not missing, f"not in the module map: {missing}"
