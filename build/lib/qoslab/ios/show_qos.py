"""Catalyst 3750 QoS show output, as pure functions: data in, text out.

The renderers take plain data (counters, configured values) and print them the way a Catalyst
3750 on IOS 12.2(55)SE prints them, so the same TextFSM templates (``switch-configs/textfsm/``)
parse the virtual switch and a real one. The counters come from whatever measures them (tc and
nftables statistics on the embedded testbed; zeros where nothing measures them yet).

Formats follow public real-device samples (``tests/data/ios-samples/``, sources cited there)
and the Catalyst 3750 QoS configuration guide / command reference, 12.2(55)SE. Defaults (same
sources): queue-set buffers 25 25 25 25, WTD threshold1 100 200 100 100, threshold2 100 200 100
100, reserved 50, maximum 400 (both queue-sets); ingress buffers 90 10, bandwidth 4 4, priority
queue 2 at 10 %, thresholds 100 100; DSCP -> egress queue-threshold 0-15 02-01, 16-31 03-01,
32-39 04-01, 40-47 01-01, 48-63 04-01.

Queues are numbered 1-4 in configuration commands and 0-3 in ``statistics`` output, as IOS does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

N_QUEUES = 4
N_THRESHOLDS = 3


def _zeros(n: int) -> list[int]:
    return [0] * n


def _matrix() -> list[list[int]]:
    return [[0] * N_THRESHOLDS for _ in range(N_QUEUES)]


@dataclass
class PortCounters:
    """Per-port QoS counters in packets, as ``show mls qos interface X statistics`` shows them.

    ``enqueued`` / ``dropped``: [queue 0-3][threshold 0-2]; ``dscp_in`` / ``dscp_out``: 64
    counts indexed by DSCP; ``cos_in`` / ``cos_out``: 8 counts indexed by CoS; ``policer_in`` /
    ``policer_out``: packets in / out of profile of the port's policers."""

    enqueued: list[list[int]] = field(default_factory=_matrix)
    dropped: list[list[int]] = field(default_factory=_matrix)
    dscp_in: list[int] = field(default_factory=lambda: _zeros(64))
    dscp_out: list[int] = field(default_factory=lambda: _zeros(64))
    cos_in: list[int] = field(default_factory=lambda: _zeros(8))
    cos_out: list[int] = field(default_factory=lambda: _zeros(8))
    policer_in: int = 0
    policer_out: int = 0

    def __post_init__(self) -> None:
        for name, n in (("dscp_in", 64), ("dscp_out", 64), ("cos_in", 8), ("cos_out", 8)):
            if len(getattr(self, name)) != n:
                raise ValueError(f"PortCounters.{name}: {n} counts expected, got {len(getattr(self, name))}")
        for name in ("enqueued", "dropped"):
            m = getattr(self, name)
            if len(m) != N_QUEUES or any(len(r) != N_THRESHOLDS for r in m):
                raise ValueError(f"PortCounters.{name}: {N_QUEUES} queues x {N_THRESHOLDS} thresholds expected")

    def minus(self, before: PortCounters) -> PortCounters:
        """Counter deltas ``self - before`` (e.g. after a trial minus before it)."""
        def sub(a: list[int], b: list[int]) -> list[int]:
            return [x - y for x, y in zip(a, b, strict=True)]

        return PortCounters([sub(a, b) for a, b in zip(self.enqueued, before.enqueued, strict=True)],
                            [sub(a, b) for a, b in zip(self.dropped, before.dropped, strict=True)],
                            sub(self.dscp_in, before.dscp_in), sub(self.dscp_out, before.dscp_out),
                            sub(self.cos_in, before.cos_in), sub(self.cos_out, before.cos_out),
                            self.policer_in - before.policer_in, self.policer_out - before.policer_out)


# --------------------------------------------------------------------------------------- statistics
def _rows(counts: list[int], width: int = 5) -> list[str]:
    out = []
    for lo in range(0, len(counts), width):
        chunk = counts[lo:lo + width]
        hi = lo + len(chunk) - 1
        out.append(f" {lo:2d} - {hi:2d} :" + "".join(f"{v:12d} " for v in chunk) + " ")
    return out


def _table(title: str, counts: list[int]) -> list[str]:
    return [f"  {title}  ", "-------------------------------", ""] + _rows(counts)


def _queues(title: str, m: list[list[int]]) -> list[str]:
    out = [f"  output queues {title}: ", " queue:    threshold1   threshold2   threshold3",
           "-----------------------------------------------"]
    out += [f" queue {q}: " + " ".join(f"{v:11d}" for v in row) + " " for q, row in enumerate(m)]
    return out + [""]


