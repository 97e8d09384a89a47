"""Workloads as backends (issue 23): settings per kind with file:line errors, old playbooks as
raytracer, the command contract, and a real `command` run with the shipped echo example on
loopback (local executor, warm pool, clean-up by PID)."""

from __future__ import annotations

import json
import os
import socket
import textwrap

import pytest

from conftest import REPO
from qoslab.campaign import load_playbook
from qoslab.errors import ConfigError, QoslabError
from qoslab.executors.local import LocalExecutor
from qoslab.registry import workloads
from qoslab.workloads import backend, settings_of
from qoslab.workloads.base import last_json_line
from qoslab.workloads.command import CommandSettings, check_result, expand, variables

HEAD = "conditions:\n  - {name: a, congestion: false, profile: fifo}\n"


def _pb(tmp_path, workload: str, conditions: str = HEAD):
    p = tmp_path / "pb.yaml"
    p.write_text(f"name: x\n{textwrap.dedent(workload)}{conditions}")
    return p


def test_every_kind_is_registered():
    assert {"raytracer", "matmul", "pingpong", "command", "mpi"} <= set(workloads.names())
    with pytest.raises(ConfigError, match="unknown workload 'pvm'"):
        backend("pvm")


@pytest.mark.parametrize("name", ["quick", "quick-ssh", "thesis-table5", "thesis-table3", "thesis-table5-sequential"])
def test_playbooks_without_kind_are_raytracer(name):
    pb = load_playbook(REPO / "playbooks" / f"{name}.yaml")
    assert pb.workload.kind == "raytracer" and type(pb.workload).__name__ == "RaytracerSettings"
    assert all(pb.workload_of(c).kind == "raytracer" for c in pb.conditions)
    assert pb.workload_of(pb.conditions[0]).frames == pb.workload.frames  # type: ignore[attr-defined]


def test_command_example_playbook_loads():
    pb = load_playbook(REPO / "playbooks" / "command-example.yaml")
    assert isinstance(pb.workload, CommandSettings) and pb.workload.port == 7300
    assert pb.workload.listen_ports() == [("port", "tcp", 7300)]


