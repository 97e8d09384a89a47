"""Where a campaign's congestion penalty goes: the busiest worker's compute against the network
wait, per campaign folder, as a Markdown table (issue 48: why the on-machine thesis-faithful-cpu
runs miss the thesis's recovery).

    .venv/bin/python scripts/penalty_split.py docs/results/thesis-faithful-cpu-20261127 \\
        docs/results/thesis-faithful-cpu-onmachine-share-nic-20261130

For each folder, from its ``trials.sqlite`` (read only; the counted trials: done, valid, not
warm-up), the medians of the render time (``elapsed_s``), of the busiest worker's compute
(``busy_max_s``) and of the network wait (render minus busiest worker, ``TrialRow.network_s``,
the metric of ``stats-network.json``), all seconds, in the four conditions of the thesis's design
(``no congestion fifo``, ``congestion fifo``, ``congestion thesis``). The congestion penalty of
the FIFO (congested minus uncongested median render) splits into the busiest worker's part (the
flooded hosts' receive CPU: no switch profile can win it back) and the network wait's part (what a
priority queue can win back). ``recovery`` is the render times' (the report's: 1 - (thesis
congested - baseline) / (fifo congested - baseline), of medians here, of means in stats.json).

Errors: a folder without ``trials.sqlite`` or without the three conditions exits with status 2
and names the folder.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from qoslab.errors import QoslabError  # noqa: E402
from qoslab.trials.store import Store  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
CONDITIONS = ("no congestion fifo", "congestion fifo", "congestion thesis")


def medians(folder: Path) -> dict[str, tuple[float, float, float]]:
    """Condition -> (render, busiest worker, network wait) medians in seconds of the counted trials
    that have all three. Raises QoslabError naming the folder when a condition has none."""
    db = folder / "trials.sqlite"
    if not db.is_file():
        raise QoslabError(f"{folder}: no trials.sqlite")
    with Store(db, readonly=True) as store:
        rows = [(r.condition, r.elapsed_s, r.busy_max_s) for r in store.trials(counted=True)]
    out: dict[str, tuple[float, float, float]] = {}
    for cond in CONDITIONS:
        rs = [(e, b) for c, e, b in rows if c == cond and e is not None and b is not None]
        if not rs:
            raise QoslabError(f"{folder}: no counted trial of condition {cond!r} with a render time and a "
                              "busiest worker's time")
        out[cond] = (statistics.median(e for e, _ in rs), statistics.median(b for _, b in rs),
                     statistics.median(e - b for e, b in rs))  # TrialRow.network_s
    return out


def row(folder: Path) -> str:
    """One Markdown row: the folder, the FIFO's penalty and its split, seconds, and the recovery."""
    m = medians(folder)
    base, fifo, thesis = (m[c] for c in CONDITIONS)
    pen = fifo[0] - base[0]
    busy, net = fifo[1] - base[1], fifo[2] - base[2]
    rec = 1 - (thesis[0] - base[0]) / pen if pen else float("nan")
    net_share = net / pen if pen else float("nan")
    try:  # a committed campaign by its path under docs/results, any other by the path given
        name = folder.resolve().relative_to(RESULTS).as_posix()
    except ValueError:
        name = folder.as_posix()
    return (f"| {name} | {base[0]:.3f} | {fifo[0]:.3f} | {fifo[0] / base[0]:.2f}x | {pen:+.3f} | "
            f"{busy:+.3f} | {net:+.3f} | {net_share:.0%} | {thesis[2] - base[2]:+.3f} | {rec:.1%} |")


HEADER = ("| campaign | no congestion fifo render (s) | congestion fifo render (s) | slowdown | FIFO penalty (s) | "
          "of it: busiest worker (s) | of it: network wait (s) | network share of the penalty | "
          "congestion thesis network wait above baseline (s) | recovery (medians) |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("campaigns", type=Path, nargs="+", help="campaign folders (each with trials.sqlite)")
    a = ap.parse_args()
    lines = [HEADER]
    try:
        lines += [row(f) for f in a.campaigns]
    except QoslabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
