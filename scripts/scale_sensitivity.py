"""The flood-load sensitivity of the scale model (issue 32) from a finished
``playbooks/scale-sensitivity.yaml`` campaign: a markdown table (per flood load: each profile's
mean render time, the slowdown ratio against no flood with its BCa interval, the congested CV, the
recovery) and, with ``--out``, a figure of the slowdown ratios against the load.

    .venv/bin/python scripts/scale_sensitivity.py CAMPAIGN_DIR [--out FIG.png]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

#: Flood level name -> offered load (multiple of the link rate, traffic-gen/*.yaml).
LOADS = {"none": 0.0, "thesis-flood-load08": 0.8, "thesis-flood-load09": 0.9, "thesis-faithful-flood": 1.0}


def rows(stats: dict) -> list[dict]:
    """One row per flood load with the numbers of the table."""
    cond, out = stats["conditions"], []
    cmp = {(c["a"], c["b"]): c for c in stats["comparisons"]}
    rec = {r["congested"]: r for r in stats["recovery"]}
    for flood, load in LOADS.items():
        row: dict = {"flood": flood, "load": load}
        for prof in ("fifo", "thesis"):
            name = f"{flood} / {prof}"
            row[f"{prof}_mean"], row[f"{prof}_cv"] = cond[name]["mean"], cond[name]["cv"]
            c = cmp.get((f"none / {prof}", name))
            row[f"{prof}_ratio"] = (c["ratio"], c["ratio_ci95"]) if c else (1.0, None)
        r = rec.get(f"{flood} / fifo")
        row["recovery"] = (r["ratio"], r["ci95"]) if r else (None, None)
        out.append(row)
    return out


def _ratio(v: tuple) -> str:
    r, ci = v
    if r is None:
        return "n/a"
    return f"{r:.2f}x" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _rec(v: tuple) -> str:
    r, ci = v
    if r is None:
        return "n/a (no slowdown)"
    return f"{100 * r:.1f} %" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else " (no interval)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("campaign", type=Path)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    table = rows(json.loads((a.campaign / "stats.json").read_text()))
    print("| flood load | fifo s | slowdown under fifo (BCa) | fifo CV | thesis s | slowdown under thesis (BCa) "
          "| recovery (BCa) |\n| --- | --- | --- | --- | --- | --- | --- |")
    for r in table:
        print(f"| {r['load']:.1f} | {r['fifo_mean']:.2f} | {_ratio(r['fifo_ratio'])} | {100 * r['fifo_cv']:.0f} % | "
              f"{r['thesis_mean']:.2f} | {_ratio(r['thesis_ratio'])} | {_rec(r['recovery'])} |")
    if a.out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.6))
        for prof, marker in (("fifo", "o"), ("thesis", "s")):
            xs = [r["load"] for r in table]
            ys = [r[f"{prof}_ratio"][0] for r in table]
            lo = [y - (r[f"{prof}_ratio"][1] or [y, y])[0] for r, y in zip(table, ys, strict=True)]
            hi = [(r[f"{prof}_ratio"][1] or [y, y])[1] - y for r, y in zip(table, ys, strict=True)]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker=marker, capsize=3, label=f"profile {prof}")
        ax.axhspan(1.39, 1.66, color="grey", alpha=0.3, label="thesis fifo slowdown [1.39, 1.66]")
        ax.set_yscale("log")
        ax.set_xlabel("flood offered load / link rate")
        ax.set_ylabel("render time / no-flood same profile")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(a.out, dpi=110)
        print(f"figure: {a.out}")


if __name__ == "__main__":
    main()
