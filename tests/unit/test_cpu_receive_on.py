"""Issue 52, the pure part: ``cpu.receive_on`` (where the host interfaces' receive path runs) gives
the RPS masks the placement writes, defaults to today's placement (every committed topology keeps
its meaning), is refused without ``steer``, and the masks read back from sysfs parse; ``cpu.rx_usecs``
compiles to the NAPI lines of a host interface and is refused without ``receive_on: hosts``."""

from __future__ import annotations

import pytest

from conftest import ECENET, REPO
from qoslab.errors import QoslabError
from qoslab.scale.cpu import DEFER_POLLS, CpuBlock, check_cpu, cpu_mask, host_rx_lines, mask_cpus
from qoslab.testbed.steering import napi_threads
from qoslab.topology import load_topology
from qoslab.yamlio import FieldProblem

BLOCK = CpuBlock(hosts_cpus="0", switch_cpus="1", host_cores=0.25)


def test_the_default_steers_host_interfaces_to_the_switchs_cores_as_before():
    assert BLOCK.receive_on == "switch"
    assert BLOCK.rps_masks() == ("2", "2")
    t = load_topology(REPO / "playbooks" / "topologies" / "ecenet-cpu.yaml")
    assert t.cpu is not None and t.cpu.receive_on == "switch" and t.cpu.rps_masks() == ("2", "2")


def test_receive_on_hosts_steers_host_interfaces_to_the_hosts_cores_and_ports_stay():
    b = BLOCK.model_copy(update={"receive_on": "hosts"})
    assert b.rps_masks() == ("2", "1")
    wide = CpuBlock(hosts_cpus="0-1,4", switch_cpus="2-3", host_cores=1, receive_on="hosts")
    assert wide.rps_masks() == ("c", "13")
    assert mask_cpus(wide.rps_masks()[1]) == {0, 1, 4}


def test_without_steer_no_interface_is_steered():
    assert BLOCK.model_copy(update={"steer": False}).rps_masks() == ("0", "0")


def test_receive_on_hosts_without_steer_is_refused_naming_the_field():
    b = BLOCK.model_copy(update={"steer": False, "receive_on": "hosts"})
    with pytest.raises(FieldProblem, match="steer: false") as e:
        check_cpu(b, {"jp-1": None}, frozenset({0, 1}))
    assert e.value.loc == ("cpu", "receive_on")
    check_cpu(BLOCK.model_copy(update={"receive_on": "hosts"}), {"jp-1": None}, frozenset({0, 1}))


@pytest.mark.parametrize("bad", ["host", "both", "", "HOSTS", True, 1, None])
def test_receive_on_takes_only_its_two_words(bad):
    with pytest.raises(ValueError):
        CpuBlock(hosts_cpus="0", switch_cpus="1", host_cores=0.25, receive_on=bad)


def test_a_topology_file_with_receive_on_hosts_loads_and_a_bad_one_names_its_line(tmp_path):
    base = ECENET.read_text() + 'cpu:\n  hosts_cpus: "0"\n  switch_cpus: "1"\n  host_cores: 0.25\n'
    p = tmp_path / "t.yaml"
    p.write_text(base + "  receive_on: hosts\n")
    t = load_topology(p)
    assert t.cpu is not None and t.cpu.rps_masks() == ("2", "1")
    text = base + "  steer: false\n  receive_on: hosts\n"
    p.write_text(text)
    with pytest.raises(QoslabError) as e:
        load_topology(p)
    assert f"t.yaml:{text.splitlines().index('  receive_on: hosts') + 1}: cpu.receive_on" in str(e.value)


@pytest.mark.parametrize(("text", "cpus"), [("0", set()), ("2\n", {1}), ("3", {0, 1}), ("d", {0, 2, 3}),
                                            ("1,00000000", {32}), ("0,00000003", {0, 1}), ("ffffffff", set(range(32)))])
def test_masks_read_back_from_sysfs_parse_as_the_cpus_written(text, cpus):
    assert mask_cpus(text) == cpus
    if cpus:
        assert mask_cpus(cpu_mask(cpus)) == cpus


