"""The ssh executor's node agent (:mod:`qoslab.executors.sshagent`) run as the node runs it
(``python3 -u -c SOURCE`` on a pipe): answers by id, and when its stdin closes (the runner died,
the SSH connection ended) the scripts still running in the foreground end with it, while what a
script started in the background in its own session lives on (the guard's business)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from qoslab.executors.sshio import AGENT_SOURCE


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_file(path: Path, timeout_s: float = 10.0) -> str:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.02)
    raise AssertionError(f"{path} not written within {timeout_s} s")


def _agent() -> subprocess.Popen:
    a = subprocess.Popen([sys.executable, "-u", "-c", AGENT_SOURCE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    assert json.loads(a.stdout.readline())["id"] == 0
    return a


def _request(a: subprocess.Popen, i: int, script: str, timeout_s: float) -> None:
    a.stdin.write(json.dumps({"id": i, "script": script, "input": None, "timeout": timeout_s}) + "\n")
    a.stdin.flush()


def test_answers_by_id():
    a = _agent()
    try:
        _request(a, 7, "echo out; echo err >&2; exit 3", 10)
        assert json.loads(a.stdout.readline()) == {"id": 7, "rc": 3, "out": "out\n", "err": "err\n"}
    finally:
        a.stdin.close()
        a.wait(10)


def test_a_foreground_script_ends_when_stdin_closes_a_background_one_lives_on(tmp_path):
    a = _agent()
    fg = bg = None
    try:
        # a foreground command that would run for 10 minutes and ignores SIGTERM (a JVM in a
        # shutdown hook): SIGKILL after the grace
        _request(a, 1, f"trap '' TERM; sleep 600 & echo $! > {tmp_path}/fg; wait", 900)
        # a background process in its own session, as the executor's start script makes them
        _request(a, 2, f"setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > {tmp_path}/bg", 10)
        fg = int(_wait_file(tmp_path / "fg"))
        bg = int(_wait_file(tmp_path / "bg"))
        assert json.loads(a.stdout.readline())["id"] == 2
        assert _alive(fg)
        t0 = time.monotonic()
        a.stdin.close()  # the runner is gone
        assert a.wait(10) == 0
        while _alive(fg) and time.monotonic() < t0 + 10:
            time.sleep(0.05)
        assert not _alive(fg), "the foreground script's process outlived the agent"
        assert time.monotonic() - t0 < 6  # END_GRACE_S (2 s) + margin for a loaded machine
        assert _alive(bg)
    finally:
        if a.poll() is None:
            a.kill()
        for pid in (fg, bg):  # what a failing agent left (fg's whole process group)
            if pid is not None and _alive(pid):
                os.killpg(os.getpgid(pid), signal.SIGKILL)
