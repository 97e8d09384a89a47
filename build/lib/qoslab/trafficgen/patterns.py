"""A flood's flows on a topology: its ``pattern:`` generators expanded into flows (pure), and
every flow checked and resolved (:func:`resolve`: addresses, packets/s, ports).

A flood file keeps its explicit ``flows:`` and may add ``pattern:`` (one mapping or a list of
them); each pattern becomes flows on the topology, appended after the explicit ones:

- ``pairs``: ``src[i] -> dst[i]`` (today's thesis flood: ``src: [jp-5, ..], dst: [jp-1, ..]``);
- ``incast``: every host of ``src`` -> the one host ``dst`` (N senders into one port);
- ``all-to-all``: every ordered pair of distinct hosts of ``hosts``;
- ``on-off``: ``src[i] -> dst[i]`` bursts: ``on_ms`` sending, ``off_ms`` silent (ITGSend ``-B``,
  periods ``constant`` or ``exponential``), inter-departure times and payload sizes drawn from
  ``idt`` / ``size`` = ``constant`` | ``exponential`` | ``pareto`` (``shape`` > 1; the scale is
  chosen so the mean is the asked rate / payload). ``rate`` is the rate *during* on periods; the
  mean over the whole flood is ``rate x on / (on + off)`` (:attr:`ResolvedFlow.mean_pps`);
- ``tcp-bulk``: ``src[i] -> dst[i]`` TCP bulk transfers (the ``iperf3`` generator; ``rate``
  caps them, default the link rate).

Any flow field (``rate``, ``payload_bytes``, ``ds_byte``, ``start_delay_s``, ``protocol``) may be
given in a pattern; what it leaves out takes the definition's defaults. Every expanded flow goes
through the same checks as an explicit one: hosts of the topology, the safety interlock
(:func:`~.definitions.check_target`), the rate cap; a refusal names the file, the line and the
pattern field that produced the flow.
"""

from __future__ import annotations

from typing import Any

from ..errors import UnsafeTarget
from ..topology import Topology
from ..yamlio import config_error, format_loc
from .definitions import (
    DATA_PORT_BASE,
    L2_OVERHEAD,
    FloodDefinition,
    Flow,
    ResolvedFlow,
    check_cluster_flood,
    check_rate_cap,
    check_target,
)
from .patternmodel import MAX_PATTERN_FLOWS, Pattern, rate_pps


def pattern_flow(p: Pattern, src: str, dst: str) -> Flow:
    """The flow ``src -> dst`` with the settings of pattern ``p``."""
    extra: dict[str, Any] = {}
    if p.kind == "on-off":
        extra = {"idt": p.idt, "size": p.size, "shape": p.shape, "on_ms": p.on_ms,
                 "off_ms": p.off_ms, "periods": p.periods}
    elif p.idt != "constant" or p.size != "constant":
        extra = {"idt": p.idt, "size": p.size, "shape": p.shape}
    proto = "TCP" if p.kind == "tcp-bulk" else p.protocol
    return Flow(src=src, dst=dst, protocol=proto, payload_bytes=p.payload_bytes, rate=p.rate,
                ds_byte=p.ds_byte, start_delay_s=p.start_delay_s, bulk=p.kind == "tcp-bulk", **extra)


def patterns_of(defn: FloodDefinition) -> list[tuple[Pattern, tuple[Any, ...]]]:
    """The definition's patterns with their location in the file (``("pattern", i)``; a single
    mapping is the list of one)."""
    return [(p, ("pattern", i)) for i, p in enumerate(defn.pattern or [])]


def located_flows(defn: FloodDefinition) -> list[tuple[Flow, tuple[Any, ...], tuple[Any, ...]]]:
    """Every flow of ``defn``, explicit ones first, then each pattern's: ``(flow, location of its
    source host, location of its destination host)`` in the file (pure, no topology needed)."""
    out = [(f, ("flows", i, "src"), ("flows", i, "dst")) for i, f in enumerate(defn.flows)]
    for p, loc in patterns_of(defn):
        made = p.pairs()
        if len(made) > MAX_PATTERN_FLOWS:
            raise _error(defn, loc, f"{p.kind} makes {len(made)} flows: at most {MAX_PATTERN_FLOWS}")
        out += [(pattern_flow(p, s, d), (*loc, *ls), (*loc, *ld)) for s, d, ls, ld in made]
    return out


def _error(defn: FloodDefinition, loc: tuple[Any, ...], msg: str) -> Exception:
    if defn.source:
        return config_error(defn.source, loc, msg)
    return UnsafeTarget(f"flood {defn.name}: {format_loc(loc)}: {msg}")


