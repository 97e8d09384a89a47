"""The kernel-paced flows of one D-ITG flood while it runs (:class:`KernelRun`, used by
:class:`.ditg.DitgGenerator`): their HTB classes on the embedded testbed (:mod:`.kernelpace`), the
flooders' host queues before and after (drops: the senders must block, never lose packets at
home), and each flow's sent rate from its class queue's own packet counter over the senders' run.

Why the class's counter: D-ITG's sender log counts in batches of 50 packets (`make run`'s 1-2 s
floods logged 900, 1000, 1450 packets), which alone made pacing errors of 1-4 %; and a host
queue read after the senders' stop missed what drained meanwhile (60-140 ms of a 2 s flood: sent
rates 2-7 % high). The counters are read over netlink in the host's namespace where the testbed
is this machine's (no process), else with ``tc`` through the host's executor.

The rate window's time is the kernel's, not this thread's: each read carries the interval in
which the kernel took its counts (:class:`~qoslab.testbed.netlink.QdiscSnapshot`: the dump's
own ``send()``/``recv()``), and a read whose interval is wider than MAX_READ_SPREAD_S is taken
again. Stamped instead around the whole call (waiting for the netlink lock that the fidelity
sampler's 10 Hz dumps of the switch hold, and pyroute2's parsing), a busy loop pinned to a core
moved the stamps by tens of milliseconds: 775 and 761 packets/s where the class sends 823, and
886, which an HTB class at 823 cannot send (bench/README.md, "Reproducibility"). A window whose
reads still leave its rate uncertain by more than MAX_RATE_BOUND is not reported as the class's
rate (:meth:`KernelRun.sent_pps`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from ..executors import Executor, SubprocessExecutor
from ..executors.nodes import parallel_map
from ..testbedplan import host_namespace
from ..topology import Topology
from .definitions import ResolvedFlow
from .ditgpacing import FlowPacing, flood_class_plan, flood_flush_plan, host_queue_state, host_queue_state_ns
from .kernelpace import flood_minor, install, parse_flush, remove

State = tuple[int, int, dict[str, tuple[int, int]]]
#: The shortest window (seconds) over which a class's counter gives a flow's sent rate.
MIN_RATE_WINDOW_S = 0.2
#: The widest half-interval (seconds) in which a read's counts may have been taken before the
#: read is taken again (at most READ_TRIES times; the narrowest is kept). Quiet, a host's dump
#: takes 0.1-0.5 ms; a thread that waits for its core or the GIL after send() widens it.
MAX_READ_SPREAD_S = 0.002
READ_TRIES = 6
#: The largest relative error of a class counter's rate that the reads' timing may leave
#: ((spread at the start + spread at the end) / window); beyond it the rate is not reported.
MAX_RATE_BOUND = 0.005
#: How often (seconds) and how long :meth:`KernelRun.running` looks for each class queue's first
#: backlog: the rate window opens only once the sender keeps its class busy (ITGSend's start and
#: its signalling with ITGRecv take tens of milliseconds, up to hundreds beside a busy loop;
#: counted from the senders' start, that idle start read as 2-4.5 % below the rate, 14 % once).
BACKLOG_POLL_S = (0.005, 3.0)


class Read(NamedTuple):
    """A host's queue counters and when the kernel took them: ``at`` (monotonic s) within
    +-``spread`` s; ``state`` as :func:`.ditgpacing.host_queue_state` (None: unreadable)."""

    at: float
    spread: float
    state: State | None


class Count(NamedTuple):
    """A flow class's packets sent (``packets``) at ``at`` (monotonic s) within +-``spread`` s."""

    at: float
    spread: float
    packets: int


class SentRate(NamedTuple):
    """A flow's sent rate (``pps``, packets/s), what measured it (``source``: ``class counter``
    or ``sender log``) and, for the class counter, the most its timing can be off (``bound``,
    relative: 0.001 = 0.1 %)."""

    pps: float
    source: str
    bound: float | None


