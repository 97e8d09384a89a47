"""The shared platform driver suite (issue 36, after NAPALM's shared driver tests): every
registered platform renders its golden files, its renders are valid in its dialect and QoS-only,
a second push of the same profile is an empty diff, a rollback restores the backup, and its
counters output parses into QueueCounters. Plus the 9300's own mapping and a test platform
registered from here."""

from __future__ import annotations

import pytest

from conftest import ECENET, REPO
from qoslab.errors import QoslabError
from qoslab.ios import RunningConfig, interpret, load_config, qos_model
from qoslab.ios.config import Mode
from qoslab.ios.configdiff import intended_config, remediation
from qoslab.ios.qoswalk import normalized_qos
from qoslab.platforms import Platform, QueueCounters, get_platform, platform_for_model
from qoslab.platforms.catalyst3750 import Catalyst3750
from qoslab.platforms.neutral import egress_queues, remaining_percent
from qoslab.profiles import load_profile
from qoslab.profiles.model import Profile
from qoslab.profiles.render import render
from qoslab.registry import platforms
from qoslab.topology import load_topology
from qoslab.vswitch.tccompile import compile_tc

PLATFORMS = ["arista_eos", "catalyst3750", "catalyst9300"]
PROFILES = ["fifo", "thesis", "police-flood", "rmi-ports", "trust-dscp"]
DATA = REPO / "tests" / "data" / "platforms"


def _golden(platform: str, name: str):
    base = REPO / "switch-configs" / "rendered"
    suffix = "eos" if platform == "arista_eos" else "ios"
    return base / f"{name}-ecenet.ios" if platform == "catalyst3750" else base / platform / f"{name}-ecenet.{suffix}"


def _apply(platform: Platform, lines: list[str], rc: RunningConfig) -> None:
    assert load_config("\n".join(lines), rc) == []


class _Config:
    """A platform's running-config as its virtual switch keeps it: IOS's RunningConfig, or EOS's
    EosConfig (:mod:`qoslab.eos`), behind the three calls the suite needs."""

    def __init__(self, p: Platform, topo) -> None:
        self.eos = p.dialect == "eos"
        if self.eos:
            from qoslab.eos import EosConfig, eos_port

            self.rc = EosConfig.factory(topo.switch.hostname, [eos_port(x) for x in topo.switch.ports])
        else:
            self.rc = RunningConfig.factory(topo.switch.hostname, topo.switch.ports, p.dialect)

    def load(self, lines: list[str]) -> list[str]:
        if self.eos:
            from qoslab.eos import load_config as eos_load

            return eos_load("\n".join(lines), self.rc)
        return load_config("\n".join(lines), self.rc)

    def render(self) -> str:
        return self.rc.render()

    def send(self, lines: list[str]) -> None:
        """Lines as the push sends them (hier-config's remediation), one at a time from global config."""
        if self.eos:
            from qoslab.eos import Mode as EosMode
            from qoslab.eos import interpret as eos_interpret

            mode = EosMode()
            for line in lines:
                mode = eos_interpret(self.rc, mode, line)
            return
        mode = Mode()
        for line in lines:
            mode = interpret(self.rc, mode, line)


def test_every_registered_platform_is_in_this_suite():
    assert sorted(platforms.names()) == PLATFORMS


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("name", PROFILES)
def test_golden_render(platform, name):
    lines = get_platform(platform).render(load_profile(name), load_topology(ECENET))
    assert "\n".join(lines) + ("\n" if lines else "") == _golden(platform, name).read_text()


@pytest.mark.parametrize("name", PROFILES)
def test_catalyst3750_renders_byte_identical_to_the_renderer_before_platforms(name):
    topo = load_topology(ECENET)
    assert get_platform("catalyst3750").render(load_profile(name), topo) == render(load_profile(name), topo)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("name", ["police-flood", "thesis"])
def test_second_push_is_an_empty_diff_and_rollback_restores(platform, name):
    p, topo = get_platform(platform), load_topology(ECENET)
    cfg = _Config(p, topo)
    backup = cfg.render()
    lines = p.render(load_profile(name), topo)
    assert cfg.load(lines) == []
    running = cfg.render()
    hier, neg = p.qos_rules.hier_platform, p.qos_rules.negations
    assert remediation(running, intended_config(running, lines, p.qos_rules), hier, neg) == []
    cfg.send(remediation(running, backup, hier, neg))  # the rollback the push would send
    assert normalized_qos(cfg.render(), p.qos_rules) == normalized_qos(backup, p.qos_rules) == []


