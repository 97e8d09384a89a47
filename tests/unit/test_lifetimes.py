"""Bounded lives of the processes qoslab starts, the trial deadline, held-back interrupts, and
private files (issue 14, items 1, 4 and 8). Local processes only (no namespaces)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import qoslab.switch.device as device_mod
from qoslab import testbedplan as netplan
from qoslab.campaign.watchdog import TrialTimeout, deadline
from qoslab.executors import BackgroundProcess, LocalExecutor
from qoslab.switch.push import _write_backup, deferred_interrupts
from qoslab.testbed.procs import pid_alive
from qoslab.testbed.statedir import campaign_lock, campaign_running, lock_path, private_dir, release_campaign_lock
from qoslab.topology import repo_root
from qoslab.vswitch import ensure_identity
from qoslab.workloads.raytracer import WorkerPool, WorkloadSettings


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _gone(pids: list[int], within_s: float) -> bool:
    deadline_t = time.monotonic() + within_s
    while time.monotonic() < deadline_t:
        if not any(pid_alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_a_lifetime_ends_the_process_and_its_children():
    ex = LocalExecutor()
    p = ex.start(["sh", "-c", "sleep 300 & sleep 300; wait"], lifetime_s=0.5)
    time.sleep(0.2)
    family = [p.pid, *_children(p.pid)]
    family += [c for pid in family[1:] for c in _children(pid)]
    assert len(family) >= 3
    assert _gone(family, 3.0), "the lifetime did not end the process group"
    assert ex.poll(p) is not None


DRIVER = textwrap.dedent("""
    import sys, time
    from qoslab.executors import LocalExecutor
    life = float(sys.argv[1]) if sys.argv[1] != "none" else None
    p = LocalExecutor().start(["sleep", "300"], lifetime_s=life)
    print(p.pid, flush=True)
    time.sleep(300)
