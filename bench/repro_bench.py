"""Reproducibility bench (issue 48): the quick campaign (`make run`'s playbooks/quick.yaml) on this
machine under perturbations that stand in for other machines, one campaign each, and the table a
user should expect across them.

Perturbations (each started before its campaign and ended by PID after it):

- ``quiet``: nothing else runs (the other perturbations' reference). With ``--quiet-runs K``
  (K > 1) it runs K times, ``quiet``, ``quiet-2``, ..., spread between the perturbations, and
  each run's ``slowdown_vs_quiet`` is against the mean of the quiet runs' slowdowns: on a VM whose
  uncongested trial changes between campaigns minutes apart (2026-12-01 here, an AMD EPYC: 0.76-
  0.84 s in one quiet campaign, 0.63-0.66 s in the next), one quiet run is no reference; the JSON's
  ``quiet_slowdowns`` says how far the quiet runs themselves spread.
- ``hog-cpu0`` / ``hog-cpu1``: a busy loop (``sh -c 'while :; do :; done'``) pinned to that core:
  another machine with less CPU to spare (CPU 1, the last, is where the flood's senders and
  receivers are pinned, ``pin_cpu: last``).
- ``timer-slack-50us``: ITGSend with the kernel's default 50 us timer slack instead of 1 ns
  (``QOSLAB_SENDER_TIMER_SLACK_NS=50000``): a machine that keeps timers differently. Under the old
  plain pacing this moved the senders' rate by 25 % (ditgpacing's field note: 4,640 against 6,050
  packets/s); a kernel-paced flood must not notice.
- ``timer-hammer``: a process on the senders' core waking every 50 us (``time.sleep(5e-5)`` in a
  loop: ~10-20 thousand timer wake-ups a second), competing for the same hrtimers.

The fidelity monitor judges the busy loops' trials ``invalid`` (outside_cores): that is its job;
the bench runs with ``fidelity: {retry_invalid: false}`` (a playbook copy) so each campaign has
the playbook's trial count, and reports the statistics over all trials, as the campaign itself
does when leaving the invalid ones out would leave too few.

    flock /tmp/qoslab-testbed.lock .venv/bin/python bench/repro_bench.py            # all, ~7-12 min
    flock /tmp/qoslab-testbed.lock .venv/bin/python bench/repro_bench.py --quiet-runs 3  # quiet 3 times
    .venv/bin/python bench/repro_bench.py --only quiet,timer-slack-50us --trials 4  # a subset

Writes ``bench/results/repro.json`` (machine facts, per perturbation the campaign folder and its
figures) and prints the Markdown table of bench/README.md. Each campaign folder stays under
``results/repro/`` for `qoslab report`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from machinefacts import machine_facts  # noqa: E402
from qoslab.trials.store import Store  # noqa: E402

QOSLAB = REPO / ".venv" / "bin" / "qoslab"
BASE, CONGESTED = "no congestion fifo", "congestion fifo"
HOG = ["sh", "-c", "while :; do :; done"]
HAMMER = [sys.executable, "-c", "import time\nwhile True: time.sleep(5e-5)"]


def _last_cpu() -> int:
    return (os.cpu_count() or 1) - 1


def perturbations() -> dict[str, tuple[list[list[str]], dict[str, str]]]:
    """name -> (commands to run beside the campaign, environment added to the campaign's)."""
    last = str(_last_cpu())
    return {
        "quiet": ([], {}),
        "hog-cpu0": ([["taskset", "-c", "0", *HOG]], {}),
        f"hog-cpu{last}": ([["taskset", "-c", last, *HOG]], {}),
        "timer-slack-50us": ([], {"QOSLAB_SENDER_TIMER_SLACK_NS": "50000"}),
        "timer-hammer": ([["taskset", "-c", last, *HAMMER]], {}),
    }


def playbook_copy(playbook: Path, trials: int | None, folder: Path) -> Path:
    """The playbook with ``fidelity.retry_invalid: false`` (and ``trials`` when given), written
    into ``folder``; its paths stay repo-relative."""
    data = yaml.safe_load(playbook.read_text())
    data.setdefault("fidelity", {})["retry_invalid"] = False
    if trials is not None:
        data["trials"] = trials
    out = folder / playbook.name
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def _comparison(stats: dict[str, Any], a: str, b: str) -> dict[str, Any]:
    return next(c for c in stats["comparisons"] if c["a"] == a and c["b"] == b)


def figures(folder: Path) -> dict[str, Any]:
    """The table's figures of one campaign folder: slowdown (congestion fifo / no congestion fifo)
    with its BCa interval, congested-fifo CV, Welch and Holm p, fidelity counts, the worst flood
    sender's rate error in a congested trial, the median harness overhead, and the thesis
    profile's recovery."""
    stats = json.loads((folder / "stats.json").read_text())
    c = _comparison(stats, BASE, CONGESTED)
    rec = next((r for r in stats.get("recovery", []) if r.get("congested") == CONGESTED), None)
    counts = {"ok": 0, "degraded": 0, "invalid": 0, "unknown": 0}
    for per in (stats.get("fidelity") or {}).get("counts", {}).values():
        for k in counts:
            counts[k] += per.get(k, 0)
    with Store(folder / "trials.sqlite", readonly=True) as store:
        pacing = [float(v) for r in store.trials(counted=True)
                  if r.condition.startswith("congestion") and (v := r.get("fidelity_pacing_error")) is not None]
    overhead = (stats.get("overhead_s") or {}).get("median")
    return {"slowdown": c["ratio"], "slowdown_ci95": c.get("ratio_ci95"),
            # the ratio is 1 + penalty / uncongested: the penalty is the network's, the uncongested
            # time the machine's compute (a core twice as fast: half the denominator)
            "uncongested_s": stats["conditions"][BASE]["mean"], "penalty_s": c.get("difference_s"),
            "congested_fifo_cv": stats["conditions"][CONGESTED]["cv"],
            "welch_p": c.get("welch_t_p"), "holm_p": c.get("welch_t_p_holm"),
            "fidelity": counts, "worst_pacing_error": max(pacing) if pacing else None,
            "overhead_median_s": overhead,
            "recovery": rec.get("ratio") if rec else None, "recovery_ci95": rec.get("ci95") if rec else None,
            "excluded_applied": (stats.get("fidelity") or {}).get("excluded_applied")}


def run_one(name: str, extra: list[list[str]], env: dict[str, str], playbook: Path, out: Path,
            log: Callable[[str], None]) -> dict[str, Any]:
    """One campaign under one perturbation; every process it started ended by PID."""
    procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
             for cmd in extra]
    t0 = time.monotonic()
    campaign = subprocess.Popen([str(QOSLAB), "campaign", "run", str(playbook), "--out", str(out)], cwd=REPO,
                                env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = campaign.communicate(timeout=3600)
    except BaseException:  # Ctrl-C, a timeout: the campaign ends itself on SIGINT (its testbed and processes)
        campaign.send_signal(signal.SIGINT)
        try:
            campaign.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            campaign.kill()
            campaign.communicate()
        raise
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    took = time.monotonic() - t0
    (out.parent / f"{name}.log").write_text(stdout + stderr)
    if campaign.returncode != 0 or not (out / "stats.json").exists():
        tail = " ".join((stderr or stdout).strip().splitlines()[-1:])[:300]
        log(f"  {name}: campaign failed (exit {campaign.returncode}): {tail}")
        return {"name": name, "folder": str(out.relative_to(REPO)), "error": tail, "seconds": round(took, 1)}
    return {"name": name, "folder": str(out.relative_to(REPO)), "seconds": round(took, 1), **figures(out)}


def _fmt_p(p: float | None) -> str:
    return "-" if p is None else f"{p:.2g}"


def _times(r: dict[str, Any]) -> str:
    """``0.349 s, +0.689 s``: the uncongested fifo mean and what congestion added ("-" in a JSON
    of before 2026-12-01, which did not record them)."""
    if r.get("uncongested_s") is None or r.get("penalty_s") is None:
        return "-"
    return f"{r['uncongested_s']:.3f} s, {r['penalty_s']:+.3f} s"


def table(rows: list[dict[str, Any]]) -> str:
    """bench/README.md's Markdown table of the runs."""
    head = ("| perturbation | slowdown (BCa 95 %) | no congestion fifo, added by congestion | congested fifo CV | "
            "Welch p (Holm) | fidelity ok / degraded / invalid | worst sender rate error | recovery, thesis profile | "
            "overhead median |\n|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | failed: {r['error']} | | | | | | | |")
            continue
        ci = r.get("slowdown_ci95") or [None, None]
        rci = r.get("recovery_ci95") or [None, None]
        f = r["fidelity"]
        rec = "-" if r["recovery"] is None else (f"{100 * r['recovery']:.1f} % [{100 * rci[0]:.1f}, {100 * rci[1]:.1f}]"
                                                 if rci[0] is not None else f"{100 * r['recovery']:.1f} %")
        pe = "-" if r["worst_pacing_error"] is None else f"{100 * r['worst_pacing_error']:.1f} %"
        ov = "-" if r["overhead_median_s"] is None else f"{r['overhead_median_s']:.2f} s"
        lines.append(f"| {r['name']} | {r['slowdown']:.2f}x [{ci[0]:.2f}, {ci[1]:.2f}] | {_times(r)} | "
                     f"{100 * r['congested_fifo_cv']:.1f} % | {_fmt_p(r['welch_p'])} ({_fmt_p(r['holm_p'])}) | "
                     f"{f['ok']} / {f['degraded']} / {f['invalid']} | {pe} | {rec} | {ov} |")
    return "\n".join(lines)


def order(names: list[str], quiet_runs: int) -> list[str]:
    """The runs in the order they run: ``names`` with ``quiet`` first, and with ``quiet_runs`` > 1
    its repeats (``quiet-2``, ...) spread evenly between the other names (none without ``quiet``
    in ``names``). Pure."""
    if "quiet" not in names or quiet_runs <= 1:
        return list(names)
    others, gaps = [n for n in names if n != "quiet"], quiet_runs - 1
    out, start = ["quiet"], 0
    for j in range(1, gaps + 1):  # the others in `gaps` runs of nearly equal length, a quiet repeat after each
        end = -(-len(others) * j // gaps)  # ceil
        out += [*others[start:end], f"quiet-{j + 1}"]
        start = end
    return out


def relative_to_quiet(rows: list[dict[str, Any]]) -> None:
    """Set each run's ``slowdown_vs_quiet``: its slowdown over the mean of the quiet runs'
    (``quiet``, ``quiet-N``; those without an error), rounded to 4 digits; nothing without one."""
    quiet = [r["slowdown"] for r in rows if _is_quiet(r["name"]) and "error" not in r]
    if not quiet:
        return
    ref = sum(quiet) / len(quiet)
    for r in rows:
        if "error" not in r:
            r["slowdown_vs_quiet"] = round(r["slowdown"] / ref, 4)


def _is_quiet(name: str) -> bool:
    return name == "quiet" or (name.startswith("quiet-") and name[6:].isdigit())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--playbook", type=Path, default=REPO / "playbooks" / "quick.yaml")
    ap.add_argument("--only", default="", help="comma-separated perturbations (default: all): "
                    + ", ".join(perturbations()))
    ap.add_argument("--trials", type=int, default=None, help="trials per condition (default: the playbook's)")
    ap.add_argument("--quiet-runs", type=int, default=1, help="times the quiet reference runs, spread between the "
                    "perturbations (1-5; the ratios are against their mean)")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "repro.json")
    args = ap.parse_args(argv)
    if not 1 <= args.quiet_runs <= 5:
        print(f"error: --quiet-runs {args.quiet_runs}: give 1 to 5", file=sys.stderr)
        return 2
    all_p = perturbations()
    names = [n for n in args.only.split(",") if n] or list(all_p)
    unknown = [n for n in names if n not in all_p]
    if unknown:
        print(f"error: unknown perturbation(s) {', '.join(unknown)}; known: {', '.join(all_p)}", file=sys.stderr)
        return 2
    names = order(names, args.quiet_runs)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    base = REPO / "results" / "repro" / stamp
    base.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    t_start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="qoslab-repro-") as tmp:
        pb = playbook_copy(args.playbook, args.trials, Path(tmp))
        for i, name in enumerate(names):
            done = time.monotonic() - t_start
            eta = f", ETA {done / i * (len(names) - i) / 60:.0f} min" if i else ""
            print(f"[{i + 1}/{len(names)}] {name}{eta} ...", flush=True)
            extra, env = all_p["quiet" if _is_quiet(name) else name]
            row = run_one(name, extra, env, pb, base / name, lambda s: print(s, flush=True))
            rows.append(row)
            if "error" not in row:
                print(f"  {name}: slowdown {row['slowdown']:.2f}x, congested fifo CV {100 * row['congested_fifo_cv']:.1f} %, "
                      f"Holm p {_fmt_p(row['holm_p'])}, fidelity {row['fidelity']}, {row['seconds']:.0f} s", flush=True)
    relative_to_quiet(rows)
    quiet_slowdowns = [round(r["slowdown"], 4) for r in rows if _is_quiet(r["name"]) and "error" not in r]
    doc = {"bench": "repro", "playbook": str(args.playbook.relative_to(REPO)) if args.playbook.is_relative_to(REPO)
           else str(args.playbook), "machine": machine_facts(), "started_utc": stamp,
           "load_avg_end": os.getloadavg(), "quiet_slowdowns": quiet_slowdowns, "runs": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(table(rows))
    print(f"wrote {args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted: the running campaign was ended by SIGINT (its folder stays under results/repro/; "
              "`qoslab campaign run --resume FOLDER` finishes it); no JSON written", file=sys.stderr)
        sys.exit(130)