@pytest.mark.parametrize("platform", PLATFORMS)
def test_counters_parse_into_queue_counters(platform):
    p = get_platform(platform)
    got = p.parse_counters((DATA / f"{platform}-counters.txt").read_text())["GigabitEthernet1/0/1"]
    assert isinstance(got, QueueCounters)
    if platform == "catalyst3750":
        assert got.queues == ["1", "2", "3", "4"] and got.n_thresholds == 3
        assert got.dropped_packets is not None and got.dropped_packets[1] == [321, 0, 0]
    elif platform == "arista_eos":
        assert got.queues == [f"TC{n}" for n in range(8)] and got.n_thresholds == 1
        assert got.dropped_packets is not None and got.dropped_packets[1] == [321]
        assert got.enqueued_bytes is not None and got.enqueued_bytes[5] == [1876912]
    else:
        assert got.queues == ["QOSLAB-Q1", "QOSLAB-Q3", "class-default"] and got.n_thresholds == 1
        assert got.enqueued_bytes == [[180000], [0], [7000000]] and got.dropped_bytes == [[0], [0], [449400]]
        assert got.dropped_packets is None
    delta = got.minus(got)
    assert all(x == 0 for m in (delta.enqueued_packets or []) for x in m)
    assert p.counters_commands(["GigabitEthernet1/0/1"])[0].startswith("show ")


def test_platform_chosen_by_model():
    assert platform_for_model("WS-C3750G-24T") == "catalyst3750"
    assert platform_for_model("C9300-48P") == platform_for_model("catalyst9300") == "catalyst9300"
    assert platform_for_model("DCS-7280SR3-48YC8") == platform_for_model("arista_eos") == "arista_eos"
    with pytest.raises(QoslabError, match="no platform claims it"):
        platform_for_model("N9K-C93180")


def test_a_third_platform_is_one_registration():
    class Test3560(Catalyst3750):
        name = "test3560"
        model_prefixes = ("TEST-3560",)

    platforms.register("test3560", Test3560)
    try:
        assert platform_for_model("TEST-3560-8PC") == "test3560"
        assert get_platform("test3560").render(load_profile("fifo"), load_topology(ECENET))[0].startswith("monitor")
    finally:
        platforms.unregister("test3560")
    assert "test3560" not in platforms.names()


def test_thesis_on_the_9300_maps_the_3750_terms():
    prof = load_profile("thesis")
    qs = {q.number: q for q in egress_queues(prof)}
    assert qs[1].expedite and 40 in qs[1].dscps and qs[2].default and qs[2].buffer_percent == 40
    assert dict(qs[2].drop_percent)[0] == 20  # threshold 1 = 40 % of a 200 % maximum
    assert remaining_percent(list(qs.values())) == {2: 33, 3: 33, 4: 33}
    lines = get_platform("catalyst9300").render(prof, load_topology(ECENET))
    assert not [line for line in lines if line.startswith("mls ")]
    assert lines.count(" service-policy output QOSLAB-QUEUING") == 4


def test_9300_refuses_what_it_cannot_say_with_file_and_line(tmp_path):
    f = tmp_path / "shaped.yaml"
    f.write_text("name: shaped\nmls_qos: true\negress:\n  apply_to: workload\n  shape: [25, 0, 0, 0]\n")
    with pytest.raises(QoslabError, match=r"shaped.yaml:5: egress.shape: catalyst9300"):
        get_platform("catalyst9300").render(load_profile(f), load_topology(ECENET))


def test_9300_mqc_compiles_to_the_same_data_path():
    topo = load_topology(ECENET)
    rc = RunningConfig.factory(topo.switch.hostname, topo.switch.ports, "c9300")
    _apply(get_platform("catalyst9300"), get_platform("catalyst9300").render(load_profile("thesis"), topo), rc)
    q = qos_model(rc)
    assert q.enabled and q.dscp_output_queue[40] == 1 and q.interfaces["Gi1/0/1"].priority_queue_out
    assert q.interfaces["Gi1/0/1"].trust == "dscp" and q.interfaces["Gi1/0/1"].service_policy_in == "police-jp"
    plan = compile_tc(q, topo).ports["Gi1-0-1"]
    assert any("classid 1:11 htb rate 9900000bit" in line and "prio 0" in line for line in plan)
    assert plan[0].endswith(f"htb default 1{q.dscp_output_queue[0]}")
    assert isinstance(load_profile("fifo"), Profile)