def render_statistics(port_long: str, c: PortCounters) -> str:
    """``show mls qos interface PORT statistics`` for one port (``port_long``: GigabitEthernet1/0/1)."""
    lines = [f"{port_long} (All statistics are in packets)", ""]
    lines += _table("dscp: incoming", c.dscp_in) + [""] + _table("dscp: outgoing", c.dscp_out) + [""]
    lines += _table("cos: incoming", c.cos_in) + [""] + _table("cos: outgoing", c.cos_out)
    lines += _queues("enqueued", c.enqueued) + _queues("dropped", c.dropped)
    lines.append(f"Policer: Inprofile: {c.policer_in:12d} OutofProfile: {c.policer_out:12d} ")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------- queue-sets
@dataclass
class QueueSet:
    """One egress queue-set: buffer % and WTD thresholds per queue 1-4 (index 0-3)."""

    buffers: list[int] = field(default_factory=lambda: [25, 25, 25, 25])
    threshold1: list[int] = field(default_factory=lambda: [100, 200, 100, 100])
    threshold2: list[int] = field(default_factory=lambda: [100, 200, 100, 100])
    reserved: list[int] = field(default_factory=lambda: [50, 50, 50, 50])
    maximum: list[int] = field(default_factory=lambda: [400, 400, 400, 400])


ROWS = ("buffers", "threshold1", "threshold2", "reserved", "maximum")


def _grid(head: str, values: list[int]) -> str:
    return f"{head:<10}:" + "".join(f"{v:8d}" for v in values)


def render_queue_set(sets: dict[int, QueueSet], only: int | None = None) -> str:
    """``show mls qos queue-set [N]``: every row (buffers, two thresholds, reserved, maximum)."""
    out = []
    for qs in sorted(sets):
        if only is not None and qs != only:
            continue
        s = sets[qs]
        out += [f"Queueset: {qs}", _grid("Queue", [1, 2, 3, 4]), "-" * 46]
        out += [_grid(r, getattr(s, r)) for r in ROWS]
    return "\n".join(out) + "\n"


def queue_sets_from_config(global_lines: list[str]) -> dict[int, QueueSet]:
    """Queue-sets 1 and 2 from global config lines (``mls qos queue-set output N buffers|threshold``),
    3750 defaults elsewhere. Pure."""
    sets = {1: QueueSet(), 2: QueueSet()}
    for line in global_lines:
        w = line.split()
        if w[:3] != ["mls", "qos", "queue-set"] or len(w) < 7:
            continue
        qs = sets.get(int(w[4])) if w[4].isdigit() else None
        if qs is None:
            continue
        if w[5] == "buffers" and len(w) == 10:
            qs.buffers = [int(x) for x in w[6:10]]
        elif w[5] == "threshold" and len(w) == 11:
            q = int(w[6]) - 1
            for row, val in zip(("threshold1", "threshold2", "reserved", "maximum"), w[7:11], strict=True):
                getattr(qs, row)[q] = int(val)
    return sets


# --------------------------------------------------------------------------------------- DSCP maps
def default_dscp_output_q() -> dict[int, tuple[int, int]]:
    """The 3750's default DSCP -> (egress queue 1-4, threshold 1-3) map."""
    return {d: ((2 if d <= 15 else 3 if d <= 31 else 4 if d <= 39 else 1 if d <= 47 else 4), 1) for d in range(64)}


def dscp_output_q_from_config(global_lines: list[str]) -> dict[int, tuple[int, int]]:
    """The DSCP -> (queue, threshold) map after ``mls qos srr-queue output dscp-map`` lines. Pure."""
    m = default_dscp_output_q()
    for line in global_lines:
        w = line.split()
        if w[:5] != ["mls", "qos", "srr-queue", "output", "dscp-map"] or len(w) < 8:
            continue
        q = int(w[6])
        if w[7] == "threshold":
            t, dscps = int(w[8]), w[9:]
        else:
            t, dscps = 1, w[7:]
        for d in dscps:
            m[int(d)] = (q, t)
    return m


def render_dscp_output_q(m: dict[int, tuple[int, int]]) -> str:
    """``show mls qos maps dscp-output-q``: queue-threshold per DSCP, rows of ten."""
    return "\n".join(_queue_map("Dscp-outputq-threshold map:", m)) + "\n\n"


def _two_digit_map(title: str, values: list[int]) -> list[str]:
    """A DSCP -> value map (policed-dscp, dscp-cos, dscp mutation) as ``d1 : d2`` rows of ten."""
    out = [f"   {title}", "     d1 :  d2 0  1  2  3  4  5  6  7  8  9 ", "     " + "-" * 39]
    for d1 in range(7):
        out.append(f"      {d1} :    " + " ".join(f"{v:02d}" for v in values[d1 * 10:d1 * 10 + 10]) + " ")
    return out


