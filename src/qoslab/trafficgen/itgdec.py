"""ITGDec (D-ITG's decoder): run it on a binary log with bounds, and parse its summary and its
per-interval series. Every number a D-ITG flood reports comes from here, never from the asked rate
(docs/DESIGN.md field notes: without ``-poll`` ITGSend sends far less than ``-C`` asks, non-linearly)."""

from __future__ import annotations

import re
import shlex
import signal
from pathlib import Path

from ..errors import CommandTimeout, QoslabError
from ..executors import Executor, LocalExecutor, SubprocessExecutor

#: Largest ITGDec output accepted (bytes): beyond it the output "runs amok" and is rejected.
ITGDEC_MAX_OUTPUT = 4 * 1024 * 1024


#: Summary keys that are ITGDec's sentinels, not measurements, in a block of no packets.
_NO_PACKET_SENTINELS = ("min_delay_s", "max_delay_s", "avg_delay_s", "avg_jitter_s", "delay_std_s")


def parse_itgdec_summary(text: str) -> dict[str, float]:
    """Parse ITGDec's standard summary; returns the TOTAL RESULTS block as
    ``{total_time_s, total_packets, min/max/avg_delay_s, avg_jitter_s, delay_std_s, bytes_received,
    avg_bitrate_kbps, avg_packet_rate_pps, packets_dropped, error_lines}``.
    A block of no packets (ITGDec on an empty log: a receiver that got nothing) prints sentinels,
    ``-nan`` average delay, ``Total time = -90000``, minimum 90000 s, maximum -86400 s (ITGDec 2.8.1,
    recorded in tests/data/itgdec-empty-log-summary.txt): it is returned with ``total_packets`` 0,
    ``total_time_s`` 0 and no delay or jitter keys, so the flood is judged by its counts.
    Raises QoslabError when there is no TOTAL RESULTS block, a number is unreadable (``nan``
    beside packets counts as unreadable), or no packet came out of a file with error lines (random
    bytes: tests/data/itgdec-garbage-log-summary.txt)."""
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
    nan: list[str] = []
    for line in text[i:].splitlines():
        if "=" not in line:
            continue
        k, v = (s.strip() for s in line.split("=", 1))
        if k in keys:
            m = re.match(r"^(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)", v)
            if m:
                out[keys[k]] = float(m.group(1))
            elif re.match(r"^-?nan\b", v):
                nan.append(k)
            else:
                raise QoslabError(f"ITGDec: unreadable value for {k!r}: {v[:40]!r}")
    for need in ("total_packets", "total_time_s"):
        if need not in out:
            raise QoslabError(f"ITGDec summary lacks {need}")
    if out["total_packets"] == 0:  # nothing to average: drop ITGDec's sentinels
        if out.get("error_lines", 0) > 0:  # not an empty log: one ITGDec could not read
            raise QoslabError(f"ITGDec read no packet and {out['error_lines']:.0f} unreadable lines: not a D-ITG log")
        for k in _NO_PACKET_SENTINELS:
            out.pop(k, None)
        out["total_time_s"] = 0.0
    elif nan:
        raise QoslabError(f"ITGDec: unreadable value for {nan[0]!r}: 'nan' over {out['total_packets']:.0f} packets")
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


def run_itgdec(log: Path | str, args: list[str], out_file: Path | str, timeout_s: float = 60.0,
               executor: Executor | None = None, local_out: Path | None = None) -> str:
    """Run ITGDec on ``log`` on the node of ``executor`` (default: this machine), where the log
    is, in the log's folder (``-c`` writes per-flow scratch files ``1-SRC-DST.dat*`` into the
    working directory and removes them when done). Its output (``out_file``, or with ``-c
    INTERVAL FILE`` that FILE) is fetched to ``local_out`` (default: the same path, a shared file
    system). Every file it writes is capped (``ulimit -f``) at four times the log plus
    ITGDEC_MAX_OUTPUT bytes, and output over ITGDEC_MAX_OUTPUT counts as "ran amok". Returns the
    text. Paths may be relative to the executor's working directory. Raises QoslabError for a
    missing log, a timeout, or output over the cap."""
    return run_itgdecs(log, [(args, out_file, local_out)], timeout_s, executor)[0]


