"""Congestion with D-ITG (Debian ``d-itg`` 2.8.1): flood definitions, the driver, calibration.

A flood definition (``traffic-gen/*.yaml``) lists flows (source host -> destination host) with a
protocol, payload size and rate. The driver starts one fresh ITGRecv per destination (its logs in
a per-trial folder), one ITGSend per flow, stops them by PID, and decodes both logs with ITGDec.
Every number it reports comes from ITGDec, never from the requested rate (DESIGN.md field notes:
without ``-poll`` ITGSend sends far less than ``-C`` asks, non-linearly).

On-the-wire sizes are L2 frames as tc shapes them (no preamble/FCS): payload + UDP 8 + IP 20 +
Ethernet 14 = payload + 42 bytes (TCP: + 54).
"""

from __future__ import annotations

import functools
import ipaddress
import json
import math
import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .errors import QoslabError, UnsafeTarget
from .executor import BackgroundProcess, Executor, LocalExecutor
from .topology import TESTBED_NETWORK, Topology, repo_root
from .yamlio import FieldProblem, load_model

#: Header bytes below the D-ITG payload in an Ethernet frame as tc counts it (Ethernet 14 + IP 20 + L4).
L2_OVERHEAD = {"UDP": 14 + 20 + 8, "TCP": 14 + 20 + 20}
#: ITGRecv's signalling port (D-ITG default).
SIGNAL_PORT = 9000
#: ITGSend runs in the real-time FIFO class at the lowest priority (``chrt -f 1``): the flood's rate
#: is the experiment's independent variable and must not bend to the workload's CPU demand. On a
#: real cluster the flooders are other machines; on the embedded testbed they share two cores
#: with the JVMs, and at ``nice 19`` the senders fell to 78-90 % of the asked rate while a
#: workload ran, so the ports were not even full (measured here: loss 0.5-3 % instead of ~9 %).
#: A sender sleeps between packets (about 5-10 % of a core at 1.1x of 50 Mbit/s) and the kernel's
#: real-time throttling (95 %) bounds it anyway. Busy-waiting ``-poll`` senders never get it (four
#: of them would own both cores): they run at normal priority.
#: Where the real-time class is not allowed (a container without CAP_SYS_NICE or RT runtime),
#: senders run at normal priority: see :func:`sender_prefix`.
SENDER_PREFIX = ["chrt", "-f", "1"]
#: ITGRecv at normal priority: a starved receiver would count socket drops as network loss.
RECEIVER_PREFIX: list[str] = []
#: Timer slack given to ITGSend (nanoseconds). ITGSend without -poll sleeps between packets; with
#: the kernel's default 50 us slack each sleep overshoots, so the achieved rate falls far below -C
#: and swings with load (measured here, 4 flows at -C 6500: 4640 packets/s sent with the default,
#: 6050 with 1 ns). 1 ns makes plain pacing nearly linear and the calibration stable (real-time
#: tasks get no slack anyway; this keeps it so if the prefix changes).
SENDER_TIMER_SLACK_NS = 1
#: First UDP/TCP destination port given to flows (flow i uses DATA_PORT_BASE + i).
DATA_PORT_BASE = 10001
#: Largest ITGDec output accepted (bytes): beyond it the output "runs amok" and is rejected.
ITGDEC_MAX_OUTPUT = 4 * 1024 * 1024