def _eight(title: str, head: str, values: list[str], row: str, width: int = 3) -> list[str]:
    """A CoS / IP-precedence map: one header row 0-7 and one row of values."""
    return [f"   {title}", f"{head}" + "".join(f"{c:>{width}}" for c in range(8)),
            "     " + "-" * (8 * width + 8), f"{row}" + "".join(f"{v:>{width}}" for v in values)]


def _queue_map(title: str, m: dict[int, tuple[int, int]]) -> list[str]:
    out = [f"   {title}", "     d1 :d2    " + "".join(f"{d:<6d}" for d in range(10)), "     " + "-" * 60]
    for d1 in range(7):
        cells = [f"{m[d][0]:02d}-{m[d][1]:02d}" for d in range(d1 * 10, min(d1 * 10 + 10, 64))]
        out.append(f"      {d1} :    " + " ".join(cells) + " ")
    return out


def _cos_queue_map(title: str, m: list[tuple[int, int]]) -> list[str]:
    return [f"   {title}", "              cos:  " + "   ".join(str(c) for c in range(8)) + "  ",
            "              " + "-" * 36, "  queue-threshold: " + " ".join(f"{q}-{t}" for q, t in m)]


def default_dscp_input_q() -> dict[int, tuple[int, int]]:
    """The 3750's default DSCP -> (ingress queue 1-2, threshold) map: 40-47 to queue 2 (the
    ingress priority queue), everything else to queue 1, threshold 1."""
    return {d: (2 if 40 <= d <= 47 else 1, 1) for d in range(64)}


#: The 3750's default CoS -> (ingress queue, threshold) and CoS -> (egress queue, threshold) maps.
DEFAULT_COS_INPUT_Q = [(1, 1)] * 5 + [(2, 1)] + [(1, 1)] * 2
DEFAULT_COS_OUTPUT_Q = [(2, 1), (2, 1), (3, 1), (3, 1), (4, 1), (1, 1), (4, 1), (4, 1)]


def dscp_input_q_from_config(global_lines: list[str]) -> dict[int, tuple[int, int]]:
    """The DSCP -> (ingress queue, threshold) map after ``mls qos srr-queue input dscp-map``. Pure."""
    m = default_dscp_input_q()
    for line in global_lines:
        w = line.split()
        if w[:5] != ["mls", "qos", "srr-queue", "input", "dscp-map"] or len(w) < 8:
            continue
        q = int(w[6])
        t, dscps = (int(w[8]), w[9:]) if w[7] == "threshold" else (1, w[7:])
        for d in dscps:
            m[int(d)] = (q, t)
    return m