def run_itgdecs(log: Path | str, jobs: list[tuple[list[str], Path | str, Path | None]], timeout_s: float = 60.0,
                executor: Executor | None = None) -> list[str]:
    """:func:`run_itgdec` of several decodes of one ``log`` (``jobs``: ``(args, out_file,
    local_out)`` each, e.g. the summary and the ``-c`` series), side by side in one command on
    the node: in a campaign trial each command is a fork of the campaign process (10-15 ms on a
    2-core machine), and the receivers' summary and series were two of them per flow. Returns
    the texts in the jobs' order; raises QoslabError as :func:`run_itgdec` does, for the first
    job that failed."""
    ex = executor if executor is not None else LocalExecutor()

    def q(path: object) -> str:
        """A path for the script: relative ones anchored at the directory it started in (``$here``),
        since the script changes into the log's folder before ITGDec runs."""
        p = str(path)
        return shlex.quote(p) if p.startswith("/") else '"$here"/' + shlex.quote(p)

    logdir = str(log).rsplit("/", 1)[0] if "/" in str(log) else "."
    written: list[str] = []
    parts = [f"here=$(pwd) || exit 3; [ -f {q(log)} ] || exit 3; cd {q(logdir)} || exit 3; "
             f"lim=$(( ($(stat -c %s {q(log)}) * 4 + {ITGDEC_MAX_OUTPUT}) / 512 + 1 )); "]
    for i, (args, out_file, _) in enumerate(jobs):
        series = bool(args) and args[0] == "-c"
        written.append(str(args[2]) if series else str(out_file))
        stdout = "/dev/null" if series else q(out_file)
        argv = [q(log)] + [q(a) if series and k == 2 else shlex.quote(str(a)) for k, a in enumerate(args)]
        parts.append(f"(rm -f {q(written[-1])}; ulimit -f $lim; exec ITGDec {' '.join(argv)} > {stdout} 2>/dev/null) "
                     f"& p{i}=$!; ")
    parts.append(" ".join(f'wait $p{i}; echo "rc={i}:$?";' for i in range(len(jobs))))
    try:
        r = ex.run(["sh", "-c", "".join(parts)], timeout=timeout_s, check=False)
    except CommandTimeout:
        raise QoslabError(f"ITGDec on {log} did not finish within {timeout_s:g} s") from None
    if r.returncode == 3:
        raise QoslabError(f"missing D-ITG log {log}")
    codes = {int(i): int(c) for i, c in re.findall(r"^rc=(\d+):(\d+)$", r.stdout or "", re.M)}
    texts = []
    for i, (_, _, local_out) in enumerate(jobs):
        rc = codes.get(i, r.returncode)
        if rc in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
            raise QoslabError(f"ITGDec on {log} ran amok: over {ITGDEC_MAX_OUTPUT} bytes of output")
        local = Path(local_out) if local_out is not None else Path(written[i])
        try:
            ex.fetch(written[i], local)
        except QoslabError:
            raise QoslabError(f"ITGDec on {log} wrote nothing (exit {rc})") from None
        if local.stat().st_size > ITGDEC_MAX_OUTPUT:
            raise QoslabError(f"ITGDec on {log} ran amok: over {ITGDEC_MAX_OUTPUT} bytes of output")
        texts.append(local.read_text(errors="replace"))
    return texts


def keep_or_drop(ex: Executor, log: str, local: Path, keep: bool) -> None:
    """A decoded binary log ``log`` on the node of ``ex``: fetched to ``local`` when ``keep`` (a log
    that cannot be fetched stays where it is), else removed on the node and here. On this machine's
    file system (a :class:`SubprocessExecutor`: the testbed's ``netns`` executors and ``local``) the
    node's copy is unlinked directly: an ``rm`` process per log was 8 of the 16 commands the stop of
    a 4-flow campaign trial started, about 15 ms each (a fork of the campaign process in a tracked
    trial; issue 42). Elsewhere (ssh) ``rm -f`` runs on the node."""
    if keep:
        try:
            ex.fetch(log, local)
        except QoslabError:
            pass
        return
    if isinstance(ex, SubprocessExecutor):
        Path(log).unlink(missing_ok=True)
    else:
        ex.run(["rm", "-f", log], check=False, timeout=10)
    local.unlink(missing_ok=True)
