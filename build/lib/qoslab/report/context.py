"""What the report is about (pure, issue 34): the workload, its metric and unit, and which of the
report's sections apply, so a report of a workload nobody here wrote reads as one.

- The thesis sections (Table 5 beside the thesis's, the "Figure 22 style" and "Figures 9-18 style"
  titles) apply only to the RayTracer measured in seconds: the thesis's workload and metric.
- JVM wording (worker JVMs, the manager JVM) only to the Java workloads.
- The flood's generator is named as the playbook names it (D-ITG by default).
- The switch section names each profile's own marking (its rules' ``set_dscp``, or the
  workload's own DSCP with ``trust``) and the egress queue that DSCP goes to.
- Profile and flood references are shown by their file stem.

Inputs are parsed JSON/YAML (stats.json, the campaign's playbook.yaml, its input snapshot's profile
files); nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from qoslab.ios import DEFAULT_DSCP_OUTPUT_QUEUE
from qoslab.workloads.metrics import DEFAULT, Metric, decimals

from .factors import stem as factor_stem

#: The workloads whose processes are JVMs (the built-in Java workloads).
JAVA_KINDS = frozenset({"raytracer", "matmul", "pingpong"})
GENERATORS = {"ditg": "D-ITG", "iperf3": "iperf3"}


@dataclass(frozen=True)
class ReportContext:
    """``kind`` (workload kind), ``metric`` (the primary metric), ``places`` (its decimals in
    tables and figures), ``thesis_like`` (the thesis's workload and metric: its comparisons
    apply), ``java`` (the workers are JVMs), ``generator`` (the flood generator's display name),
    ``dscp`` (the workload's own marking, or None)."""

    kind: str
    metric: Metric
    places: int
    thesis_like: bool
    java: bool
    generator: str
    dscp: int | None

    @property
    def unit(self) -> str:
        """The primary metric's unit ("s" for the built-in workloads)."""
        return self.metric.unit

    @property
    def times(self) -> bool:
        """The metric is the run's elapsed time (every built-in workload): "trial times"."""
        return self.metric.name == "elapsed_s"

    @property
    def axis(self) -> str:
        """An axis label for the primary metric: its name without a trailing ``_UNIT`` and its unit:
        "elapsed s", "p99_rtt ms" (not "p99_rtt_ms ms"), "ops_per_s ops/s"."""
        name, suffix = self.metric.name, "_" + self.unit.replace("/", "_per_")
        return f"{name[:-len(suffix)] if name.endswith(suffix) and len(name) > len(suffix) else name} {self.unit}"

    def val(self, v: float) -> str:
        """A value of the primary metric with its unit ("38.100 s", "1.02 ms")."""
        return f"{v:.{self.places}f} {self.unit}"

    @property
    def workers(self) -> str:
        """How the worker processes are called: "worker JVMs" or "worker processes"."""
        return "worker JVMs" if self.java else "worker processes"


def stem(ref: str | None) -> str:
    """A profile or flood reference by its file stem ("qos-profiles/ef.yaml" -> "ef"); a bare
    name as given; "" for None."""
    return factor_stem(ref) if ref else ""


def context(stats: Mapping[str, Any], playbook: Mapping[str, Any] | None,
            flood: Mapping[str, Any] | None = None) -> ReportContext:
    """The report's context from stats.json (its ``metric`` block, absent: elapsed_s in seconds),
    the campaign's parsed playbook (None: the thesis's own data, the RayTracer) and its flood file
    (the generator when the playbook names none)."""
    main = stats.get("table5", stats)
    metric = Metric.from_dict(stats["metric"]) if stats.get("metric") else DEFAULT.primary
    wl = (playbook or {}).get("workload") or {}
    kind = str(wl.get("kind") or "raytracer")
    places = decimals(metric, [c.get("mean") for c in main.get("conditions", {}).values()])
    gen = str((playbook or {}).get("generator") or (flood or {}).get("generator") or "ditg")
    dscp = wl.get("dscp")
    return ReportContext(kind, metric, places, kind == "raytracer" and metric == DEFAULT.primary,
                         kind in JAVA_KINDS, GENERATORS.get(gen, gen), dscp if isinstance(dscp, int) else None)


def flood_generators(floods: Iterable[Mapping[str, Any] | None], playbook: Mapping[str, Any] | None) -> list[str]:
    """Display names of the generators of a campaign's floods (the parsed ``inputs/flood.yaml``
    and every condition's own ``inputs/floods/*.yaml``; the playbook's ``generator`` overrides
    them all), in order of first use; D-ITG for a flood that names none."""
    if (playbook or {}).get("generator"):
        gens = [str((playbook or {})["generator"])]
    else:
        gens = [str((f or {}).get("generator") or "ditg") for f in floods]
    return list(dict.fromkeys(GENERATORS.get(g, g) for g in gens))


def flood_heading(floods: Iterable[Mapping[str, Any] | None], playbook: Mapping[str, Any] | None) -> str:
    """The heading of the report's achieved-rates table, naming every generator the floods used
    (e.g. "D-ITG (from ITGDec) and iperf3 (its JSON report)", not D-ITG for an iperf3 incast)."""
    how = {"D-ITG": "D-ITG (from ITGDec)", "iperf3": "iperf3 (its JSON report)"}
    gens = [how.get(g, g) for g in flood_generators(floods, playbook)] or ["the generator"]
    return f"## The congestion: achieved rates per flow, mean per trial, by {' and '.join(gens)}"


def profile_marking(profile: Mapping[str, Any], workload_dscp: int | None) -> list[int]:
    """The DSCP values a profile gives the workload: its rules' ``set_dscp``, else (``trust``)
    the workload's own marking; [] when it marks nothing."""
    marks = sorted({int(r["set_dscp"]) for r in profile.get("rules") or [] if r.get("set_dscp") is not None})
    if not marks and profile.get("trust") and workload_dscp is not None:
        marks = [workload_dscp]
    return marks


def output_queue(profile: Mapping[str, Any], dscp: int) -> int:
    """The egress queue (1-4) a DSCP goes to under a profile: its ``dscp_output_map`` (queue ->
    DSCPs), else the 3750's default map (40-47 -> queue 1, 0-15 -> queue 2)."""
    for q, dscps in (profile.get("dscp_output_map") or {}).items():
        if dscp in dscps:
            return int(q)
    return DEFAULT_DSCP_OUTPUT_QUEUE[dscp]


def marking_sentence(profiles: Iterable[Mapping[str, Any]], ctx: ReportContext) -> str:
    """The switch section's sentence on where the workload's packets go, one clause per profile
    with ``mls_qos`` (e.g. "with the *thesis* profile queue 1 is the expedite queue of DSCP 40
    (the workload) and the flood (DSCP 0) goes to queue 2")."""
    parts = []
    for p in profiles:
        if not p.get("mls_qos"):
            continue
        marks = profile_marking(p, ctx.dscp)
        expedite = bool((p.get("egress") or {}).get("priority_queue_out"))
        if not marks:
            parts.append(f"the {p['name']} profile marks nothing: every packet keeps DSCP 0 (queue "
                         f"{output_queue(p, 0)})")
            continue
        qs = sorted({output_queue(p, d) for d in marks})
        dscps, q0 = ", ".join(map(str, marks)), output_queue(p, 0)
        if expedite and qs == [1]:
            parts.append(f"with the {p['name']} profile queue 1 is the expedite queue of DSCP {dscps} (the "
                         f"workload) and the flood (DSCP 0) goes to queue {q0}")
        else:
            parts.append(f"with the {p['name']} profile DSCP {dscps} (the workload) goes to queue "
                         f"{', '.join(map(str, qs))} and the flood (DSCP 0) to queue {q0}")
    return "; ".join(parts) + "." if parts else ""
