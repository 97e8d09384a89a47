"""Push atomicity: faults injected at every step of a push against the virtual Catalyst (real SSH,
real Netmiko; no testbed: the switch runs in this process with ``apply=False`` on a free
loopback port). Whatever interrupts a push, the running-config ends equal to the backup or to
the target (the whole config, not only its QoS part), the error is the documented one, and no
connection is left open."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hier_config.exceptions import DuplicateChildError
from netmiko.exceptions import ReadTimeout

import qoslab.switch.push as sw
from conftest import ECENET
from qoslab.campaign.watchdog import TrialTimeout
from qoslab.errors import QoslabError
from qoslab.ios.configdiff import normalized_config
from qoslab.profiles import load_profile, render
from qoslab.switch.backends import virtual_endpoint
from qoslab.switch.push import PushError, push
from qoslab.testbedplan import vswitch_dir
from qoslab.topology import load_variant
from qoslab.vswitch import serve

from .conftest import free_port, unique_name


@pytest.fixture(scope="module")
def vswitch():
    """The virtual Catalyst of a throw-away topology, serving in a thread of this process."""
    topo = load_variant(unique_name("pf"), free_port(), ECENET)
    ready = threading.Event()
    state: dict = {}

    def run() -> None:
        async def main() -> None:
            started = asyncio.Event()
            state["loop"], state["task"] = asyncio.get_running_loop(), asyncio.current_task()
            waiter = asyncio.create_task(started.wait())
            serving = asyncio.create_task(serve(topo, apply=False, ready=started))
            await waiter
            ready.set()
            await serving

        try:
            asyncio.run(main())
        except asyncio.CancelledError:
            pass

    th = threading.Thread(target=run, daemon=True)
    th.start()
    assert ready.wait(15), "the virtual switch did not start"
    try:
        yield topo
    finally:
        state["loop"].call_soon_threadsafe(state["task"].cancel)
        th.join(10)
        shutil.rmtree(vswitch_dir(topo.name), ignore_errors=True)


def running(topo) -> list[str]:
    """The switch's whole running-config, normalized (a fresh session)."""
    conn = sw.connect(virtual_endpoint(topo))
    try:
        return normalized_config(sw._show_run(conn))
    finally:
        conn.disconnect()


class Fault:
    """One fault: wraps ``sw.<point>`` so its first call (in the push) misbehaves; later calls (the
    rollback's) are real."""

    def __init__(self, point: str, act: Callable, monkeypatch) -> None:
        self.real = getattr(sw, point)
        self.fired = False
        self.act = act

        def wrapper(*a, **kw):
            if self.fired:
                return self.real(*a, **kw)
            self.fired = True
            return self.act(self.real, *a, **kw)

        monkeypatch.setattr(sw, point, wrapper)


def raise_(exc: BaseException) -> Callable:
    def act(real, *a, **kw):
        raise exc
    return act


def part_then(frac: float, then: Callable) -> Callable:
    """For ``_send``: send the first ``frac`` of the lines for real, then ``then(conn, rest)``."""
    def act(real, conn, lines):
        k = int(len(lines) * frac)
        if k:
            real(conn, lines[:k])
        then(conn)
        return real(conn, lines[k:])
    return act


def drop(conn) -> None:
    conn.remote_conn.close()  # the connection dies; the rest of the send fails for real


def throw(exc: BaseException) -> Callable:
    def f(conn):
        raise exc
    return f


def after(real_first: bool, then: Callable) -> Callable:
    """Call the real step, then ``then(conn)`` (real_first), or ``then`` before it."""
    def act(real, conn, *a, **kw):
        if real_first:
            real(conn, *a, **kw)
            then(conn)
            return None
        then(conn)
        return real(conn, *a, **kw)
    return act


def sigterm(conn) -> None:
    os.kill(os.getpid(), signal.SIGTERM)  # the CLI's handler turns it into KeyboardInterrupt


