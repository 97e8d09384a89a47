"""The ssh executor against the testbed's per-namespace sshd: the Executor contract over real SSH
(from the head node's namespace, across the experiment network), pinned host keys, key-only
login, reconnects, remote work roots cleaned up, real-time fallback where a node forbids it."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest

from qoslab.errors import CommandFailed, CommandTimeout, QoslabError
from qoslab.executors.nodes import Nodes
from qoslab.executors.ssh import SshExecutor, SshTarget
from qoslab.testbed import sshd
from qoslab.testbed.procs import kill_pids
from qoslab.testbedplan import host_namespace
from qoslab.trafficgen.ditgsched import SENDER_PREFIX, sender_prefix_on


@pytest.fixture(scope="module")
def ssh_testbed(testbed):
    testbed.sshd_up()
    return testbed


@pytest.fixture
def nodes(ssh_testbed, tmp_path):
    n = Nodes("ssh", ssh_testbed.topo, testbed=ssh_testbed, local_root=tmp_path, run_id=f"t{time.monotonic_ns()}")
    yield n
    n.close()


def test_run_over_ssh_from_the_head_node(nodes, tmp_path):
    ex = nodes.executor_of("jp-2")
    r = ex.run(["sh", "-c", "echo $SSH_CLIENT; ip -4 -o addr show dev eth0"])
    assert r.stdout.startswith("198.18.0.1 ") and "198.18.0.2/24" in r.stdout  # jp-1 -> jp-2 on the testbed
    assert ex.run(["cat"], input="hello").stdout == "hello"
    assert ex.run(["pwd"], cwd="/tmp").stdout.strip() == "/tmp"
    assert ex.run(["sh", "-c", "echo $A"], env={"A": "b c"}).stdout.strip() == "b c"
    with pytest.raises(CommandFailed, match="on jp-2: .* exited 4: boom"):
        ex.run(["sh", "-c", "echo boom >&2; exit 4"])
    with pytest.raises(QoslabError, match="on jp-2: cannot run no-such-binary-q: No such file or directory"):
        ex.run(["no-such-binary-q"])
    t0 = time.monotonic()
    with pytest.raises(CommandTimeout, match="did not finish within 0.5 s"):
        ex.run(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.5)
    assert time.monotonic() - t0 < 5 and ex.leftovers() == []


def test_background_start_poll_stop_fetch_and_clean_up(nodes, ssh_testbed, tmp_path):
    ex = nodes.executor_of("jp-7")
    local = tmp_path / "trials" / "0001"
    d = ex.node_dir(local)
    assert d == f"/tmp/qoslab-{nodes.run_id}/jp-7/trials/0001"
    p = ex.start(["sh", "-c", "trap '' TERM; cat /proc/self/timerslack_ns; sleep 300 & echo started; wait"],
                 stdout=f"{d}/out.log", timer_slack_ns=1, lifetime_s=120)
    ns = host_namespace(ssh_testbed.topo.name, "jp-7")
    deadline = time.monotonic() + 5
    while "started" not in ex.run(["cat", f"{d}/out.log"], check=False).stdout and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ex.poll(p) is None and p.pid in ex.leftovers()
    assert ex.fetch(f"{d}/out.log", local / "out.log").read_text().split() == ["1", "started"]
    # its own session, in jp-7's network namespace
    assert subprocess.run(["ps", "-o", "sid=", "-p", str(p.pid)], capture_output=True, text=True).stdout.strip() \
        == str(p.pid)
    assert Path(f"/proc/{p.pid}/ns/net").resolve() == Path(f"/run/netns/{ns}").resolve() or \
        Path(f"/proc/{p.pid}/ns/net").stat().st_ino == Path(f"/run/netns/{ns}").stat().st_ino
    assert ex.stop(p, grace_s=0.3) == -9  # SIGTERM ignored: SIGKILL to the group
    q = ex.start(["sh", "-c", "exit 7"])
    assert ex.wait(q, timeout=5) == 7 and ex.poll(q) == 7
    r = ex.start(["sleep", "30"])
    with pytest.raises(CommandTimeout):
        ex.wait(r, timeout=0.2)
    with pytest.raises(QoslabError, match="on jp-7: no such file"):
        ex.fetch(f"{d}/missing", tmp_path / "x")
    nodes.close()  # ends r, the guard, removes the work root
    assert not Path(f"/tmp/qoslab-{nodes.run_id}").exists()
    assert not subprocess.run(["ps", "-p", str(r.pid)], capture_output=True).returncode == 0


def test_parallel_start_on_all_nodes_one_connection_each(nodes, ssh_testbed):
    hosts = ssh_testbed.topo.host_names
    procs = nodes.parallel(lambda ex: ex.start(["sleep", "30"], lifetime_s=60), hosts)
    assert len({p.pid for p in procs.values()}) == len(hosts)
    assert all(nodes.executor_of(h).poll(p) is None for h, p in procs.items())
    nodes.parallel(lambda ex: ex.stop(procs[ex.node], grace_s=1), hosts)
    assert all(ex.connects == 1 for ex in (nodes.executor_of(h) for h in hosts))


def test_reconnects_after_the_connection_dropped(nodes, ssh_testbed):
    ex = nodes.executor_of("jp-3")
    ex.run(["true"])
    listener = sshd.server_pids(ssh_testbed.topo)["jp-3"]
    sessions = [p for p in ssh_testbed.sshd_pids() if p != listener and
                Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(listener)]
    assert sessions
    kill_pids(sessions)  # the server side of our connection dies
    time.sleep(0.3)
    try:
        out = ex.run(["echo", "back"]).stdout  # a dropped connection is noticed and opened again
    except QoslabError:
        out = ex.run(["echo", "back"]).stdout  # (or, if the drop was noticed mid-command, on the next call)
    assert out.strip() == "back" and ex.connects == 2


def test_close_after_a_drop_ends_the_connection_on_the_loop_thread(nodes, ssh_testbed):
    """ci51 ended a finished campaign in "internal error: AttributeError: 'NoneType' object has no
    attribute 'get_debug'": the executors were closed from the close pool's threads, asyncio's
    transports from outside their loop. The close runs on the loop's thread, also after a drop."""
    for node, drop in (("jp-5", False), ("jp-6", True)):
        ex = nodes.executor_of(node)
        ex.run(["true"])
        conn, threads, close = ex._conn, [], ex._conn.close
        conn.close = lambda threads=threads, close=close: (threads.append(threading.current_thread().name), close())[1]
        if drop:
            listener = sshd.server_pids(ssh_testbed.topo)[node]
            kill_pids([p for p in ssh_testbed.sshd_pids() if p != listener and
                       Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(listener)])
            time.sleep(0.3)
        try:
            ex.close()
        except QoslabError as e:  # the clean-up script could not run over the dropped connection
            assert drop and str(e).startswith(f"on {node}: ")
        assert threads and set(threads) == {"qoslab-ssh"} and conn.is_closed(), (node, threads)
        ex.close()  # idempotent
        assert ex.run(["echo", "again"]).stdout.strip() == "again" and ex.connects == 2  # usable again


