"""Run the capture module (``capture/``, Java, pcap4j) from Python.

- :class:`LiveCapture`: a live capture inside a namespace (on the testbed: the far end of a SPAN
  destination port in ``qsl-<topology>@span``), started and stopped (SIGTERM by PID) through an
  executor; its summary.json is read at stop.
- :func:`classify_file`: classify a pcap/pcapng file offline (the fast memory-mapped reader).
- :func:`classify_files`: many files and folders in one JVM, one summary per file plus a combined
  table, with a progress callback per file.

Classes (precedence order): control/ack, ssh, rmi, short-frame, data, udp, other; RMI mode
``flow`` (connections that open with JRMI, plus port 1099) or ``ethereal`` (port 1099 only).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .errors import QoslabError
from .executors import BackgroundProcess, Executor, LocalExecutor
from .topology import repo_root

JAR = repo_root() / "capture" / "target" / "qoslab-capture-0.1.0.jar"
MAIN = "org.qoslab.capture.Main"
CLASSES = ["control/ack", "ssh", "rmi", "short-frame", "data", "udp", "other"]


def capture_command(*args: str) -> list[str]:
    """``java`` argv of the capture tool. Raises QoslabError when it is not built."""
    if not JAR.exists():
        raise QoslabError(f"{JAR} is missing: build the Java modules with `make setup`")
    return ["java", "-XX:+UseSerialGC", "-Xmx512m", "-cp", f"{JAR}:{JAR.parent / 'lib'}/*", MAIN, *args]


#: The capture tool's default of ``--max-open-calls``: GIOP requests (MPJ messages) waiting for their
#: replies at once before a file fails with an error naming the limit (CallLimitException.java; about
#: 200 bytes of the tool's 512 MiB heap each).
MAX_OPEN_CALLS = 100_000


def check_max_open_calls(n: int) -> None:
    """Raises QoslabError naming ``--max-open-calls`` unless 1 <= ``n`` <= 2**31 - 1 (a Java int)."""
    if isinstance(n, bool) or not 1 <= n <= 2**31 - 1:
        raise QoslabError(f"--max-open-calls must be 1 to {2**31 - 1}, got {n}")


def _options(out_dir: Path, host_ip: str | None, rmi_mode: str, per_packet: bool, tunnel: str = "inner",
             calls: bool = False, max_open_calls: int = MAX_OPEN_CALLS) -> list[str]:
    if rmi_mode not in ("flow", "ethereal"):
        raise QoslabError(f"--rmi-mode: flow or ethereal, got {rmi_mode!r}")
    if tunnel not in ("inner", "outer"):
        raise QoslabError(f"--tunnel: inner or outer, got {tunnel!r}")
    check_max_open_calls(max_open_calls)
    opts = ["--out", str(out_dir), "--rmi-mode", rmi_mode, "--tunnel", tunnel, "--max-open-calls", str(max_open_calls)]
    if host_ip:
        opts += ["--host", host_ip]
    if per_packet:
        opts.append("--per-packet")
    if calls:
        opts.append("--calls")
    return opts


def classify_file(pcap: Path, out_dir: Path, host_ip: str | None = None, rmi_mode: str = "flow",
                  per_packet: bool = False, timeout_s: float = 600, tunnel: str = "inner", calls: bool = False) -> dict:
    """Classify a capture file; returns summary.json as a dict (also written to ``out_dir``; with
    ``calls`` also calls.jsonl, one JRMP call per line: capture/README.md, "JRMP calls").
    Raises QoslabError with the tool's message for an unreadable file."""
    r = LocalExecutor().run(capture_command("classify", str(pcap),
                                            *_options(out_dir, host_ip, rmi_mode, per_packet, tunnel, calls)),
                            timeout=timeout_s, check=False)
    if r.returncode != 0:
        msg = [l for l in r.stderr.splitlines() if "error" in l]
        text = msg[-1].split("error: ", 1)[-1].strip() if msg else f"capture classify failed ({r.returncode})"
        raise QoslabError(text if str(pcap) in text else f"{pcap}: {text}")
    return json.loads((out_dir / "summary.json").read_text())


