"""Kernel pacing of a flood flow on the embedded testbed: an HTB class of its own on the flooder's
host link, at the flow's asked rate, below the link rate too (issue 48).

Why: below the link rate a D-ITG sender paced by its own timer (``plain``: a ``-C`` calibrated once
per machine; ``poll``: a busy loop) sends what that machine's timers give it. On a fresh 2-core
machine the plain senders of ``make run``'s 0.95x flood sent 1.12-1.23x of the asked 823 packets/s
(the calibration there was not even monotonic), so each flooder's own link capped the flood at 1.0x
and the ports never drained: congested fifo CV 114 %, not significant (issue 48's table). An HTB
class's rate is the kernel's: its token bucket counts every byte against the clock, whatever the
sender's timer does. The sender runs unpaced at ``-C`` = KERNEL_C_FACTOR x the link's packets/s and
blocks in ``sendto()`` on its socket buffer, exactly as under 1.0x kernel pacing.

The host link's tree (:func:`qoslab.testbedplan.host_shaping_lines`)::

    1:   htb default 10
    1:1  class, link rate (the host's NIC)
    1:10 class, leaf: every other packet of the host (bfifo 10:, the topology's host queue)

A kernel-paced flow adds, for its run (:func:`flood_class_lines`)::

    1:1NN class at the root, beside 1:1: rate = the flow's rate (bits/s of frames, as HTB counts
          skb->len: Ethernet header included, FCS and preamble not), burst = CATCH_UP_S of that
          rate (a held-up dequeue is made up, see CATCH_UP_S); ceil = the link rate, cburst = the
          link's burst (the make-up goes at the host's line rate, never faster); bfifo NN: deep
          enough that the socket fills first (:func:`~.definitions.kernel_queue_limit`)
    u32 filter: every packet to the flow's destination address -> 1:1NN (D-ITG's signalling to
          its receiver too: it must queue behind the flood, as in a NIC's one FIFO; in a class of
          its own the sender's end-of-flow message overtook the ~90 flood packets still queued,
          and ITGRecv closed the flow's port before they arrived: 81-138 packets "NoPorts")

and holds 1:10 at the link rate less the flow's (rate = ceil, at least 1 % of the link), with
priority 0: the host's other packets (a ping, a workload's) keep their share first.

Why at the root, with a ceil above its rate: an HTB class sends while its own rate bucket
(``tokens``) holds credit and its ceil bucket (``ctokens``) is not empty; only in between, over its
rate but under its ceil, does it borrow from a parent. A class without a parent cannot borrow: it
sends its rate, and the credit of a wait (up to CATCH_UP_S of its rate) at up to its ceil, the
link rate, paced by the ceil bucket. Under 1:1 with ceil = link it would borrow 1:1's spare and
send the link rate (the 1.0x flood whose phase locks to the port, docs/scale-model.md); with
ceil = rate and both buckets 20 ms (68d82ba to f138715) it sent the credit of a wait at the veth's
speed, up to 20 ms of its rate at once: bursts above the line rate into the switch port, which no
NIC makes (the ports dropped 1351 packets a congested trial, median, in the seed-55 run against
90-160 in the thesis-faithful-cpu runs before it). :func:`teardown_lines` undoes it and is safe on a host without a
flood class (a killed campaign's leftovers are removed before the next flood installs its own).

Everything here but :func:`install` and :func:`remove` is pure and tested on its lines.
"""

from __future__ import annotations

from ..errors import QoslabError
from ..executors import Executor
from ..testbedplan import HOST_IF, HOST_LEAF_MINOR, htb_quantum

#: First minor number (hex) of the flood classes: flow index i -> class 1:(0x100 + i).
FLOOD_CLASS_BASE = 0x100
#: u32 filter preference of flow i's classifier: FILTER_PREF_BASE + i.
FILTER_PREF_BASE = 100
#: The smallest share of the link the host's other traffic keeps while a flood class runs.
OTHER_MIN_SHARE = 0.01
#: Seconds of its rate a flood class's rate bucket holds (burst = rate x CATCH_UP_S, at least the
#: link's burst; :func:`flood_burst_bytes`; the ceil bucket is the link's: the make-up of a wait goes
#: at the line rate). The class's dequeue runs in softirq on the switch's core, which also forwards
#: the flood and runs its senders; held up there longer than its bucket, a class loses the tokens of
#: the wait for good. With 20 ms of credit it makes up a wait as fast as the line's surplus over its
#: rate allows: a 0.95x flood's 5 % makes up 20 ms in 0.4 s; a 0.9999x flood's 100 ppm makes up almost
#: nothing, so a held-up 0.9999x flood falls short and the fidelity monitor's ``offered_load`` check
#: runs its trial again (issue 48). Measured 2026-11-30 on this 2-core VM, the congested conditions of
#: thesis-faithful-cpu-onmachine-share-boot's derived topology (four 0.9999x flows), campaigns
#: alternating (bench/README.md, "The flood class's catch-up"): ``invalid`` for ``offered_load`` in 16
#: of 28 attempts with the link's 2.5 ms, 2 of 28 with 20 ms sent at the veth's speed (bursts above the
#: line rate: 731-1525 switch drops a trial), 8 of 28 with 20 ms at the line rate (119-149 drops).
CATCH_UP_S = 0.02


