"""Trial-time distributions of a campaign overlaid on the thesis's (Appendix A), each normalised by
its own world's uncongested-fifo mean (issue 32): one empirical CDF per condition and world, and
the quantiles as a markdown table.

    .venv/bin/python scripts/scale_overlay.py CAMPAIGN_DIR [--out FIG.png] [--main]

Thesis data: /work/shared/data/thesis-table5-qos.csv (congestion x QoS, 50 trials each) and
thesis-table3-scaling.csv's 4-machine rows (the no-congestion, no-QoS trials, Table 3/4).
``--main`` uses only the trials of the campaign's main statistics (trials.csv: fidelity-ok);
default: every done trial (trials-all.csv).
"""

from __future__ import annotations

import argparse
import csv
import statistics
from pathlib import Path

DATA = Path("/work/shared/data")
#: Campaign condition -> (congestion, qos) of the thesis's CSV.
CONDITIONS = {"no congestion fifo": ("no", "no"), "congestion fifo": ("yes", "no"),
              "no congestion thesis": ("no", "yes"), "congestion thesis": ("yes", "yes")}


def thesis_times() -> dict[str, list[float]]:
    """The thesis's trial times per campaign condition name (seconds)."""
    out: dict[str, list[float]] = {c: [] for c in CONDITIONS}
    with open(DATA / "thesis-table5-qos.csv") as f:
        for r in csv.DictReader(f):
            name = next(c for c, k in CONDITIONS.items() if k == (r["congestion"], r["qos"]))
            out[name].append(float(r["elapsed_s"]))
    with open(DATA / "thesis-table3-scaling.csv") as f:
        out["no congestion fifo"] = [float(r["elapsed_s"]) for r in csv.DictReader(f) if r["machines"] == "4"]
    return out


def campaign_times(folder: Path, main: bool) -> dict[str, list[float]]:
    """A campaign's render times per condition (seconds)."""
    out: dict[str, list[float]] = {c: [] for c in CONDITIONS}
    with open(folder / ("trials.csv" if main else "trials-all.csv")) as f:
        for r in csv.DictReader(f):
            if r["condition"] in out:
                out[r["condition"]].append(float(r["elapsed_s"]))
    return out


def normalised(times: dict[str, list[float]]) -> dict[str, list[float]]:
    """Every time divided by the uncongested-fifo mean of the same world."""
    ref = statistics.mean(times["no congestion fifo"])
    return {c: sorted(t / ref for t in v) for c, v in times.items()}


def _q(v: list[float], p: float) -> float:
    return statistics.quantiles(v, n=100, method="inclusive")[int(p) - 1] if len(v) > 1 else v[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("campaign", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--main", action="store_true")
    a = ap.parse_args()
    worlds = {"thesis": normalised(thesis_times()), "testbed": normalised(campaign_times(a.campaign, a.main))}
    print("| condition | world | n | p10 | median | p90 | max | mean |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for c in CONDITIONS:
        for w, d in worlds.items():
            v = d[c]
            print(f"| {c} | {w} | {len(v)} | {_q(v, 10):.2f} | {statistics.median(v):.2f} | {_q(v, 90):.2f} | "
                  f"{max(v):.2f} | {statistics.mean(v):.2f} |")
    if a.out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 4, figsize=(16, 3.6), sharey=True)
        for ax, c in zip(axes, CONDITIONS, strict=True):
            for w, style in (("thesis", "-"), ("testbed", "--")):
                v = worlds[w][c]
                ax.step(v, [(i + 1) / len(v) for i in range(len(v))], style, where="post", label=f"{w} (n={len(v)})")
            ax.set_title(c)
            ax.set_xlabel("time / own uncongested-fifo mean")
            ax.legend(loc="lower right", fontsize=8)
        axes[0].set_ylabel("share of trials")
        fig.tight_layout()
        fig.savefig(a.out, dpi=110)
        print(f"figure: {a.out}")


if __name__ == "__main__":
    main()
