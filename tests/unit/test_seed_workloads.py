"""The seed workloads of issue 37: ``sort`` (reference 002) and ``mpj`` (reference 003): strict settings with file:line
errors, where the servers go, the client's command line and the store row."""

from __future__ import annotations

import textwrap

import pytest

from qoslab.campaign import load_playbook
from qoslab.errors import ConfigError
from qoslab.registry import workloads
from qoslab.workloads import backend, settings_of
from qoslab.workloads.sort import MECHANISMS, Sort, SortSettings

HOSTS = [f"jp-{i}" for i in range(1, 9)]


def _pb(tmp_path, workload: str):
    p = tmp_path / "pb.yaml"
    p.write_text(f"name: x\n{textwrap.dedent(workload)}conditions:\n  - {{name: a, congestion: false, profile: fifo}}\n")
    return p


def test_sort_is_registered_with_reference_002s_mechanisms():
    assert "sort" in workloads.names()
    assert isinstance(backend("sort"), Sort)
    assert MECHANISMS == ("socket", "rmi", "corba")


def test_servers_are_the_hosts_after_the_head_wrapping_to_it():
    s = settings_of({"kind": "sort", "hosts": HOSTS[:5], "servers": 4, "mechanism": "corba"})
    assert isinstance(s, SortSettings)
    assert s.worker_hosts() == ["jp-2", "jp-3", "jp-4", "jp-5"]
    s8 = settings_of({"kind": "sort", "hosts": HOSTS, "servers": 8})
    assert s8.worker_hosts() == HOSTS[1:] + ["jp-1"]  # type: ignore[attr-defined]
    assert settings_of({"kind": "sort", "hosts": ["jp-1"], "servers": 1}).worker_hosts() == ["jp-1"]  # type: ignore[attr-defined]
    assert [p for _, _, p in s.listen_ports()] == [1300, 1301, 1302, 1303]
    assert all(proto == "tcp" for _, proto, _ in s.listen_ports())


def test_the_client_command_names_every_server_and_the_run():
    s = settings_of({"kind": "sort", "hosts": HOSTS[:3], "servers": 2, "mechanism": "rmi", "size": 20000,
                     "seed": 9, "port": 1400, "timeout_s": 30})
    ips = {h: f"198.18.0.{h[3:]}" for h in HOSTS}
    args = Sort().manager_args(s, ips.__getitem__)
    assert args == ["sort", "--servers", "jp-2=198.18.0.2:1400,jp-3=198.18.0.3:1400", "--mechanism", "rmi",
                    "--size", "20000", "--seed", "9", "--port", "1400", "--timeout", "30"]


def test_row_is_the_total_and_the_longest_server_sort():
    r = {"valid": True, "elapsed_s": 0.5, "total_s": 0.5, "checksum": 42, "sort_max_s": 0.1}
    assert Sort().row(r) == {"elapsed_s": 0.5, "total_s": 0.5, "checksum": 42, "busy_max_s": 0.1}


def test_a_playbook_sort_workload_loads(tmp_path):
    pb = load_playbook(_pb(tmp_path, "workload: {kind: sort, hosts: [jp-1, jp-2, jp-3], servers: 2, "
                                      "mechanism: corba, size: 400000, dscp: 40}\n"))
    wl = pb.workload
    assert (wl.kind, wl.mechanism, wl.servers, wl.size, wl.dscp) == ("sort", "corba", 2, 400000, 40)  # type: ignore[attr-defined]