class _FakeXe:
    """A SwitchDevice of platform catalyst9300 whose counters grow by one reading's worth."""

    platform = "catalyst9300"

    def __init__(self) -> None:
        self.text = (DATA / "catalyst9300-counters.txt").read_text()
        self.reads = 0

    def show(self, commands: list[str]) -> dict[str, str]:
        self.reads += 1
        text = self.text if self.reads == 1 else self.text.replace("(total drops) 449400", "(total drops) 500000")
        return dict.fromkeys(commands, text)


def test_switch_evidence_stores_any_number_of_queues_as_json():
    import json

    from qoslab.meters.evidence import COLUMNS, TrialEvidence

    ev = TrialEvidence(_FakeXe(), ["Gi1/0/1"])
    ev.start()
    ev.finish()
    cols = ev.columns()
    assert ev.error is None and set(cols) == set(COLUMNS)
    assert cols["switch_json"] is None and cols["switch_drops_q1"] is None  # the 3750's columns stay NULL
    q = json.loads(cols["switch_queues_json"])
    assert q["platform"] == "catalyst9300" and q["ports"]["Gi1/0/1"]["queues"][-1] == "class-default"
    assert q["ports"]["Gi1/0/1"]["dropped_bytes"] == [0, 0, 50600] and q["ports"]["Gi1/0/1"]["dropped_packets"] is None


def test_device_file_platform_must_match_the_topology_model(tmp_path):
    from qoslab.switch.backends import CatalystSwitch

    f = tmp_path / "c9300.yaml"
    f.write_text("device: catalyst\nhost: 192.0.2.1\nplatform: cisco_xe\nknown_hosts: /nonexistent\n")
    with pytest.raises(QoslabError, match=r"c9300.yaml:3: platform: catalyst9300, but topology ecenet's switch is a "
                                          r"WS-C3750G-24T \(catalyst3750\)"):
        CatalystSwitch(load_topology(ECENET), str(f))
    f.write_text("device: catalyst\nhost: 192.0.2.1\nplatform: ios-xr\nknown_hosts: /nonexistent\n")
    with pytest.raises(QoslabError, match=r"c9300.yaml:3: platform: unknown platform 'ios-xr'"):
        CatalystSwitch(load_topology(ECENET), str(f))
    f.write_text("device: catalyst\nhost: 192.0.2.1\nplatform: catalyst9300\nknown_hosts: /nonexistent\n")
    sw = CatalystSwitch(load_topology(REPO / "playbooks" / "topologies" / "ecenet9300.yaml"), str(f))
    assert sw.platform == "catalyst9300" and sw.endpoint.platform == "catalyst9300"


def test_a_port_without_an_output_policy_has_no_queues():
    from qoslab.platforms.counters import read_queue_counters

    class Empty:
        def show(self, commands: list[str]) -> dict[str, str]:
            return dict.fromkeys(commands, "")

    got = read_queue_counters(Empty(), ["Gi1/0/1"], "catalyst9300")["GigabitEthernet1/0/1"]
    assert got.queues == [] and got.dropped_bytes is None and got.n_thresholds == 0


def test_stats_switch_queues_block_means_per_trial_by_queue_name():
    import json

    from qoslab.stats.switchq import summarize

    rec = {"platform": "catalyst9300", "reset": [], "ports": {
        "Gi1/0/1": {"queues": ["QOSLAB-Q1", "class-default"], "enqueued_packets": [10, 4], "dropped_packets": None,
                    "enqueued_bytes": [1000, 400], "dropped_bytes": [0, 3000]},
        "Gi1/0/2": {"queues": ["QOSLAB-Q1", "class-default"], "enqueued_packets": [2, 0], "dropped_packets": None,
                    "enqueued_bytes": [200, 0], "dropped_bytes": [0, 1000]}}}
    got = summarize([("c", json.dumps(rec)), ("c", json.dumps(rec)), ("d", None)])
    assert got == {"platform": "catalyst9300", "conditions": {"c": {"n": 2, "queues": {
        "QOSLAB-Q1": {"enqueued_packets": 12.0, "enqueued_bytes": 1200.0, "dropped_bytes": 0.0},
        "class-default": {"enqueued_packets": 4.0, "enqueued_bytes": 400.0, "dropped_bytes": 4000.0}}}}}
    assert summarize([("d", None)]) is None
