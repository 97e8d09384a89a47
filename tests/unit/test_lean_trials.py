"""Lean trials (issue 26): the switch's show commands batched on the kept session (split at the
prompts, the echo dropped), the switch evidence read in the background with its ordering (the
'before' reading complete at ``traffic_begin``, the 'after' one started only at ``traffic_end``),
and the per-condition median harness overhead of a campaign."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from qoslab.ios.show_qos import PortCounters, render_statistics
from qoslab.meters.base import MeterSet, TrialContext
from qoslab.meters.evidence import TrialEvidence
from qoslab.meters.switch import SwitchMeter
from qoslab.platforms.counters import read_statistics
from qoslab.stats.campaign import overhead_summary
from qoslab.switch.batch import send_batch, split_batch
from qoslab.trials.playbook import ScheduledTrial
from qoslab.trials.store import Store

CMDS = ["show mls qos interface Gi1/0/1 statistics", "show mls qos interface Gi1/0/2 statistics"]


def _stats(port: str, policer_out: int = 0) -> str:
    return render_statistics(port, PortCounters(policer_out=policer_out))


@pytest.mark.parametrize("echo_first", [True, False])
def test_split_batch_gives_each_command_its_output_without_the_echo(echo_first):
    """The virtual switch echoes every typed-ahead line at once; IOS echoes each before its reply."""
    a, b = _stats("GigabitEthernet1/0/1"), _stats("GigabitEthernet1/0/2", 7)
    text = (f"{CMDS[0]}\r\n{CMDS[1]}\r\n{a}Switch#{b}Switch#" if echo_first
            else f"{CMDS[0]}\r\n{a}Switch#{CMDS[1]}\r\n{b}Switch#")
    out = split_batch(text, CMDS, "Switch#")
    assert list(out) == CMDS
    assert CMDS[0] not in out[CMDS[0]] and CMDS[1] not in out[CMDS[0]]
    from qoslab.platforms.counters import parse_statistics

    assert set(parse_statistics(out[CMDS[0]])) == {"GigabitEthernet1/0/1"}
    assert parse_statistics(out[CMDS[1]])["GigabitEthernet1/0/2"].policer_out == 7
    with pytest.raises(ValueError, match="2 commands sent, 1 prompts"):
        split_batch(f"{a}Switch#", CMDS, "Switch#")


def test_send_batch_drops_stale_output_writes_once_and_reads_to_the_last_prompt():
    class Conn:
        def __init__(self) -> None:
            self.writes: list[str] = []
            self.chunks = ["Switch#", "", ]  # stale prompt, then nothing until written

        def write_channel(self, s: str) -> None:
            self.writes.append(s)
            a, b = _stats("GigabitEthernet1/0/1"), _stats("GigabitEthernet1/0/2")
            self.chunks = [f"{CMDS[0]}\n{CMDS[1]}\n", a, "Switch#", "", b[:30], b[30:] + "Switch#"]

        def read_channel(self) -> str:
            return self.chunks.pop(0) if self.chunks else ""

    conn = Conn()
    out = read_statistics(type("Dev", (), {"show": lambda self, c: send_batch(conn, c, "Switch#", 5)})(),
                          ["Gi1/0/1", "Gi1/0/2"])
    assert conn.writes == ["".join(c + "\n" for c in CMDS)]
    assert set(out) == {"GigabitEthernet1/0/1", "GigabitEthernet1/0/2"}
    slow = Conn()
    slow.write_channel = lambda s: None  # type: ignore[method-assign]
    with pytest.raises(TimeoutError):
        send_batch(slow, CMDS, "Switch#", 0.05)


class SlowSwitch:
    """A switch device whose show takes ``delay`` seconds; records when each reading ran."""

    def __init__(self, delay: float) -> None:
        self.delay, self.spans, self.n = delay, [], 0

    def show(self, commands):
        t = time.monotonic()
        time.sleep(self.delay)
        self.n += 1
        self.spans.append((t, time.monotonic(), threading.current_thread().name))
        return {c: _stats("GigabitEthernet1/0/1", self.n) for c in commands}


def test_background_evidence_is_complete_before_traffic_and_after_it_stopped(tmp_path: Path):
    sw = SlowSwitch(0.3)
    ctx = TrialContext(condition="c", congestion=False, trial_dir=tmp_path, local=True, switch=sw, ports=["Gi1/0/1"])
    meter = SwitchMeter(ctx)
    t0 = time.monotonic()
    meter.begin(ctx)
    # the reading runs in the background (the capture starts meanwhile): begin returns before the
    # 0.3 s reading is half done (a bound relative to the reading, not a machine's speed)
    assert time.monotonic() - t0 < 0.15
    meter.traffic_begin(ctx)
    traffic_from = time.monotonic()
    assert sw.spans[0][1] <= traffic_from and meter.evidence.before is not None
    meter.traffic_end(ctx)
    assert len(sw.spans) == 1 or sw.spans[1][0] >= traffic_from
    meter.end(ctx)
    cols = meter.columns(ctx)
    assert json.loads(cols["switch_json"])["ports"]["Gi1/0/1"]["policer_out"] == 1
    assert sw.spans[1][2] == "switch-evidence" and meter.seconds >= 0.6


def test_switch_meter_without_traffic_end_reads_after_at_end_and_meterset_skips_missing_hooks(tmp_path: Path):
    sw = SlowSwitch(0.0)
    ctx = TrialContext(condition="c", congestion=False, trial_dir=tmp_path, local=True, switch=sw, ports=["Gi1/0/1"])
    ms = MeterSet(ctx, ["switch", "capture"])  # the capture meter has no traffic_* hooks
    ms.begin()
    ms.traffic_begin()
    ms.end()  # a trial that never reached traffic_end still gets its 'after' reading
    cols = ms.columns()
    ms.close()
    assert not ms.errors and cols["switch_json"] is not None and sw.n == 2
    ev = TrialEvidence(SlowSwitch(0.05), ["Gi1/0/1"])
    ev.start(background=True)
    ev.finish(background=True)  # waits for the first reading before starting the second
    assert ev.columns()["switch_policer_out"] == 1


def test_overhead_summary_medians_per_condition(tmp_path: Path):
    st = Store(tmp_path / "t.sqlite")
    st.init([ScheduledTrial(i, c, i, False) for i, c in enumerate(["a", "a", "a", "b"], 1)], {})
    for i, ov in zip(range(1, 5), [0.2, 0.4, 0.3, 1.0], strict=True):
        st.record(i, status="done", valid=1, elapsed_s=1.0, phases_json=json.dumps({"workload": 1, "overhead_s": ov}))
    s = overhead_summary(st)
    assert s == {"median": 0.35, "n": 4, "conditions": {"a": 0.3, "b": 1.0}}
    st.close()
    empty = Store(tmp_path / "e.sqlite")
    assert overhead_summary(empty) is None


class ConfigConn:
    """A Netmiko-like session answering typed-ahead lines as IOS does: ``configure terminal``
    enters config mode, each line gets its mode's prompt, ``end`` the privileged prompt."""

    base_prompt = "Switch"

    def __init__(self, reject: str | None = None) -> None:
        self.reject, self.out, self.writes = reject, [], []

    def write_channel(self, s: str) -> None:
        self.writes.append(s)
        lines = s.splitlines()
        text = "".join(f"{line}\n" for line in lines)  # the echo, all at once
        for line in lines:
            if line == self.reject:
                text += "                 ^\n% Invalid input detected at '^' marker.\n\n"
            if line == "configure terminal":
                text += "Enter configuration commands, one per line.  End with CNTL/Z.\nSwitch(config)#"
            elif line == "end":
                text += "Switch#"
            else:
                text += "Switch(config-if)#" if line.startswith(("interface", " ")) else "Switch(config)#"
        self.out = [text[i:i + 50] for i in range(0, len(text), 50)]

    def read_channel(self) -> str:
        return self.out.pop(0) if self.out else ""