def test_matmul_and_pingpong_settings(tmp_path):
    pb = load_playbook(_pb(tmp_path, "workload: {kind: matmul, hosts: [jp-1, jp-2], mechanism: datagram, "
                                      "algorithm: mca, size: 64, dscp: 46}\n"))
    wl = pb.workload
    assert (wl.kind, wl.mechanism, wl.algorithm, wl.size, wl.dscp) == ("matmul", "datagram", "mca", 64, 46)  # type: ignore[attr-defined]
    assert [p for _, _, p in wl.listen_ports()] == [1200, 1201, 1202, 1203]
    s = settings_of({"kind": "pingpong", "hosts": ["jp-1", "jp-2"], "mechanism": "rmi"})
    assert s.worker_hosts() == ["jp-2"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("workload, line, match", [
    ("workload:\n  kind: matmul\n  hosts: [jp-1]\n  mechanism: udp\n", 5, r"workload\.mechanism: Input should be"),
    ("workload:\n  kind: matmul\n  hosts: [jp-1]\n  frames: 2\n", 5, r"workload\.frames: unknown field \(typo\?\) "
                                                                     r"\(kind matmul\)"),
    ("workload:\n  kind: pvm\n  hosts: [jp-1]\n", 3, r"workload\.kind: unknown workload 'pvm' \(known: command, "),
    ("workload:\n  kind: pingpong\n  hosts: [jp-1, jp-2, jp-3]\n", 4, r"workload\.hosts: pingpong needs two hosts"),
    ("workload:\n  kind: command\n  hosts: [jp-1]\n  head: \"run --x {nope}\"\n", 5,
     r"workload\.head: .*'{nope}': unknown template variable"),
    ("workload:\n  kind: command\n  hosts: [jp-1]\n", 2, r"workload\.head: Field required"),
    ("workload:\n  hosts: [jp-1]\n  mechanism: socket\n", 4, r"workload\.mechanism: unknown field \(typo\?\) "
                                                             r"\(kind raytracer\)"),    ("workload:\n  hosts: [jp-1]\n  jit: c2\n", 4, r"workload\.jit: Input should be 'tiered' or 'c1'"),
    ("workload:\n  kind: matmul\n  hosts: [jp-1]\n  jit: [c1]\n", 5, r"workload\.jit: Input should be"),
    ("workload:\n  kind: command\n  hosts: [jp-1]\n  head: run\n  jit: c1\n", 6,
     r"workload\.jit: unknown field \(typo\?\) \(kind command\)"),
])
def test_workload_errors_name_file_line_and_field(tmp_path, workload, line, match):
    with pytest.raises(ConfigError, match=rf"pb\.yaml:{line}: {match}"):
        load_playbook(_pb(tmp_path, workload))


def test_condition_overrides_are_checked_by_the_kind(tmp_path):
    wl = "workload: {kind: matmul, hosts: [jp-1, jp-2]}\n"
    conds = ("conditions:\n  - {name: a, congestion: false, profile: fifo, workload: {algorithm: mca}}\n"
             "  - name: b\n    congestion: false\n    profile: fifo\n    workload: {algorithm: cannon}\n")
    with pytest.raises(ConfigError, match=r"pb\.yaml:8: conditions\[1\]\.workload\.algorithm"):
        load_playbook(_pb(tmp_path, wl, conds))
    pb = load_playbook(_pb(tmp_path, wl, conds.replace("cannon", "spa")))
    assert [pb.workload_of(c).algorithm for c in pb.conditions] == ["mca", "spa"]
    with pytest.raises(ConfigError, match=r"conditions\[0\]\.workload\.kind: a condition cannot change"):
        load_playbook(_pb(tmp_path, wl, HEAD.replace("fifo}", "fifo, workload: {kind: raytracer}}")))


def test_last_json_line_and_the_contract():
    out = 'starting\n{"elapsed_s": 1}\nnot json {\n{"elapsed_s": 2.5, "rps": 10}\ndone\n'
    assert last_json_line(out) == {"elapsed_s": 2.5, "rps": 10}
    assert last_json_line("no result\n[1, 2]\n{broken\n") is None
    assert check_result({"elapsed_s": 2.5, "rps": 10, "exit_code": 0}) == {"elapsed_s": 2.5, "rps": 10,
                                                                           "exit_code": 0, "valid": True}
    r = check_result({"elapsed_s": 1, "valid": True, "exit_code": 3})
    assert r["valid"] is False and "exited with code 3" in r["error"]
    assert check_result({"elapsed_s": 1, "valid": False, "exit_code": 0})["valid"] is False
    for bad in ({"rps": 10}, {"elapsed_s": "fast"}, {"elapsed_s": True}):
        with pytest.raises(QoslabError, match="no numeric elapsed_s"):
            check_result(bad)


def test_templates():
    s = CommandSettings(hosts=["a", "b", "c"], head="client --to {workers} --n {index}", port=7,
                        worker="srv {ip}:{port} '{host} x' {tos}", workers_on="others", dscp=10)
    ip = {"a": "10.0.0.1", "b": "10.0.0.2", "c": "10.0.0.3"}.get
    v = variables(s, ip, "/opt/q/", "b")  # type: ignore[arg-type]
    assert expand(s.worker or "", v) == ["srv", "10.0.0.2:7", "b x", "40"]
    assert expand(s.head, variables(s, ip, "/opt/q")) == ["client", "--to", "10.0.0.2:7,10.0.0.3:7", "--n", "0"]  # type: ignore[arg-type]
    assert v["root"] == "/opt/q" and v["hosts"] == "a,b,c"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0] == "Z"


def test_command_runs_the_echo_example_with_a_warm_pool(tmp_path):
    """The shipped example through the backend on loopback: worker on the second host, head on
    the first; the pool keeps the worker across runs and stops it by PID."""
    s = settings_of({"kind": "command", "hosts": ["h1", "h2"], "port": _free_port(), "workers_on": "others",
                     "worker": "python3 {root}/examples/command-echo/server.py --bind {ip} --port {port}",
                     "head": "python3 {root}/examples/command-echo/client.py --servers {workers} --requests 20",
                     "startup_timeout_s": 20})
    wl = backend("command")
    ex = LocalExecutor()
    pool = wl.open_pool(lambda h: ex, lambda h: "127.0.0.1", tmp_path / "workers", lifetime_s=60)
    try:
        r1 = wl.run(s, lambda h: ex, lambda h: "127.0.0.1", tmp_path / "1", pool=pool)
        pid = pool.workers["h2"].pid
        r2 = wl.run(s, lambda h: ex, lambda h: "127.0.0.1", tmp_path / "2", pool=pool)
        assert r1.valid and r2.valid and pool.starts == 1 and list(pool.workers) == ["h2"]
        assert r2.result["requests"] == 20 and r2.result["elapsed_s"] > 0
        assert wl.row(r2.result)["elapsed_s"] == r2.result["elapsed_s"]
        assert json.loads((tmp_path / "2" / "workload-result.json").read_text())["valid"] is True
    finally:
        pool.close()
    assert not _alive(pid)
    assert "listening" in (tmp_path / "workers" / "workload-h2.log").read_text()
    bad = s.model_copy(update={"head": "python3 -c \"print('{{\\\"rps\\\": 1}}')\""})
    with pytest.raises(QoslabError, match="no numeric elapsed_s"):
        wl.run(bad, lambda h: ex, lambda h: "127.0.0.1", tmp_path / "3")


