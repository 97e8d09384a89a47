"""QoS profiles -> IOS: the thesis profile against Appendix B, golden files, bad profiles."""

from __future__ import annotations

import pytest

from conftest import APPENDIX_B, ECENET, REPO
from qoslab.errors import ConfigError, QoslabError
from qoslab.ios import RunningConfig, load_config
from qoslab.ios.qoswalk import normalized_qos
from qoslab.profiles import load_profile, render
from qoslab.topology import load_topology

REAL = REPO / "playbooks" / "topologies" / "ecenet-real.yaml"
PROFILES = ["fifo", "thesis", "rmi-ports", "trust-dscp", "police-flood"]


def test_thesis_profile_gives_appendix_b_qos_lines():
    """Appendix B read as IOS reads it (leading whitespace of the page-break artifacts ignored; its
    invalid lines rejected: see test_ios) has the same QoS commands, ACLs, class-maps, policy-map,
    interface settings and SPAN sessions as the rendered thesis profile, in any order. The one
    difference: the profile writes the input priority-queue line that Appendix B got wrong."""
    topo = load_topology(REAL)
    rendered = "\n".join(render(load_profile("thesis"), topo))
    appendix = RunningConfig.factory("Switch", topo.switch.ports)
    load_config(APPENDIX_B.read_text(), appendix)
    mine = RunningConfig.factory("Switch", topo.switch.ports)
    assert load_config(rendered, mine) == []
    a, r = set(normalized_qos(appendix.render())), set(normalized_qos(mine.render()))
    assert a - r == set()
    assert r - a == {"mls qos srr-queue input priority-queue 2 bandwidth 40"}
    # 7 globals, 13 ACLs, 12 class-maps + their match, policy-map + 12 classes + 12 sets,
    # 4 interfaces x 4 settings, 4 SPAN lines
    assert len(r) == 7 + 13 + 24 + 25 + 16 + 4


@pytest.mark.parametrize("name", PROFILES)
@pytest.mark.parametrize("topo", ["ecenet", "ecenetreal"])
def test_golden_files(name, topo):
    path = ECENET if topo == "ecenet" else REAL
    golden = REPO / "switch-configs" / "rendered" / f"{name}-{topo}.ios"
    lines = render(load_profile(name), load_topology(path))
    assert "\n".join(lines) + ("\n" if lines else "") == golden.read_text()


def test_groups_fit_any_cluster_size():
    t = load_topology(ECENET)
    six = render(load_profile("thesis"), t, {"workload": [f"jp-{i}" for i in range(1, 7)]})
    assert sum(l.startswith("access-list 1") and l != "access-list 100 permit ip any any" for l in six) == 30
    assert "interface GigabitEthernet1/0/6" in six
    rmi = render(load_profile("rmi-ports"), t, {"workload": ["jp-1", "jp-2"]})
    assert " permit tcp any eq 1100 any" in rmi and "interface GigabitEthernet1/0/3" not in rmi
    with pytest.raises(QoslabError, match="no host 'jp-99'"):
        render(load_profile("thesis"), t, {"workload": ["jp-1", "jp-99"]})
    with pytest.raises(QoslabError, match="at most 9 hosts"):
        render(load_profile("thesis"), load_topology(ECENET).model_copy(update={"hosts": load_topology(ECENET).hosts * 2}),
               {"workload": [f"jp-{i % 8 + 1}" for i in range(10)]})


def test_bad_profiles_name_file_and_field(write_yaml):
    p = write_yaml({"name": "x", "mls_qos": True, "egress": {"share": [1, 2, 3]}})
    with pytest.raises(ConfigError, match=r"egress\.share: SRR weights \(share\) are 4 numbers, each 1-255"):
        load_profile(p)
    p = write_yaml({"name": "x", "rules": [{"name": "r", "kind": "pairz", "set_dscp": 40}]})
    with pytest.raises(ConfigError, match=r"rules\[0\]\.kind"):
        load_profile(p)
    p = write_yaml({"name": "x", "mls_qoss": True})
    with pytest.raises(ConfigError, match=r"mls_qoss: unknown field"):
        load_profile(p)
    p = write_yaml({"name": "x", "rules": [{"name": "r", "kind": "pairs", "set_dscp": 64}]})
    with pytest.raises(ConfigError, match=r"rules\[0\]\.set_dscp"):
        load_profile(p)


def test_port_ranges_render_as_ios_range_and_are_checked(write_yaml):
    lines = render(load_profile("ef-mpi"), load_topology(ECENET))
    assert lines[2:5] == ["ip access-list extended mpi-btl", " permit tcp any any range 7400 7431",
                          " permit tcp any range 7400 7431 any"]
    rule = {"name": "r", "kind": "ports", "protocol": "tcp", "set_dscp": 46}
    p = write_yaml({"name": "x", "rules": [{**rule, "port_ranges": [[7431, 7400]]}]})
    with pytest.raises(ConfigError, match=r"rules\[0\]\.port_ranges.*1 <= LO <= HI <= 65535"):
        load_profile(p)
    p = write_yaml({"name": "x", "rules": [{**rule, "kind": "pairs", "port_ranges": [[1, 2]]}]})
    with pytest.raises(ConfigError, match=r"rules\[0\]\.port_ranges.*matches no ports"):
        load_profile(p)