def evil_line(conn) -> None:
    conn.send_config_set(["ip http server"])  # a non-QoS change: the whole-config check must see it


def _failing_disconnect(conn):
    """The session closes, then disconnect() raises (a broken pipe while saying goodbye)."""
    real = conn.disconnect

    def disconnect():
        real()
        raise OSError(32, "Broken pipe")
    conn.disconnect = disconnect
    return conn


# (id, step, action, expected exception, where the config must end: backup | target)
CASES = [
    ("connect-unreachable", "connect", raise_(QoslabError("switch: unreachable (injected)")), QoslabError, "backup"),
    ("connect-ctrl-c", "connect", raise_(KeyboardInterrupt()), KeyboardInterrupt, "backup"),
    ("backup-read-timeout", "_show_run", after(False, throw(ReadTimeout("no prompt"))), QoslabError, "backup"),
    ("backup-ctrl-c", "_show_run", after(False, throw(KeyboardInterrupt())), KeyboardInterrupt, "backup"),
    ("backup-disk-full", "_write_backup", raise_(OSError(28, "No space left on device")), QoslabError, "backup"),
    ("diff-duplicate-child", "remediation", raise_(DuplicateChildError("class x")), QoslabError, "backup"),
    ("diff-ctrl-c", "remediation", raise_(KeyboardInterrupt()), KeyboardInterrupt, "backup"),
    ("send-drop-at-0", "_send", part_then(0.0, drop), PushError, "backup"),
    ("send-drop-at-half", "_send", part_then(0.5, drop), PushError, "backup"),
    ("send-drop-before-last", "_send", part_then(0.97, drop), PushError, "backup"),
    ("send-read-timeout", "_send", part_then(0.5, throw(ReadTimeout("Pattern not detected"))), PushError, "backup"),
    ("send-ctrl-c-at-1-line", "_send", part_then(0.01, throw(KeyboardInterrupt())), KeyboardInterrupt, "backup"),
    ("send-ctrl-c-at-half", "_send", part_then(0.5, throw(KeyboardInterrupt())), KeyboardInterrupt, "backup"),
    ("send-sigterm-at-half", "_send", part_then(0.5, sigterm), KeyboardInterrupt, "backup"),
    ("send-trial-timeout", "_send", part_then(0.6, throw(TrialTimeout(5))), TrialTimeout, "backup"),
    ("send-system-exit", "_send", part_then(0.3, throw(SystemExit(1))), SystemExit, "backup"),
    ("send-runtime-error", "_send", part_then(0.3, throw(RuntimeError("bug"))), PushError, "backup"),
    ("verify-read-timeout", "_verify", after(False, throw(ReadTimeout("no prompt"))), PushError, "backup"),
    ("verify-ctrl-c", "_verify", after(False, throw(KeyboardInterrupt())), KeyboardInterrupt, "backup"),
    ("verify-sees-non-qos-change", "_verify", after(False, evil_line), PushError, "backup"),
    ("save-read-timeout", "_save", after(False, throw(ReadTimeout("no [OK]"))), PushError, "backup"),
    ("save-ctrl-c-after-write", "_save", after(True, throw(KeyboardInterrupt())), KeyboardInterrupt, "backup"),
    ("close-fails", "_close", lambda real, conn: real(_failing_disconnect(conn)), None, "target"),
]


@pytest.fixture(scope="module")
def configs(vswitch, tmp_path_factory):
    """(start lines, target lines, the whole config at start, the whole config at the target)."""
    dev, d = virtual_endpoint(vswitch), tmp_path_factory.mktemp("setup")
    start = render(load_profile("trust-dscp"), vswitch)
    target = render(load_profile("thesis"), vswitch)
    push(target, dev, d, "thesis")
    goal = running(vswitch)
    push(start, dev, d, "trust-dscp")
    backup = running(vswitch)
    assert goal != backup
    return start, target, backup, goal


