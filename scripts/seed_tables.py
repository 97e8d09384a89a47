"""The report's seed section of a campaign folder as Markdown (issue 37): the seed the workload
reproduces (matmul: seed 000; sort: seed 002; mpj: seed 003), its published ordering beside the
measured one, the slowdown under FIFO and the share won back, exactly as ``qoslab report`` shows
them (qoslab.report.seeds), for a README.

    .venv/bin/python scripts/seed_tables.py CAMPAIGN_DIR

Reads the folder's stats.json, playbook.yaml, trials.sqlite and (mpj) the counted trials'
trials/NNNN/workload/workload-result.json. Prints nothing but a note when the campaign asks no
seed's question.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from qoslab.report.seeds import sections  # noqa: E402
from qoslab.report.trialresults import counted_results  # noqa: E402


def markdown(frame: object) -> str:
    """A DataFrame of strings as a Markdown table (``|`` in cells escaped)."""
    cols = list(frame.columns)  # type: ignore[attr-defined]
    rows = frame.astype(str).values.tolist()  # type: ignore[attr-defined]
    cell = lambda v: str(v).replace("|", "\\|")  # noqa: E731
    return "\n".join(["| " + " | ".join(map(cell, cols)) + " |", "| " + " | ".join("---" for _ in cols) + " |",
                      *("| " + " | ".join(map(cell, r)) + " |" for r in rows)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("campaign", type=Path)
    camp = ap.parse_args().campaign
    try:
        stats = json.loads((camp / "stats.json").read_text())
        playbook = yaml.safe_load((camp / "playbook.yaml").read_text())
    except (OSError, ValueError) as e:
        print(f"seed_tables: {camp}: not a finished campaign folder ({e})", file=sys.stderr)
        return 2
    found = sections(stats, playbook, counted_results(camp, stats))
    for head, intro, frame in found:
        print(f"## {head}\n\n{intro}\n\n{markdown(frame)}\n")
    if not found:
        print(f"{camp}: its workload ({(playbook.get('workload') or {}).get('kind')}) asks no seed's question")
    return 0


if __name__ == "__main__":
    sys.exit(main())