@pytest.mark.parametrize("workload, line, match", [
    ("workload:\n  kind: sort\n  hosts: [jp-1, jp-2]\n  mechanism: mpi\n", 5, r"workload\.mechanism: Input should be"),
    ("workload:\n  kind: sort\n  hosts: [jp-1, jp-2]\n  servers: 4\n", 5,
     r"workload\.servers: 4 sort servers need 4 hosts \(one server per host\), 2 listed"),
    ("workload:\n  kind: sort\n  hosts: [jp-1, jp-2]\n  size: 1\n", 5, r"workload\.size: size 1 is below the 2 servers"),
    ("workload:\n  kind: sort\n  hosts: [jp-1, jp-2]\n  algorithm: spa\n", 5,
     r"workload\.algorithm: unknown field \(typo\?\) \(kind sort\)"),
    ("workload:\n  kind: sort\n  hosts: [jp-1, jp-2]\n  servers: 0\n", 5, r"workload\.servers: Input should be greater"),
])
def test_bad_sort_settings_name_file_line_and_field(tmp_path, workload, line, match):
    with pytest.raises(ConfigError, match=rf"pb\.yaml:{line}: {match}"):
        load_playbook(_pb(tmp_path, workload))


def test_mpj_settings_and_each_ranks_command():
    from qoslab.workloads.mpj import MpjSettings, rank_command
    s = settings_of({"kind": "mpj", "hosts": HOSTS[:4], "max_bytes": 1024, "reps": 10, "port": 1500})
    assert isinstance(s, MpjSettings) and s.listen_ports() == [("port", "tcp", 1500), ("port", "tcp", 1501)]
    argv = rank_command(s, 2, "198.18.0.1", "198.18.0.2", None)
    assert argv[:2] == ["env", "MPJ_HOME=/usr/share/mpj"] and "/usr/share/java/mpj.jar" in argv[argv.index("-cp") + 1]
    main = argv.index("org.qoslab.workload.mpj.MpjBench")
    assert argv[main + 1:main + 4] == ["2", "#Number of Processes;4;#Protocol Switch Limit;131072;#Server Name;"
                                            "198.18.0.1;#Server Port;1500", "niodev"]
    assert argv[-2:] == ["--socket-peer", "198.18.0.2:1501"]


@pytest.mark.parametrize("workload, line, match", [
    ("workload:\n  kind: mpj\n  hosts: [jp-1]\n", 4, r"workload\.hosts: mpj needs at least two hosts"),
    ("workload:\n  kind: mpj\n  hosts: [jp-1, jp-2]\n  dscp: 40\n", 5, r"workload\.dscp: MPJ Express opens its own"),
    ("workload:\n  kind: mpj\n  hosts: [jp-1, jp-2]\n  min_bytes: 64\n  max_bytes: 8\n", 5,
     r"workload\.min_bytes: min_bytes 64 is above max_bytes 8"),
])
def test_bad_mpj_settings_name_file_line_and_field(tmp_path, workload, line, match):
    with pytest.raises(ConfigError, match=rf"pb\.yaml:{line}: {match}"):
        load_playbook(_pb(tmp_path, workload))


def test_the_seed_playbooks_load_with_their_factorials():
    from conftest import REPO
    sort_pb = load_playbook(REPO / "playbooks" / "seed002-sort.yaml")
    assert len(sort_pb.conditions) == 12
    assert {sort_pb.workload_of(c).mechanism for c in sort_pb.conditions} == set(MECHANISMS)  # type: ignore[attr-defined]
    assert sort_pb.workload.worker_hosts() == ["jp-2", "jp-3", "jp-4", "jp-1"]  # type: ignore[attr-defined]
    mpj_pb = load_playbook(REPO / "playbooks" / "seed003-mpj.yaml")
    assert len(mpj_pb.conditions) == 4 and mpj_pb.workload.kind == "mpj"


def test_an_mpj_benchmark_killed_at_its_bound_is_censored_there():
    from qoslab.errors import CommandTimeout
    from qoslab.stats.censoring import censoring_bound
    from qoslab.workloads.mpj import timeout_result
    res = timeout_result(CommandTimeout("jp-1", ["java", "MpjBench"], 460.0))
    assert res["valid"] is False and res["call_timeout"] is True and "460 s" in res["error"]
    assert censoring_bound(res, 200.0) == 460.0  # the kill's bound, above the playbook's timeout_s