@pytest.fixture
def state(vswitch, configs, tmp_path, monkeypatch):
    """The switch at the start profile; returns (endpoint, target lines, backup config, target
    config, connections opened during the test)."""
    dev = virtual_endpoint(vswitch)
    start, target, backup, goal = configs
    push(start, dev, tmp_path / "setup", "trust-dscp")  # sends nothing when it is there already
    assert running(vswitch) == backup
    opened = []
    real_connect = sw.connect

    def counting(d):
        c = real_connect(d)
        opened.append(c)
        return c

    monkeypatch.setattr(sw, "connect", counting)
    old_term = signal.signal(signal.SIGTERM, lambda n, f: (_ for _ in ()).throw(KeyboardInterrupt()))
    yield dev, target, backup, goal, opened
    signal.signal(signal.SIGTERM, old_term)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_fault_during_push_leaves_backup_or_target(case, state, vswitch, tmp_path, monkeypatch):
    _, point, act, expect, where = case
    dev, target, backup, goal, opened = state
    fault = Fault(point, act, monkeypatch)
    if expect is None:
        rep = push(target, dev, tmp_path / "out", "thesis")
        assert rep.changed
    else:
        with pytest.raises(expect) as e:
            push(target, dev, tmp_path / "out", "thesis")
        if expect is PushError:
            assert e.value.rolled_back and "rolled back" in str(e.value)
    assert fault.fired
    monkeypatch.undo()  # real steps again for the checks
    assert all(not c.is_alive() for c in opened), "a connection was left open"
    assert running(vswitch) == (backup if where == "backup" else goal)
    for f in (tmp_path / "out").glob("running-config-backup-*"):
        assert f.stat().st_mode & 0o777 == 0o600


def test_second_interrupt_during_rollback_waits_for_it(state, vswitch, tmp_path, monkeypatch):
    """Ctrl-C during the rollback of an interrupted push is held back until the rollback is over."""
    dev, target, backup, _, _ = state
    Fault("_send", part_then(0.5, throw(KeyboardInterrupt())), monkeypatch)
    real_restore = sw.restore

    def interrupted_restore(text, d):
        os.kill(os.getpid(), signal.SIGINT)
        return real_restore(text, d)

    monkeypatch.setattr(sw, "restore", interrupted_restore)
    with pytest.raises(KeyboardInterrupt):
        push(target, dev, tmp_path / "out", "thesis")
    monkeypatch.undo()
    assert running(vswitch) == backup


def test_failed_rollback_is_reported_and_the_next_push_converges(state, vswitch, tmp_path, monkeypatch):
    """A double fault (the rollback cannot connect) is reported as such; the next push reaches the target."""
    dev, target, _, goal, _ = state
    Fault("_send", part_then(0.5, drop), monkeypatch)
    monkeypatch.setattr(sw, "restore", lambda text, d: (_ for _ in ()).throw(QoslabError("switch unreachable")))
    with pytest.raises(PushError, match="ROLLBACK FAILED") as e:
        push(target, dev, tmp_path / "out", "thesis")
    assert not e.value.rolled_back
    monkeypatch.undo()
    assert push(target, dev, tmp_path / "again", "thesis").changed
    assert running(vswitch) == goal


def test_a_line_that_is_not_qos_is_refused_before_connecting(state, tmp_path):
    dev, target, *_ = state
    with pytest.raises(QoslabError, match="'username evil privilege 15 secret x' is not a QoS configuration line"):
        push([*target, "username evil privilege 15 secret x"], dev, tmp_path / "out", "evil")
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_backups_are_private(state, tmp_path):
    dev, target, *_ = state
    rep = push(target, dev, tmp_path / "out", "../../etc/x")
    assert rep.backup.parent == tmp_path / "out" and rep.backup.stat().st_mode & 0o777 == 0o600
    assert Path(rep.backup).name.endswith("-.._.._etc_x.txt")
