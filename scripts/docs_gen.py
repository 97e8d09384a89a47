"""Writes the generated pages of the documentation site, or checks them (``--check``).

    .venv/bin/python scripts/docs_gen.py            # write docs/reference/cli.md, schemas, outputs
    .venv/bin/python scripts/docs_gen.py --check    # exit 1 naming every page that drifted

What it generates, all from the code of this checkout (so the site cannot drift from it):

- ``docs/reference/cli.md``: every ``qoslab`` command, its arguments and options, walked from
  the typer app's click command tree (:mod:`docs_cli`);
- ``docs/reference/schemas/*.md``: the playbook, topology, QoS profile, flood and device-file
  schemas from their pydantic models, every field with its type, default, unit and bounds
  (:mod:`docs_schemas`);
- ``docs/reference/platforms.md``: the platform support matrix (:mod:`docs_platforms`);
- ``docs/snippets/*.txt``: the real output of fast commands that need no testbed
  (``--help``, ``topology validate``, ``switch render``, ``campaign plan --seed``), included by
  the pages with ``--8<--`` (:mod:`docs_outputs`).

``make docs`` runs ``--check`` before ``mkdocs build --strict``; tests/unit/test_docs.py runs it
too. Exit codes: 0 up to date (or written), 1 drift (one line per page), 2 a command failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))

import docs_cli  # noqa: E402
import docs_outputs  # noqa: E402
import docs_platforms  # noqa: E402
import docs_schemas  # noqa: E402
import yaml  # noqa: E402


def pages() -> dict[Path, str]:
    """Every generated page: path relative to the repository -> its full text."""
    out: dict[Path, str] = {Path("docs/reference/cli.md"): docs_cli.render()}
    out[Path("docs/reference/platforms.md")] = docs_platforms.render()
    out.update(docs_schemas.render_all())
    out.update(docs_outputs.render_all(ROOT))
    return out


def drift(generated: dict[Path, str], root: Path = ROOT) -> list[str]:
    """One line per generated page whose committed text under ``root`` differs (or is missing)."""
    out = []
    for rel, text in sorted(generated.items()):
        path = root / rel
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            what = "missing" if old is None else "out of date"
            out.append(f"{rel}: {what} (the code changed it): run .venv/bin/python scripts/docs_gen.py")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed pages, write nothing")
    args = ap.parse_args(argv)
    try:
        generated = pages()
    except (docs_outputs.CommandFailed, docs_schemas.MissingDescription, yaml.YAMLError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.check:
        lines = drift(generated)
        for line in lines:
            print(line, file=sys.stderr)
        return 1 if lines else 0
    for rel, text in sorted(generated.items()):
        path = ROOT / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
