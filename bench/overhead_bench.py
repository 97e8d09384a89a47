"""Harness overhead benchmark (issue 26, "Lean trials"): the quick campaign's conditions with 3 trials
each (capture policy, warm-up and everything else as playbooks/quick.yaml), run through the CLI, and
per trial the harness overhead = trial wall time minus the workload phase (``overhead_s`` of
``phases_json`` where the code records it, else the sum of the sequential phases minus ``workload``:
what older code stored). Reports the median per condition and overall (warm-up trials left out),
the campaign's wall time and the median of every phase.

    python bench/run_benchmarks.py --only overhead
    python bench/overhead_bench.py [--src /work/main/src] [--label before] [--trials 3]

``--src`` runs the campaign with another checkout's code (e.g. main's, for a before/after
comparison); the testbed is shared: run it under ``flock /tmp/qoslab-testbed.lock``. The playbook
is this checkout's, and the code resolves its references (topology, flood) in its own checkout
(``repo_root()``): to measure older code on a newer playbook, give it a folder that holds the old
``src/`` and links to everything else here (issue 42's "before" runs; commands in
docs/lab-notes.md, "Lean trials"). The machine facts record ``src_commit`` and ``src_dirty``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAYBOOK = ROOT / "playbooks" / "quick.yaml"
#: The phases that follow each other in a trial (older code has no ``overhead_s``).
SEQUENTIAL = ("switch", "capture_start", "flood_start", "workload", "stop")


def overhead_of(phases: dict) -> float:
    """A trial's harness overhead (seconds) from its ``phases_json``."""
    if "overhead_s" in phases:
        return float(phases["overhead_s"])
    return sum(float(phases.get(k, 0.0)) for k in SEQUENTIAL if k != "workload")


def summarize(db: Path) -> dict:
    """Median overhead per condition and overall, and the median of each phase (done, non-warm-up trials)."""
    sys.path.insert(0, str(ROOT / "src"))
    from qoslab.trials.store import Store

    with Store(db) as st:
        rows = [(r.condition, r.phases_json, _kind(db.parent, r.idx, r.capture_summary))
                for r in st.trials(counted=True) if r.phases_json]
    per: dict[str, list[float]] = {}
    kinds: dict[str, list[float]] = {}
    phase_vals: dict[str, list[float]] = {}
    for cond, pj, kind in rows:
        ph = json.loads(pj)
        per.setdefault(cond, []).append(round(overhead_of(ph), 3))
        kinds.setdefault(f"{cond}: {kind}", []).append(round(overhead_of(ph), 3))
        for k, v in ph.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                phase_vals.setdefault(k, []).append(float(v))
    every = [v for vs in per.values() for v in vs]
    return {"overhead_s": {"per_condition": {c: {"median": statistics.median(v), "samples": v} for c, v in per.items()},
                           "median": statistics.median(every) if every else None, "target": 0.3,
                           "met": bool(every) and statistics.median(every) <= 0.3},
            "by_kind_s": {k: {"median": statistics.median(v), "n": len(v)} for k, v in sorted(kinds.items())},
            "phase_medians_s": {k: round(statistics.median(v), 3) for k, v in phase_vals.items()},
            "trials": len(every)}


def _kind(folder: Path, idx: int, capture_summary: str | None) -> str:
    """What a trial did besides its traffic: ``push`` (the profile changed: a switch backup was
    written), ``capture`` (the condition's first trial under ``capture: first``), or ``plain``."""
    parts = [w for w, on in (("push", (folder / "trials" / f"{idx:04d}" / "switch").is_dir()),
                             ("capture", capture_summary is not None)) if on]
    return "+".join(parts) or "plain"


def run_campaign(src: Path, trials: int, out: Path) -> float:
    """Run the quick playbook with ``trials`` per condition using the code in ``src``; its wall time (s)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    qoslab = Path(sys.executable).with_name("qoslab")
    argv = [str(qoslab), "campaign", "run", str(PLAYBOOK), "--trials", str(trials), "--out", str(out)]
    t = time.monotonic()
    subprocess.run(argv, env=env, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return round(time.monotonic() - t, 1)


def bench_overhead(repeat: int, src: Path = ROOT / "src", trials: int = 3) -> dict:
    """One shortened quick campaign (``repeat`` is not used: the trials are the samples)."""
    out = Path(tempfile.mkdtemp(prefix="qoslab-overhead-")) / "campaign"
    wall = run_campaign(src, trials, out)
    return {"src": str(src), "playbook": str(PLAYBOOK.relative_to(ROOT)), "trials_per_condition": trials,
            "campaign_wall_s": wall, "folder": str(out), **summarize(out / "trials.sqlite")}


def src_dirty(src: Path) -> bool | None:
    """Whether ``src`` has uncommitted changes to tracked files (then ``src_commit`` is not the code
    that ran: issue 42's first 'after' runs say e1def78 for e1def78 plus the change measured); None
    outside a git checkout (e.g. a copy made with ``git archive``)."""
    r = subprocess.run(["git", "-C", str(src), "status", "--porcelain", "--untracked-files=no", "--", "."],
                       capture_output=True, text=True)
    return None if r.returncode != 0 else bool(r.stdout.strip())


def main() -> int:
    sys.path.insert(0, str(ROOT / "bench"))
    from machinefacts import RESULTS, machine_facts

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, default=ROOT / "src", help="qoslab source folder to run")
    ap.add_argument("--label", default=None, help="results file suffix (overhead-LABEL.json)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--resummarize", type=Path, default=None,
                    help="recompute the summary of an earlier result file from its campaign folder (no run)")
    args = ap.parse_args()
    if args.resummarize:
        old = json.loads(args.resummarize.read_text())
        folder = Path(old["result"]["folder"])
        old["result"].update(summarize(folder / "trials.sqlite"))
        args.resummarize.write_text(json.dumps(old, indent=1))
        print(json.dumps(old["result"], indent=1))
        return 0
    facts = machine_facts()
    facts["src_commit"] = subprocess.run(["git", "-C", str(args.src), "rev-parse", "--short", "HEAD"],
                                         capture_output=True, text=True).stdout.strip() or None
    facts["src_dirty"] = src_dirty(args.src)
    result = {"benchmark": "overhead", "machine": facts, "result": bench_overhead(1, args.src.resolve(), args.trials)}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / (f"overhead-{args.label}.json" if args.label else "overhead.json")
    path.write_text(json.dumps(result, indent=1))
    print(json.dumps(result["result"], indent=1))
    print(f"[bench] wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
