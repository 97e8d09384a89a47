"""The testbed's CPU as part of the scale model (issue 42), the pure parts: the topology's cpu: block
(cpuset lists, masks, its checks against a machine), the hosts' CPU loss over a window
(meters.cpuloss), the fidelity verdict with it, the receive CPU share and the CPU rule of the
derivation, the thesis's receive cost, and the placement's parsers."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ECENET, REPO
from qoslab.errors import EnvironmentProblem, QoslabError
from qoslab.meters.cpuloss import (
    CpuWindow,
    delta,
    host_cpu_loss,
    host_cpu_use,
    parse_percpu,
    parse_udp_rcvbuf_errors,
    rx_cost_us,
    rx_cpu_share,
    throttled_share,
)
from qoslab.meters.fidelityjudge import FidelityThresholds, Measurements, verdict
from qoslab.meters.fidelitymeasure import FlowRates
from qoslab.meters.hostcpu import delivered
from qoslab.scale.cpu import (
    CpuBlock,
    budget_sum_problem,
    check_cpu,
    cpu_mask,
    format_cpulist,
    online_cpus,
    parse_cpulist,
)
from qoslab.scale.derive import RealCluster, derive, host_cores_for, rx_share
from qoslab.scale.model import THESIS, THESIS_RX_COST_S, quantities
from qoslab.testbed.cpuplace import CpuPlacement, find_v1, parse_cpu_stat
from qoslab.topology import load_topology
from qoslab.trafficgen import load_flood
from qoslab.trafficgen.ditgpacing import check_pin
from qoslab.yamlio import FieldProblem

BLOCK = CpuBlock(hosts_cpus="0", switch_cpus="1", host_cores=0.25)


@pytest.mark.parametrize("text, cpus", [("0", {0}), ("0-3", {0, 1, 2, 3}), ("0,2-3", {0, 2, 3}), (" 5 ", {5}),
                                        ("1,1", {1})])
def test_cpulists_parse_and_print_as_the_kernel_does(text, cpus):
    assert parse_cpulist(text) == frozenset(cpus)
    assert parse_cpulist(format_cpulist(cpus)) == frozenset(cpus)


@pytest.mark.parametrize("bad", ["", "0-", "-1", "a", "3-1", "0,,1", "9000", "0x1", "1.5"])
def test_garbled_cpulists_are_refused(bad):
    with pytest.raises(ValueError):
        parse_cpulist(bad)


def test_cpu_masks_are_sysfs_hex_words():
    assert cpu_mask({1}) == "2" and cpu_mask({0, 1}) == "3" and cpu_mask({0, 2, 3}) == "d"
    assert cpu_mask({32}) == "1,00000000" and cpu_mask(set()) == "0"
    assert format_cpulist({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    assert online_cpus("0-1\n") == frozenset({0, 1}) and online_cpus("garbage") is None


def test_the_block_is_checked_against_the_machine_and_the_hosts():
    two = frozenset({0, 1})
    check_cpu(BLOCK, {"jp-1": None, "jp-2": 1.0}, two)
    with pytest.raises(FieldProblem, match="not on this machine") as e:
        check_cpu(BLOCK.model_copy(update={"switch_cpus": "2"}), {}, two)
    assert e.value.loc == ("cpu", "switch_cpus")
    with pytest.raises(FieldProblem, match="in both hosts_cpus and switch_cpus"):
        check_cpu(BLOCK.model_copy(update={"switch_cpus": "0-1"}), {}, two)
    with pytest.raises(FieldProblem, match="do not fit hosts_cpus") as e:
        check_cpu(BLOCK, {"jp-1": None, "jp-2": 1.5}, two)
    assert e.value.loc == ("hosts", 1, "cpu")
    with pytest.raises(FieldProblem, match="below the kernel's 1 ms") as e:
        check_cpu(BLOCK.model_copy(update={"host_cores": 0.05}), {"jp-1": None}, two)
    assert e.value.loc == ("cpu", "host_cores")
    check_cpu(BLOCK.model_copy(update={"host_cores": 0.05, "period_ms": 20}), {"jp-1": None}, two)
    with pytest.raises(FieldProblem, match="cpu: needs the topology's cpu: block") as e:
        check_cpu(None, {"jp-1": None, "jp-2": 0.5}, two)
    assert e.value.loc == ("hosts", 1, "cpu")
    with pytest.raises(FieldProblem, match="embedded testbed"):
        check_cpu(BLOCK, {}, two, environment="cluster")
    check_cpu(None, {"jp-1": None}, None)  # no block, no host cpu: nothing to check


def test_a_campaigns_hosts_must_fit_the_hosts_cores_together():
    assert budget_sum_problem(BLOCK, {}, ["jp-1", "jp-2", "jp-3", "jp-4"]) is None
    msg = budget_sum_problem(BLOCK, {"jp-1": 0.5}, ["jp-1", "jp-2", "jp-3", "jp-4"])
    assert msg and "1.25 cores" in msg and "jp-1, jp-2, jp-3, jp-4" in msg


def test_a_topology_with_the_block_loads_and_reports_the_line_of_a_bad_field(tmp_path):
    text = ECENET.read_text() + 'cpu:\n  hosts_cpus: "0"\n  switch_cpus: "0"\n  host_cores: 0.25\n'
    p = tmp_path / "t.yaml"
    p.write_text(text)
    with pytest.raises(QoslabError) as e:
        load_topology(p)
    line = text.splitlines().index('  switch_cpus: "0"') + 1
    assert f"t.yaml:{line}: cpu.switch_cpus" in str(e.value)
    t = load_topology(REPO / "playbooks" / "topologies" / "ecenet-cpu.yaml")
    assert t.cpu is not None and t.cpu.host_set == {0} and t.cpu.quota_us(0.25) == 2500 and t.cpu.period_us == 10000


def _window(**kw) -> CpuWindow:
    base = dict(window_s=2.0, hz=100.0, host_cpus=frozenset({0}),
                percpu={0: (150, 0, 40, 10, 0, 0, 0, 0), 1: (50, 0, 50, 100, 0, 0, 0, 0)},
                usage_s={"jp-1": 0.5, "jp-2": 0.5, "jp-3": 0.45, "jp-4": 0.45, "jp-5": 0.0},
                budget={"jp-1": 0.25, "jp-2": 0.25, "jp-3": 0.25, "jp-4": 0.25})
    base.update(kw)
    return CpuWindow(**base)  # type: ignore[arg-type]


def test_no_loss_while_the_hosts_cores_have_room_for_every_budget():
    w = _window()  # CPU 0: 1.9 s of task ticks, all the hosts' (1.9 s): nothing else, no interrupts
    assert host_cpu_loss(w) == 0.0
    assert host_cpu_use(w) == pytest.approx(0.95)


def test_loss_is_the_shortfall_of_the_hosts_cores_against_their_budget():
    # CPU 0 over 2 s: 1.0 s of the hosts' tasks, 0.6 s of another task, 0.2 s softirq, 0.2 s steal
    w = _window(percpu={0: (160, 0, 0, 0, 0, 0, 20, 20)}, usage_s={"jp-1": 0.25, "jp-2": 0.25, "jp-3": 0.25,
                                                                   "jp-4": 0.25})
    # free = 2 - 0.2 - 0.2 - 0.6 = 1.0 s against a budget of 2.0 s: half lost
    assert host_cpu_loss(w) == pytest.approx(0.5)
    # a host that is not the trial's is another's work on the cores too
    w2 = _window(percpu={0: (200, 0, 0, 0, 0, 0, 0, 0)}, usage_s={"jp-1": 0.5, "jp-2": 0.5, "jp-3": 0.5, "jp-4": 0.0,
                                                                  "jp-5": 0.5}, budget={"jp-1": 0.25, "jp-2": 0.25,
                                                                                        "jp-3": 0.25, "jp-4": 0.25})
    assert host_cpu_loss(w2) == pytest.approx(0.25)
    assert host_cpu_loss(_window(budget={})) is None and host_cpu_loss(_window(window_s=0.0)) is None


def test_receive_share_cost_and_throttling():
    w = _window(rx_cpu_s={"jp-1": 0.1, "jp-2": 0.05}, rx_packets={"jp-1": 10_000, "jp-2": 5_000},
                periods={"jp-1": 200, "jp-2": 200}, throttled={"jp-1": 150, "jp-2": 50})
    assert rx_cpu_share(w) == pytest.approx((0.1 / 0.5 + 0.05 / 0.5) / 2)
    assert rx_cost_us(w) == pytest.approx(10.0)
    assert throttled_share(w) == pytest.approx(0.5)
    assert rx_cpu_share(_window()) is None and rx_cost_us(_window()) is None


def test_proc_parsers():
    stat = "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 10 0 5 100 0 1 2 3 0 0\ncpu1 1 1 1 1\nintr 5\n"
    assert parse_percpu(stat) == {0: (10, 0, 5, 100, 0, 1, 2, 3), 1: (1, 1, 1, 1, 0, 0, 0, 0)}
    assert delta({0: (1, 1)}, {0: (3, 2), 1: (9, 9)}) == {0: (2, 1)}
    snmp = ("Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n"
            "Udp: 100 0 7 5 7 0\nUdpLite: InDatagrams\nUdpLite: 0\n")
    assert parse_udp_rcvbuf_errors(snmp) == 7 and parse_udp_rcvbuf_errors("Udp: x\n") is None
    assert parse_cpu_stat("nr_periods 10\nnr_throttled 3\nthrottled_time 42\nbad\n") == {
        "nr_periods": 10, "nr_throttled": 3, "throttled_time": 42}
    mounts = ("cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"
              "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,relatime,cpu,cpuacct 0 0\n"
              "cgroup /sys/fs/cgroup/cpuset cgroup rw,cpuset 0 0\n")
    v1 = find_v1(mounts)
    assert str(v1["cpu"]) == str(v1["cpuacct"]) == "/sys/fs/cgroup/cpu,cpuacct" and "cpuset" in v1


def test_a_block_on_a_machine_without_the_v1_hierarchies_is_an_environment_problem():
    t = load_topology(REPO / "playbooks" / "topologies" / "ecenet-cpu.yaml")
    with pytest.raises(EnvironmentProblem, match="cpuset, cpu, cpuacct"):
        CpuPlacement(t, mounts="cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n")
    assert not CpuPlacement(load_topology(ECENET), mounts="").active


def test_a_booted_manager_is_moved_from_its_boot_group_into_the_hosts_budget(tmp_path):
    """admit() on a v1 tree made of plain files (the kernel's cgroup.procs takes one PID per write;
    a plain file keeps the last): every PID of the host's boot group is written to the host's
    cgroup.procs in each hierarchy (cpu,cpuacct co-mounted: once), a PID that ended is skipped."""
    t = load_topology(REPO / "playbooks" / "topologies" / "ecenet-cpu.yaml")
    mounts = (f"cgroup {tmp_path}/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
              f"cgroup {tmp_path}/cpuset cgroup rw,cpuset 0 0\n")
    place = CpuPlacement(t, mounts=mounts)
    host = t.hosts[0].name
    boot = place.boot_procs_files(host)
    assert boot == sorted({f"{tmp_path}/{c}/qoslab-testbed/{t.name}/boot:{host}/cgroup.procs"
                           for c in ("cpu,cpuacct", "cpuset")})
    assert set(boot).isdisjoint(place.procs_files(host))
    written: dict[str, list[str]] = {}
    for f in [*boot, *place.procs_files(host)]:
        Path(f).parent.mkdir(parents=True, exist_ok=True)
        Path(f).write_text("")
    for f in boot:
        Path(f).write_text("4242\n4343\n")

    real_write = Path.write_text

    def record(self: Path, data: str, *a, **k) -> int:
        written.setdefault(str(self), []).append(data)
        if data == "4343":
            raise ProcessLookupError(3, "No such process")
        return real_write(self, data, *a, **k)

    import unittest.mock as um

    with um.patch.object(Path, "write_text", record):
        assert place.admit(host) == 2  # 4242 in each of the two hierarchies; 4343 had ended
    assert written == {f: ["4242", "4343"] for f in place.procs_files(host)}
    assert CpuPlacement(load_topology(ECENET), mounts="").boot_procs_files(host) == []
    assert CpuPlacement(load_topology(ECENET), mounts="").admit(host) == 0


def test_an_unreadable_boot_group_names_its_file(tmp_path):
    t = load_topology(REPO / "playbooks" / "topologies" / "ecenet-cpu.yaml")
    place = CpuPlacement(t, mounts=f"cgroup {tmp_path}/c cgroup rw,cpu,cpuacct,cpuset 0 0\n")
    with pytest.raises(QoslabError, match=r"cannot read .*/boot:jp-1/cgroup.procs"):
        place.admit("jp-1")


def _m(loss: float | None, share: float = 0.9) -> Measurements:
    return Measurements(link_rate_bps=1e7, idle_shares=[0.5] * 10, emulation_cores=share * 2, cores=2,
                        host_cpu_loss=loss)


def test_host_cpu_loss_replaces_emulation_share_in_the_verdict():
    th = FidelityThresholds()
    v, reasons, s = verdict(_m(None), th)  # no cpu: block: emulation_share judges (0.9 > 0.25)
    assert v == "degraded" and [r.check for r in reasons] == ["emulation_share"]
    v, reasons, s = verdict(_m(0.1), th)  # with it, the loss judges and emulation_share is only reported
    assert v == "ok" and reasons == [] and s["emulation_share"] == pytest.approx(0.9)
    v, reasons, _ = verdict(_m(0.3), th)
    assert v == "degraded" and [r.check for r in reasons] == ["host_cpu_loss"]
    assert verdict(_m(0.3), th.model_copy(update={"max_host_cpu_loss": 0.35}))[0] == "ok"


def test_socket_drops_count_as_delivered_by_the_network():
    f = FlowRates("jp-5", "jp-1", 1e7, 6e6, 850.0, 850.0, "Gi1-0-1")
    w = _window(rx_packets={"jp-1": 600}, rx_drops={"jp-1": 400})
    assert delivered([f], w)[0].received_wire_bps == pytest.approx(1e7)
    assert delivered([f], None)[0] is f and delivered([f], _window())[0].received_wire_bps == 6e6


def test_the_thesis_receive_cost_is_one_cycle_per_bit_on_a_2_ghz_core():
    assert THESIS_RX_COST_S == pytest.approx(1442 * 8 / 2e9)
    q = quantities(THESIS)
    assert q["rx_cost_us"] == pytest.approx(5.768) and q["receiver_cores"] == 2
    assert q["rx_cpu_share"] == pytest.approx(85_266 * 5.768e-6 / 2, rel=1e-3)  # 0.246


def test_the_cpu_rule_gives_the_capacity_with_the_thesis_receive_share():
    real = RealCluster.model_validate({
        "link_rate": "1Gbit", "switch_port_buffer": "128KiB", "rtt_us": 150, "cores_per_node": 2,
        "uncongested_s": 38.1, "flood_load": 1.0, "rx_cost_us": 5.768,
        "testbed": {"link_rate": "100Mbit", "uncongested_s": 2.85, "rx_cost_us": 9.0}})
    cores = host_cores_for(real)
    # the testbed's flood share at that capacity equals the thesis's
    assert rx_share(1e8, 1.0, 9.0, cores) == pytest.approx(rx_share(1e9, 1.0, 5.768, 2), rel=3e-3)
    d = derive(real)
    assert d.host_cores == cores and d.topology_fragment()["cpu"] == {"host_cores": cores}
    no = derive(real.model_copy(update={"rx_cost_us": None}))
    assert no.host_cores is None and any("receive CPU share" in u for u in no.unmatched)


def test_a_pin_outside_the_switchs_cores_is_refused_with_a_cpu_block():
    t = load_topology(REPO / "playbooks" / "topologies" / "ecenet-cpu.yaml")
    d = load_flood(REPO / "traffic-gen" / "campaign-flood.yaml")
    check_pin(d, t)  # pin_cpu: last is CPU 1 on a 2-core machine: the switch's
    with pytest.raises(QoslabError, match="not one of the switch's cores"):
        check_pin(d.model_copy(update={"pin_cpu": 0}), t)
    check_pin(d.model_copy(update={"pin_cpu": 0}), load_topology(ECENET))  # no block: pin_cpu as before


def test_a_playbook_whose_hosts_cannot_all_get_their_capacity_is_refused(tmp_path):
    from qoslab.campaign import load_playbook
    from qoslab.campaign.checks import check_references

    topo = tmp_path / "fat.yaml"
    topo.write_text((REPO / "playbooks" / "topologies" / "ecenet-cpu.yaml").read_text()
                    .replace("host_cores: 0.25 ", "host_cores: 0.3 "))
    pb = tmp_path / "pb.yaml"
    pb.write_text(f"name: fat\ntopology: {topo}\ndevice: virtual\nworkload: {{hosts: [jp-1, jp-2, jp-3], size: A}}\n"
                  f"flood: {REPO}/traffic-gen/campaign-flood.yaml\n"
                  "conditions:\n  - {name: no congestion fifo, congestion: false, profile: fifo}\n"
                  "  - {name: congestion fifo, congestion: true, profile: fifo}\ntrials: 2\n")
    with pytest.raises(QoslabError, match=r"pb.yaml:2: topology: .*jp-1, jp-2, jp-3, jp-4\) have 1.2 cores"):
        check_references(load_playbook(pb), pb)  # jp-4 is in it as a flood destination


def test_the_loss_is_the_smaller_of_the_capacity_deficit_and_the_shortfall():
    from qoslab.meters.cpuloss import capacity_deficit

    # the hosts got their whole budget (2.0 s in 2 s) while the ticks saw 0.6 s more of other tasks (tick
    # accounting against the cgroups' precise clock, or a task in the time they left):
    # it ran in time they left, they lost nothing
    full = _window(percpu={0: (200, 0, 60, 0, 0, 0, 0, 0)}, usage_s={"jp-1": 0.5, "jp-2": 0.5, "jp-3": 0.5,
                                                                      "jp-4": 0.5})
    assert capacity_deficit(full) == pytest.approx(0.3) and host_cpu_loss(full) == 0.0
    # hosts waiting for the network (half their budget unused) on a core nobody else used: no loss
    idle = _window(percpu={0: (100, 0, 0, 100, 0, 0, 0, 0)}, usage_s={"jp-1": 0.25, "jp-2": 0.25, "jp-3": 0.25,
                                                                       "jp-4": 0.25})
    assert host_use_and_loss(idle) == (pytest.approx(0.5), 0.0)


def host_use_and_loss(w):
    return host_cpu_use(w), host_cpu_loss(w)


def test_manager_boot_budget_has_no_boot_group_and_a_typo_names_the_field(tmp_path):
    """``cpu.manager_boot: budget`` (issue 48): the manager boots in its host's budget, as every run
    before 4bb8c9d: no boot group, so the host's executor boots nothing elsewhere (``as_booting`` gives itself);
    the default keeps the boot group; any other value is refused with the field's path."""
    import yaml

    from qoslab.executors.local import NetnsExecutor

    raw = yaml.safe_load((REPO / "playbooks" / "topologies" / "ecenet-cpu.yaml").read_text())
    mounts = (f"cgroup {tmp_path}/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
              f"cgroup {tmp_path}/cpuset cgroup rw,cpuset 0 0\n")
    places = {}
    for value in ("outside", "budget"):
        raw["cpu"]["manager_boot"] = value
        f = tmp_path / f"{value}.yaml"
        f.write_text(yaml.safe_dump(raw))
        t = load_topology(f)
        assert t.cpu is not None and t.cpu.manager_boot == value
        places[value] = (t, CpuPlacement(t, mounts=mounts))
    host = places["budget"][0].hosts[0].name
    for value, (_t, place) in places.items():
        ex = NetnsExecutor(host, f"qoslab-{host}", cgroups=place.procs_files(host),
                           boot_cgroups=place.boot_procs_files(host), admit=lambda: 0)
        assert (ex.as_booting() is not ex) is (value == "outside")  # a boot group to start the manager in
    assert places["budget"][1].boot_procs_files(host) == []
    assert places["outside"][1].boot_procs_files(host)
    raw["cpu"]["manager_boot"] = "inside"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw))
    with pytest.raises(QoslabError, match=r"manager_boot") as e:
        load_topology(bad)
    assert "Traceback" not in str(e.value)