def test_push_batch_sends_config_lines_in_one_write_and_names_a_rejected_line():
    from qoslab.errors import QoslabError
    from qoslab.switch.push import _send_batch

    lines = ["mls qos", "interface Gi1/0/1", " mls qos trust dscp", " srr-queue bandwidth share 1 2 3 4"]
    ok = ConfigConn()
    _send_batch(ok, lines, 5)
    assert len(ok.writes) == 1 and ok.writes[0].startswith("configure terminal\nmls qos\n")
    assert ok.writes[0].endswith(" srr-queue bandwidth share 1 2 3 4\nend\n")
    bad = ConfigConn(reject=" mls qos trust dscp")
    with pytest.raises(QoslabError, match=r"rejected `mls qos trust dscp`: % Invalid input"):
        _send_batch(bad, lines, 5)


def test_the_settle_window_spans_forty_full_frames_and_never_less_than_50_ms():
    from qoslab.testbed.probes import settle_window_s

    assert settle_window_s(10e6) == 0.05  # 40 x 1538 B = 49.2 ms at 10 Mbit/s
    assert settle_window_s(1e9) == 0.05
    assert abs(settle_window_s(1e6) - 40 * 1538 * 8 / 1e6) < 1e-12  # 0.492 s at 1 Mbit/s


