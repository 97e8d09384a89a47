"""The report's message-passing section (pure): seed 003's MPJ asked again under congestion.

A campaign of the ``mpj`` workload (``playbooks/seed003-mpj.yaml``: MPJ Express on 4 ranks x
flood x profile) has no mechanism factor: its "mechanisms" are the operations inside every trial
(MPJ ping-pong beside a plain-socket one, Barrier, Bcast, Allreduce), each timed per repetition in
the trial's ``workload-result.json`` (latency percentiles in seconds). Per operation and size:

- seed 003's published time per round trip (its section 4.0 ping-pong table, Java sockets: 25
  round trips per size, :data:`SEED003_PINGPONG`) beside the measured medians;
- per condition of the factorial block's recovery (baseline = uncongested FIFO, congested FIFO,
  congested with the QoS profile) the median over trials of the trials' p50 and p99 latency (ms);
- the slowdown under FIFO (congested / baseline) and the share of it the profile wins back
  ((congested - treated) / (congested - baseline)), for p50 and p99 alike; no interval (a handful
  of trials per cell; the factorial block's BCa interval covers the whole benchmark's time).

Inputs: condition -> the workload results of its counted trials (``report.trialresults``) and
stats.json's ``factorial`` block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import median
from typing import Any

import pandas as pd

#: Seed 003 (../shared/reference/003_*.txt), section 4.0 "PingPong Performance", Java sockets:
#: message bytes -> (plain socket "Optimal", MPJ) elapsed ms for loop = 25 round trips.
SEED003_PINGPONG: dict[int, tuple[int, int]] = {
    512: (8, 26), 1024: (8, 9), 2048: (9, 9), 4096: (9, 9), 8192: (11, 10), 16384: (10, 15), 32768: (18, 20),
    65536: (38, 36), 131072: (58, 56), 262144: (98, 109), 524288: (174, 188), 1048576: (309, 337)}
SEED003_LOOP = 25
#: The operations of an mpj result: (label, result key, size key or None).
OPERATIONS: tuple[tuple[str, str, str | None], ...] = (
    ("ping-pong MPJ", "pingpong", "bytes"), ("ping-pong socket", "socket_pingpong", "bytes"),
    ("barrier", "barrier", None), ("bcast", "bcast", "bytes"), ("allreduce (doubles)", "allreduce", "doubles"))


def latencies(result: Mapping[str, Any]) -> dict[tuple[str, int | None], Mapping[str, float]]:
    """One mpj ``workload-result.json`` as (operation label, size or None) -> its ``latency_s``
    percentiles (seconds: n, min, p50, p90, p99, max, mean); operations the result lacks are left out."""
    out: dict[tuple[str, int | None], Mapping[str, float]] = {}
    for label, key, size in OPERATIONS:
        v = result.get(key)
        if size is None and isinstance(v, Mapping):
            out[(label, None)] = v
        elif size is not None and isinstance(v, list):
            out.update({(label, int(e[size])): e["latency_s"] for e in v if "latency_s" in e})
    return out


def shown(measured: Sequence[int]) -> set[int]:
    """The sizes a table shows of ``measured``: the smallest, the largest and seed 003's."""
    return ({min(measured), max(measured)} | set(SEED003_PINGPONG)) & set(measured) if measured else set()


def _cell(results: Sequence[Mapping[str, Any]], op: tuple[str, int | None], q: str) -> float | None:
    vals = [lat[q] for r in results if (lat := latencies(r).get(op)) and lat.get(q) is not None]
    return median(vals) * 1000 if vals else None


def _published(label: str, size: int | None) -> float | None:
    pub = SEED003_PINGPONG.get(size or -1)
    if pub is None or not label.startswith("ping-pong"):
        return None
    return pub[0 if label.endswith("socket") else 1] / SEED003_LOOP


def _won(base: float | None, cong: float | None, treat: float | None) -> float | None:
    if base is None or cong is None or treat is None or cong == base:
        return None
    return (cong - treat) / (cong - base)