def test_host_keys_are_pinned_and_login_is_key_only(ssh_testbed, tmp_path):
    t = ssh_testbed.ssh_targets()["jp-4"]
    wrong = tmp_path / "known_hosts"
    wrong.write_text((sshd.sshd_dir(ssh_testbed.topo.name) / "known_hosts").read_text()
                     .replace("198.18.0.4 ", "198.18.0.99 ").replace("198.18.0.5 ", "198.18.0.4 "))
    bad_key = SshExecutor("jp-4", SshTarget(**{**t.__dict__, "known_hosts": wrong}))
    with pytest.raises(QoslabError, match="REFUSED, host key of 198.18.0.4:22 is not the one pinned"):
        bad_key.run(["true"])
    nobody = SshExecutor("jp-4", SshTarget(**{**t.__dict__, "client_keys": (tmp_path / "none",)}))
    with pytest.raises(QoslabError, match="jp-4"):
        nobody.run(["true"])


def test_realtime_class_falls_back_where_the_node_forbids_it(ssh_testbed, tmp_path):
    """An sshd whose sessions lack CAP_SYS_NICE (setpriv): ``chrt -f 1`` is not permitted there, so
    D-ITG senders run at normal priority; a process may still set its own timer slack."""
    d = sshd.sshd_dir(ssh_testbed.topo.name)
    conf = tmp_path / "nonice.conf"
    conf.write_text(sshd.config_text(d, "jp-6", "198.18.0.6", port=2222).replace(
        f"PidFile {d}/sshd-jp-6.pid", f"PidFile {tmp_path}/nonice.pid"))
    srv = subprocess.Popen(["ip", "netns", "exec", host_namespace(ssh_testbed.topo.name, "jp-6"), "setpriv",
                            "--bounding-set=-sys_nice", "/usr/sbin/sshd", "-D", "-e", "-f", str(conf)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kh = tmp_path / "kh"
    kh.write_text("[198.18.0.6]:2222 " + (d / "host-jp-6.pub").read_text().split(" ", 2)[0] + " "
                  + (d / "host-jp-6.pub").read_text().split()[1] + "\n")
    t = ssh_testbed.ssh_targets()["jp-6"]
    ex = SshExecutor("jp-6", SshTarget(**{**t.__dict__, "port": 2222, "known_hosts": kh}), run_id="nonice")
    try:
        deadline = time.monotonic() + 10
        while not (tmp_path / "nonice.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ex.permits("realtime") is False and sender_prefix_on(ex) == ()
        assert ex.permits("timer_slack") is True
        normal = SshExecutor("jp-6", t, run_id="normal")
        assert sender_prefix_on(normal) == tuple(SENDER_PREFIX)
        normal.close()
    finally:
        ex.close()
        srv.terminate()
        srv.wait()