@pytest.mark.parametrize("bad", ["", "  ", "0x2", "g", "2,", ",2", "1,,0", "123456789", "-1", "2 3", None, 3])
def test_garbled_masks_are_refused(bad):
    with pytest.raises(ValueError, match="not a CPU mask"):
        mask_cpus(bad)


# -- rx_usecs: the hosts' receive in NAPI threads polled on a timer (issue 52) -----------------------

POLL = BLOCK.model_copy(update={"receive_on": "hosts", "rx_usecs": 100})


def test_rx_usecs_turns_the_hosts_rps_off_and_leaves_the_ports():
    assert POLL.rps_masks() == ("2", "0")  # the NAPI thread receives on the hosts' core, not RPS
    assert BLOCK.rx_usecs is None and host_rx_lines(BLOCK, "eth0") == []
    assert host_rx_lines(POLL.model_copy(update={"receive_on": "hosts", "rx_usecs": None}), "eth0") == []


def test_rx_usecs_compiles_to_napi_lines_in_order_with_the_timer_in_nanoseconds():
    lines = host_rx_lines(POLL, "eth0")
    assert lines == ["ip link set dev eth0 gro_max_size 0",
                     "ethtool -K eth0 gro on",
                     f"echo {DEFER_POLLS} > /sys/class/net/eth0/napi_defer_hard_irqs",
                     "echo 100000 > /sys/class/net/eth0/gro_flush_timeout",
                     "echo 1 > /sys/class/net/eth0/threaded"]
    # GRO merges nothing before it is turned on, and the thread comes last (its settings are in place)
    assert lines.index("ip link set dev eth0 gro_max_size 0") < lines.index("ethtool -K eth0 gro on")
    assert host_rx_lines(POLL.model_copy(update={"rx_usecs": 125}), "eth0")[3] == \
        "echo 125000 > /sys/class/net/eth0/gro_flush_timeout"


def test_rx_usecs_without_receive_on_hosts_is_refused_naming_the_field():
    b = BLOCK.model_copy(update={"rx_usecs": 100})
    with pytest.raises(FieldProblem, match="receive_on: hosts") as e:
        check_cpu(b, {"jp-1": None}, frozenset({0, 1}))
    assert e.value.loc == ("cpu", "rx_usecs")
    check_cpu(POLL, {"jp-1": None}, frozenset({0, 1}))


@pytest.mark.parametrize("bad", [0, 9, 10001, -5, 100.5, "100", True, "100us", [100]])
def test_rx_usecs_takes_whole_microseconds_from_10_to_10000(bad):
    with pytest.raises(ValueError):
        CpuBlock(hosts_cpus="0", switch_cpus="1", host_cores=0.25, receive_on="hosts", rx_usecs=bad)


def test_the_committed_poll_topology_loads_and_a_typo_names_its_line(tmp_path):
    t = load_topology(REPO / "playbooks" / "topologies" / "ecenet-cpu-hostsrx-poll.yaml")
    assert t.cpu is not None and t.cpu.rx_usecs == 100 and t.cpu.rps_masks() == ("2", "0")
    text = ECENET.read_text() + 'cpu:\n  hosts_cpus: "0"\n  switch_cpus: "1"\n  host_cores: 0.25\n  rx_usecs: 100\n'
    p = tmp_path / "t.yaml"
    p.write_text(text)
    with pytest.raises(QoslabError) as e:
        load_topology(p)
    assert f"t.yaml:{text.splitlines().index('  rx_usecs: 100') + 1}: cpu.rx_usecs" in str(e.value)
    p.write_text(text.replace("rx_usecs", "rx_usec"))
    with pytest.raises(QoslabError, match="rx_usec"):
        load_topology(p)


def test_napi_threads_are_found_by_their_kernel_name(tmp_path):
    for pid, comm in [(7, "napi/eth0-8193"), (12, "napi/eth0-8194"), (30, "napi/eth10-1"), (31, "kworker/0:1"),
                      (40, "napi/eth0")]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "comm").write_text(comm + "\n")
    (tmp_path / "self").mkdir()
    (tmp_path / "55").mkdir()  # ended between the listing and the read: no comm
    assert napi_threads("eth0", tmp_path) == [7, 12]
    assert napi_threads("eth10", tmp_path) == [30]
