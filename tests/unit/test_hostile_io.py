"""Hostile inputs that are not YAML fields (issue 45): named pipes and devices given as input
files, output files in missing folders, a bad --host, cut and pathological captures, and user text
that looks like rich markup. Each goes through the real ``qoslab`` command (a subprocess, bounded
by a timeout: a hang fails the test) and must end in one line naming the path or option, never a
traceback or an "internal error"; the YAML-field cases are in the malformed corpus
(tests/data/malformed/, cases_i45.py)."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO

QOSLAB = [sys.executable, "-m", "qoslab"]
REAL = REPO / "playbooks" / "scale" / "thesis-cluster.yaml"
CAPTURE_JAR = REPO / "capture" / "target" / "qoslab-capture-0.1.0.jar"
needs_jar = pytest.mark.skipif(not CAPTURE_JAR.exists(), reason="the capture jar is not built (make setup)")


def qoslab(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real CLI in a subprocess; a hang is a TimeoutExpired (the test fails)."""
    return subprocess.run([*QOSLAB, *argv], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def one_error_line(r: subprocess.CompletedProcess[str]) -> str:
    """The one ``error: ...`` line of a refused command (exit code 1 or 2, nothing else on stderr but
    one-line notes)."""
    lines = [line for line in r.stderr.splitlines() if line.strip() and not line.startswith("note: ")]
    assert r.returncode in (1, 2), (r.returncode, r.stdout[-500:], r.stderr[-2000:])
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    return lines[0]


@pytest.fixture
def fifo(tmp_path) -> Path:
    p = tmp_path / "input.yaml"
    os.mkfifo(p)
    return p


@pytest.mark.parametrize("argv", [["topology", "validate", "{}"], ["testbed", "scale", "--from", "{}"],
                                  ["switch", "render", "{}"], ["campaign", "plan", "{}"], ["flood", "validate", "{}"]])
def test_a_named_pipe_is_refused_by_name_without_blocking(argv, fifo):
    t0 = time.monotonic()
    line = one_error_line(qoslab(*[a.replace("{}", str(fifo)) for a in argv], timeout=30))
    assert time.monotonic() - t0 < 20
    assert f"{fifo}: a named pipe, not a regular file" in line, line


@pytest.mark.parametrize("path,what", [("/dev/zero", "a character device"), ("/tmp", "a folder")])
def test_a_device_or_folder_is_refused_by_name(path, what):
    line = one_error_line(qoslab("topology", "validate", path, timeout=30))
    assert line == f"error: {path}: {what}, not a regular file: qoslab reads its inputs from regular files only"


@needs_jar
@pytest.mark.parametrize("path", ["{fifo}", "/dev/zero"])
def test_capture_classify_refuses_a_pipe_or_device_unopened(path, fifo):
    path = path.replace("{fifo}", str(fifo))
    line = one_error_line(qoslab("capture", "classify", path, "--out", str(fifo.parent / "out"), timeout=60))
    assert f"{path}: a named pipe, device or socket, not a regular file" in line, line


@pytest.mark.parametrize("argv", [["testbed", "scale", "--from", str(REAL), "--out", "{missing}/scaled.yaml"],
                                  ["inventory", "--out", "{missing}/inventory.yaml"]])
def test_an_output_file_in_a_missing_folder_is_one_line(argv, tmp_path):
    missing = tmp_path / "no" / "such"
    r = qoslab(*[a.replace("{missing}", str(missing)) for a in argv])
    line = one_error_line(r)
    assert line.endswith(f"--out {missing}/{Path(argv[-1]).name}: cannot write: the folder {missing} does not exist")
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("host", ["999.1.1.1", "jp-42", "1.2.3"])
def test_capture_host_that_is_neither_an_address_nor_a_host(host, tmp_path):
    cap = tmp_path / "x.pcap"
    cap.write_bytes(b"")
    line = one_error_line(qoslab("capture", "classify", str(cap), "--host", host, "--out", str(tmp_path / "o")))
    assert line.startswith(f"error: --host '{host}': neither an IPv4 address nor a host of topology ecenet"), line


def _pcapng_with_a_cut_block() -> bytes:
    """SHB, IDB, then an Enhanced Packet Block whose length says 12 (its fixed fields need 32)."""
    def block(kind: int, body: bytes) -> bytes:
        return struct.pack("<II", kind, 12 + len(body)) + body + struct.pack("<I", 12 + len(body))

    return (block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)) + block(1, struct.pack("<HHI", 1, 0, 65535))
            + struct.pack("<III", 6, 12, 12))


@needs_jar
def test_a_cut_pcapng_block_names_the_offset(tmp_path):
    """The capture jar threw IndexOutOfBoundsException ("internal error") on a block shorter than its
    type's fixed fields; now the file reads as cut there, at that byte offset."""
    cap = tmp_path / "cut.pcapng"
    cap.write_bytes(_pcapng_with_a_cut_block())
    r = qoslab("capture", "classify", str(cap), "--out", str(tmp_path / "o"))
    assert r.returncode == 0 and "internal error" not in r.stdout + r.stderr, r.stderr[-2000:]
    assert "file truncated: block at offset 48 (type 0x6) has a bad length 12 (its type needs at least 32)" in \
        " ".join(r.stdout.split()), r.stdout


