"""Emulation fidelity, the verdict (pure): thresholds, one trial's measurements and the rule that
turns them into ``ok`` / ``degraded`` / ``invalid`` / ``unknown`` with the reasons.

The method is Mininet-HiFi's (Handigol et al., CoNEXT 2012): an emulation run is valid only
while the host keeps CPU headroom and the bottleneck link's packets leave at the spacing the link
rate implies; a trial that breaks this is flagged, not averaged. The sampler that measures a
trial is :mod:`.fidelity`; this module only judges (and is tested on plain numbers).

Checks (each names its measured value and threshold when it fails; thresholds are the playbook's
``fidelity:`` block, :class:`FidelityThresholds`, defaults below):

================= ============================================================= ===================
check             measured                                                      fails -> verdict
================= ============================================================= ===================
port_utilisation  per bottleneck port (the flooded hosts' switch ports; all the  < min_port_util-
                  trial's ports without a flood) the median departure rate over   isation -> invalid
                  the samples in which it must have sent all along, as a share
                  of the link rate; the lowest port counts. Needs
                  ``min_backlogged_samples`` such samples, else not judged.
                  Which samples (:func:`port_utilisation`): on a port a flood
                  fills (flows into it asking >= the link rate) those with a
                  queue at both ends; on any other port those whose queue at
                  the start alone lasts the whole sample
flood_ratio       per flow the flood's received rate on the wire / min(configured < min_flood_ratio
                  wire rate, its port's room: the link rate less the port's       -> invalid
                  other traffic, its departures less the floods through it; an
                  incast asking more than the room is judged as one flow, its
                  total: :func:`flood_ratios`); the lowest counts. A QoS profile
                  that serves the workload first leaves the flood 0.85 of the
                  link at 10 Mbit/s: that is the congestion working, not a failure
outside_cores     CPU of processes outside the testbed and this campaign (other   > max_outside_cores
                  users' builds, a CPU hog), cores averaged over the window       -> invalid
emulation_share   CPU the emulation itself takes from the workload: the flood's   > max_emulation_
                  processes plus softirq (forwarding), as a share of all cores    share -> degraded
                  (on a real cluster both run on other hardware); it can exceed
                  1: with tick accounting a softirq tick is also the interrupted
                  task's stime (:mod:`.cpu`), so loaded senders count twice
host_cpu_loss     with a topology ``cpu:`` block, in place of emulation_share:   > max_host_cpu_loss
                  the share of the trial's hosts' CPU budget that work on their   -> degraded
                  cores which is not theirs took (:mod:`.cpuloss`; issue 42)
idle_share        median share of the machine's CPU time idle per sample          < min_idle_share
                                                                                  -> degraded
worker_wait_share the worker JVMs' run-queue wait / (wait + run) over the window  > max_worker_wait_
                  (/proc/PID/task/*/schedstat)                                    share -> degraded
pacing_error      per flow |sent / configured packets/s - 1| of the sender        > max_pacing_error
                                                                                  -> degraded
offered_load      per flooded port the flood's load as sent (share of the link)   other side of
                  against the load asked (:func:`offered_load_crossings`)         1 - offered_load_
                                                                                  margin -> invalid
cpu_steal         time the hypervisor ran something else on this machine's CPUs   > max_steal_share
                  (/proc/stat steal) as a share of all cores' time in the window  -> invalid
samples           samples taken in the window                                     < min_samples
                                                                                  -> degraded
================= ============================================================= ===================

Defaults, measured on this 2-core machine (``quick.yaml``'s workload, 10 Mbit/s, issue 25's runs in
docs/lab-notes.md, "The fidelity monitor"): without outside load a congested-fifo trial has a
median idle share of 0.80-0.89, but every compute-bound trial (no congestion, or congestion under
``thesis``) has 0.00-0.07, because four worker JVMs on two cores saturate them by design, and its
workers wait 0.57-0.69 of their time in a run queue; with two busy loops outside the testbed the
idle share is 0.00 everywhere, worker waits 0.68-0.91, and the outside processes take 0.52-1.71
cores. A later clean compute-bound trial reached a worker wait of 0.95 (its JVMs' many threads
contend with each other). So the idle-share and worker-wait checks are off by default
(``min_idle_share: 0``, ``max_worker_wait_share: 1``: set them for a network-bound workload;
both values are always stored), and the outside load decides (0.25 cores). Ports ran at
0.99-1.01 of the link rate while backlogged, floods arrived at 0.92-0.99 of their rate, senders
paced within 2 %.

The CPU confound (docs/lab-notes.md): at 50 Mbit/s the ports and the flood still keep their
rates, but the flood's processes and the forwarding take about a core of the two and the
congested-thesis render time doubles. ``emulation_share`` catches it: the lab notes' sweep had
flood + softirq at 0.27 / 0.46 / 1.03 / 2.07 cores at 10 / 20 / 50 / 100 Mbit/s, i.e. 0.14 /
0.23 / 0.52 / 1.04 of two cores; 0.25 lets 10 and 20 pass. On a machine with more cores the same
load is a smaller share, so higher rates pass there.

Why two sample tests for ``port_utilisation``: a queue at both ends of a 100 ms sample proves the
port busy all along only while arrivals keep it full (a flood at >= the link rate). Request/reply
traffic fills a port in bursts: MPJ Express's 64 KiB ping-pong left Gi1/0/1's queue non-empty at
both ends of 50 of its samples that sent 0.43-0.51 of the link, and every uncongested MPJ trial
of ``docs/results/mechanisms-mpj-20261125`` was judged invalid. The kernel's own trace of that
port's dequeues (tracefs ``qdisc:qdisc_dequeue`` over an uncongested MPJ trial, 2026-11-25) shows
the port faithful: while its queue held packets the gaps between dequeues were 1.203 / 1.211 /
1.231 ms (p10 / p50 / p99 of 3,526; none over 3 ms), a 1514-byte frame's time at 10 Mbit/s
(1.211 ms); it idled between bursts, inside the samples. A queue at the start that alone lasts
the sample (queued bits >= link rate x sample) proves the port busy whatever arrives; on a port
without a flood only such samples count.

A check without data (no flood, no backlogged sample, no worker) is not judged; a trial where no
check could be judged, or not measured on this machine (a real cluster), is ``unknown``.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from qoslab.yamlio import StrictModel

from .fidelitymeasure import (
    FLOODED_SHARE,
    FlowRates,
    Measurements,
    PortInterval,
    flood_capacity,
    flood_ratios,
    flooded_ports,
    max_min_shares,
    port_utilisation,
)

Verdict = Literal["ok", "degraded", "invalid", "unknown"]
VERDICTS: tuple[str, ...] = ("ok", "degraded", "invalid", "unknown")


class FidelityThresholds(StrictModel):
    """The playbook's ``fidelity:`` block (every field optional; see the module doc's table)."""

    min_port_utilisation: float = Field(0.9, ge=0, le=1.5, description="bottleneck port departure rate / link "
                                                                       "rate while backlogged; below: invalid")
    min_flood_ratio: float = Field(0.9, ge=0, le=1.5, description="flood received / min(configured, link rate) "
                                                                  "on the wire; below: invalid")
    max_outside_cores: float = Field(0.25, ge=0, le=1024, description="cores used by processes outside the testbed "
                                                                     "and the campaign; above: invalid")
    max_emulation_share: float = Field(0.25, ge=0, le=1, description="flood processes + softirq as a share of "
                                                                     "all cores; above: degraded")
    max_host_cpu_loss: float = Field(0.25, ge=0, le=1, description="share of the hosts' CPU budget the emulation "
                                                                   "took (topology cpu: block); above: degraded")
    min_idle_share: float = Field(0.0, ge=0, le=1, description="median idle share of the CPUs per sample; "
                                                               "below: degraded (0 = off, the default: see above)")
    max_worker_wait_share: float = Field(1.0, ge=0, le=1, description="worker JVMs' run-queue wait / (wait + "
                                                                       "run); above: degraded (1 = off, the "
                                                                       "default: see above)")
    max_pacing_error: float = Field(0.1, ge=0, le=10, description="|sent / configured packets/s - 1| of a flood "
                                                                  "sender; above: degraded")
    offered_load_margin: float = Field(0.01, ge=0, le=0.5, description="a flooded port's offered load (the flood "
                                       "as sent, share of the link rate) on the other side of 1 - margin than "
                                       "the flood asked: invalid (a different experiment: issue 48)")
    max_steal_share: float = Field(0.05, ge=0, le=1, description="CPU time the hypervisor took (steal) as a share "
                                                                 "of all cores' time in the window; above: invalid")
    retry_invalid: bool = Field(True, description="a counted trial judged invalid runs again within the "
                                                  "playbook's retries (its attempt kept as NNNN.attempt-K)")
    min_samples: int = Field(5, ge=1, le=100_000, description="samples in the workload window; fewer: degraded")
    min_backlogged_samples: int = Field(3, ge=1, le=100_000, description="backlogged samples a port needs before "
                                                                         "its utilisation is judged")
    period_s: float = Field(0.1, gt=0.005, le=0.1, description="sampling period (seconds; >= 10 Hz)")
    max_invalid_share: float = Field(0.1, ge=0, le=1, description="a campaign with a larger share of invalid "
                                                                  "trials says so on the console and in the report")


@dataclass(frozen=True)
class Reason:
    """A failed check: its name, the measured value, the threshold and what it makes the trial."""

    check: str
    value: float
    threshold: float
    verdict: Verdict
    text: str

    def as_dict(self) -> dict[str, Any]:
        """Plain data (the ``fidelity_reasons`` column holds a JSON list of these)."""
        return {"check": self.check, "value": round(self.value, 4), "threshold": self.threshold,
                "verdict": self.verdict, "text": self.text}


def _median(v: Iterable[float]) -> float | None:
    vals = list(v)
    return statistics.median(vals) if vals else None


def summary(m: Measurements, th: FidelityThresholds) -> dict[str, Any]:
    """The numeric results the checks use: ``samples``, ``idle_min``, ``idle_median``,
    ``port_util`` (lowest per-port median over backlogged samples; ports with too few are left
    out), ``backlogged`` (backlogged samples of the judged ports), ``port_util_by_port``,
    ``drops``, ``flood_ratio``, ``pacing_error``, ``worker_wait_share``, ``outside_cores``."""
    per_port: dict[str, float] = {}
    backlogged = 0
    flooded = flooded_ports(m)
    for port, ivs in m.ports.items():
        u = port_utilisation(ivs, m.link_rate_bps, port in flooded)
        if len(u) >= th.min_backlogged_samples:
            per_port[port] = statistics.median(u)
            backlogged += len(u)
    ratio = flood_ratios(m)
    pacing = [abs(f.sent_pps / f.configured_pps - 1) for f in m.flows if f.configured_pps > 0]
    crossed = offered_load_crossings(m, th.offered_load_margin)
    busy = (m.worker_wait_s or 0.0) + (m.worker_run_s or 0.0)
    return {"samples": len(m.idle_shares), "idle_min": min(m.idle_shares) if m.idle_shares else None,
            "idle_median": _median(m.idle_shares), "port_util": min(per_port.values()) if per_port else None,
            "port_util_by_port": {p: round(u, 4) for p, u in per_port.items()}, "backlogged": backlogged,
            "drops": sum(iv.drops for ivs in m.ports.values() for iv in ivs),
            "flood_ratio": min(ratio) if ratio else None, "pacing_error": max(pacing) if pacing else None,
            "worker_wait_share": (m.worker_wait_s or 0.0) / busy if m.worker_wait_s is not None and busy > 0 else None,
            "outside_cores": m.outside_cores,
            "emulation_share": m.emulation_cores / m.cores if m.emulation_cores is not None else None,
            "host_cpu_loss": m.host_cpu_loss, "steal_share": m.steal_share,
            "offered_load": crossed[0] if crossed else None}


def _checks(s: Mapping[str, Any], th: FidelityThresholds) -> list[tuple[str, float | None, float, bool, Verdict, str]]:
    """(check, value, threshold, passed, verdict when failed, what it means) of every check."""
    def low(v: float | None, t: float) -> bool:
        return v is None or v >= t

    def high(v: float | None, t: float) -> bool:
        return v is None or v <= t

    load = s.get("offered_load")
    return [
        ("cpu_steal", s.get("steal_share"), th.max_steal_share, high(s.get("steal_share"), th.max_steal_share),
         "invalid", "the hypervisor ran something else on this machine's CPUs (steal): the machine, not the link, "
         "set this trial's timing"),
        ("offered_load", None if load is None else load[2], 1 - th.offered_load_margin, load is None, "invalid",
         "" if load is None else f"the flood offered port {load[0]} {load[2]:.3f} of the link where it asked "
         f"{load[1]:.3f}: across the link rate, so its queue {'never drains' if load[2] >= load[1] else 'drains'} "
         "unlike the experiment's (a different experiment)"),
        ("port_utilisation", s["port_util"], th.min_port_utilisation, low(s["port_util"], th.min_port_utilisation),
         "invalid", "a backlogged bottleneck port sent below the link rate (the machine, not the link, limited it)"),
        ("flood_ratio", s["flood_ratio"], th.min_flood_ratio, low(s["flood_ratio"], th.min_flood_ratio), "invalid",
         "the flood arrived below its configured rate"),
        ("outside_cores", s["outside_cores"], th.max_outside_cores, high(s["outside_cores"], th.max_outside_cores),
         "invalid", "processes outside the testbed took CPU"),
        ("emulation_share", None if s["host_cpu_loss"] is not None else s["emulation_share"], th.max_emulation_share,
         s["host_cpu_loss"] is not None or high(s["emulation_share"], th.max_emulation_share), "degraded",
         "the flood and the forwarding took CPU the workload needed (the CPU confound)"),
        ("host_cpu_loss", s["host_cpu_loss"], th.max_host_cpu_loss, high(s["host_cpu_loss"], th.max_host_cpu_loss),
         "degraded", "the emulation took CPU from the hosts' budget (work on the hosts' cores that is not theirs)"),
        ("idle_share", s["idle_median"], th.min_idle_share, low(s["idle_median"], th.min_idle_share), "degraded",
         "little CPU headroom"),
        ("worker_wait_share", s["worker_wait_share"], th.max_worker_wait_share,
         high(s["worker_wait_share"], th.max_worker_wait_share), "degraded", "the workers waited long for a core"),
        ("pacing_error", s["pacing_error"], th.max_pacing_error, high(s["pacing_error"], th.max_pacing_error),
         "degraded", "a flood sender missed its packet rate"),
        ("samples", float(s["samples"]), float(th.min_samples), s["samples"] >= th.min_samples, "degraded",
         "too few samples to judge the window"),
    ]


def verdict(m: Measurements, th: FidelityThresholds) -> tuple[Verdict, list[Reason], dict[str, Any]]:
    """The trial's verdict, the failed checks and the summary (:func:`summary`). Pure.

    ``invalid`` when any invalid-class check fails, else ``degraded`` when any other fails, else
    ``ok``; ``unknown`` when nothing but the sample count could be judged."""
    s = summary(m, th)
    checks = _checks(s, th)
    reasons = [Reason(name, v, t, sev, f"{name} {v:.3g}: {why}" if name in _OWN_TEXT
                      else f"{name} {v:.3g} {'<' if name in _LOWER else '>'} {t:g}: {why}")
               for name, v, t, ok, sev, why in checks if not ok and v is not None]
    judged = [name for name, v, *_ in checks if v is not None and name != "samples"]
    if not judged:
        return "unknown", [Reason("no_data", 0.0, 0.0, "unknown", "no check could be judged (no samples, no "
                                  "flood, no worker)")], s
    if any(r.verdict == "invalid" for r in reasons):
        return "invalid", reasons, s
    return ("degraded" if reasons else "ok"), reasons, s


_LOWER = {"port_utilisation", "flood_ratio", "idle_share", "samples"}
_OWN_TEXT = {"offered_load"}  # its text names both sides (the load crossed the threshold one way or the other)


def offered_load_crossings(m: Measurements, margin: float) -> list[tuple[str, float, float]]:
    """(port, asked load, sent load) of every flooded port whose flood, as its senders sent it,
    offered a load (sum of the flows' wire rates into the port as a share of the link rate) on
    the other side of ``1 - margin`` than the flood asked: a 0.95x flood sent at 1.0x leaves the
    port no drain (every byte the workload adds stays queued until the flood stops), a 1.0x flood
    sent at 0.97x drains it; either is a different experiment from the one asked (issue 48:
    plain-paced senders at 1.12-1.23x of a 0.95x flood). The sent rate of a flow is its configured
    wire rate x sent / configured packets/s; flows whose sent rate is not ``sent_exact`` (a
    kernel-paced flow measured by D-ITG's log) are left out. Pure."""
    asked: dict[str, float] = {}
    sent: dict[str, float] = {}
    for f in m.flows:
        if f.port is None or f.configured_pps <= 0 or not f.sent_exact:
            continue
        asked[f.port] = asked.get(f.port, 0.0) + f.configured_wire_bps / m.link_rate_bps
        sent[f.port] = sent.get(f.port, 0.0) + f.configured_wire_bps * f.sent_pps / f.configured_pps / m.link_rate_bps
    edge = 1 - margin
    return [(p, asked[p], sent[p]) for p in asked if (asked[p] < edge) != (sent[p] < edge)]


def headline(block: dict[str, Any] | None) -> str | None:
    """The first line ``qoslab campaign run`` prints about a campaign's statistics: every counted
    trial ok, or how many were not and why, naming each trial left out (invalid) and each still
    counted that the monitor doubted (degraded), with the checks that failed. None without a
    fidelity block (a campaign before the monitor)."""
    if not block:
        return None
    counts = block.get("counts") or {}
    total = sum(sum(c.values()) for c in counts.values())
    ok = sum(c.get("ok", 0) for c in counts.values())
    if total and ok == total:
        return f"fidelity: all {total} counted trials ok"
    parts = []

    def named(entries: list[dict[str, Any]], key: str) -> str:
        def checks(e: dict[str, Any]) -> str:
            got = e.get(key) or []
            names = [str(x.get("check")) if isinstance(x, dict) else str(x) for x in got]
            return "/".join(dict.fromkeys(names)) or "?"
        shown = ", ".join(f"#{e['idx']} {e['condition']} ({checks(e)})" for e in entries[:8])
        return shown + (f" and {len(entries) - 8} more" if len(entries) > 8 else "")

    bad, doubted = block.get("excluded") or [], block.get("degraded") or []
    if bad:
        where = "left out" if block.get("excluded_applied") else "still counted: too few would be left"
        parts.append(f"{len(bad)} invalid, {where}: {named(bad, 'reasons')}")
    if doubted:
        parts.append(f"{len(doubted)} degraded, still counted: {named(doubted, 'checks')}")
    rest = total - ok - len(bad) - len(doubted)
    if rest > 0:
        parts.append(f"{rest} not judged or unknown")
    counted_doubts = len(doubted) + (len(bad) if not block.get("excluded_applied") else 0)
    tail = (f"; the statistics below rest on {counted_doubts} trial(s) the fidelity monitor doubted"
            if counted_doubts else "")
    return f"fidelity: {total - ok} of {total} counted trials not ok: " + "; ".join(parts) + tail


def invalid_texts(row: Mapping[str, Any]) -> str:
    """The texts of the invalid checks in a trial row's ``fidelity_reasons`` (JSON), joined with
    "; " and at most 600 characters; "invalid" when none is readable. Pure."""
    try:
        reasons = json.loads(row.get("fidelity_reasons") or "[]")
    except (ValueError, TypeError):
        reasons = []
    texts = [str(r.get("text")) for r in reasons if isinstance(r, dict) and r.get("verdict") == "invalid"] \
        if isinstance(reasons, list) else []
    return "; ".join(texts)[:600] or "invalid"


def unknown(reason: str) -> tuple[Verdict, str]:
    """The verdict and reasons column of a trial that could not be measured here."""
    return "unknown", json.dumps([{"check": "not_measured", "verdict": "unknown", "text": reason}])


def reasons_json(reasons: Sequence[Reason]) -> str:
    """The ``fidelity_reasons`` column: a JSON list of the failed checks ([] when none)."""
    return json.dumps([r.as_dict() for r in reasons])


def campaign_counts(rows: Iterable[tuple[str, str | None]]) -> dict[str, dict[str, int]]:
    """Trials per condition and verdict from (condition, verdict or None) pairs; None counts as
    ``none`` (a trial measured before the monitor existed, or whose meter failed). Pure."""
    out: dict[str, dict[str, int]] = {}
    for cond, v in rows:
        d = out.setdefault(cond, dict.fromkeys((*VERDICTS, "none"), 0))
        d[v if v in VERDICTS else "none"] += 1
    return out


def invalid_warning(n_invalid: int, n_total: int, max_share: float, left_out: bool = True) -> str | None:
    """The campaign-level warning when more than ``max_share`` of the trials are invalid, else None
    (``left_out``: whether the main statistics leave them out)."""
    if n_total == 0 or n_invalid / n_total <= max_share:
        return None
    where = "left out of the main statistics" if left_out else "still IN the main statistics (see below)"
    return (f"{n_invalid} of {n_total} trials ({n_invalid / n_total:.0%}) were emulated unfaithfully (fidelity "
            f"invalid; more than {max_share:.0%}): they are {where}; this machine could not emulate this "
            "campaign faithfully (see `qoslab testbed calibrate`)")


__all__ = ["FLOODED_SHARE", "VERDICTS", "FidelityThresholds", "FlowRates", "Measurements", "PortInterval", "Reason",
           "Verdict", "campaign_counts", "flood_capacity", "flood_ratios", "flooded_ports", "headline",
           "invalid_texts", "invalid_warning", "max_min_shares", "offered_load_crossings", "port_utilisation",
           "reasons_json", "summary", "unknown", "verdict"]
