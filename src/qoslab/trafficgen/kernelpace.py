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

    1:1NN class under 1:1: rate = ceil = the flow's rate (bits/s of frames, as HTB counts
          skb->len: Ethernet header included, FCS and preamble not), burst = cburst = the
          link's (2.5 ms; below), bfifo NN: deep enough that the socket fills first
          (:func:`~.definitions.kernel_queue_limit`)
    u32 filter: every packet to the flow's destination address -> 1:1NN (D-ITG's signalling to
          its receiver too: it must queue behind the flood, as in a NIC's one FIFO; in a class of
          its own the sender's end-of-flow message overtook the ~90 flood packets still queued,
          and ITGRecv closed the flow's port before they arrived: 81-138 packets "NoPorts")

and lowers 1:10 to the link rate less the flow's (at least 1 % of the link), with priority 0: a
class under its own rate sends without asking its parent, so the two rates must add up to the
link's for the host to stay within it; the host's other packets (D-ITG's signalling, a ping) keep
their share first. :func:`teardown_lines` undoes it and is safe on a host without a flood class
(a killed campaign's leftovers are removed before the next flood installs its own).

**The flood class's bucket is the link's (2.5 ms), and a wait is not made up** (issue 48). The
class's dequeue runs in softirq on the switch's core, which also forwards the flood and runs its
senders; held up there longer than its bucket, a class loses the wait's tokens for good, and a
0.9999x flood then offers its port 0.95-0.99 of the link: the fidelity monitor's ``offered_load``
check judges the trial ``invalid`` and the playbook's retries run it again. Two ways to make the
wait up were tried and measured on 2026-11-30 (bench/README.md, "The flood class's catch-up"), and
both change the flood into one no NIC makes:

- rate = ceil, both buckets 20 ms of the rate (68d82ba to f138715): a fresh class's bucket and
  each wait's credit left at the veth's speed, bursts above the line rate; at 0.9999x the flooded
  port kept them (21.6 kB standing in a 10 Mbit/s port, ``test_a_stalled_flood_class_never
  _bursts_above_the_line_rate``) or dropped them: 1351 switch drops a congested trial (median)
  in the seed-55 run against 90-160 in every thesis-faithful-cpu run before it;
- at the HTB root, rate bucket 20 ms, ceil = the link with the link's cburst (220c9f0): the
  make-up at the line rate, but near the link rate the class then runs on its small ceil bucket,
  whose throttled wake-ups lose time: a 0.9999x flow sent 0.995 of its rate on an idle testbed,
  and at 0.95x the fresh class's 20 ms of credit (at the 5 % surplus, over 0.4 s) put the senders
  0.9-1.6 % above their rate over a quick campaign's trials.

At the flood's stop the class's queue is emptied rather than drained (:func:`flush_lines`, run by
:meth:`.kernelrun.KernelRun.flush`): a full socket buffer at the flood's rate took 0.1 s at 10
Mbit/s of every congested trial's stop; what the class held then is counted and never sent.

Everything here but :func:`install` and :func:`remove` is pure and tested on its lines.
"""

from __future__ import annotations

import re

from ..errors import QoslabError
from ..executors import Executor
from ..testbedplan import HOST_IF, HOST_LEAF_MINOR, htb_quantum

#: First minor number (hex) of the flood classes: flow index i -> class 1:(0x100 + i).
FLOOD_CLASS_BASE = 0x100
#: u32 filter preference of flow i's classifier: FILTER_PREF_BASE + i.
FILTER_PREF_BASE = 100
#: The smallest share of the link the host's other traffic keeps while a flood class runs.
OTHER_MIN_SHARE = 0.01


def flood_minor(index: int) -> str:
    """The HTB minor (hex, as tc writes it) of flow ``index``'s class: 0 -> ``"100"``. Pure."""
    if not 0 <= index < 0xEFF:
        raise ValueError(f"flow index {index} out of range for a flood class")
    return f"{FLOOD_CLASS_BASE + index:x}"


def _class(dev: str, parent: str, minor: str, rate: int, ceil: int, burst: int, prio: int) -> str:
    return (f"class replace dev {dev} parent {parent} classid 1:{minor} htb rate {rate}bit ceil {ceil}bit "
            f"burst {burst}b cburst {burst}b quantum {htb_quantum(ceil)} prio {prio}")


def flood_class_lines(index: int, dst_ip: str, rate_bps: int, link_bps: int, burst_bytes: int,
                      limit_bytes: int, dev: str = HOST_IF) -> list[str]:
    """``tc -batch`` lines that give flow ``index`` (everything to ``dst_ip``, D-ITG's signalling
    too: the class matches the destination only) its own HTB class
    at ``rate_bps`` (bits/s of frames, ``<= link_bps``) on ``dev`` of the host tree of
    :func:`qoslab.testbedplan.host_shaping_lines`, with a bfifo of ``limit_bytes`` bytes, and
    lower the host's other class to ``link_bps - rate_bps`` (at least OTHER_MIN_SHARE of the
    link). ``burst_bytes``: the link's HTB burst (both classes'). Raises ValueError for a rate outside
    (0, link_bps] or a non-positive limit. Pure."""
    if not 0 < rate_bps <= link_bps:
        raise ValueError(f"flood class rate {rate_bps} bit/s outside (0, {link_bps}] (the link rate)")
    if limit_bytes <= 0 or burst_bytes <= 0:
        raise ValueError("flood class limit and burst must be positive")
    minor = flood_minor(index)
    other = max(link_bps - rate_bps, int(link_bps * OTHER_MIN_SHARE))
    return [
        _class(dev, "1:1", HOST_LEAF_MINOR, other, link_bps, burst_bytes, 0),
        _class(dev, "1:1", minor, rate_bps, rate_bps, burst_bytes, 1),
        f"qdisc replace dev {dev} parent 1:{minor} handle {minor}: bfifo limit {limit_bytes}",
        f"filter replace dev {dev} parent 1: protocol ip pref {FILTER_PREF_BASE + index} handle 800::800 u32 "
        f"match ip dst {dst_ip}/32 flowid 1:{minor}",
    ]


def flush_lines(index: int, limit_bytes: int, dev: str = HOST_IF) -> list[str]:
    """``tc -s -batch`` lines that empty flow ``index``'s class queue at the flood's stop and count
    exactly what left and what did not (:func:`parse_flush`): its bfifo shown (packets sent and
    still queued: their sum, all it was given, does not change once the sender has stopped), the
    bfifo deleted (its queued packets freed, never sent) and an empty one of ``limit_bytes`` put
    back under the same handle, then the class shown (its own count of packets sent, which the
    leaf's replacement leaves as it was: exactly what left the host). Pure."""
    minor = flood_minor(index)
    return [
        f"qdisc show dev {dev} parent 1:{minor}",
        f"qdisc del dev {dev} parent 1:{minor} handle {minor}:",
        f"qdisc add dev {dev} parent 1:{minor} handle {minor}: bfifo limit {limit_bytes}",
        f"class show dev {dev} classid 1:{minor}",
    ]


def parse_flush(index: int, text: str) -> tuple[int, int] | None:
    """(packets that left the host, packets flushed) of flow ``index`` from the output of its
    :func:`flush_lines` (tc's text form: ``Sent B bytes N pkt``, ``backlog Xb Qp``), None when the
    output does not hold both its queue's and its class's counts or they do not add up. Pure."""
    minor = flood_minor(index)
    q = re.search(rf"qdisc bfifo {minor}: parent 1:{minor} .*?Sent \d+ bytes (\d+) pkt.*?backlog \S+ (\d+)p", text,
                  re.S)
    c = re.search(rf"class htb 1:{minor} .*?Sent \d+ bytes (\d+) pkt", text, re.S)
    if q is None or c is None:
        return None
    given, left = int(q.group(1)) + int(q.group(2)), int(c.group(1))
    return (left, given - left) if 0 <= left <= given else None


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


__all__ = ["FILTER_PREF_BASE", "FLOOD_CLASS_BASE", "OTHER_MIN_SHARE", "flood_class_lines", "flood_minor",
           "flush_lines", "install", "parse_flush", "remove", "teardown_lines"]