@functools.lru_cache(maxsize=1)
def sender_prefix() -> tuple[str, ...]:
    """SENDER_PREFIX when this machine lets us use it (``chrt -f 1 true`` succeeds), else ()."""
    try:
        ok = subprocess.run([*SENDER_PREFIX, "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return tuple(SENDER_PREFIX) if ok else ()


def sender_id() -> str:
    """What a calibration's measurements depend on besides kernel and payload (a change
    invalidates it): the sender's scheduling prefix and timer slack."""
    return f"{' '.join(sender_prefix()) or 'normal priority'} slack={SENDER_TIMER_SLACK_NS}ns"


_RATE_X = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*x\s*$", re.IGNORECASE)


# --------------------------------------------------------------------------------------------- definitions
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Flow(_Strict):
    """One flow: ``src`` floods ``dst``. Fields left out take the definition's defaults."""

    src: str
    dst: str
    protocol: Literal["UDP", "TCP"] | None = None
    payload_bytes: int | None = Field(None, ge=16, le=65000)
    rate: str | int | None = None
    ds_byte: int | None = Field(None, ge=0, le=255)
    start_delay_s: float | None = Field(None, ge=0)


class FloodDefinition(_Strict):
    """A flood: defaults plus flows. ``rate`` is packets/s (int) or a multiple of the link rate on
    the wire (``"1.5x"``); ``duration_s`` None = until stopped; ``pacing``: ``poll`` (ITGSend
    ``-poll``: accurate, one busy core per sender), ``plain`` (no -poll, uses the calibration to
    pick -C), ``auto`` (plain when a calibration exists, else poll)."""

    name: str
    description: str = ""
    protocol: Literal["UDP", "TCP"] = "UDP"
    payload_bytes: int = Field(1400, ge=16, le=65000)
    rate: str | int = "1.5x"
    duration_s: float | None = Field(None, gt=0)
    ds_byte: int = Field(0, ge=0, le=255)
    start_delay_s: float = Field(0.0, ge=0)
    pacing: Literal["auto", "poll", "plain"] = "auto"
    flows: list[Flow]

    @field_validator("rate")
    @classmethod
    def _rate(cls, v):
        _check_rate(v)
        return v

    @model_validator(mode="after")
    def _flows(self) -> "FloodDefinition":
        if not self.flows:
            raise FieldProblem(("flows",), "a flood needs at least one flow")
        for i, f in enumerate(self.flows):
            if f.src == f.dst:
                raise FieldProblem(("flows", i, "dst"), f"flow {f.src} -> {f.dst} sends to itself")
            if f.rate is not None:
                try:
                    _check_rate(f.rate)
                except ValueError as e:
                    raise FieldProblem(("flows", i, "rate"), str(e)) from None
        return self


def _check_rate(v: str | int) -> None:
    if isinstance(v, bool) or (isinstance(v, int) and v <= 0):
        raise ValueError(f"rate must be packets/s > 0 or a link-rate multiple like '1.5x', got {v!r}")
    if isinstance(v, str) and not _RATE_X.match(v):
        raise ValueError(f"rate must be packets/s > 0 or a link-rate multiple like '1.5x', got {v!r}")


def load_flood(path: str | Path) -> FloodDefinition:
    """Read a flood definition; raises ConfigError naming file, line and field."""
    return load_model(path, FloodDefinition)


@dataclass(frozen=True)
class ResolvedFlow:
    """A flow with everything decided: addresses, packets/s, -C to ask, ports, DS byte."""

    index: int
    src: str
    dst: str
    src_ip: str
    dst_ip: str
    protocol: str
    payload_bytes: int
    pps: float            # packets/s wanted on the wire
    itg_rate: int         # -C given to ITGSend (differs from pps when pacing is plain)
    poll: bool
    ds_byte: int
    start_delay_s: float
    port: int

    @property
    def frame_bytes(self) -> int:
        """L2 frame size as tc counts it (bytes)."""
        return self.payload_bytes + L2_OVERHEAD[self.protocol]

    @property
    def wire_bps(self) -> float:
        """Requested on-the-wire rate (bits/s)."""
        return self.pps * self.frame_bytes * 8


def check_target(topology: Topology, ip: str) -> None:
    """Safety interlock: refuse any destination that is not a host of ``topology`` or that is
    multicast, broadcast, loopback, unspecified, or (embedded testbed) outside 198.18.0.0/15.
    Raises UnsafeTarget before any packet is sent."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        raise UnsafeTarget(f"refusing flood target {ip!r}: not an IP address") from None
    if addr.is_multicast or addr.is_loopback or addr.is_unspecified or addr == ipaddress.ip_address("255.255.255.255"):
        raise UnsafeTarget(f"refusing flood target {ip}: multicast, broadcast, loopback or unspecified")
    host = topology.host_by_ip(ip)
    if host is None:
        raise UnsafeTarget(f"refusing flood target {ip}: not a host of topology {topology.name}")
    if addr in (host.address.network.broadcast_address, host.address.network.network_address):
        raise UnsafeTarget(f"refusing flood target {ip}: broadcast/network address of {host.address.network}")
    if topology.environment == "embedded" and addr not in TESTBED_NETWORK:
        raise UnsafeTarget(f"refusing flood target {ip}: outside {TESTBED_NETWORK} on the embedded testbed")


def resolve(defn: FloodDefinition, topology: Topology, calibration: "Calibration | None" = None) -> list[ResolvedFlow]:
    """Flows of ``defn`` on ``topology`` with addresses, packets/s and the ITGSend rate.

    Raises QoslabError for an unknown host and UnsafeTarget for a destination the interlock refuses.
    """
    out = []
    for i, f in enumerate(defn.flows):
        try:
            src, dst = topology.host(f.src), topology.host(f.dst)
        except KeyError as e:
            raise QoslabError(f"flood {defn.name}: flows[{i}]: {e.args[0]}") from None
        check_target(topology, dst.ip)
        proto = f.protocol or defn.protocol
        payload = f.payload_bytes or defn.payload_bytes
        rate = f.rate if f.rate is not None else defn.rate
        frame_bits = (payload + L2_OVERHEAD[proto]) * 8
        m = _RATE_X.match(rate) if isinstance(rate, str) else None
        pps = float(m.group(1)) * topology.link.rate / frame_bits if m else float(rate)
        pacing = defn.pacing
        if pacing == "auto":
            pacing = "plain" if calibration and calibration.covers(pps) else "poll"
        if pacing == "plain":
            if calibration is None or not calibration.covers(pps):
                raise QoslabError(f"flood {defn.name}: pacing 'plain' needs a calibration covering {pps:.0f} "
                                  "packets/s: run `qoslab flood calibrate`")
            itg_rate = calibration.rate_for(pps)
        else:
            itg_rate = int(round(pps))
        out.append(ResolvedFlow(
            index=i, src=src.name, dst=dst.name, src_ip=src.ip, dst_ip=dst.ip, protocol=proto,
            payload_bytes=payload, pps=pps, itg_rate=itg_rate, poll=pacing == "poll",
            ds_byte=f.ds_byte if f.ds_byte is not None else defn.ds_byte,
            start_delay_s=f.start_delay_s if f.start_delay_s is not None else defn.start_delay_s,
            port=DATA_PORT_BASE + i))
    return out


# --------------------------------------------------------------------------------------------- ITGDec
def parse_itgdec_summary(text: str) -> dict[str, float]:
    """Parse ITGDec's standard summary; returns the TOTAL RESULTS block as
    ``{total_time_s, total_packets, min/max/avg_delay_s, avg_jitter_s, delay_std_s, bytes_received,
    avg_bitrate_kbps, avg_packet_rate_pps, packets_dropped, error_lines}``.
    Raises QoslabError when there is no TOTAL RESULTS block or a number is unreadable."""
    i = text.rfind("TOTAL RESULTS")
    if i < 0:
        raise QoslabError("ITGDec printed no TOTAL RESULTS block")
    keys = {
        "Total time": "total_time_s", "Total packets": "total_packets", "Minimum delay": "min_delay_s",
        "Maximum delay": "max_delay_s", "Average delay": "avg_delay_s", "Average jitter": "avg_jitter_s",
        "Delay standard deviation": "delay_std_s", "Bytes received": "bytes_received",
        "Average bitrate": "avg_bitrate_kbps", "Average packet rate": "avg_packet_rate_pps",
        "Packets dropped": "packets_dropped", "Error lines": "error_lines",
    }
    out: dict[str, float] = {}
    for line in text[i:].splitlines():
        if "=" not in line:
            continue
        k, v = (s.strip() for s in line.split("=", 1))
        if k in keys:
            m = re.match(r"^(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)", v)
            if not m:
                raise QoslabError(f"ITGDec: unreadable value for {k!r}: {v[:40]!r}")
            out[keys[k]] = float(m.group(1))
    for need in ("total_packets", "total_time_s"):
        if need not in out:
            raise QoslabError(f"ITGDec summary lacks {need}")
    return out


def parse_itgdec_series(text: str) -> list[dict[str, float]]:
    """Parse ``ITGDec -c`` output: one row per interval of ``time_s, bitrate_kbps, delay_s,
    jitter_s, loss_pkts``. Lines that are not five numbers are skipped."""
    rows = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 5:
            continue
        try:
            t, br, d, j, loss = (float(p) for p in parts)
        except ValueError:
            continue
        rows.append({"time_s": t, "bitrate_kbps": br, "delay_s": d, "jitter_s": j, "loss_pkts": loss})
    return rows


def run_itgdec(log: Path, args: list[str], out_file: Path, timeout_s: float = 60.0) -> str:
    """Run ITGDec on ``log`` (output to ``out_file``, spinner on stderr discarded) and return its
    text. Raises QoslabError for a missing log, a timeout, or output over ITGDEC_MAX_OUTPUT bytes."""
    if not log.is_file():
        raise QoslabError(f"missing D-ITG log {log}")
    ex = LocalExecutor()
    out_file.unlink(missing_ok=True)
    p = ex.start(["ITGDec", str(log), *args], stdout=out_file if not args or args[0] != "-c" else None)
    deadline = time.monotonic() + timeout_s
    path = out_file if not args or args[0] != "-c" else Path(args[2])
    while ex.poll(p) is None:
        if path.exists() and path.stat().st_size > ITGDEC_MAX_OUTPUT:
            ex.stop(p)
            raise QoslabError(f"ITGDec on {log} ran amok: over {ITGDEC_MAX_OUTPUT} bytes of output")
        if time.monotonic() > deadline:
            ex.stop(p)
            raise QoslabError(f"ITGDec on {log} did not finish within {timeout_s:g} s")
        time.sleep(0.02)
    if not path.exists():
        raise QoslabError(f"ITGDec on {log} wrote nothing (exit {p.returncode})")
    if path.stat().st_size > ITGDEC_MAX_OUTPUT:
        raise QoslabError(f"ITGDec on {log} ran amok: over {ITGDEC_MAX_OUTPUT} bytes of output")
    return path.read_text(errors="replace")


# --------------------------------------------------------------------------------------------- calibration
@dataclass
class Calibration:
    """Measured ITGSend ``-C`` (without -poll) -> achieved packets/s on this testbed, for one payload
    size. ``points``: ``[(C, achieved_pps, cpu_percent_of_one_core)]`` sorted by C."""

    topology: str
    payload_bytes: int
    points: list[tuple[int, float, float]]
    poll: dict = field(default_factory=dict)
    kernel: str = ""
    sender: str = ""

    def covers(self, pps: float) -> bool:
        """True when some measured point reached at least ``pps``."""
        return any(a >= pps for _, a, _ in self.points)

    def rate_for(self, pps: float) -> int:
        """The -C to ask for ``pps`` packets/s: log-linear interpolation between the two measured
        points around it, proportional below the first point. Raises QoslabError when no point reached ``pps``."""
        pts = sorted(self.points)
        if not self.covers(pps):
            raise QoslabError(f"calibration reaches at most {max(a for _, a, _ in pts):.0f} packets/s, "
                              f"{pps:.0f} asked")
        prev = (pts[0][0], 0.0)
        for c, a, _ in pts:
            if a >= pps:
                c0, a0 = prev
                if a0 == 0.0:  # below the first point: proportional (plain pacing is near linear there)
                    return int(math.ceil(c * pps / a))
                if a <= a0:  # noisy non-monotone points: scale the covering one
                    return int(math.ceil(c * max(1.0, pps / a)))
                lc = math.log(c0) + (math.log(c) - math.log(c0)) * (pps - a0) / (a - a0)
                return int(math.ceil(math.exp(lc)))
            prev = (c, a)
        raise AssertionError("unreachable")

    @staticmethod
    def path(topology: str) -> Path:
        """Where the calibration of ``topology`` is stored (machine-specific, not committed)."""
        return repo_root() / "results" / "calibration" / f"flood-{topology}.json"

    def save(self) -> Path:
        p = self.path(self.topology)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(asdict(self), indent=1))
        return p

    @classmethod
    def load(cls, topology: str, payload_bytes: int) -> "Calibration | None":
        """The stored calibration, or None when absent, unreadable, for another payload size,
        another kernel or another sender set-up (sender_id(): the pacing it measured is not today's)."""
        try:
            d = json.loads(cls.path(topology).read_text())
            c = cls(**d)
            c.points = [tuple(p) for p in c.points]
        except (OSError, ValueError, TypeError):
            return None
        if (c.payload_bytes != payload_bytes or c.kernel != os.uname().release
                or c.sender != sender_id()):
            return None
        return c


# --------------------------------------------------------------------------------------------- driver
@dataclass
class FlowResult:
    """Per flow, from ITGDec: packets sent (sender log) and received (receiver log), achieved rates
    (bits/s: payload and on the wire), loss (%), one-way delay avg/max and jitter (seconds; same-host
    clocks on the embedded testbed), per-interval series, and any error."""

    src: str
    dst: str
    requested_pps: float
    itg_rate: int
    poll: bool
    packets_sent: int = 0
    packets_received: int = 0
    sent_pps: float = 0.0
    received_payload_bps: float = 0.0
    received_wire_bps: float = 0.0
    loss_pct: float = 0.0
    delay_avg_s: float = 0.0
    delay_max_s: float = 0.0
    jitter_s: float = 0.0
    duration_s: float = 0.0
    shortfall: bool = False
    series: list[dict] = field(default_factory=list)
    error: str | None = None


@dataclass
class FloodResult:
    """A whole flood: definition name, per-flow results, errors (also per flow), seconds run."""

    name: str
    flows: list[FlowResult]
    errors: list[str]
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> dict:
        return asdict(self)


class FloodRun:
    """One flood during one trial. Use as a context manager (processes are always stopped)::

        with FloodRun(defn, topo, tb.executor, trial_dir) as flood:
            flood.start()
            ...  # the workload runs
        result = flood.result

    ``stop()`` ends senders and receivers by PID, decodes the logs and sets ``result``.
    ``keep_logs=False`` deletes a flow's binary ITGSend/ITGRecv logs once ITGDec has decoded
    them (144 bytes per packet in each log: about 9 MB per log per 10 s at 6500 packets/s); the
    decoded text stays, and the logs of a flow whose decoding failed are always kept.
    Raises UnsafeTarget/QoslabError at construction for a refused target or an unknown host.
    """

    def __init__(self, defn: FloodDefinition, topology: Topology, executor_of: Callable[[str], Executor],
                 out_dir: Path, *, duration_s: float | None = None, shortfall_tolerance: float = 0.05,
                 interval_ms: int = 1000, calibration: Calibration | None = None, keep_logs: bool = True):
        self.defn, self.topo = defn, topology
        self.keep_logs = keep_logs
        self.calibration = calibration if calibration is not None else Calibration.load(topology.name, defn.payload_bytes)
        self.flows = resolve(defn, topology, self.calibration)
        self.executor_of = executor_of
        self.out_dir = Path(out_dir)
        self.duration_s = duration_s if duration_s is not None else defn.duration_s
        self.tolerance = shortfall_tolerance
        self.interval_ms = interval_ms
        self.receivers: dict[str, BackgroundProcess] = {}
        self.senders: dict[int, BackgroundProcess] = {}
        self.errors: list[str] = []
        self.result: FloodResult | None = None
        self._t0 = 0.0
        self._stopped_receivers: set[str] = set()

    def __enter__(self) -> "FloodRun":
        return self

    def __exit__(self, *exc) -> None:
        if self.result is None:
            self.stop()

    def _dir(self, host: str) -> Path:
        d = self.out_dir / f"ditg-{host}"
        d.mkdir(parents=True, exist_ok=True)
        return d

    def start(self, establish_timeout_s: float = 10.0) -> None:
        """Start one ITGRecv per destination, wait until each listens, then one ITGSend per flow;
        returns once every sender runs (or has failed: see ``errors``)."""
        self._t0 = time.monotonic()
        for host in sorted({f.dst for f in self.flows}):
            d = self._dir(host)
            self.receivers[host] = self.executor_of(host).start(
                [*RECEIVER_PREFIX, "ITGRecv"], stdout=d / "ITGRecv.out", stderr=d / "ITGRecv.out", cwd=d)
        for host, proc in self.receivers.items():
            ex = self.executor_of(host)
            ip = self.topo.host(host).ip
            deadline = time.monotonic() + establish_timeout_s
            while True:
                if ex.poll(proc) is not None:
                    self.errors.append(f"ITGRecv on {host} exited at start (code {proc.returncode}): "
                                       f"{_tail(self._dir(host) / 'ITGRecv.out')}")
                    break
                ss = ex.run(["ss", "-Htlnp", f"sport = :{SIGNAL_PORT}"], check=False, timeout=5).stdout
                if f"pid={proc.pid}," in ss:
                    break  # our ITGRecv listens (a stray one holding the port makes ours exit: see above)
                if time.monotonic() > deadline:
                    self.errors.append(f"ITGRecv on {host} ({ip}) not listening on TCP {SIGNAL_PORT} "
                                       f"after {establish_timeout_s:g} s")
                    break
                time.sleep(0.05)
        failed_dst = {e.split()[2] for e in self.errors if e.startswith("ITGRecv on")}
        duration_ms = int((self.duration_s or 24 * 3600) * 1000)
        for f in self.flows:
            if f.dst in failed_dst:
                continue
            d = self._dir(f.src)
            argv = [*(() if f.poll else sender_prefix()), "ITGSend", "-a", f.dst_ip, "-T", f.protocol, "-C", str(f.itg_rate), "-c", str(f.payload_bytes),
                    "-t", str(duration_ms), "-rp", str(f.port), "-b", str(f.ds_byte),
                    "-d", str(int(f.start_delay_s * 1000)), "-l", str(d / f"send-{f.index}.log"),
                    "-x", f"recv-{f.index}.log"]
            if f.poll:
                argv.append("-poll")
            self.senders[f.index] = self.executor_of(f.src).start(argv, stdout=d / f"ITGSend-{f.index}.out",
                                                                  stderr=d / f"ITGSend-{f.index}.out",
                                                                  timer_slack_ns=SENDER_TIMER_SLACK_NS)
        time.sleep(0.3)
        for f in self.flows:
            p = self.senders.get(f.index)
            if p is not None and self.executor_of(f.src).poll(p) not in (None, 0):
                self.errors.append(f"ITGSend {f.src} -> {f.dst} failed to start (code {p.returncode}): "
                                   f"{_tail(self._dir(f.src) / f'ITGSend-{f.index}.out')}")

    def wait(self) -> None:
        """Wait until every sender has finished its duration (only for a fixed duration)."""
        if self.duration_s is None:
            raise QoslabError("flood runs until stopped: call stop()")
        for f in self.flows:
            p = self.senders.get(f.index)
            if p is not None:
                try:
                    self.executor_of(f.src).wait(p, timeout=self.duration_s + f.start_delay_s + 30)
                except QoslabError:
                    self.errors.append(f"ITGSend {f.src} -> {f.dst} did not end after its duration")

    def stop(self) -> FloodResult:
        """Stop senders, then receivers (SIGTERM by PID, SIGKILL after a grace period), decode the
        logs. Never raises for a flow's failure: it goes into the flow's ``error`` and ``errors``."""
        if self.result is not None:
            return self.result
        for f in self.flows:
            p = self.senders.get(f.index)
            if p is not None:
                rc = self.executor_of(f.src).poll(p)
                if rc is None:
                    self.executor_of(f.src).stop(p, grace_s=2.0)
                elif rc != 0 and not any(f"ITGSend {f.src} -> {f.dst}" in e for e in self.errors):
                    self.errors.append(f"ITGSend {f.src} -> {f.dst} exited with code {rc}: "
                                       f"{_tail(self._dir(f.src) / f'ITGSend-{f.index}.out')}")
        time.sleep(0.2)  # let the last packets reach the receivers
        for host, p in self.receivers.items():
            ex = self.executor_of(host)
            if ex.poll(p) is not None and p.returncode not in (0, None) and self.senders:
                # ITGRecv may end by itself after its flows (field notes); a crash is an error
                if p.returncode < 0 or p.returncode > 1:
                    self.errors.append(f"ITGRecv on {host} exited early (code {p.returncode})")
            ex.stop(p, grace_s=2.0)
        # ITGDec runs once per log and series; the flows' decodes are independent, so they run side
        # by side (a trial's stop phase was 0.5-1.1 s of sequential decoding with four flows)
        with ThreadPoolExecutor(max_workers=max(1, min(len(self.flows), os.cpu_count() or 1))) as pool:
            flows = list(pool.map(self._decode, self.flows))
        self.errors.extend(f.error for f in flows if f.error)
        self.result = FloodResult(self.defn.name, flows, list(self.errors), time.monotonic() - self._t0)
        (self.out_dir / "flood-result.json").write_text(json.dumps(self.result.to_json(), indent=1))
        return self.result

    def _decode(self, f: ResolvedFlow) -> FlowResult:
        r = FlowResult(f.src, f.dst, requested_pps=f.pps, itg_rate=f.itg_rate, poll=f.poll)
        send_log = self._dir(f.src) / f"send-{f.index}.log"
        recv_log = self._dir(f.dst) / f"recv-{f.index}.log"
        try:
            s = parse_itgdec_summary(run_itgdec(send_log, [], self._dir(f.src) / f"send-{f.index}.txt"))
            r.packets_sent = int(s["total_packets"])
            r.sent_pps = s.get("avg_packet_rate_pps", 0.0)
            rv = parse_itgdec_summary(run_itgdec(recv_log, [], self._dir(f.dst) / f"recv-{f.index}.txt"))
            r.packets_received = int(rv["total_packets"])
            r.duration_s = rv["total_time_s"]
            if r.duration_s > 0:
                r.received_payload_bps = rv.get("bytes_received", 0.0) * 8 / r.duration_s
                r.received_wire_bps = (rv.get("bytes_received", 0.0) + r.packets_received * L2_OVERHEAD[f.protocol]) \
                    * 8 / r.duration_s
            r.loss_pct = 100.0 * (1 - r.packets_received / r.packets_sent) if r.packets_sent else 0.0
            r.delay_avg_s = rv.get("avg_delay_s", 0.0)
            r.delay_max_s = rv.get("max_delay_s", 0.0)
            r.jitter_s = rv.get("avg_jitter_s", 0.0)
            r.shortfall = r.sent_pps < f.pps * (1 - self.tolerance)
            series_file = self._dir(f.dst) / f"recv-{f.index}-series.txt"
            r.series = parse_itgdec_series(run_itgdec(recv_log, ["-c", str(self.interval_ms), str(series_file)],
                                                      series_file))
        except QoslabError as e:
            r.error = f"flow {f.src} -> {f.dst}: {e}"
        else:
            if not self.keep_logs:
                send_log.unlink(missing_ok=True)
                recv_log.unlink(missing_ok=True)
        return r


def _tail(path: Path, n: int = 2) -> str:
    try:
        lines = [l for l in path.read_text(errors="replace").splitlines() if l.strip()]
    except OSError:
        return "no output"
    return " / ".join(lines[-n:])[:300] or "no output"


def ditg_pids() -> list[int]:
    """PIDs of running ITGSend/ITGRecv/ITGDec processes on this machine (for leak checks)."""
    out = []
    for e in os.scandir("/proc"):
        if e.name.isdigit():
            try:
                comm = Path(f"/proc/{e.name}/comm").read_text().strip()
            except OSError:
                continue
            if comm in ("ITGSend", "ITGRecv", "ITGDec"):
                out.append(int(e.name))
    return out


def calibrate(topology: Topology, executor_of: Callable[[str], Executor], pairs: list[tuple[str, str]],
              out_dir: Path, payload_bytes: int = 1400, max_multiple: float = 2.0, probe_s: float = 2.0,
              progress: Callable[[str], None] = lambda s: None) -> Calibration:
    """Measure ITGSend without -poll with all ``pairs`` (src, dst) sending at once, as the flood
    will: starting at half the target, -C doubles until the slowest flow sends at least
    ``max_multiple`` x the link rate on the wire; one more probe at the interpolated -C for 1.5x
    the link rate refines the point floods use most. Then the accuracy and CPU cost of -poll at 1.5x.
    Each probe is real D-ITG traffic for ``probe_s`` seconds decoded by ITGDec; the achieved rate
    of a probe is its slowest flow's. Returns the calibration (not yet saved)."""
    frame_bits = (payload_bytes + L2_OVERHEAD["UDP"]) * 8
    target = max_multiple * topology.link.rate / frame_bits
    points: list[tuple[int, float, float]] = []

    def probe(rate: int, poll: bool) -> tuple[float, float]:
        defn = FloodDefinition(name="calibrate", payload_bytes=payload_bytes, rate=rate, duration_s=probe_s,
                               pacing="poll", flows=[Flow(src=a, dst=b) for a, b in pairs])
        fr = FloodRun(defn, topology, executor_of, out_dir / f"probe-{rate}-{int(poll)}")
        fr.flows = [replace(f, poll=poll, itg_rate=rate) for f in fr.flows]
        with fr:
            fr.start()
            senders = list(fr.senders.values())
            first = {p.pid: _cpu_ticks(p.pid) or 0 for p in senders}
            last = dict(first)
            t0 = time.monotonic()
            while any(executor_of(p.node).poll(p) is None for p in senders):  # sample CPU while they run
                for p in senders:
                    last[p.pid] = _cpu_ticks(p.pid) or last[p.pid]
                time.sleep(0.05)
            wall = time.monotonic() - t0
            res = fr.stop()
        if res.errors:
            raise QoslabError("calibration probe failed: " + "; ".join(res.errors))
        cpu_s = sum(last[k] - first[k] for k in first) / os.sysconf("SC_CLK_TCK") / len(senders)
        return min(f.sent_pps for f in res.flows), 100.0 * cpu_s / max(wall, 1e-6)

    rate = int(target / 2)
    while True:
        achieved, cpu = probe(rate, poll=False)
        points.append((rate, achieved, cpu))
        progress(f"-C {rate}: slowest of {len(pairs)} flows sent {achieved:.0f} packets/s "
                 f"({achieved * frame_bits / topology.link.rate:.2f}x link), {cpu:.0f}% of a core each")
        if achieved >= target or rate > 64 * target:
            break
        rate *= 2
    pps15 = 1.5 * topology.link.rate / frame_bits
    cal = Calibration(topology.name, payload_bytes, points)
    if cal.covers(pps15):  # refine where floods usually ask (the thesis's 1.5x): one probe at the estimate
        rate = cal.rate_for(pps15)
        if rate not in {c for c, _, _ in points}:
            achieved, cpu = probe(rate, poll=False)
            points.append((rate, achieved, cpu))
            points.sort()
            progress(f"-C {rate}: slowest of {len(pairs)} flows sent {achieved:.0f} packets/s "
                     f"({achieved * frame_bits / topology.link.rate:.2f}x link), {cpu:.0f}% of a core each")
    achieved, cpu = probe(int(pps15), poll=True)
    progress(f"-poll -C {int(pps15)}: slowest flow sent {achieved:.0f} packets/s, {cpu:.0f}% of a core each")
    return Calibration(topology.name, payload_bytes, points,
                       poll={"requested_pps": int(pps15), "achieved_pps": achieved, "cpu_pct": cpu,
                             "flows": len(pairs)},
                       kernel=os.uname().release, sender=sender_id())


def _cpu_ticks(pid: int) -> int | None:
    """utime + stime of ``pid`` in clock ticks, or None when it is gone."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])
    except (OSError, IndexError, ValueError):
        return None
