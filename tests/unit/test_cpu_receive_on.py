"""Issue 52, the pure part: ``cpu.receive_on`` (where the host interfaces' receive path runs) gives
the RPS masks the placement writes, defaults to today's placement (every committed topology keeps
its meaning), is refused without ``steer``, and the masks read back from sysfs parse."""

from __future__ import annotations

import pytest

from conftest import ECENET, REPO
from qoslab.errors import QoslabError
from qoslab.scale.cpu import CpuBlock, check_cpu, cpu_mask, mask_cpus
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