class KernelRun:
    """The kernel-paced flows (``pacing[i].mode == "kernel"``) of one flood on ``topology``."""

    def __init__(self, topology: Topology, executor_of: Callable[[str], Executor], flows: list[ResolvedFlow],
                 pacing: dict[int, FlowPacing]) -> None:
        self.topo, self.executor_of, self.pacing = topology, executor_of, pacing
        self.flows = [f for f in flows if pacing[f.index].mode == "kernel"]
        self.embedded = topology.environment == "embedded"
        #: host -> (drops, queued packets) of its root qdiscs before the flood / before the senders stopped
        self.drops0: dict[str, tuple[int, int] | None] = {}
        self.drops1: dict[str, tuple[int, int] | None] = {}
        #: flow index -> teardown lines of its HTB class (installed on the embedded testbed)
        self.classes: dict[int, list[str]] = {}
        #: flow index -> packets its class queue had sent once running / before the stop
        self.sent0: dict[int, Count] = {}
        self.sent1: dict[int, Count] = {}
        #: flow index -> packets its class queue had sent in all, read just before it is removed
        self.sent_total: dict[int, int] = {}
        #: flow index -> its class's flush lines (:func:`.kernelpace.flush_lines`), installed classes only
        self.flushes: dict[int, list[str]] = {}
        #: flow index -> (packets its class had sent, packets its queue still held) when :meth:`flush` emptied it
        self.flushed: dict[int, tuple[int, int]] = {}
        self._watch: threading.Thread | None = None
        self._stop_watch = threading.Event()

    def _state(self, host: str) -> Read:
        """The host's queues (:func:`.ditgpacing.host_queue_state`) and when the kernel took them:
        over netlink here, read up to READ_TRIES times until the interval is within
        MAX_READ_SPREAD_S (the narrowest kept); through the executor, the ``tc`` command's span."""
        ex = self.executor_of(host)
        if self.embedded and isinstance(ex, SubprocessExecutor):
            best: Read | None = None
            for _ in range(READ_TRIES):
                got = host_queue_state_ns(host_namespace(self.topo.name, host))
                if got is None:
                    return best or Read(time.monotonic(), 0.0, None)
                if best is None or got[1] < best.spread:
                    best = Read(*got)
                if best.spread <= MAX_READ_SPREAD_S:
                    break
            assert best is not None
            return best
        t0 = time.monotonic()
        st = host_queue_state(ex)
        t1 = time.monotonic()
        return Read((t0 + t1) / 2, (t1 - t0) / 2, st)

    def _states(self, hosts: list[str]) -> dict[str, Read]:
        return dict(zip(hosts, parallel_map(self._state, hosts), strict=True))

    def _sent_from(self, states: dict[str, Read], backlogged: bool = False) -> dict[int, Count]:
        """flow index -> its class queue's packets sent ([with ``backlogged``] only those whose
        queue held packets)."""
        out = {}
        for f in self.flows:
            rd = states.get(f.src)
            handle = f"{flood_minor(f.index)}:"
            if rd is not None and f.index in self.classes and rd.state is not None and handle in rd.state[2]:
                sent, queued = rd.state[2][handle]
                if queued > 0 or not backlogged:
                    out[f.index] = Count(rd.at, rd.spread, sent)
        return out

    def install(self, flows: list[ResolvedFlow]) -> None:
        """(Embedded) each kernel-paced flow's class of ``flows`` not yet installed: no packet
        passes it before its sender starts, so a campaign installs them while its receivers start
        and the switch is pushed (a trial's pre-workload time: 0.03-0.05 s for four flows here).
        Raises QoslabError when tc refuses a class."""
        if self.embedded:
            parallel_map(self._install, [f for f in flows if self.pacing[f.index].mode == "kernel"
                                         and f.index not in self.classes])

    def start(self, starting: list[ResolvedFlow]) -> None:
        """Before the senders of ``starting`` start: (embedded) each kernel-paced flow's class
        unless :meth:`install` did it, then their hosts' queue counters. Raises QoslabError when
        tc refuses a class."""
        self.install(starting)
        kernel = [f for f in starting if self.pacing[f.index].mode == "kernel"]
        hosts = sorted({f.src for f in kernel})
        self.drops0 = {h: None if rd.state is None else rd.state[:2] for h, rd in self._states(hosts).items()}

    def _install(self, f: ResolvedFlow) -> None:
        lines, teardown = flood_class_plan(f, self.pacing[f.index].sender_pps, self.topo)
        self.classes[f.index] = teardown
        self.flushes[f.index] = flood_flush_plan(f, self.pacing[f.index].sender_pps, self.topo)
        install(self.executor_of(f.src), lines, teardown)

    def _local(self) -> bool:
        """Every kernel-paced flow's host is read over netlink here (this machine's testbed): only
        then is the moment of each counter read known well enough for a rate over ~1 s (through
        ``ssh`` or ``srun`` a read lands anywhere in a 30-100 ms command: make test's ssh and
        Slurm campaigns read 0.90-0.98 of a 1.0x flood's exact rate)."""
        return self.embedded and all(isinstance(self.executor_of(f.src), SubprocessExecutor) for f in self.flows)

    def running(self) -> None:
        """The senders run: in a thread, each class's counter when its queue first holds packets
        (the start of its rate window; polled every BACKLOG_POLL_S[0] s for at most [1] s). Only
        where the counters are read over netlink (:meth:`_local`); elsewhere the sent rate is the
        sender log's (:meth:`sent_pps`)."""
        if self._local() and any(f.index in self.classes for f in self.flows):
            self._stop_watch.clear()
            self._watch = threading.Thread(target=self._watch_backlog, name="kernelrun", daemon=True)
            self._watch.start()

    def _watch_backlog(self) -> None:
        period, limit = BACKLOG_POLL_S
        waiting = {f.index for f in self.flows if f.index in self.classes}
        deadline = time.monotonic() + limit
        while waiting and time.monotonic() < deadline and not self._stop_watch.is_set():
            hosts = sorted({f.src for f in self.flows if f.index in waiting})
            for i, v in self._sent_from(self._states(hosts), backlogged=True).items():
                if i in waiting:  # any backlogged read opens the window; a tight one ends the search
                    if i not in self.sent0 or v.spread < self.sent0[i].spread:
                        self.sent0[i] = v
                    if v.spread <= MAX_READ_SPREAD_S:
                        waiting.discard(i)
            self._stop_watch.wait(period)

    def before_stop(self, senders_running: bool) -> dict[str, tuple[int, int] | None]:
        """Just before the senders stop: the host queues (while the senders run, blocked on full
        sockets, the queue stays this long until they stop: what has not left yet) and, when
        they all still run, the classes' counters at the end of the rate window."""
        self._stop_watch.set()
        if self._watch is not None:
            self._watch.join(timeout=5)
        states = self._states(list(self.drops0))
        if senders_running:
            self.sent1 = self._sent_from(states)
        return {h: None if rd.state is None else rd.state[:2] for h, rd in states.items()}

    def after_stop(self, queued: dict[str, tuple[int, int] | None]) -> None:
        """After the senders stopped: what the hosts' queues dropped while they ran (drops now),
        with the packets ``queued`` (:meth:`before_stop`) still at home when they stopped."""
        self.drops1 = {}
        for h, rd in self._states(list(self.drops0)).items():
            st = rd.state
            q = queued.get(h) or (None if st is None else (st[0], st[1]))
            self.drops1[h] = None if st is None or q is None else (st[0], q[1])

    def host_drops(self, f: ResolvedFlow) -> int | None:
        """Packets the host of kernel-paced ``f`` dropped at home over the flood, None unknown."""
        d0, d1 = self.drops0.get(f.src), self.drops1.get(f.src)
        return d1[0] - d0[0] if d0 is not None and d1 is not None else None

    def sent_pps(self, f: ResolvedFlow, packets_sent: int, total_time_s: float) -> SentRate | None:
        """How fast kernel-paced ``f`` sent onto the wire (:class:`SentRate`): its class queue's
        count over the senders' run (at least MIN_RATE_WINDOW_S, the reads' timing leaving at most
        MAX_RATE_BOUND of error; ``class counter``), else D-ITG's ``packets_sent`` less those still
        queued at home when the sender stopped, over ``total_time_s`` (``sender log``, bound
        unknown); None when neither is known."""
        c0, c1 = self.sent0.get(f.index), self.sent1.get(f.index)
        if c0 is not None and c1 is not None and c1.at - c0.at >= MIN_RATE_WINDOW_S:
            window = c1.at - c0.at
            bound = (c0.spread + c1.spread) / window
            if bound <= MAX_RATE_BOUND:
                return SentRate((c1.packets - c0.packets) / window, "class counter", bound)
        d1 = self.drops1.get(f.src)
        if d1 is not None and total_time_s > 0:
            return SentRate(max(0, packets_sent - d1[1]) / total_time_s, "sender log", None)
        return None

    def flush(self) -> None:
        """Right after the senders stopped (embedded testbed): empty each class's queue instead of
        letting it drain at the flood's rate (a full socket buffer, ~92 frames: 0.1 s at 10 Mbit/s,
        the largest step of a congested trial's stop, issue 48), with one ``tc -batch`` a host
        (:func:`.kernelpace.flush_lines`): what the class had sent and what its queue still held
        (never sent) go into ``flushed``. A host whose flush tc refuses or whose output does not
        add up is left out of ``flushed`` (a refused line leaves the queue to drain, or a class
        without its bfifo, which HTB serves with a default FIFO; its count stays the class's)."""
        hosts = sorted({f.src for f in self.flows if f.index in self.flushes})
        if self.embedded and hosts:
            parallel_map(self._flush_host, hosts)

    def _flush_host(self, host: str) -> None:
        flows = [f for f in self.flows if f.src == host and f.index in self.flushes]
        r = self.executor_of(host).run(["tc", "-s", "-batch", "-"], input="\n".join(
            line for f in flows for line in self.flushes[f.index]) + "\n", check=False, timeout=10)
        for f in flows:
            got = parse_flush(f.index, r.stdout or "") if r.returncode == 0 else None
            if got is not None:
                self.flushed[f.index] = got

    def read_totals(self) -> None:
        """Just before :meth:`remove`: each installed class's count of packets that left its host
        (``sent_total``, with what it had sent before a :meth:`flush` replaced its queue): exact,
        where D-ITG's sender log counts in batches of 50 (a sender stopped by SIGTERM leaves up to
        49 sent packets out of it). A host that cannot be read leaves its flows out."""
        hosts = sorted({f.src for f in self.flows if f.index in self.classes})
        if hosts:
            self.sent_total = {i: c.packets + self.flushed.get(i, (0, 0))[0]
                               for i, c in self._sent_from(self._states(hosts)).items()}

    def remove(self) -> None:
        """Remove every class :meth:`install` put in (after the queues drained). Idempotent."""
        classes, self.classes = self.classes, {}
        by_flow = {f.index: f for f in self.flows}
        parallel_map(lambda i: remove(self.executor_of(by_flow[i].src), classes[i]), list(classes))


__all__ = ["MAX_RATE_BOUND", "MAX_READ_SPREAD_S", "MIN_RATE_WINDOW_S", "READ_TRIES", "Count", "KernelRun", "Read",
           "SentRate"]