""")


@pytest.mark.parametrize("life", ["none", "120"])
def test_background_processes_die_with_their_runner_even_after_sigkill(life):
    runner = subprocess.Popen([sys.executable, "-c", DRIVER, life], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(runner.stdout.readline())
        time.sleep(0.2)
        family = [pid, *_children(pid)]  # with a lifetime: GNU timeout and the sleep under it
        assert all(pid_alive(p) for p in family)
        runner.kill()
        runner.wait()
        assert _gone(family, 3.0), "a background process outlived its SIGKILLed runner"
    finally:
        runner.kill()


def test_the_parent_death_signal_follows_the_starting_thread():
    """Why long-lived processes are started from the main thread only: PR_SET_PDEATHSIG fires when
    the *thread* that forked ends, not the process."""
    box = {}
    th = threading.Thread(target=lambda: box.setdefault("p", LocalExecutor().start(["sleep", "300"])))
    th.start()
    th.join()
    assert _gone([box["p"].pid], 3.0)


def test_deadline_interrupts_sleeps_and_waits_and_is_not_an_exception():
    t0 = time.monotonic()
    with pytest.raises(TrialTimeout, match="trial_timeout_s = 0.2 s"):
        with deadline(0.2):
            try:
                subprocess.run(["sleep", "5"])
            except Exception:  # noqa: BLE001 - code catching Exception must not swallow the timeout
                pytest.fail("swallowed")
    assert time.monotonic() - t0 < 2
    with deadline(1.0):
        time.sleep(0.05)  # no timeout: the timer is disarmed afterwards
    time.sleep(1.2)


def test_interrupts_are_held_back_during_a_rollback():
    # Python's own Ctrl-C handler, whatever this process inherited: started in the background by a
    # non-interactive shell (`cmd &`), SIGINT arrives ignored and Python then installs no handler
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    order = []
    try:
        with pytest.raises(KeyboardInterrupt):
            with deferred_interrupts():
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.1)
                order.append("rollback finished")
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert order == ["rollback finished"]


class _FakeEx:
    """An executor whose processes are bookkeeping only (the pool's renewal logic)."""

    def __init__(self) -> None:
        self.node, self.started, self.stopped = "jp-1", 0, 0
        self.qoslab_root = repo_root()

    def node_dir(self, local_dir):
        return str(local_dir)

    def start(self, argv, *, stdout=None, stderr=None, lifetime_s=None, **kw) -> BackgroundProcess:
        self.started += 1
        return BackgroundProcess(self.node, list(argv), 10_000 + self.started, None, None,
                                 deadline=None if lifetime_s is None else time.monotonic() + lifetime_s)

    def poll(self, proc):
        return None

    def stop(self, proc, grace_s=3.0):
        self.stopped += 1

    def run(self, argv, **kw):
        return subprocess.CompletedProcess(argv, 0, "LISTEN 0 50 198.18.0.1:1099", "")


def test_pooled_workers_are_renewed_before_their_lifetime_runs_out(tmp_path):
    ex = _FakeEx()
    pool = WorkerPool(lambda h: ex, lambda h: "198.18.0.1", tmp_path, lifetime_s=1.0, renew_below_s=0.6)
    s = WorkloadSettings(hosts=["jp-1"])
    pool.ensure(s)
    pool.ensure(s)
    assert ex.started == 1  # 1 s left > 0.6 s: kept
    time.sleep(0.5)
    pool.ensure(s)
    assert ex.started == 2 and ex.stopped == 1  # 0.5 s left < 0.6 s: restarted before the trial


def test_private_files_are_0600_from_the_first_byte(tmp_path, monkeypatch):
    modes = []
    real = os.fdopen

    def spy(fd, *a, **kw):
        modes.append(os.fstat(fd).st_mode & 0o777)  # before a byte is written
        return real(fd, *a, **kw)

    monkeypatch.setattr(device_mod.os, "fdopen", spy)
    old = os.umask(0)
    try:
        d = tmp_path / "vs"
        ensure_identity(d)
    finally:
        os.umask(old)
    assert modes == [0o600, 0o600]  # credentials, host key
    assert (d / "ssh_host_key").stat().st_mode & 0o777 == 0o600
    assert (d / "credentials").stat().st_mode & 0o777 == 0o600
    assert d.stat().st_mode & 0o777 == 0o700


def test_push_backups_are_0600_and_never_overwritten(tmp_path):
    old = os.umask(0)
    try:
        a = _write_backup(tmp_path, "thesis", "hostname Switch\nenable secret 5 $1$x\n")
        b = _write_backup(tmp_path, "thesis", "hostname Switch\n")
    finally:
        os.umask(old)
    assert a != b and a.stat().st_mode & 0o777 == 0o600 and b.stat().st_mode & 0o777 == 0o600


def test_the_state_folder_is_made_private_whoever_makes_it(tmp_path, monkeypatch):
    root = tmp_path / "run-qoslab"
    monkeypatch.setattr(netplan, "STATE_DIR", root)
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    sub = private_dir(netplan.vswitch_dir("x") / "flash")
    assert sub.stat().st_mode & 0o777 == 0o700
    assert root.stat().st_mode & 0o777 == 0o700 and (root / "vswitch-x").stat().st_mode & 0o777 == 0o700


def test_campaign_lock_is_seen_by_testbed_up(tmp_path, monkeypatch):
    monkeypatch.setattr(netplan, "STATE_DIR", tmp_path / "state")
    assert campaign_running("tb") is None
    lock = campaign_lock("tb")
    try:
        assert campaign_running("tb") == f"pid {os.getpid()}"
    finally:
        lock.close()
    assert campaign_running("tb") is None


def test_campaign_lock_file_is_removed_on_release(tmp_path, monkeypatch):
    """The lock file goes with the lock (before, /run/qoslab kept one file per testbed name
    ever used), and a second campaign is refused while it is held."""
    monkeypatch.setattr(netplan, "STATE_DIR", tmp_path / "state")
    lock = campaign_lock("tb")
    assert lock_path("tb").exists()
    probe = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        from pathlib import Path
        from qoslab import testbedplan as netplan
        netplan.STATE_DIR = Path({str(tmp_path / "state")!r})
        from qoslab.testbed.statedir import campaign_lock
        from qoslab.errors import QoslabError
        try:
            campaign_lock("tb")
        except QoslabError as e:
            print("refused:", e)
        """)], capture_output=True, text=True, timeout=30)
    assert f"refused: testbed tb is in use by another campaign (pid {os.getpid()})" in probe.stdout, probe.stderr
    release_campaign_lock(lock, "tb")
    release_campaign_lock(lock, "tb")  # idempotent
    assert not lock_path("tb").exists() and campaign_running("tb") is None
    again = campaign_lock("tb")
    assert campaign_running("tb") == f"pid {os.getpid()}"
    release_campaign_lock(again, "tb")
    assert list((tmp_path / "state").iterdir()) == []


def test_campaign_lock_taken_on_an_unlinked_file_is_taken_again(tmp_path, monkeypatch):
    """A process that opened the lock file just before the holder released (unlinked) it must not
    believe it holds the lock on the orphaned inode while a third process locks the new file."""
    monkeypatch.setattr(netplan, "STATE_DIR", tmp_path / "state")
    first = campaign_lock("tb")
    real_open = open
    released = []

    def open_then_release(path, *a, **kw):  # the holder releases between our open and flock
        f = real_open(path, *a, **kw)
        if Path(path) == lock_path("tb") and not released:
            released.append(True)
            release_campaign_lock(first, "tb")
        return f

    monkeypatch.setattr("builtins.open", open_then_release)
    second = campaign_lock("tb")
    monkeypatch.setattr("builtins.open", real_open)
    try:
        assert released and os.fstat(second.fileno()).st_ino == os.stat(lock_path("tb")).st_ino
        assert campaign_running("tb") == f"pid {os.getpid()}"
    finally:
        release_campaign_lock(second, "tb")


def test_a_commands_bytes_that_are_not_utf8_are_replaced_not_a_traceback():
    """A command printing bytes that are not UTF-8 (``\\xff``, a truncated sequence) on stdout and
    stderr gives a result with U+FFFD in their place, its other text intact, and a failing one's
    error names the command: never a UnicodeDecodeError."""
    from qoslab.errors import CommandFailed

    script = "printf 'a\\377b\\342\\202'; printf 'e\\376' >&2"
    r = LocalExecutor().run(["sh", "-c", script])
    assert r.stdout == "a\ufffdb\ufffd" and r.stderr == "e\ufffd"
    with pytest.raises(CommandFailed, match="sh"):
        LocalExecutor().run(["sh", "-c", script + "; exit 3"])
