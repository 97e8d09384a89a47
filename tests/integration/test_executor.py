"""The executor abstraction on the netns backend: run with timeout, background start/stop by
PID (process group), fetch, and error messages."""

from __future__ import annotations

import time

import pytest

from qoslab.errors import CommandFailed, CommandTimeout, QoslabError
from qoslab.testbed import namespace_pids


def test_run_inside_the_host(testbed):
    ex = testbed.executor("jp-2")
    r = ex.run(["ip", "-4", "-o", "addr", "show", "dev", "eth0"])
    assert "198.18.0.2/24" in r.stdout and r.returncode == 0 and r.duration_s > 0
    r = ex.run(["cat"], input="hello")
    assert r.stdout == "hello"


def test_failure_names_node_and_command(testbed):
    with pytest.raises(CommandFailed) as e:
        testbed.executor("jp-2").run(["sh", "-c", "echo boom >&2; exit 4"])
    assert e.value.returncode == 4 and "on jp-2" in str(e.value) and "boom" in str(e.value)
    assert testbed.executor("jp-2").run(["false"], check=False).returncode == 1
    with pytest.raises(QoslabError, match="cannot run no-such-binary-qoslab: No such file or directory"):
        testbed.executor("jp-2").run(["no-such-binary-qoslab"])


def test_timeout_kills_the_whole_process_group(testbed):
    ns = testbed.namespace("jp-6")
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout, match="did not finish within 0.5 s"):
        testbed.executor("jp-6").run(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.5)
    assert time.monotonic() - t0 < 5
    time.sleep(0.1)
    assert namespace_pids([ns])[ns] == []


def test_background_process_start_poll_stop(testbed, tmp_path):
    ex = testbed.executor("jp-7")
    ns = testbed.namespace("jp-7")
    out = tmp_path / "out.log"
    # a shell that starts a child and ignores SIGTERM: stop must still end both (SIGKILL to the group)
    p = ex.start(["sh", "-c", "trap '' TERM; sleep 300 & echo started; wait"], stdout=out)
    deadline = time.monotonic() + 5
    while "started" not in (out.read_text() if out.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ex.poll(p) is None and len(namespace_pids([ns])[ns]) == 2
    rc = ex.stop(p, grace_s=0.3)
    assert rc == -9
    time.sleep(0.1)
    assert namespace_pids([ns])[ns] == []
    q = ex.start(["sh", "-c", "exit 7"])
    assert ex.wait(q, timeout=5) == 7 and ex.stop(q) == 7


def test_wait_timeout_leaves_process_running(testbed):
    ex = testbed.executor("jp-8")
    p = ex.start(["sleep", "30"])
    try:
        with pytest.raises(CommandTimeout):
            ex.wait(p, timeout=0.2)
        assert ex.poll(p) is None
    finally:
        ex.stop(p)
    assert ex.poll(p) is not None


def test_fetch(testbed, tmp_path):
    ex = testbed.executor("jp-1")
    remote = tmp_path / "remote.txt"
    ex.run(["sh", "-c", f"ip -4 -o addr show dev eth0 > {remote}"])
    local = ex.fetch(remote, tmp_path / "sub" / "local.txt")
    assert "198.18.0.1" in local.read_text()
    with pytest.raises(QoslabError, match="on jp-1: no such file"):
        ex.fetch(tmp_path / "missing", tmp_path / "x")


def test_timer_slack_is_set_for_the_started_process_and_inherited(testbed, tmp_path):
    """ITGSend's pacing depends on it: the slack must reach the command itself (through the
    ``ip netns exec`` wrapper) and the children it forks."""
    ex = testbed.executor("jp-1")
    out = tmp_path / "slack.txt"
    p = ex.start(["sh", "-c", "cat /proc/$$/timerslack_ns; sh -c 'cat /proc/$$/timerslack_ns'"],
                 stdout=out, timer_slack_ns=1)
    assert ex.wait(p, 10) == 0
    assert out.read_text().split() == ["1", "1"]
    default = tmp_path / "default.txt"
    p = ex.start(["sh", "-c", "cat /proc/$$/timerslack_ns"], stdout=default)
    assert ex.wait(p, 10) == 0
    inherited = open("/proc/self/timerslack_ns").read().strip()  # without the option: ours (50000 by default)
    assert default.read_text().split() == [inherited] and inherited != "1"
