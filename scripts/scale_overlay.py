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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from qoslab.scale.overlay import CONDITIONS, campaign_times, normalised, summary_rows  # noqa: E402
from qoslab.scale.overlay import thesis_times as _thesis_times  # noqa: E402

DATA = Path("/work/shared/data")


def thesis_times() -> dict[str, list[float]]:
    """The thesis's trial times per campaign condition name (seconds)."""
    with open(DATA / "thesis-table5-qos.csv") as f5, open(DATA / "thesis-table3-scaling.csv") as f3:
        return _thesis_times(csv.DictReader(f5), csv.DictReader(f3))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("campaign", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--main", action="store_true")
    a = ap.parse_args()
    with open(a.campaign / ("trials.csv" if a.main else "trials-all.csv")) as f:
        tb = campaign_times(csv.DictReader(f))
    worlds = {"thesis": normalised(thesis_times()), "testbed": normalised(tb)}
    print("| condition | world | n | p10 | median | p90 | max | mean |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in summary_rows(worlds):
        print(f"| {r['condition']} | {r['world']} | {r['n']} | {r['p10']:.2f} | {r['median']:.2f} | {r['p90']:.2f} | "
              f"{r['max']:.2f} | {r['mean']:.2f} |")
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
