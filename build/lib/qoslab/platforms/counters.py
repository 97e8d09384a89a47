"""Switch QoS counters read through TextFSM: the same code on the virtual Catalyst and on a real
3560/3750.

The templates live in ``switch-configs/textfsm/`` (parsed with PyPI ``textfsm``); the functions
here turn their records into typed values:

- :func:`parse_statistics` -> {port: :class:`~qoslab.ios.show_qos.PortCounters`} (packets per queue
  0-3 and threshold 1-3 enqueued/dropped, DSCP/CoS in/out, policer in/out of profile);
- :func:`parse_queue_set` -> {queue-set: :class:`~qoslab.ios.show_qos.QueueSet`};
- :func:`parse_dscp_output_q` -> {dscp: (queue 1-4, threshold 1-3)};
- :func:`parse_policy_map_interface` -> {(port, class): :class:`PolicyClassStats`}.

:func:`read_statistics` sends ``show mls qos interface PORT statistics`` over any connection
with a netmiko-style ``send_command(str) -> str`` and parses it; :func:`queue_deltas` gives the
per-queue enqueued/dropped differences between two readings (before and after a trial).
Malformed output raises :class:`~qoslab.errors.QoslabError` naming the template and the line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import QoslabError
from ..ios.names import interface_name, parse_port
from ..ios.show_qos import N_QUEUES, PortCounters, QueueSet
from ..topology import repo_root

TEMPLATES = repo_root() / "switch-configs" / "textfsm"
STATISTICS = "cisco_ios_show_mls_qos_interface_statistics.textfsm"
QUEUE_SET = "cisco_ios_show_mls_qos_queue-set.textfsm"
DSCP_OUTPUT_Q = "cisco_ios_show_mls_qos_maps_dscp-output-q.textfsm"
POLICY_MAP_INTERFACE = "cisco_ios_show_policy-map_interface.textfsm"


def parse(template: str, text: str) -> list[dict]:
    """Records of ``text`` under ``switch-configs/textfsm/TEMPLATE`` as dicts (value name -> str or
    list). Raises QoslabError for text the template rejects."""
    import textfsm

    path = TEMPLATES / template
    try:
        with path.open() as f:
            fsm = textfsm.TextFSM(f)
    except OSError as e:
        raise QoslabError(f"TextFSM template {path}: {e.strerror}") from None
    try:
        rows = fsm.ParseText(text)
    except textfsm.TextFSMError as e:
        why = str(e).strip().splitlines()[-1]
        why = why.split(". Rule Line")[0].removeprefix("Error: ") if why.startswith("Error: ") else "not understood"
        n = _failing_line(path, text)
        raise QoslabError(f"{template}: line {n}: {text.splitlines()[n - 1].strip()[:120]!r}: {why}") from None
    return [dict(zip(fsm.header, r, strict=True)) for r in rows]


def _failing_line(path, text: str) -> int:
    """The 1-based number of the input line at which the template rejects ``text`` (TextFSM names
    the line's text, not its number): the shortest prefix of lines it rejects (bisection)."""
    import textfsm

    lines = text.splitlines()

    def rejects(k: int) -> bool:
        with path.open() as f:
            fsm = textfsm.TextFSM(f)
        try:
            fsm.ParseText("\n".join(lines[:k]) + "\n")
        except textfsm.TextFSMError:
            return True
        return False

    lo, hi = 1, len(lines)
    while lo < hi:
        mid = (lo + hi) // 2
        if rejects(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _ints(rows: list[str], n: int, what: str) -> list[int]:
    vals = [int(x) for r in rows for x in r.split()]
    if len(vals) != n:
        raise QoslabError(f"{STATISTICS}: {what} has {len(vals)} counts, {n} expected")
    return vals


def _matrix(rows: list[str], what: str) -> list[list[int]]:
    if len(rows) != N_QUEUES:
        raise QoslabError(f"{STATISTICS}: {what} has {len(rows)} queue rows, {N_QUEUES} expected")
    return [[int(x) for x in r.split()] for r in rows]


def parse_statistics(text: str) -> dict[str, PortCounters]:
    """``show mls qos interface [PORT] statistics`` -> {long port name: PortCounters}. Tables a
    platform leaves out (or a filtered output) count as zeros."""
    out = {}
    for r in parse(STATISTICS, text):
        c = PortCounters()
        for key, attr, n in (("DSCP_IN", "dscp_in", 64), ("DSCP_OUT", "dscp_out", 64),
                             ("COS_IN", "cos_in", 8), ("COS_OUT", "cos_out", 8)):
            if r[key]:
                setattr(c, attr, _ints(r[key], n, f"{r['INTERFACE']} {attr}"))
        if r["ENQUEUED"]:
            c.enqueued = _matrix(r["ENQUEUED"], f"{r['INTERFACE']} enqueued")
        if r["DROPPED"]:
            c.dropped = _matrix(r["DROPPED"], f"{r['INTERFACE']} dropped")
        c.policer_in = int(r["POLICER_IN"] or 0)
        c.policer_out = int(r["POLICER_OUT"] or 0)
        out[interface_name(r["INTERFACE"]) or r["INTERFACE"]] = c
    return out


def parse_queue_set(text: str) -> dict[int, QueueSet]:
    """``show mls qos queue-set`` -> {queue-set number: QueueSet} (values in percent)."""
    out = {}
    for r in parse(QUEUE_SET, text):
        qs = QueueSet()
        for key in ("BUFFERS", "THRESHOLD1", "THRESHOLD2", "RESERVED", "MAXIMUM"):
            if r[key]:
                setattr(qs, key.lower(), [int(x) for x in r[key].split()])
        out[int(r["QUEUESET"])] = qs
    return out


def parse_dscp_output_q(text: str) -> dict[int, tuple[int, int]]:
    """``show mls qos maps dscp-output-q`` -> {DSCP 0-63: (egress queue 1-4, threshold 1-3)}."""
    out = {}
    for r in parse(DSCP_OUTPUT_Q, text):
        for d2, cell in enumerate(r["CELLS"].split()):
            q, t = cell.split("-")
            out[int(r["D1"]) * 10 + d2] = (int(q), int(t))
    if sorted(out) != list(range(64)):
        raise QoslabError(f"{DSCP_OUTPUT_Q}: map covers {len(out)} DSCP values, 64 expected")
    return out


@dataclass
class PolicyClassStats:
    """One class of a port's service-policy: policy name, direction, packets and bytes matched
    (bytes None where the platform prints packets only), policer rate (bit/s, None without a
    policer) and bytes conformed / exceeded; an output queuing class's queue counters (None
    where not printed): total drops (packets on a router, bytes on a Catalyst 9000), packets and
    bytes output."""

    policy: str
    direction: str
    packets: int
    bytes: int | None
    police_bps: int | None
    conformed_bytes: int
    exceeded_bytes: int
    actions: list[str]
    total_drops: int | None = None
    pkts_output: int | None = None
    bytes_output: int | None = None


def _opt(v: str) -> int | None:
    return int(v) if v else None


def parse_policy_map_interface(text: str) -> dict[tuple[str, str], PolicyClassStats]:
    """``show policy-map interface [PORT]`` -> {(long port name, class name): PolicyClassStats};
    a priority class gets the counters of its ``queue stats for all priority classes`` block (its
    ``Priority Level``, or on a router the one block). Raises QoslabError naming the line the
    template refuses, or a priority class whose block is missing or shared."""
    rows = parse(POLICY_MAP_INTERFACE, text)
    blocks = {(r["INTERFACE"], r["POLICY"], r["PRIORITY_LEVEL"]): r for r in rows if r["BLOCK"]}
    out = {}
    for r in rows:
        if r["BLOCK"]:
            continue
        q = r
        if r["PRIORITY_LEVEL"] or (r["PRIORITY"] and not (r["TOTAL_DROPS"] or r["BYTES_OUTPUT"])):
            shared = [x for x in rows if not x["BLOCK"] and x["INTERFACE"] == r["INTERFACE"]
                      and x["POLICY"] == r["POLICY"] and x["PRIORITY"] and not x["PRIORITY_LEVEL"]]
            q = blocks.get((r["INTERFACE"], r["POLICY"], r["PRIORITY_LEVEL"]))  # type: ignore[assignment]
            if q is None or (not r["PRIORITY_LEVEL"] and len(shared) > 1):
                raise QoslabError(f"{POLICY_MAP_INTERFACE}: {r['INTERFACE']} class {r['CLASS']}: its priority "
                                  "queue block is missing or shared by several classes")
        port = interface_name(r["INTERFACE"]) or r["INTERFACE"]
        out[(port, r["CLASS"])] = PolicyClassStats(
            r["POLICY"], r["DIRECTION"], int(r["PACKETS"] or 0), _opt(r["BYTES"]),
            int(r["POLICE_CIR_BPS"]) if r["POLICE_CIR_BPS"] else None,
            int(r["CONFORMED_BYTES"] or 0), int(r["EXCEEDED_BYTES"] or 0), list(r["ACTIONS"]),
            _opt(q["TOTAL_DROPS"]), _opt(q["PKTS_OUTPUT"]), _opt(q["BYTES_OUTPUT"]))
    return out


def read_statistics(dev, ports: list[str]) -> dict[str, PortCounters]:
    """Read ``show mls qos interface PORT statistics`` of ``ports`` (any IOS spelling) from
    ``dev``: a :class:`~qoslab.switch.backends.SwitchDevice` (``show(commands) -> {command: text}``, one
    session for all ports) or a netmiko-style connection (``send_command``). Works the same on the
    virtual and on a real switch. A device with ``statistics_all`` (the virtual Catalyst, which
    answers it from one kernel reading: 24 ports in 0.01 s against 0.05 s for 8 commands of one
    port each) is asked once, ``show mls qos interface statistics``; the same TextFSM template
    reads either. Raises QoslabError when the switch rejects a command or a port's statistics are
    missing."""
    every = getattr(dev, "statistics_all", False)
    cmds = {p: "show mls qos interface statistics" if every else f"show mls qos interface {p} statistics"
            for p in ports}
    unique = list(dict.fromkeys(cmds.values()))
    if hasattr(dev, "send_command"):
        texts = {c: dev.send_command(c) for c in unique}
    else:
        texts = dev.show(unique)
    parsed: dict[str, dict[str, PortCounters]] = {}
    for c in unique:
        text = texts[c]
        if "% Invalid" in text or "% Incomplete" in text or "% Ambiguous" in text:
            raise QoslabError(f"switch rejected `{c}`: {text.strip().splitlines()[-1]}")
        parsed[c] = parse_statistics(text)
    out = {}
    for p, c in cmds.items():
        long = parse_port(p) or p
        if long not in parsed[c]:
            raise QoslabError(f"`{c}` returned no statistics for {long}")
        out[long] = parsed[c][long]
    return out


def queue_deltas(before: dict[str, PortCounters], after: dict[str, PortCounters]) -> list[dict]:
    """Rows {port, queue (1-4, as configured), enqueued, dropped} of packet deltas ``after -
    before`` summed over the three thresholds, for the ports in both readings."""
    rows = []
    for port in sorted(set(before) & set(after)):
        d = after[port].minus(before[port])
        rows += [{"port": port, "queue": q + 1, "enqueued": sum(d.enqueued[q]), "dropped": sum(d.dropped[q])}
                 for q in range(N_QUEUES)]
    return rows


def policer_deltas(before: dict[str, PortCounters], after: dict[str, PortCounters]) -> dict[str, tuple[int, int]]:
    """{port: (packets in profile, packets out of profile)} deltas ``after - before``."""
    return {p: (after[p].policer_in - before[p].policer_in, after[p].policer_out - before[p].policer_out)
            for p in sorted(set(before) & set(after))}


def read_queue_counters(dev: Any, ports: list[str], platform: str) -> dict[str, Any]:
    """The egress queue counters of ``ports`` through ``platform``'s own show commands and parser
    (:meth:`qoslab.platforms.Platform.counters_commands`, ``parse_counters``): {long port name:
    QueueCounters}, any n queues x m thresholds. ``dev``: a SwitchDevice or a netmiko-style
    connection, as for :func:`read_statistics`. A port the output does not list (a 9300 port
    without an output policy: one FIFO, no per-queue counters) gets a QueueCounters with no queues.
    Raises QoslabError when the switch rejects a command."""
    from .base import get_platform

    plat = get_platform(platform)
    longs = [parse_port(p) or p for p in ports]
    cmds = plat.counters_commands(longs)
    texts = {c: dev.send_command(c) for c in cmds} if hasattr(dev, "send_command") else dev.show(cmds)
    out: dict[str, Any] = {}
    for c in cmds:
        text = texts[c]
        if "% Invalid" in text or "% Incomplete" in text or "% Ambiguous" in text:
            raise QoslabError(f"switch rejected `{c}`: {text.strip().splitlines()[-1]}")
        out.update(plat.parse_counters(text, c))
    return {p: out.get(p) or plat.no_queues() for p in longs}