def test_raytracer_row_is_what_trials_always_stored():
    r = {"elapsed_render_s": 1.5, "elapsed_total_s": 2.0, "checksum": 2676692, "valid": True,
         "per_worker": [{"host": "jp-1", "busy_s": 0.7}, {"host": "jp-2", "busy_s": 0.9}, {"host": "jp-3"}]}
    assert backend("raytracer").row(r) == {"elapsed_s": 1.5, "total_s": 2.0, "checksum": 2676692, "busy_max_s": 0.9}
    m = {"elapsed_s": 0.3, "total_s": 0.3, "checksum": 7, "per_worker": [{"compute_s": 0.01}, {"compute_s": 0.02}]}
    assert backend("matmul").row(m) == {"elapsed_s": 0.3, "total_s": 0.3, "checksum": 7, "busy_max_s": 0.02}


def test_hostile_command_templates_are_refused_quickly_without_formatting():
    """Issue 35: a format spec ({port:>999999999} allocated 1 GB in 11 s), attribute access
    ({ip.__class__.__mro__} was accepted), a word over the kernel's per-argument limit and a huge
    command are refused without formatting anything, naming what is wrong in a short message (the
    corpus test times the CLI's refusal)."""
    import re

    from qoslab.workloads.command import MAX_ARG_BYTES, check_template

    cases = {"echo {port:>999999999}": "no format spec", "echo {ip.__class__.__mro__}": "unknown template variable",
             "echo {port!r}": "no format spec or conversion", "echo {0}": "unknown template variable",
             "echo {}": "unknown template variable", "echo " + "x" * (MAX_ARG_BYTES + 1): "MAX_ARG_STRLEN",
             "echo " + "y " * 200_000: "at most", "echo {port": "write {{ }} for braces"}
    for cmd, want in cases.items():
        with pytest.raises(ValueError, match=re.escape(want)) as e:
            check_template(cmd)
        assert len(str(e.value)) < 400, (cmd[:40], str(e.value)[:200])
    assert check_template("sockperf pp -i {head_ip} -p {port} --tos {tos}") and check_template("echo {{literal}}")


def test_a_jvm_workload_runs_its_jit_mode_and_a_change_restarts_its_workers(tmp_path):
    """``jit: c1`` puts HotSpot's -XX:TieredStopAtLevel=1 on every measured JVM's command line (the
    RayTracer's workers and manager, matmul's, MPJ's ranks), ``tiered`` adds nothing; the pools'
    keys hold the mode, so a condition that changes it gets fresh workers."""
    from qoslab.workloads.matmul import worker_pool
    from qoslab.workloads.mpj import rank_command
    from qoslab.workloads.pool import java_command
    from qoslab.workloads.raytracer import WorkerPool

    flag = "-XX:TieredStopAtLevel=1"
    assert flag not in java_command("worker") and java_command("worker", jit="c1").count(flag) == 1
    assert java_command("worker", jit="c1").index(flag) < java_command("worker", jit="c1").index("-cp")
    with pytest.raises(QoslabError, match="jit 'c2': one of tiered, c1"):
        java_command("worker", jit="c2")
    hosts = ["jp-1", "jp-2"]
    tiered, c1 = (settings_of({"hosts": hosts, "jit": j}) for j in ("tiered", "c1"))
    assert WorkerPool.key_of(tiered) != WorkerPool.key_of(c1)
    pool = worker_pool(lambda h: None, lambda h: h, tmp_path)
    mm = [settings_of({"kind": "matmul", "hosts": hosts, "jit": j}) for j in ("tiered", "c1")]
    assert pool.key_of(mm[0]) != pool.key_of(mm[1])
    mpj = settings_of({"kind": "mpj", "hosts": hosts, "jit": "c1"})
    assert flag in rank_command(mpj, 1, "198.18.0.1", "198.18.0.2", None)
    assert flag not in rank_command(mpj.model_copy(update={"jit": "tiered"}), 1, "198.18.0.1", "198.18.0.2", None)