def _unanswered_giop(n: int) -> bytes:
    """A pcap of one TCP connection carrying ``n`` GIOP 1.2 requests (reply expected), 50 per segment,
    none answered."""
    def frame(seq: int, payload: bytes) -> bytes:
        tcp = struct.pack("!HHIIBBHHH", 40000, 1300, seq, 0, 5 << 4, 0x18, 65535, 0, 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(payload), 0, 0x4000, 64, 6, 0, bytes([198, 18, 0, 1]),
                         bytes([198, 18, 0, 2]))
        return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + tcp + payload

    out, seq = io.BytesIO(), 1000
    out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for first in range(0, n, 50):
        p = b"".join(b"GIOP\x01\x02\x00\x00" + struct.pack("!IIB3x", 8, rid, 3) for rid in range(first, min(n, first + 50)))
        f = frame(seq, p)
        out.write(struct.pack("<IIII", 1_700_000_000, first, len(f), len(f)) + f)
        seq += len(p)
    return out.getvalue()


@needs_jar
def test_unanswered_giop_requests_stop_at_the_limit_naming_the_option(tmp_path):
    """4.5 million unanswered GIOP requests ran the capture JVM out of memory ("capture classify
    failed (1)"); the matcher now stops at --max-open-calls with an error that names it (capture/README.md,
    "Memory on pathological streams": the 4.5 million case measured)."""
    cap = tmp_path / "giop.pcap"
    cap.write_bytes(_unanswered_giop(2_000))
    line = one_error_line(qoslab("capture", "classify", str(cap), "--max-open-calls", "1000", "--out",
                                 str(tmp_path / "o")))
    assert "more than 1000 GIOP requests wait for their replies at once (198.18.0.1:40000 -> 198.18.0.2:1300, " \
           "frame 21)" in line and "--max-open-calls N raises the limit" in line, line
    r = qoslab("capture", "classify", str(cap), "--calls", "--out", str(tmp_path / "o2"))  # the default holds them
    assert r.returncode == 0, r.stderr[-2000:]


@pytest.mark.parametrize("argv, named", [
    (["--max-open-calls", "0"], "--max-open-calls must be 1 to 2147483647, got 0"),
    (["--max-open-calls", "2147483648"], "--max-open-calls must be 1 to 2147483647, got 2147483648"),
    (["--duration", "0"], "--duration must be > 0 seconds, got 0"),
    (["--duration", "nan"], "--duration must be > 0 seconds, got nan"),
])
def test_capture_live_refuses_its_bounds_before_looking_for_a_testbed(argv, named, tmp_path):
    """``capture live`` takes ``--max-open-calls`` as ``classify`` does; a bound out of range is
    refused first, on a machine with no testbed up, and nothing is written."""
    r = qoslab("capture", "live", *argv, "--out", str(tmp_path / "o"))
    assert named in one_error_line(r)
    assert not (tmp_path / "o").exists()


def test_user_text_that_looks_like_markup_is_printed_as_written():
    """Condition, metric and unit names come from the user (playbook, the program's result line);
    rich would read '[/]' as a closing tag and fail ("internal error: MarkupError")."""
    from rich.console import Console

    import qoslab.cli.campaignresults as cc

    buf = io.StringIO()
    old = cc.console
    cc.console = Console(file=buf, width=200)
    try:
        stats = {"metric": {"name": "p99[/]", "unit": "ms[/]", "direction": "lower"},
                 "conditions": {"a [/] b": {"n": 3, "mean": 1.0, "sd": 0.1, "ci95": [0.9, 1.1], "median": 1.0,
                                            "cv": 0.1},
                                "[bold]c[/bold]": {"n": 3, "mean": 2.0, "sd": 0.1, "ci95": [1.9, 2.1], "median": 2.0,
                                                   "cv": 0.05}},
                 "comparisons": [{"a": "a [/] b", "b": "[bold]c[/bold]", "difference_s": 1.0, "ratio": 2.0,
                                  "welch_t_p": 0.01, "mann_whitney_p": 0.02}],
                 "recovery": []}
        cc._print_stats(stats, "p99[/] (command: ms[/], lower is better)")
    finally:
        cc.console = old
    text = buf.getvalue()
    assert "a [/] b" in text and "[bold]c[/bold]" in text and "mean ms[/]" in text and "p99[/] (command" in text


def test_workload_help_lists_every_kind_and_the_defaults_are_the_settings():
    """`qoslab workload --help` named neither command nor mpi; `workload run --workload mpj` used the
    CLI's --max-bytes default (1 MiB) where the mpj settings say 64 KiB."""
    from qoslab.cli.workload import _settings
    from qoslab.registry import workloads
    from qoslab.workloads.mpj import MpjSettings

    r = qoslab("workload", "--help")
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert all(k in text for k in workloads.names()), text
    s = _settings("mpj", ["jp-1", "jp-2", "jp-3", "jp-4"], {"max_bytes": None, "reps": None})
    assert s.max_bytes == MpjSettings.model_fields["max_bytes"].default == 65536
    for argv, want in ((["--workload", "command"], "error: --workload command: its settings come from a playbook"),
                       (["--workload", "mpj", "--codec", "externalizable"], "error: --codec: mpj does not take it"),
                       (["--workload", "sort", "--size", "99999999"], "error: workload: size: 99999999 integers do "
                                                                       "not fit the sort client's 384 MiB heap")):
        assert one_error_line(qoslab("workload", "run", *argv)).startswith(want)
