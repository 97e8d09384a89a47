"""``show platform hardware fed switch active qos queue stats interface PORT`` of a Catalyst 9300
(UADP, IOS-XE 17.x), as a pure renderer: the AQM global counters, then per UADP queue 0-7 the
buffers in use and the bytes enqueued under each WTD threshold (TH0-TH2) and the policer, then
the drops per threshold, soft-buffer, QEB and policer drops. With ``qos queue-stats-frame-count``
in the running-config the same tables count frames (Catalyst 9300 command reference, IOS-XE
17.x, ``qos queue-stats-frame-count``).

The layout, column widths and headings are a real 9300-family switch's (genieparser's recording
``iosxe/tests/ShowPlatformHardwareFedActiveQosQueueStats/cli/equal/golden_output10_output.txt``,
tests/data/show-recordings/README.md); the counters are the emulated queues' tc counters
(:func:`qoslab.vswitch.dialects.catalyst9300.counters.fed_layout`). The AQM global buffer limits
are the recording's (the emulation has no shared buffer pool: the fidelity table).
"""

from __future__ import annotations

from .counters import FedQueue

RULE = "-" * 94
#: The AQM global buffer limits the output starts with (the recording's; not emulated).
GLOBAL_HARD, GLOBAL_SOFT = 18896, 36400


def _th(q: FedQueue, t: int, value: int) -> int:
    return value if q.threshold == t else 0


def render_fed_queue_stats(port_index: int, queues: list[FedQueue], frames: bool = False) -> str:
    """The command's output for the port that is UADP data port ``port_index`` (0 for Gi1/0/1)
    with ``queues`` (UADP queues 0-7); ``frames``: counts in frames (``qos queue-stats-frame-count``)
    instead of bytes."""
    unit = "(Frames)" if frames else "(Bytes)"
    head = f"Asic:0 Core:0 DATA Port:{port_index}"
    out = [RULE, "AQM Global counters", f"GlobalHardLimit: {GLOBAL_HARD:5d}   |   GlobalHardBufCount: 0",
           f"GlobalSoftLimit: {GLOBAL_SOFT:5d}   |   GlobalSoftBufCount: 0", "", RULE,
           "High Watermark Soft Buffers:  Port Monitor Disabled", RULE, f"{head} Hardware Enqueue Counters", RULE,
           " Q Buffers          Enqueue-TH0          Enqueue-TH1          Enqueue-TH2             Qpolicer",
           f"   (Count){unit:>21}{unit:>21}{unit:>21}{unit:>21}",
           "-- ------- -------------------- -------------------- -------------------- --------------------"]
    for i, q in enumerate(queues):
        enq = q.enqueued_frames if frames else q.enqueued_bytes
        out.append(f"{i:2d} {q.buffers:7d} {_th(q, 0, enq):20d} {_th(q, 1, enq):20d} {_th(q, 2, enq):20d} {0:20d}")
    out += [f"{head} Hardware Drop Counters", "-" * 128,
            " Q             Drop-TH0             Drop-TH1             Drop-TH2             SBufDrop"
            "              QebDrop         QpolicerDrop",
            f"   {unit:>20}{unit:>21}{unit:>21}{unit:>21}{unit:>21}{unit:>21}",
            "-- -------------------- -------------------- -------------------- -------------------- "
            "-------------------- --------------------"]
    for i, q in enumerate(queues):
        drop = q.dropped_frames if frames else q.dropped_bytes
        out.append(f"{i:2d} {_th(q, 0, drop):20d} {_th(q, 1, drop):20d} {_th(q, 2, drop):20d} {0:20d} {0:20d} {0:20d}")
    return "\n".join(out) + "\n"