def check_flows(defn: FloodDefinition, topology: Topology) -> list[Flow]:
    """The flows of ``defn`` on ``topology`` after the interlock: every host must be one of the
    topology's and every destination pass :func:`check_target`. Raises ConfigError (unknown host:
    ``FILE:LINE: pattern[0].src[2]: ...``) or UnsafeTarget naming file, line and field (a
    refused target)."""
    flows = located_flows(defn)
    if len(flows) > 64:
        raise _error(defn, ("pattern",) if defn.pattern is not None else ("flows",),
                     f"{len(flows)} flows after expansion: at most 64")
    out = []
    for f, lsrc, ldst in flows:
        for host, loc in ((f.src, lsrc), (f.dst, ldst)):
            if host not in topology.host_names:
                raise _error(defn, loc, f"no host {host!r} in topology {topology.name} (hosts: "
                                        f"{', '.join(topology.host_names)}): refusing flow {f.src} -> {f.dst}")
        if f.src == f.dst:
            raise _error(defn, ldst, f"flow {f.src} -> {f.dst} sends to itself")
        try:
            check_target(topology, topology.host(f.dst).ip)
        except UnsafeTarget as e:
            where = config_error(defn.source, ldst, str(e)) if defn.source else None
            raise UnsafeTarget(str(where) if where else f"flood {defn.name}: {format_loc(ldst)}: {e}") from None
        out.append(f)
    return out


def expand(defn: FloodDefinition, topology: Topology) -> FloodDefinition:
    """``defn`` with its patterns expanded into explicit ``flows`` (checked on ``topology``, see
    :func:`check_flows`); a definition without patterns comes back unchanged."""
    if defn.pattern is None:
        return defn
    return defn.model_copy(update={"flows": check_flows(defn, topology), "pattern": None})


def traffic_options(f: ResolvedFlow, itg_rate: int) -> list[str]:
    """ITGSend's inter-departure, packet-size and on/off options for ``f`` (pure). ``itg_rate``
    is the pacing's packets/s (``-C``, the calibrated one for plain pacing); an exponential IDT
    asks it as ``-E`` (mean rate), a Pareto IDT as ``-V shape scale`` with the scale in
    milliseconds chosen so the mean IDT is 1000 / itg_rate ms (mean = shape x scale / (shape - 1),
    measured: ``-V 1.5 1.667`` sends ~200 packets/s). Sizes: ``-c`` payload, ``-e`` mean payload,
    ``-v shape scale`` (mean payload). On-off: ``-B C on_ms C off_ms`` (``E`` for exponential
    periods); the IDT option sets the rate during on periods."""
    if f.idt == "exponential":
        idt = ["-E", str(itg_rate)]
    elif f.idt == "pareto":
        idt = ["-V", f"{f.shape:g}", f"{1000.0 / itg_rate * (f.shape - 1) / f.shape:.6g}"]
    else:
        idt = ["-C", str(itg_rate)]
    if f.size == "exponential":
        size = ["-e", str(f.payload_bytes)]
    elif f.size == "pareto":
        size = ["-v", f"{f.shape:g}", f"{f.payload_bytes * (f.shape - 1) / f.shape:.6g}"]
    else:
        size = ["-c", str(f.payload_bytes)]
    burst: list[str] = []
    if f.on_ms is not None and f.off_ms is not None:
        d = "E" if f.periods == "exponential" else "C"
        burst = ["-B", d, f"{f.on_ms:g}", d, f"{f.off_ms:g}"]
    return [*idt, *size, *burst]


def resolve(defn: FloodDefinition, topology: Topology, *, require_confirmation: bool = True) -> list[ResolvedFlow]:
    """Flows of ``defn`` on ``topology`` with addresses, packets/s and ports (generator-neutral).

    Raises QoslabError for an unknown host and UnsafeTarget for a destination the interlock
    refuses, a flood over the topology's rate cap, or an unconfirmed flood on a real cluster
    (``require_confirmation=False``: checking a playbook, nothing is sent).
    """
    if require_confirmation:
        check_cluster_flood(topology)
    out = []
    for i, f in enumerate(check_flows(defn, topology)):  # hosts of the topology, check_target, explicit + patterns
        src, dst = topology.host(f.src), topology.host(f.dst)
        proto = f.protocol or defn.protocol
        payload = f.payload_bytes or defn.payload_bytes
        rate = f.rate if f.rate is not None else ("1x" if f.bulk else defn.rate)
        pps = rate_pps(rate, payload + L2_OVERHEAD[proto], topology.link.rate)
        out.append(ResolvedFlow(
            index=i, src=src.name, dst=dst.name, src_ip=src.ip, dst_ip=dst.ip, protocol=proto,
            payload_bytes=payload, pps=pps,
            ds_byte=f.ds_byte if f.ds_byte is not None else defn.ds_byte,
            start_delay_s=f.start_delay_s if f.start_delay_s is not None else defn.start_delay_s,
            port=DATA_PORT_BASE + i, idt=f.idt, size=f.size, shape=f.shape, on_ms=f.on_ms, off_ms=f.off_ms,
            periods=f.periods, bulk=f.bulk))
    check_rate_cap(topology, out, defn.name)
    return out