def test_listens_tcp_finds_a_listening_socket_of_the_process_or_its_children():
    import socket
    import subprocess
    import sys

    from qoslab.executors import listens_tcp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert listens_tcp(os.getpid(), port) is False  # bound, not listening
        s.listen()
        assert listens_tcp(os.getpid(), port) is True
    assert listens_tcp(os.getpid(), port) is False
    child = subprocess.Popen([sys.executable, "-c", "import socket,sys,time\ns=socket.socket()\ns.bind(('127.0.0.1',0))\n"
                              "s.listen()\nprint(s.getsockname()[1],flush=True)\ntime.sleep(30)"],
                             stdout=subprocess.PIPE, text=True)
    try:
        port = int(child.stdout.readline())
        assert listens_tcp(os.getpid(), port) is True  # found among the children's files
        assert listens_tcp(child.pid, port + 1 if port < 65535 else port - 1) is False
    finally:
        child.kill()
        child.wait()
    assert listens_tcp(2 ** 22 + 7, port) is False  # no such process


def test_go_gate_opens_aborts_and_aborts_a_late_arm(tmp_path):
    from qoslab.errors import QoslabError
    from qoslab.executors import LocalExecutor
    from qoslab.workloads.gate import GoGate

    g = GoGate(tmp_path / "w" / "go")
    with pytest.raises(QoslabError, match="before the workload armed it"):
        g.open()
    node = g.arm(LocalExecutor())
    assert node == str(tmp_path / "w" / "go") and g.armed.is_set() and not (tmp_path / "w" / "go").exists()
    g.open()
    assert (tmp_path / "w" / "go").read_text() == "go\n"
    g.abort()  # open already: the run goes on
    assert (tmp_path / "w" / "go").read_text() == "go\n"

    late = GoGate(tmp_path / "x" / "go")
    late.abort()  # the trial failed before the backend armed the gate
    assert not (tmp_path / "x" / "go").exists()
    late.arm(LocalExecutor())  # the manager will find 'abort' at once
    assert (tmp_path / "x" / "go").read_text() == "abort\n"


def test_a_booting_manager_is_admitted_into_its_budget_before_the_go(tmp_path):
    """A manager started on an executor with a boot group (the testbed's hosts under a cpu: block)
    is waited for until its ready file appears, then moved into its host's budget, then given its
    go, in that order; elsewhere (no boot group) the gate neither waits nor moves anything."""
    import threading

    from qoslab.executors import LocalExecutor, NetnsExecutor
    from qoslab.workloads.gate import GoGate

    events: list[str] = []
    host = NetnsExecutor("jp-1", "qsl-x-jp-1", cgroups=["/cg/jp-1/cgroup.procs"],
                         boot_cgroups=["/cg/boot:jp-1/cgroup.procs"], admit=lambda: events.append("admit") or 1)
    plain = NetnsExecutor("jp-1", "qsl-x-jp-1")
    assert host.as_booting() is not host and plain.as_booting() is plain
    local = LocalExecutor()
    assert GoGate(tmp_path / "l" / "go").executor(local) is local  # no boot group: the manager starts on it
    g = GoGate(tmp_path / "w" / "go")
    ex = g.executor(host)
    assert ex.cgroups == ("/cg/boot:jp-1/cgroup.procs",) and ex.admit_boot is not None and host.admit_boot is None
    # the backend arms the gate with the booting executor; the node's folder is this machine's
    ex.node_dir = lambda p: str(p)  # type: ignore[method-assign]
    g.arm(ex)
    ready = tmp_path / "w" / "go.ready"

    def manager() -> None:
        time.sleep(0.2)
        events.append("ready")
        ready.write_text("")

    t = threading.Thread(target=manager)
    t.start()
    waited = g.wait_booted(lambda: True, timeout_s=10)
    t.join()
    assert 0.15 < waited < 5 and events == ["ready"]
    g.open()
    assert events == ["ready", "admit"] and (tmp_path / "w" / "go").read_text() == "go\n"
    # a manager that died (alive() false) or never writes the file (an older jar): no hang
    g2 = GoGate(tmp_path / "v" / "go")
    g2.arm(ex)
    assert g2.wait_booted(lambda: False, timeout_s=10) < 1 and g2.wait_booted(lambda: True, timeout_s=0.1) < 1
    plain_gate = GoGate(tmp_path / "u" / "go")
    plain_gate.arm(LocalExecutor())
    assert plain_gate.wait_booted(lambda: True, timeout_s=10) == 0.0


def test_offline_executor_and_commands_not_found(tmp_path):
    from qoslab.errors import QoslabError
    from qoslab.executors import LocalExecutor, NetnsExecutor, offline

    ns = NetnsExecutor("jp-1", "qsl-x-jp-1")
    assert type(offline(ns)) is LocalExecutor and offline(ns).node == "jp-1"
    local = LocalExecutor()
    assert offline(local) is local
    with pytest.raises(QoslabError, match="command not found: no-such-command-qsl"):
        local.run(["no-such-command-qsl"])
    with pytest.raises(QoslabError, match="command not found: no-such-command-qsl"):
        local.start(["no-such-command-qsl"], stdout=tmp_path / "o")
    assert local.run(["sh", "-c", "echo out; echo err >&2; exit 3"], check=False).returncode == 3
