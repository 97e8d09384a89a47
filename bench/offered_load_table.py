"""How close each campaign's kernel-paced flood came to its asked rate: for every campaign folder
given, its congested trials (every row of its ``trials.sqlite``, warm-ups included; a trial the
fidelity monitor ran again keeps only its last attempt there, so run with ``retries: 0``, as
``bench/catchup.yaml`` does, to count every attempt), how many were judged ``invalid`` for ``offered_load``
(without and with ``cpu_steal`` among their reasons), and each flow's sent rate as a share of its
configured packets/s (the HTB class's counter, ``fidelity_json.flows``): min, 10th percentile,
median, max; the switch's drops a congested trial (packets, all queues of the flooded ports,
``switch_drops_q1..4``; median) and each congested condition's median render time (seconds, the
counted trials: status ``done``, not warm-up, fidelity ``ok``). Reads only.

    .venv/bin/python bench/offered_load_table.py results/campaigns/A results/campaigns/B ...

Used for bench/README.md, "The flood class's catch-up" (issue 48)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from qoslab.errors import QoslabError
from qoslab.trials.store import Store


def campaign_row(folder: Path) -> dict[str, object]:
    """One campaign's counts and flow ratios (see the module's doc). Raises SystemExit naming the
    folder without a readable ``trials.sqlite``."""
    db = folder / "trials.sqlite"
    if not db.is_file():
        raise SystemExit(f"error: {folder}: no trials.sqlite (not a campaign folder)")
    try:
        with Store(db, readonly=True) as store:
            rows = [r.as_dict() for r in store.trials()]
    except QoslabError as e:
        raise SystemExit(f"error: {e}") from None
    attempts, short, short_steal, ratios = 0, 0, 0, []
    congested = [r for r in rows if r.get("fidelity") is not None and r.get("flood_json") is not None]
    drops = [sum(r.get(f"switch_drops_q{q}") or 0 for q in range(1, 5)) for r in congested]
    render: dict[str, list[float]] = {}
    for r in congested:
        if r.get("status") == "done" and not r.get("warmup") and r.get("fidelity") == "ok" and r.get("elapsed_s"):
            render.setdefault(str(r["condition"]), []).append(float(r["elapsed_s"]))
    for reasons, fj in ((r.get("fidelity_reasons"), r.get("fidelity_json")) for r in congested):
        attempts += 1
        checks = {r.get("check") for r in json.loads(reasons or "[]")}
        if "offered_load" in checks:
            if "cpu_steal" in checks:
                short_steal += 1
            else:
                short += 1
        for f in (json.loads(fj or "{}").get("flows") or []):
            if f.get("configured_pps"):
                ratios.append(f["sent_pps"] / f["configured_pps"])
    ratios.sort()
    q = (lambda p: round(ratios[min(len(ratios) - 1, int(p * len(ratios)))], 4)) if ratios else (lambda p: None)
    return {"campaign": folder.name, "congested_attempts": attempts, "offered_load_invalid": short,
            "offered_load_invalid_with_steal": short_steal, "flows": len(ratios),
            "sent_min": ratios[0] if ratios else None, "sent_p10": q(0.1),
            "sent_median": round(statistics.median(ratios), 4) if ratios else None,
            "sent_max": ratios[-1] if ratios else None,
            "switch_drops_median": statistics.median(drops) if drops else None,
            "render_median_s": {c: round(statistics.median(v), 3) for c, v in sorted(render.items())}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=Path, help="campaign folders (each with trials.sqlite)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    a = ap.parse_args(argv)
    rows = [campaign_row(f) for f in a.folders]
    if a.json:
        sys.path.insert(0, str(Path(__file__).parent))
        from machinefacts import machine_facts

        json.dump({"machine": machine_facts(), "campaigns": rows}, sys.stdout, indent=1)
        print()
        return 0
    print("| campaign | congested trials (attempts with retries: 0) | invalid for offered_load (and with steal) "
          "| flows | sent / asked: "
          "min, p10, median, max | switch drops a trial (median) | render s (median) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        fmt = lambda v: "-" if v is None else f"{v:.4f}"  # noqa: E731
        print(f"| {r['campaign']} | {r['congested_attempts']} | {r['offered_load_invalid']} "
              f"({r['offered_load_invalid_with_steal']}) | {r['flows']} | {fmt(r['sent_min'])}, {fmt(r['sent_p10'])}, "
              f"{fmt(r['sent_median'])}, {fmt(r['sent_max'])} | {r['switch_drops_median']} | "
              + ", ".join(f"{c} {v:.3f}" for c, v in r["render_median_s"].items()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