@dataclass
class QosMaps:
    """Every QoS map of a 3750 as ``show mls qos maps`` prints them (defaults where not configured)."""

    cos_dscp: list[int] = field(default_factory=lambda: [c * 8 for c in range(8)])
    ip_prec_dscp: list[int] = field(default_factory=lambda: [p * 8 for p in range(8)])
    dscp_cos: list[int] = field(default_factory=lambda: [d // 8 for d in range(64)])
    policed_dscp: list[int] = field(default_factory=lambda: list(range(64)))
    dscp_mutation: list[int] = field(default_factory=lambda: list(range(64)))
    dscp_input_q: dict[int, tuple[int, int]] = field(default_factory=default_dscp_input_q)
    dscp_output_q: dict[int, tuple[int, int]] = field(default_factory=default_dscp_output_q)
    cos_input_q: list[tuple[int, int]] = field(default_factory=lambda: list(DEFAULT_COS_INPUT_Q))
    cos_output_q: list[tuple[int, int]] = field(default_factory=lambda: list(DEFAULT_COS_OUTPUT_Q))


#: ``show mls qos maps NAME`` -> renderer; the order is that of ``show mls qos maps``.
MAP_NAMES = ("policed-dscp", "dscp-cos", "cos-dscp", "ip-prec-dscp", "dscp-output-q", "dscp-input-q",
             "cos-output-q", "cos-input-q", "dscp-mutation")


def render_qos_map(m: QosMaps, name: str) -> str:
    """``show mls qos maps NAME`` (one of :data:`MAP_NAMES`), in the 3750's format."""
    lines = {
        "policed-dscp": lambda: _two_digit_map("Policed-dscp map:", m.policed_dscp),
        "dscp-cos": lambda: _two_digit_map("Dscp-cos map:", m.dscp_cos),
        "cos-dscp": lambda: _eight("Cos-dscp map:", "        cos: ", [str(v) for v in m.cos_dscp], "       dscp: "),
        "ip-prec-dscp": lambda: _eight("IpPrecedence-dscp map:", "     ipprec: ", [str(v) for v in m.ip_prec_dscp],
                                       "       dscp: "),
        "dscp-output-q": lambda: _queue_map("Dscp-outputq-threshold map:", m.dscp_output_q),
        "dscp-input-q": lambda: _queue_map("Dscp-inputq-threshold map:", m.dscp_input_q),
        "cos-output-q": lambda: _cos_queue_map("Cos-outputq-threshold map:", m.cos_output_q),
        "cos-input-q": lambda: _cos_queue_map("Cos-inputq-threshold map:", m.cos_input_q),
        "dscp-mutation": lambda: ["   Dscp-dscp mutation map:", "      Default DSCP Mutation Map:"]
        + _two_digit_map("", m.dscp_mutation)[1:],
    }[name]()
    return "\n".join(lines) + "\n\n"


def render_qos_maps(m: QosMaps) -> str:
    """``show mls qos maps``: all of them."""
    return "".join(render_qos_map(m, n) for n in MAP_NAMES)


# --------------------------------------------------------------------------------------- ingress
@dataclass
class InputQueues:
    """Ingress queues 1-2: buffer %, SRR weights, priority bandwidth %, WTD thresholds."""

    buffers: list[int] = field(default_factory=lambda: [90, 10])
    bandwidth: list[int] = field(default_factory=lambda: [4, 4])
    priority: list[int] = field(default_factory=lambda: [0, 10])
    threshold1: list[int] = field(default_factory=lambda: [100, 100])
    threshold2: list[int] = field(default_factory=lambda: [100, 100])


def input_queues_from_config(global_lines: list[str]) -> InputQueues:
    """Ingress queue settings from ``mls qos srr-queue input ...`` lines (3750 defaults). Pure."""
    iq = InputQueues()
    for line in global_lines:
        w = line.split()
        if w[:4] != ["mls", "qos", "srr-queue", "input"] or len(w) < 6:
            continue
        if w[4] in ("buffers", "bandwidth") and len(w) == 7:
            setattr(iq, w[4], [int(w[5]), int(w[6])])
        elif w[4] == "priority-queue" and len(w) == 8:
            iq.priority = [0, 0]
            iq.priority[int(w[5]) - 1] = int(w[7])
        elif w[4] == "threshold" and len(w) == 8:
            q = int(w[5]) - 1
            iq.threshold1[q], iq.threshold2[q] = int(w[6]), int(w[7])
    return iq


def render_input_queue(iq: InputQueues) -> str:
    """``show mls qos input-queue``."""
    out = [_grid("Queue", [1, 2]), "-" * 46]
    out += [_grid(r, getattr(iq, r)) for r in ("buffers", "bandwidth", "priority", "threshold1", "threshold2")]
    return "\n".join(out) + "\n\n"


# --------------------------------------------------------------------------------------- per port
@dataclass
class PortQos:
    """One port's QoS settings as the ``show mls qos interface`` family prints them."""

    port_long: str
    trust: str | None = None          # dscp | cos | ip-precedence | None (not trusted)
    policy_in: str | None = None
    share: list[int] = field(default_factory=lambda: [25, 25, 25, 25])
    shape: list[int] = field(default_factory=lambda: [25, 0, 0, 0])
    priority_queue: bool = False
    queue_set: int = 1
    limit_pct: int = 100


def render_port_qos(p: PortQos) -> str:
    """``show mls qos interface PORT`` (no suffix)."""
    trust = f"trust {p.trust}" if p.trust else "not trusted"
    lines = [p.port_long]
    if p.policy_in:
        lines.append(f"Attached policy-map for Ingress: {p.policy_in}")
    lines += [f"trust state: {trust}", f"trust mode: {trust}", "trust enabled flag: ena", "COS override: dis",
              "default COS: 0", "DSCP Mutation Map: Default DSCP Mutation Map", "Trust device: none",
              "qos mode: port-based"]
    return "\n".join(lines) + "\n\n"


def render_queueing(p: PortQos) -> str:
    """``show mls qos interface PORT queueing``."""
    return (f"{p.port_long}\nEgress Priority Queue : {'enabled' if p.priority_queue else 'disabled'}\n"
            f"Shaped queue weights (absolute) :  {' '.join(map(str, p.shape))}\n"
            f"Shared queue weights  :  {' '.join(map(str, p.share))}\n"
            f"The port bandwidth limit : {p.limit_pct}  (Operational Bandwidth:{float(p.limit_pct):.1f})\n"
            f"The port is mapped to qset : {p.queue_set}\n\n")


def render_buffers(p: PortQos, sets: dict[int, QueueSet]) -> str:
    """``show mls qos interface PORT buffers``: the port's queue-set and its buffer allocation."""
    qs = sets[p.queue_set]
    out = [p.port_long, f"The port is mapped to qset : {p.queue_set}",
           f"The allocations between the queues are : {' '.join(map(str, qs.buffers))}"]
    return "\n".join(out) + "\n\n"