def flood_minor(index: int) -> str:
    """The HTB minor (hex, as tc writes it) of flow ``index``'s class: 0 -> ``"100"``. Pure."""
    if not 0 <= index < 0xEFF:
        raise ValueError(f"flow index {index} out of range for a flood class")
    return f"{FLOOD_CLASS_BASE + index:x}"


def _class(dev: str, parent: str, minor: str, rate: int, ceil: int, burst: int, prio: int,
           cburst: int | None = None) -> str:
    return (f"class replace dev {dev} parent {parent} classid 1:{minor} htb rate {rate}bit ceil {ceil}bit "
            f"burst {burst}b cburst {burst if cburst is None else cburst}b quantum {htb_quantum(ceil)} prio {prio}")


def flood_burst_bytes(rate_bps: int, link_burst_bytes: int) -> int:
    """The burst (and cburst) in bytes of a flood class at ``rate_bps`` bits/s: CATCH_UP_S of its
    rate, at least ``link_burst_bytes`` (the link's HTB burst). Pure."""
    return max(link_burst_bytes, int(rate_bps * CATCH_UP_S / 8))


def flood_class_lines(index: int, dst_ip: str, rate_bps: int, link_bps: int, burst_bytes: int,
                      limit_bytes: int, dev: str = HOST_IF) -> list[str]:
    """``tc -batch`` lines that give flow ``index`` (everything to ``dst_ip``, D-ITG's signalling
    too: the class matches the destination only) its own HTB class
    at ``rate_bps`` (bits/s of frames, ``<= link_bps``) on ``dev`` of the host tree of
    :func:`qoslab.testbedplan.host_shaping_lines` (at the root: it cannot borrow; ceil the link
    rate with the link's burst, so a wait's credit is made up at the line rate), with a bfifo of
    ``limit_bytes`` bytes, and hold the host's other class at ``link_bps - rate_bps`` (rate =
    ceil, at least OTHER_MIN_SHARE of the link). ``burst_bytes``: the link's HTB burst (the other
    class's and the flood class's cburst; its burst is :func:`flood_burst_bytes`). Raises ValueError for a rate outside
    (0, link_bps] or a non-positive limit. Pure."""
    if not 0 < rate_bps <= link_bps:
        raise ValueError(f"flood class rate {rate_bps} bit/s outside (0, {link_bps}] (the link rate)")
    if limit_bytes <= 0 or burst_bytes <= 0:
        raise ValueError("flood class limit and burst must be positive")
    minor = flood_minor(index)
    other = max(link_bps - rate_bps, int(link_bps * OTHER_MIN_SHARE))
    return [
        _class(dev, "1:1", HOST_LEAF_MINOR, other, other, burst_bytes, 0),
        _class(dev, "1:", minor, rate_bps, link_bps, flood_burst_bytes(rate_bps, burst_bytes), 1, burst_bytes),
        f"qdisc replace dev {dev} parent 1:{minor} handle {minor}: bfifo limit {limit_bytes}",
        f"filter replace dev {dev} parent 1: protocol ip pref {FILTER_PREF_BASE + index} handle 800::800 u32 "
        f"match ip dst {dst_ip}/32 flowid 1:{minor}",
    ]


def teardown_lines(index: int, link_bps: int, burst_bytes: int, dev: str = HOST_IF) -> list[str]:
    """``tc -batch -force`` lines that remove flow ``index``'s filter and class (its bfifo goes
    with it) and give the host's other class the whole link again. Run with ``-force``: on a
    host without the class the first two fail and the third still runs. Pure."""
    return [
        f"filter del dev {dev} parent 1: pref {FILTER_PREF_BASE + index}",
        f"class del dev {dev} classid 1:{flood_minor(index)}",
        _class(dev, "1:1", HOST_LEAF_MINOR, link_bps, link_bps, burst_bytes, 0),
    ]


def install(ex: Executor, lines: list[str], teardown: list[str]) -> None:
    """Apply ``lines`` in the host of ``ex`` (one ``tc -batch -``: every line replaces, so a
    class a killed run left is taken over); when tc refuses, ``teardown`` (errors ignored) and
    ``lines`` once more. Raises QoslabError naming tc's message when the kernel still refuses."""
    r = ex.run(["tc", "-batch", "-"], input="\n".join(lines) + "\n", check=False, timeout=10)
    if r.returncode == 0:
        return
    ex.run(["tc", "-force", "-batch", "-"], input="\n".join(teardown) + "\n", check=False, timeout=10)
    r = ex.run(["tc", "-batch", "-"], input="\n".join(lines) + "\n", check=False, timeout=10)
    if r.returncode != 0:
        msg = " ".join((r.stderr or r.stdout or "").split())[:300]
        raise QoslabError(f"kernel pacing: tc refused the flood class on {getattr(ex, 'node', 'the host')}: {msg}")


def remove(ex: Executor, teardown: list[str]) -> bool:
    """Apply ``teardown`` in the host of ``ex``; True when every line was taken."""
    return ex.run(["tc", "-force", "-batch", "-"], input="\n".join(teardown) + "\n", check=False,
                  timeout=10).returncode == 0


__all__ = ["FILTER_PREF_BASE", "FLOOD_CLASS_BASE", "OTHER_MIN_SHARE", "flood_class_lines", "flood_minor", "install",
           "remove", "teardown_lines"]