def classify_files(inputs: list[Path], out_dir: Path, host_ip: str | None = None, rmi_mode: str = "flow",
                   per_packet: bool = False, tunnel: str = "inner",
                   on_file: Callable[[dict], None] | None = None, calls: bool = False,
                   max_open_calls: int = MAX_OPEN_CALLS) -> dict:
    """Classify many capture files and folders (recursively: *.pcap, *.pcapng, *.cap, ...) in one
    JVM. ``on_file`` gets each file's row as it finishes (keys ``index``, ``of``, ``file``,
    ``packets``, ``seconds``, ``classes``, ``summary`` path, ``error``). Returns
    ``{"files": [rows], "done": {...}}``; with several files ``out_dir`` also holds
    ``NNNN-NAME/summary.json`` per file and ``combined.json`` / ``combined.csv``. Files that cannot be
    read are rows with ``error`` set (so are files with more than ``max_open_calls`` GIOP requests
    or MPJ messages waiting at once); ``calls`` writes each file's calls.jsonl beside its summary.
    Raises QoslabError only when the tool itself fails."""
    argv = capture_command("classify", *map(str, inputs),
                           *_options(out_dir, host_ip, rmi_mode, per_packet, tunnel, calls, max_open_calls))
    rows: list[dict] = []
    done: dict = {}
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        assert p.stdout is not None and p.stderr is not None
        err: list[str] = []
        stderr = p.stderr
        t = threading.Thread(target=lambda: err.extend(stderr), daemon=True)  # never block on a full pipe
        t.start()
        for line in p.stdout:
            if not line.startswith("{"):
                continue
            ev = json.loads(line)
            if ev.get("event") == "file":
                rows.append(ev)
                if on_file:
                    on_file(ev)
            elif ev.get("event") == "done":
                done = ev
        p.wait()
        t.join(5)
    if not done:
        msg = [l.strip() for l in err if "error" in l]
        raise QoslabError(msg[-1].split("error: ", 1)[-1] if msg else f"capture classify failed ({p.returncode})")
    return {"files": rows, "done": done}


ENGINES = ("dumpcap", "pcap4j")


class LiveCapture:
    """A live capture on ``interface`` of the executor's node; ``write`` keeps the raw pcap.

    ``engine``: ``dumpcap`` (default, measured lossless at full rate on both SPAN ports: C capture
    into a file with a ``buffer_mb`` MiB kernel buffer, classified by the fast reader when it stops)
    or ``pcap4j`` (in the JVM, classified as packets arrive). The summary's ``drops`` block holds
    received, captured, dropped_kernel, dropped_interface, dropped_own, dropped_total, lossless
    (capture/README.md). ``lifetime_s`` bounds the capture (seconds: its process group, dumpcap
    included, ends by itself after it, even when this program died). ``calls``: also write
    ``calls.jsonl`` (one JRMP call per line, capture/README.md "JRMP calls") beside summary.json.
    ``max_open_calls``: GIOP requests (MPJ messages) waiting for replies at once before the capture
    ends with an error naming the limit (the tool's heap bound, :data:`MAX_OPEN_CALLS`). Raises
    QoslabError for an engine, RMI mode or limit out of range, before anything starts."""

    def __init__(self, executor: Executor, interface: str, out_dir: Path, host_ip: str | None = None,
                 rmi_mode: str = "flow", write: Path | None = None, per_packet: bool = False,
                 engine: str = "dumpcap", buffer_mb: int = 64, extra: tuple[str, ...] = (),
                 lifetime_s: float | None = None, calls: bool = False, max_open_calls: int = MAX_OPEN_CALLS):
        if engine not in ENGINES:
            raise QoslabError(f"capture engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        self.ex, self.interface, self.out_dir, self.write = executor, interface, Path(out_dir), write
        self.lifetime_s = lifetime_s
        self.argv = capture_command("live", "--interface", interface,
                                    *_options(self.out_dir, host_ip, rmi_mode, per_packet, calls=calls,
                                             max_open_calls=max_open_calls),
                                    "--engine", engine, "--buffer-mb", str(buffer_mb), *extra,
                                    *(["--write", str(write)] if write else []))
        self.proc: BackgroundProcess | None = None
        self.log = self.out_dir / "capture.log"

    def start(self, timeout_s: float = 30.0) -> None:
        """Start and wait until the capture is open. Raises QoslabError naming the interface."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.log.unlink(missing_ok=True)
        self.proc = self.ex.start(self.argv, stdout=self.log, stderr=self.log, lifetime_s=self.lifetime_s)
        deadline = time.monotonic() + timeout_s
        while "capturing on" not in (self.log.read_text(errors="replace") if self.log.exists() else ""):
            if self.ex.poll(self.proc) is not None or time.monotonic() > deadline:
                self.ex.stop(self.proc)
                tail = [l for l in self.log.read_text(errors="replace").splitlines() if "error" in l][-1:] \
                    if self.log.exists() else []
                raise QoslabError(f"capture on {self.ex.node}:{self.interface} did not start: "
                                  f"{tail[0] if tail else 'no output'}")
            time.sleep(0.05)
        time.sleep(0.2)  # the handle is open when the line is printed; let the ring settle

    def stop(self) -> dict:
        """Stop (SIGTERM; the tool writes its summary first) and return summary.json as a dict."""
        if self.proc is None:
            raise QoslabError("capture was not started")
        self.ex.stop(self.proc, grace_s=60.0)
        summary = self.out_dir / "summary.json"
        if not summary.exists():
            tail = [l for l in self.log.read_text(errors="replace").splitlines() if "error" in l][-1:] \
                if self.log.exists() else []
            raise QoslabError(f"capture on {self.ex.node}:{self.interface} wrote no summary"
                              f"{': ' + tail[0] if tail else ''} (log: {self.log})")
        return json.loads(summary.read_text())

    def __enter__(self) -> LiveCapture:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.ex.poll(self.proc) is None:
            self.ex.stop(self.proc, grace_s=60.0)
