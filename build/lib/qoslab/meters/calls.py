"""The ``calls`` meter: per-call latency of a trial's RMI calls, from two views (issue 24).

- The manager's own times (``workload/workload-calls.jsonl``, written by ``manager --calls-out``,
  java-workload/README.md "Client-side call times"): every trial. The latency columns are of its
  successful ``render`` calls (the workload's calls proper; ``lookup`` and ``prepare`` are set-up,
  counted per method in ``calls_json``).
- The wire's (``capture/calls.jsonl``, the capture tool's ``--calls``, capture/README.md "JRMP
  calls"): captured trials only. RTOs and retransmitted segments come from it, and every manager
  call is matched to the wire call it contains (:func:`match_calls`) to measure how well the two
  views agree (:func:`agreement`).

Columns (NULL when the view they need is missing):

========================  ==========================================================================
``calls_n``               successful render calls (manager)
``calls_p50_ms`` ...      render-call latency p50, p99 (Hyndman-Fan type 7, numpy's default) and max, ms
``calls_rto``             wire calls with an RTO (a silence >= 200 ms inside the call)
``calls_retransmitted``   retransmitted data segments inside wire calls
``calls_wire_n``          wire calls in the capture's calls.jsonl (complete or not)
``calls_agree_*_ms``      median and max of |manager latency - wire latency| over matched render calls
``calls_json``            ``{"methods": {method: n}, "failed": n, "wire": {...}, "agree": {...}}``
========================  ==========================================================================

Everything but :class:`CallMeter` and :func:`read_jsonl` is pure (tests: tests/unit/test_callmeter.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from qoslab.meters.base import BaseMeter, TrialContext
from qoslab.workloads.pool import CALLS_FILE

COLUMNS: dict[str, str] = {
    "calls_n": "INTEGER", "calls_p50_ms": "REAL", "calls_p99_ms": "REAL", "calls_max_ms": "REAL",
    "calls_rto": "INTEGER", "calls_retransmitted": "INTEGER", "calls_wire_n": "INTEGER",
    "calls_agree_median_ms": "REAL", "calls_agree_max_ms": "REAL", "calls_json": "TEXT"}
#: The RMI ports when the workload's result does not name them (WorkloadSettings' defaults).
DEFAULT_PORTS = {"registry": 1099, "export": 1100}


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The JSON objects of a JSON-lines file and the number of lines that were not one (a file
    cut by a killed writer loses its last line, not the trial's calls)."""
    out: list[dict[str, Any]] = []
    bad = 0
    for line in path.read_text(errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(rec, dict):
            out.append(rec)
        else:
            bad += 1
    return out, bad


def quantile7(values: Sequence[float], q: float) -> float:
    """Hyndman-Fan type 7 quantile (numpy's ``linear``) of a non-empty sample."""
    xs = sorted(values)
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def median(values: Sequence[float]) -> float:
    """The median (type 7 at 0.5) of a non-empty sample."""
    return quantile7(values, 0.5)


def server_of(rec: Mapping[str, Any], ports: Mapping[str, int]) -> str:
    """The ``ip:port`` a manager call went to: the registry port for ``lookup``, the export port
    otherwise (java-workload/README.md)."""
    port = ports["registry"] if rec.get("method") == "lookup" else ports["export"]
    return f"{rec.get('address')}:{port}"


def match_calls(manager: Iterable[Mapping[str, Any]], wire: Iterable[Mapping[str, Any]],
                ports: Mapping[str, int] = DEFAULT_PORTS) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """Pairs (manager call, wire call): a complete wire call on the manager call's server (address
    and port, :func:`server_of`) that lies inside it in time (``start_ns_wall <= start_ns <=
    end_ns <= end_ns_wall``). With several inside one manager call the longest is its match (a
    lookup's DGC dirty call is on the export port, so a render or lookup normally contains one);
    a wire call is matched at most once. Manager calls without a wire call (on this host's own
    worker, whose calls never reach the SPAN port, or outside the capture) are left out."""
    by_server: dict[str, list[Mapping[str, Any]]] = {}
    for w in wire:
        if w.get("complete") and w.get("end_ns") is not None and w.get("start_ns") is not None:
            by_server.setdefault(str(w.get("server")), []).append(w)
    used: set[int] = set()
    pairs: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    for m in manager:
        s, e = m.get("start_ns_wall"), m.get("end_ns_wall")
        if s is None or e is None:
            continue
        inside = [w for w in by_server.get(server_of(m, ports), [])
                  if id(w) not in used and s <= w["start_ns"] <= w["end_ns"] <= e]
        if inside:
            best = max(inside, key=lambda w: w["end_ns"] - w["start_ns"])
            used.add(id(best))
            pairs.append((m, best))
    return pairs


def latency_ms(w: Mapping[str, Any]) -> float:
    """A wire call's latency (ms): its ``latency_ms``, else from its ns times."""
    v = w.get("latency_ms")
    return float(v) if v is not None else (w["end_ns"] - w["start_ns"]) / 1e6


def agreement(pairs: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> dict[str, Any] | None:
    """How the two views of the matched calls agree: ``n``, ``median_ms`` and ``max_ms`` of
    |manager - wire latency|, the signed median (``signed_median_ms``: the manager brackets more,
    so it is >= 0) and the median start offset (``start_offset_median_ms``: wire start minus
    manager start). None without pairs."""
    d, off = [], []
    for m, w in pairs:
        d.append(float(m["latency_ms"]) - latency_ms(w))
        off.append((w["start_ns"] - m["start_ns_wall"]) / 1e6)
    if not d:
        return None
    a = [abs(x) for x in d]
    return {"n": len(d), "median_ms": median(a), "max_ms": max(a), "signed_median_ms": median(d),
            "start_offset_median_ms": median(off)}


def _r(v: float | None, nd: int = 4) -> float | None:
    return None if v is None else round(v, nd)


def trial_columns(manager: Sequence[Mapping[str, Any]] | None, wire: Sequence[Mapping[str, Any]] | None,
                  ports: Mapping[str, int] = DEFAULT_PORTS) -> dict[str, Any]:
    """The meter's columns from the manager's records (None: no calls file) and the capture's
    (None: no capture, or a capture without call matching)."""
    cols: dict[str, Any] = dict.fromkeys(COLUMNS)
    info: dict[str, Any] = {}
    if manager is not None:
        methods: dict[str, int] = {}
        for m in manager:
            methods[str(m.get("method"))] = methods.get(str(m.get("method")), 0) + 1
        render = [float(m["latency_ms"]) for m in manager if m.get("method") == "render" and m.get("ok")]
        info.update(methods=methods, failed=sum(1 for m in manager if not m.get("ok")))
        cols["calls_n"] = len(render)
        if render:
            cols.update(calls_p50_ms=_r(quantile7(render, 0.5)), calls_p99_ms=_r(quantile7(render, 0.99)),
                        calls_max_ms=_r(max(render)))
    if wire is not None:
        cols["calls_wire_n"] = len(wire)
        cols["calls_rto"] = sum(1 for w in wire if w.get("rto"))
        cols["calls_retransmitted"] = sum(int(w.get("retransmitted") or 0) for w in wire)
        info["wire"] = {"calls": len(wire), "complete": sum(1 for w in wire if w.get("complete"))}
        if manager is not None:
            pairs = match_calls(manager, wire, ports)
            per: dict[str, int] = {}
            for m, _ in pairs:
                per[str(m.get("method"))] = per.get(str(m.get("method")), 0) + 1
            info["wire"]["matched"] = per
            agree = agreement([(m, w) for m, w in pairs if m.get("method") == "render"])
            if agree is not None:
                cols["calls_agree_median_ms"] = _r(agree["median_ms"])
                cols["calls_agree_max_ms"] = _r(agree["max_ms"])
                info["agree"] = {k: (_r(v) if isinstance(v, float) else v) for k, v in agree.items()}
    if info:
        cols["calls_json"] = json.dumps(info, sort_keys=True)
    return cols


def wire_calls_path(trial_dir: Path, summary: Mapping[str, Any] | None) -> Path | None:
    """The capture's calls.jsonl of a trial: the summary's ``calls_file`` when it exists, else
    ``capture/calls.jsonl`` in the trial folder; None without a capture summary."""
    if summary is None:
        return None
    named = summary.get("calls_file")
    if isinstance(named, str) and Path(named).is_file():
        return Path(named)
    return trial_dir / "capture" / "calls.jsonl"


class CallMeter(BaseMeter):
    """Per-call latency from the manager's and the wire's view (module doc); reads its files
    after the trial (``columns``)."""

    COLUMNS: ClassVar[Mapping[str, str]] = COLUMNS

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        """The ``calls_*`` columns (NULL where a view is missing); unreadable lines are logged."""
        manager = wire = None
        name = ctx.result.get("calls_file")
        if isinstance(name, str) and (ctx.trial_dir / "workload" / name).is_file():
            manager, bad = read_jsonl(ctx.trial_dir / "workload" / name)
            if bad:
                ctx.log(f"calls meter: {bad} unreadable line(s) in the manager's {name}")
        elif (ctx.trial_dir / "workload" / CALLS_FILE).is_file():
            manager, _ = read_jsonl(ctx.trial_dir / "workload" / CALLS_FILE)
        path = wire_calls_path(ctx.trial_dir, ctx.capture_summary)
        if path is not None and path.is_file():
            wire, bad = read_jsonl(path)
            if bad:
                ctx.log(f"calls meter: {bad} unreadable line(s) in the capture's {path.name}")
        ports = {**DEFAULT_PORTS, **(ctx.result.get("rmi_ports") or {})}
        return trial_columns(manager, wire, ports)