def mpj_rows(results: Mapping[str, Sequence[Mapping[str, Any]]],
             factorial: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """One dict per operation and shown size (:func:`shown`; Bcast at the smallest, 1 KiB and the
    largest) and factorial recovery: ``operation``, ``bytes`` (None: Barrier), ``seed003_ms``
    (published ms per round trip, ping-pong only, else None), ``n`` (trials of baseline, congested,
    treated), ``base_p50``/``base_p99``, ``cong_p50``/``cong_p99``, ``treat_p50``/``treat_p99`` (ms,
    medians over trials; None without a trial), ``slowdown_p50``/``_p99`` (congested / baseline),
    ``won_p50``/``_p99`` (share won back), ``profile``. Empty without recoveries or results."""
    rows: list[dict[str, Any]] = []
    for rec in (factorial or {}).get("recoveries", []):
        cells = {k: results.get(rec[k], []) for k in ("baseline", "congested", "treated")}
        ops = sorted({op for rs in cells.values() for r in rs for op in latencies(r)},
                     key=lambda o: ([lb for lb, _, _ in OPERATIONS].index(o[0]), o[1] or 0))
        sizes = {lb: shown([s for o, s in ops if o == lb and s is not None]) for lb, _, _ in OPERATIONS}
        sizes["bcast"] &= {min(sizes["bcast"] or [0]), 1024, max(sizes["bcast"] or [0])}
        for op in ops:
            if op[1] is not None and op[1] not in sizes[op[0]]:
                continue
            row: dict[str, Any] = {"operation": op[0], "bytes": op[1], "seed003_ms": _published(*op),
                                   "n": tuple(len(cells[k]) for k in ("baseline", "congested", "treated")),
                                   "profile": rec.get("profile")}
            for q in ("p50", "p99"):
                b, c, t = (_cell(cells[k], op, q) for k in ("baseline", "congested", "treated"))
                row.update({f"base_{q}": b, f"cong_{q}": c, f"treat_{q}": t, f"won_{q}": _won(b, c, t),
                            f"slowdown_{q}": c / b if b and c is not None else None})
            rows.append(row)
    return rows


def _f(v: float | None, fmt: str) -> str:
    return "-" if v is None else fmt.format(v)


def mpj_table(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The rows of :func:`mpj_rows` as the report's table (strings, ms)."""
    out = []
    for r in rows:
        size = "-" if r["bytes"] is None else f"{r['bytes']:,}"
        out.append({"operation": r["operation"], "size": size, "seed 003 (ms)": _f(r["seed003_ms"], "{:.2f}"),
                    "no congestion p50 / p99 (ms)": f"{_f(r['base_p50'], '{:.3f}')} / {_f(r['base_p99'], '{:.3f}')}",
                    "congestion, fifo p50 / p99": f"{_f(r['cong_p50'], '{:.3f}')} / {_f(r['cong_p99'], '{:.3f}')}",
                    "slowdown p50 / p99": f"{_f(r['slowdown_p50'], '{:.1f}x')} / {_f(r['slowdown_p99'], '{:.1f}x')}",
                    f"congestion, {r['profile']} p50 / p99": f"{_f(r['treat_p50'], '{:.3f}')} / "
                                                             f"{_f(r['treat_p99'], '{:.3f}')}",
                    "won back p50 / p99": f"{_f(r['won_p50'], '{:.0%}')} / {_f(r['won_p99'], '{:.0%}')}",
                    "trials": "/".join(map(str, r["n"]))})
    return pd.DataFrame(out)


def pingpong_order(rows: Sequence[Mapping[str, Any]]) -> list[tuple[int, str, str]]:
    """Per ping-pong size seed 003 published: (bytes, the seed's faster, the measured faster at
    the uncongested median), each "socket", "MPJ" or "equal"; sizes measured on one side only are
    left out."""
    def faster(sock: float | None, mpj: float | None) -> str:
        return "equal" if sock == mpj else "socket" if (sock or 0) < (mpj or 0) else "MPJ"
    pp = {(r["operation"], r["bytes"]): r["base_p50"] for r in rows if r["operation"].startswith("ping-pong")}
    out = []
    for size, (sock, mpj) in sorted(SEED003_PINGPONG.items()):
        ms, mm = pp.get(("ping-pong socket", size)), pp.get(("ping-pong MPJ", size))
        if ms is not None and mm is not None:
            out.append((size, faster(sock, mpj), faster(ms, mm)))
    return out


def mpj_intro(rows: Sequence[Mapping[str, Any]]) -> str:
    """The section's explanation: seed 003's ordering, which sizes keep it, the columns' meaning."""
    order = pingpong_order(rows)
    same = [s for s, pub, meas in order if pub == meas]
    held = (f"Measured without congestion (median round trip), the seed's faster side is the faster one at "
            f"{len(same)} of {len(order)} of its sizes" + (f" ({', '.join(f'{s:,} B' for s in same)})" if same else "")
            if order else "No ping-pong size of the seed's table was measured")
    return ("Seed 003 (section 4.0, Java sockets) times 25 ping-pong round trips per size: MPJ 1-5 % slower than "
            "plain sockets (the seed's words); its table has the socket faster at 512 B (0.32 against 1.04 ms per "
            "round trip), 1 KiB, 16-32 KiB and 256 KiB-1 MiB, both equal at 2-4 KiB, MPJ faster at 8 KiB and "
            "64-128 KiB. "
            f"{held}. Columns: medians over trials of each trial's p50 and p99 latency (ms; ping-pong per round "
            "trip); slowdown = congested FIFO / uncongested FIFO; *won back* = (congested FIFO - congested with the "
            "profile) / (congested FIFO - uncongested), no interval (n per cell: *trials*). Trials that did not "
            "finish have no latencies and are missing here (their count: the timed-out trials above).")
