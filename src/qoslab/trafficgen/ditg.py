"""The ``ditg`` generator: congestion with D-ITG (Debian ``d-itg`` 2.8.1).

One fresh ITGRecv per destination (its logs in a per-trial folder), one ITGSend per flow, both
stopped by PID; both logs are decoded with ITGDec (:mod:`.itgdec`). Pacing (:mod:`.ditgpacing`):
``kernel`` (ITGSend unpaced, the source's shaped host link sets the rate and the sender blocks in
sendto(); its host queue's drops are read before and after to prove it), ``-poll`` (accurate, one
busy core per sender) or plain ``-C`` chosen from a measured calibration (:mod:`.calibration`)
(docs/DESIGN.md field notes: without ``-poll`` ITGSend sends far less than ``-C`` asks, non-linearly).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..errors import QoslabError
from ..executors import BackgroundProcess, Executor, SubprocessExecutor, budgeted, emulation, listens_tcp, offline
from ..executors.nodes import parallel_map
from ..topology import Topology
from .base import DRAIN_WAIT_S, FloodResult, FlowResult
from .calibration import Calibration
from .definitions import FloodDefinition, ResolvedFlow
from .ditgpacing import (
    FlowPacing,
    check_pin,
    placement,
    plan_pacing,
    receivers_outside,
)
from .ditgprocs import ditg_pids, own_pids, tail
from .ditgresult import apply_receiver_summary, apply_sender_summary
from .ditgsched import sender_prefix_on, sender_timer_slack_ns
from .itgdec import keep_or_drop, run_itgdec, run_itgdecs
from .kernelrun import KernelRun
from .patterns import resolve, traffic_options

#: ITGRecv's signalling port (D-ITG default).
SIGNAL_PORT = 9000
#: ITGRecv at normal priority: a starved receiver would count socket drops as network loss.
RECEIVER_PREFIX: list[str] = []
#: ITGSend's duration when the flood runs until stopped and no lifetime is given (24 h, milliseconds).
UNBOUNDED_DURATION_MS = 24 * 3600 * 1000


class DitgGenerator:
    """One D-ITG flood during one trial (a :class:`~.base.TrafficGenerator`). Use as a context
    manager (processes are always stopped)::

        with DitgGenerator(defn, topo, tb.executor, trial_dir) as flood:
            flood.start()
            ...  # the workload runs
        result = flood.result

    ``keep_logs=False`` deletes a flow's binary ITGSend/ITGRecv logs once ITGDec has decoded
    them (144 bytes per packet in each log: about 9 MB per log per 10 s at 6500 packets/s); the
    decoded text stays, and the logs of a flow whose decoding failed are always kept.
    ``lifetime_s`` bounds every ITGSend/ITGRecv (seconds; also ITGSend's own ``-t`` when the flood
    has no duration). ``start_check_s``: seconds the senders run before :meth:`start` checks that
    none has exited (a campaign passes less: a sender that dies later is an error at stop). Raises
    UnsafeTarget/QoslabError at construction for a refused target, an
    unknown host, or plain pacing without a calibration.
    """

    name = "ditg"

    def __init__(self, defn: FloodDefinition, topology: Topology, executor_of: Callable[[str], Executor],
                 out_dir: Path, *, duration_s: float | None = None, shortfall_tolerance: float = 0.05,
                 interval_ms: int = 1000, calibration: Calibration | None = None, keep_logs: bool = True,
                 lifetime_s: float | None = None, start_check_s: float = 0.3, **_: Any) -> None:
        self.defn, self.topo = defn, topology
        self.start_check_s = start_check_s
        self.keep_logs = keep_logs
        self.calibration = calibration if calibration is not None else Calibration.load(topology.name,
                                                                                         defn.payload_bytes)
        self.flows = resolve(defn, topology)
        bulk = [f for f in self.flows if f.bulk]
        if bulk:
            raise QoslabError(f"flood {defn.name}: tcp-bulk flows ({bulk[0].src} -> {bulk[0].dst}) need the iperf3 "
                              "generator (generator: iperf3)")
        #: flow index -> pacing (mode, -C, -poll, packets/s the sender is set to: the fidelity
        #: monitor's "configured", sender_pps); calibrate() overrides it for its probes
        self.pacing: dict[int, FlowPacing] = plan_pacing(defn, self.flows, topology.link.rate, self.calibration,
                                                         below_link=topology.environment == "embedded")
        self.sender_pps = {i: p.sender_pps for i, p in self.pacing.items()}
        self.executor_of = executor_of
        #: a sender stands for another machine: outside its host's CPU budget, on the switch's cores
        self.sender_of: Callable[[str], Executor] = lambda h: emulation(executor_of(h))
        #: a receiver runs in the budget of the host it floods (topology cpu.flood_receivers: host)
        self.receiver_of: Callable[[str], Executor] = self.sender_of if receivers_outside(topology) else executor_of
        check_pin(defn, topology)
        self.out_dir = Path(out_dir)
        self.duration_s = duration_s if duration_s is not None else defn.duration_s
        self.lifetime_s = lifetime_s
        self.tolerance = shortfall_tolerance
        self.interval_ms = interval_ms
        self.receivers: dict[str, BackgroundProcess] = {}
        self._ndirs: dict[str, str] = {}
        #: flow index -> how its sender was scheduled ("chrt -f 1, timer slack 1 ns" or the fallback)
        self.sched: dict[int, str] = {}
        self.senders: dict[int, BackgroundProcess] = {}
        self.errors: list[str] = []
        self.result: FloodResult | None = None
        self._t0 = 0.0
        self._failed_dst: set[str] = set()
        self._reported: set[int] = set()  # flows whose sender's failure is in errors
        self._halted = False
        #: the kernel-paced flows' classes and counters (:mod:`.kernelrun`)
        self.kernel = KernelRun(topology, executor_of, self.flows, self.pacing)
        self._early: ThreadPoolExecutor | None = None  # halt() decodes the sender logs in it
        #: monotonic times of the stop's steps (``receivers_stopped``, ``decoded``: a trial's stop_parts)
        self.stop_times: dict[str, float] = {}
        self.start_times: dict[str, float] = {}  # monotonic: kernel classes installed, senders started
        self._sent: dict[int, Future[str]] = {}

    def __enter__(self) -> DitgGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.result is None:
            self.stop()
        self.kernel.remove()

    def _dir(self, host: str) -> Path:
        d = self.out_dir / f"ditg-{host}"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def _ndir(self, host: str) -> str:
        """The node's folder for ``host``'s logs (the local one on a shared file system)."""
        if host not in self._ndirs:
            self._ndirs[host] = self.executor_of(host).node_dir(self._dir(host))
        return self._ndirs[host]

    def _tail(self, host: str, name: str) -> str:
        """The last lines of ``host``'s log ``name``, fetched from the node first."""
        try:
            self.executor_of(host).fetch(f"{self._ndir(host)}/{name}", self._dir(host) / name)
        except QoslabError:
            return "no output"
        return tail(self._dir(host) / name)

    def _proc_lifetime(self) -> float | None:
        if self.lifetime_s is not None:
            return self.lifetime_s
        if self.duration_s is not None:  # a fixed flood: its duration, its delays, decoding margin
            return self.duration_s + max((f.start_delay_s for f in self.flows), default=0) + 60
        return None

    def prepare(self, establish_timeout_s: float = 10.0) -> None:
        """Start one ITGRecv per destination and wait until each listens, and install the kernel
        pacing's classes; no packet is sent yet (a campaign does this while the switch is pushed
        and its counters read before the trial). Idempotent."""
        if self._t0:
            return
        self._t0 = time.monotonic()
        dsts = sorted({f.dst for f in self.flows})  # on all nodes at once
        parallel_map(self._start_receiver, dsts)
        ok = parallel_map(lambda h: self._receiver_listening(h, self.receivers[h], establish_timeout_s), dsts)
        self._failed_dst = {h for h, good in zip(dsts, ok, strict=True) if not good}
        self.kernel.install([f for f in self.flows if f.dst not in self._failed_dst])  # kernel pacing's classes

    def start(self, establish_timeout_s: float = 10.0) -> None:
        """Start the receivers (:meth:`prepare`, unless done), then one ITGSend per flow; returns
        once every sender runs (or has failed: see ``errors``) and ``start_check_s`` has passed."""
        if self.senders:
            raise QoslabError("flood already started")
        self.prepare(establish_timeout_s)
        starting = [f for f in self.flows if f.dst not in self._failed_dst]
        self.kernel.start(starting)
        self.start_times["classes"] = time.monotonic()
        parallel_map(self._start_sender, starting)
        self.start_times["senders"] = time.monotonic()
        if self.start_check_s > 0:
            time.sleep(self.start_check_s)  # a sender that exits later is an error at stop (its exit code)
        self.check_senders()
        self.kernel.running()

    def check_senders(self) -> list[str]:
        """Poll every sender: one that has exited with an error (ITGSend exits with 0 only after a
        finished duration) goes into ``errors``, once. Returns the errors this call added."""
        polled = parallel_map(lambda f: (f, self.sender_of(f.src).poll(self.senders[f.index])),
                              [f for f in self.flows if f.index in self.senders])
        added = []
        for f, rc in polled:
            if rc not in (None, 0) and f.index not in self._reported:
                self._reported.add(f.index)
                added.append(f"ITGSend {f.src} -> {f.dst} failed to start (code {rc}): "
                             f"{self._tail(f.src, f'ITGSend-{f.index}.out')}")
        self.errors.extend(added)
        return added

    def _start_receiver(self, host: str) -> None:
        d, ex = self._ndir(host), self.receiver_of(host)
        # in a host's CPU budget the receiver runs on the host's cores (the budget's cpuset), not pin_cpu's
        self.receivers[host] = ex.start(
            [*([] if budgeted(ex) else placement(self.defn)), *RECEIVER_PREFIX, "ITGRecv"],
            stdout=f"{d}/ITGRecv.out", stderr=f"{d}/ITGRecv.out",
            cwd=d,
            lifetime_s=self._proc_lifetime())

    def _receiver_listening(self, host: str, proc: BackgroundProcess, timeout_s: float) -> bool:
        ex = self.executor_of(host)
        deadline = time.monotonic() + timeout_s
        while True:
            if ex.poll(proc) is not None:
                self.errors.append(f"ITGRecv on {host} exited at start (code {proc.returncode}): "
                                   f"{self._tail(host, 'ITGRecv.out')}")
                return False
            if isinstance(ex, SubprocessExecutor):  # on this machine: a look at /proc, no command
                if listens_tcp(proc.pid, SIGNAL_PORT):
                    return True
            else:
                ss = ex.run(["ss", "-Htlnp", f"sport = :{SIGNAL_PORT}"], check=False, timeout=5).stdout
                if any(f"pid={pid}," in ss for pid in own_pids(ex, proc)):
                    return True  # ours listens (a stray one holding the port makes ours exit: see above)
            if time.monotonic() > deadline:
                self.errors.append(f"ITGRecv on {host} ({self.topo.host(host).ip}) not listening on TCP "
                                   f"{SIGNAL_PORT} after {timeout_s:g} s")
                return False
            time.sleep(0.005)

    def _start_sender(self, f: ResolvedFlow) -> None:
        d = self._ndir(f.src)
        ex = self.sender_of(f.src)
        pc = self.pacing[f.index]
        itg_rate, poll = pc.itg_rate, pc.poll
        life = self._proc_lifetime()
        if self.duration_s is not None:
            duration_ms = int(self.duration_s * 1000)
        elif life is not None:
            duration_ms = int(life * 1000)
        else:
            duration_ms = UNBOUNDED_DURATION_MS
        prefix = (*placement(self.defn), *(() if poll else sender_prefix_on(ex)))
        argv = [*prefix, "ITGSend", "-a", f.dst_ip, "-T", f.protocol, *traffic_options(f, itg_rate),
                "-t", str(duration_ms), "-rp", str(f.port),
                "-b", str(f.ds_byte), "-d", str(int(f.start_delay_s * 1000)),
                "-l", f"{d}/send-{f.index}.log", "-x", f"recv-{f.index}.log"]
        if poll:
            argv.append("-poll")
        out = f"{d}/ITGSend-{f.index}.out"
        slack_ns = sender_timer_slack_ns()
        p = ex.start(argv, stdout=out, stderr=out, timer_slack_ns=slack_ns, lifetime_s=life)
        self.senders[f.index] = p
        sched = ("-poll, normal priority" if poll else " ".join(prefix) if prefix
                 else f"normal priority (real-time class not permitted on {f.src})")
        if pc.mode == "kernel":
            where = "HTB class" if self.topo.environment == "embedded" else "host link"
            sched = f"kernel pacing ({where} at {pc.sender_pps:.1f} packets/s), {sched}"
        slack = next((n for n in p.notes if "timer slack" in n), f"timer slack {slack_ns} ns")
        self.sched[f.index] = f"{sched}, {slack}"

    def wait(self) -> None:
        """Wait until every sender has finished its duration (only for a fixed duration)."""
        if self.duration_s is None:
            raise QoslabError("flood runs until stopped: call stop()")
        for f in self.flows:
            p = self.senders.get(f.index)
            if p is not None:
                try:
                    self.sender_of(f.src).wait(p, timeout=self.duration_s + f.start_delay_s + 30)
                except QoslabError:
                    self.errors.append(f"ITGSend {f.src} -> {f.dst} did not end after its duration")

    def halt(self) -> None:
        """Stop the senders (SIGTERM by PID); the receivers keep receiving what is still queued on
        the way. A caller that waits for the queues to drain (the testbed's ``wait_drained``)
        then calls :meth:`stop`, which no longer waits itself. Idempotent."""
        if not self._halted:
            self._halted = True
            running = all(self.sender_of(f.src).poll(p) is None for f in self.flows
                          if (p := self.senders.get(f.index)) is not None)
            queued = self.kernel.before_stop(running)  # kernel pacing: what is still at home (see kernelrun)
            self._stop_senders()
            self.kernel.after_stop(queued)
            self.kernel.flush()  # the class queues emptied, not drained at the flood's rate (kernelrun)
            # the sender logs are complete now: decode them while the queues drain
            self._early = ThreadPoolExecutor(max_workers=max(1, min(len(self.flows), 8)), thread_name_prefix="itgdec")
            self._sent = {f.index: self._early.submit(self._decode_sent, f) for f in self.flows}

    def _decode_sent(self, f: ResolvedFlow) -> str:
        """ITGDec's summary of the sender log of ``f`` (its text). Raises QoslabError."""
        sd = self._ndir(f.src)
        return run_itgdec(f"{sd}/send-{f.index}.log", [], f"{sd}/send-{f.index}.txt",
                          executor=offline(self.executor_of(f.src)), local_out=self._dir(f.src) / f"send-{f.index}.txt")

    def stop(self) -> FloodResult:
        """Stop the senders unless :meth:`halt` did (and then wait DRAIN_WAIT_S for their last
        packets to arrive), then the receivers (SIGTERM by PID, SIGKILL after a grace period);
        decode the logs. Never raises for a flow's failure: it goes into the flow's ``error`` and
        ``errors``."""
        if self.result is not None:
            return self.result
        if not self._halted:
            self.halt()
            time.sleep(DRAIN_WAIT_S)  # let the last packets reach the receivers
        parallel_map(self._stop_receiver, list(self.receivers))
        self.stop_times["receivers_stopped"] = time.monotonic()
        # ITGDec runs three times per flow (sender summary: started by halt(); receiver summary
        # and series): all side by side, short trials' decodes are mostly process start, not CPU
        # (four flows decoded one after another took 0.5-1.1 s, flow by flow 0.1 s); the kernel
        # pacing's classes (their queues drained) are removed meanwhile, one tc per flooder
        self.kernel.read_totals()  # what left each host, before its class goes
        with ThreadPoolExecutor(max_workers=max(1, min(len(self.flows), 8)) + 1) as pool:
            removed = pool.submit(self.kernel.remove)
            flows = list(pool.map(self._decode, self.flows))
            self.stop_times["decoded"] = time.monotonic()
            removed.result()
        if self._early is not None:
            self._early.shutdown()
        self.errors.extend(f.error for f in flows if f.error)
        self.result = FloodResult(self.defn.name, flows, list(self.errors), time.monotonic() - self._t0)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.out_dir / "flood-result.json").write_text(json.dumps(self.result.to_json(), indent=1))
        return self.result

    def _stop_receiver(self, host: str) -> None:
        p, ex = self.receivers[host], self.executor_of(host)
        if ex.poll(p) is not None and p.returncode not in (0, None) and self.senders:
            # ITGRecv may end by itself after its flows (field notes); a crash is an error
            if p.returncode < 0 or p.returncode > 1:
                self.errors.append(f"ITGRecv on {host} exited early (code {p.returncode})")
        ex.stop(p, grace_s=2.0)

    def _stop_senders(self) -> None:
        flows = [f for f in self.flows if f.index in self.senders]
        codes = parallel_map(lambda f: self._stop_sender(f), flows)
        for f, rc in zip(flows, codes, strict=True):
            if rc is not None and rc != 0 and f.index not in self._reported:
                self._reported.add(f.index)
                self.errors.append(f"ITGSend {f.src} -> {f.dst} exited with code {rc}: "
                                   f"{self._tail(f.src, f'ITGSend-{f.index}.out')}")

    def _stop_sender(self, f: ResolvedFlow) -> int | None:
        """Stop the sender of ``f`` if it runs; returns its own exit code when it had ended by itself."""
        p, ex = self.senders[f.index], self.sender_of(f.src)
        rc = ex.poll(p)
        if rc is None:
            ex.stop(p, grace_s=2.0)
        return rc

    def _decode(self, f: ResolvedFlow) -> FlowResult:
        pc = self.pacing[f.index]
        r = FlowResult(f.src, f.dst, requested_pps=f.mean_pps, generator=self.name, itg_rate=pc.itg_rate, poll=pc.poll,
                       sender_sched=self.sched.get(f.index), pacing=pc.mode, target_pps=pc.sender_pps)
        if pc.mode == "kernel":
            r.host_drops = self.kernel.host_drops(f)
        sx, dx = offline(self.executor_of(f.src)), offline(self.executor_of(f.dst))  # ITGDec needs no network
        sd, dd = self._ndir(f.src), self._ndir(f.dst)
        send_log, recv_log = f"{sd}/send-{f.index}.log", f"{dd}/recv-{f.index}.log"
        series_file = f"{dd}/recv-{f.index}-series.txt"
        try:
            total_s = apply_sender_summary(r, self._sent[f.index].result())  # halt() started it
            if pc.mode == "kernel":  # what left the host (see kernelrun: not D-ITG's batched count)
                got = self.kernel.sent_pps(f, r.packets_sent, total_s)
                if got is not None:
                    r.sent_pps, r.sent_from, r.sent_bound = got
                r.packets_left_host = self.kernel.sent_total.get(f.index)  # exact (see FlowResult)
            # the receiver log's summary and series side by side in one command (run_itgdecs)
            recv, series = run_itgdecs(recv_log, [
                ([], f"{dd}/recv-{f.index}.txt", self._dir(f.dst) / f"recv-{f.index}.txt"),
                (["-c", str(self.interval_ms), series_file], series_file,
                 self._dir(f.dst) / f"recv-{f.index}-series.txt")], executor=dx)
            flushed = self.kernel.flushed.get(f.index)  # emptied at the halt: sent by D-ITG, never left the host
            apply_receiver_summary(r, recv, series, f.protocol, flushed[1] if flushed is not None else None,
                                   pc.sender_pps, self.tolerance)
        except QoslabError as e:
            r.error = f"flow {f.src} -> {f.dst}: {e}"
        keep = self.keep_logs or r.error is not None  # a flow whose decoding failed keeps its logs
        for ex, log, local in ((sx, send_log, self._dir(f.src)), (dx, recv_log, self._dir(f.dst))):
            keep_or_drop(ex, log, local / log.rsplit("/", 1)[1], keep)
        return r


__all__ = ["SIGNAL_PORT", "DitgGenerator", "ditg_pids", "own_pids", "tail"]
