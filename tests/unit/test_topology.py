"""Topology validation: the shipped file, and bad inputs whose errors must name file, line, field."""

from __future__ import annotations

import re

import pytest

from conftest import ECENET
from qoslab.errors import ConfigError
from qoslab.portnames import canonical_port, expand_ports, linux_ifname, long_port
from qoslab.topology import load_topology
from qoslab.units import parse_rate, parse_size


def test_ecenet_is_the_thesis_cluster():
    t = load_topology(ECENET)
    assert t.host_names == [f"jp-{i}" for i in range(1, 9)]
    assert [h.ip for h in t.hosts] == [f"198.18.0.{i}" for i in range(1, 9)]
    assert [h.port for h in t.hosts] == [f"Gi1/0/{i}" for i in range(1, 9)]
    assert t.switch.span_destinations == ["Gi1/0/21", "Gi1/0/22"]
    assert t.link.rate == 10_000_000  # chosen from the scale-model sweep (README)
    assert t.link.burst_bytes == 3125  # 2.5 ms at 10 Mbit/s
    assert len(t.switch.ports) == 24
    assert t.environment == "embedded"


def _error(write_yaml, data) -> str:
    path = write_yaml(data)
    with pytest.raises(ConfigError) as e:
        load_topology(path)
    msg = str(e.value)
    assert str(path) in msg, msg
    return msg


def test_duplicate_address(write_yaml, ecenet_data):
    ecenet_data["hosts"][3]["address"] = "198.18.0.1/24"
    msg = _error(write_yaml, ecenet_data)
    assert "hosts[3].address: duplicate address 198.18.0.1" in msg and "jp-1" in msg and "jp-4" in msg


def test_duplicate_port_and_name(write_yaml, ecenet_data):
    ecenet_data["hosts"][2]["port"] = "Gi1/0/2"
    assert "duplicate port Gi1/0/2" in _error(write_yaml, ecenet_data)
    ecenet_data["hosts"][2]["port"] = "Gi1/0/3"
    ecenet_data["hosts"][2]["name"] = "jp-2"
    assert "duplicate name jp-2" in _error(write_yaml, ecenet_data)


def test_unknown_port(write_yaml, ecenet_data):
    ecenet_data["hosts"][0]["port"] = "Gi1/0/30"
    assert "port Gi1/0/30 is not one of the switch's ports" in _error(write_yaml, ecenet_data)


def test_port_that_is_no_interface_name_names_the_field_and_line(write_yaml, ecenet_data):
    ecenet_data["hosts"][4]["port"] = "eth5"
    msg = _error(write_yaml, ecenet_data)
    assert re.search(r"topo\.yaml:\d+: hosts\[4\]\.port: not a Catalyst interface name: 'eth5'", msg), msg


def test_out_of_range_address_is_refused_on_the_embedded_testbed(write_yaml, ecenet_data):
    for h in ecenet_data["hosts"]:
        h["address"] = h["address"].replace("198.18.0.", "10.0.0.")
    path = write_yaml(ecenet_data)
    with pytest.raises(ConfigError) as e:
        load_topology(path)
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "10.0.0.1/24" in l)
    assert str(e.value).startswith(f"{path}:{line}: hosts[0].address: 10.0.0.1/24 is outside 198.18.0.0/15")


def test_out_of_range_address_is_allowed_for_a_real_cluster(write_yaml, ecenet_data):
    ecenet_data["environment"] = "cluster"
    ecenet_data["switch"]["management"]["host"] = "5.1.1.254"
    for i, h in enumerate(ecenet_data["hosts"], 1):
        h["address"] = f"5.1.1.{i}/24"
    ecenet_data.update(experiment_network="5.1.1.0/24", flood_rate_cap="250Mbit")
    t = load_topology(write_yaml(ecenet_data))
    assert t.hosts[0].ip == "5.1.1.1" and t.network.prefixlen == 24 and t.flood_rate_cap == 250_000_000


def test_missing_field_names_host_and_line(write_yaml, ecenet_data):
    del ecenet_data["hosts"][2]["address"]
    path = write_yaml(ecenet_data)
    with pytest.raises(ConfigError) as e:
        load_topology(path)
    # safe_dump writes one key per line: hosts[2] starts at the line of its "- name: jp-3"
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if "name: jp-3" in l)
    assert f"{path}:{line}: hosts[2].address: Field required" in str(e.value)


def test_typo_in_a_field_name_is_an_error(write_yaml, ecenet_data):
    ecenet_data["link"]["burst_msec"] = ecenet_data["link"].pop("burst_ms")
    assert "link.burst_msec: unknown field (typo?)" in _error(write_yaml, ecenet_data)


def test_bad_rate_and_span_port(write_yaml, ecenet_data):
    ecenet_data["link"]["rate"] = "fast"
    assert "link.rate: not a rate: 'fast'" in _error(write_yaml, ecenet_data)
    ecenet_data["link"]["rate"] = "50Mbit"
    ecenet_data["switch"]["span_destinations"] = ["Gi1/0/40"]
    assert "SPAN destination Gi1/0/40 is not one of the switch's ports" in _error(write_yaml, ecenet_data)
    ecenet_data["switch"]["span_destinations"] = ["Gi1/0/1"]
    assert "jp-1: port Gi1/0/1 is a SPAN destination port" in _error(write_yaml, ecenet_data)


def test_management_must_be_loopback_on_the_embedded_testbed(write_yaml, ecenet_data):
    ecenet_data["switch"]["management"]["host"] = "198.18.0.254"
    assert "switch.management.host: 198.18.0.254 must be a loopback address" in _error(write_yaml, ecenet_data)


def test_network_and_broadcast_addresses_are_refused(write_yaml, ecenet_data):
    ecenet_data["hosts"][0]["address"] = "198.18.0.255/24"
    assert "network or broadcast" in _error(write_yaml, ecenet_data)


def test_yaml_syntax_error_names_the_line(write_yaml, tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("name: x\nhosts:\n  - {name: a, address: [\n")
    with pytest.raises(ConfigError) as e:
        load_topology(p)
    assert str(e.value).startswith(f"{p}:") and "YAML syntax error" in str(e.value)


def test_unreadable_file():
    with pytest.raises(ConfigError, match="cannot read"):
        load_topology("/nonexistent/topo.yaml")


def test_port_names():
    assert canonical_port("GigabitEthernet1/0/3") == "Gi1/0/3"
    assert long_port("Gi2/0/14") == "GigabitEthernet2/0/14"
    assert linux_ifname("Gi1/0/21") == "Gi1-0-21"
    assert expand_ports("Gi1/0/3-5") == ["Gi1/0/3", "Gi1/0/4", "Gi1/0/5"]
    with pytest.raises(ValueError):
        expand_ports("Gi1/0/5-3")
    with pytest.raises(ValueError):
        canonical_port("eth0")


@pytest.mark.parametrize("text,bits", [("50Mbit", 50_000_000), ("50 Mbit/s", 50_000_000), ("1G", 10**9),
                                       ("100mbps", 10**8), (2_000_000, 2_000_000), ("1.5Mbit", 1_500_000)])
def test_parse_rate(text, bits):
    assert parse_rate(text) == bits


@pytest.mark.parametrize("bad", ["", "fast", "-5Mbit", 0, True, "5 Tbit"])
def test_parse_rate_rejects(bad):
    with pytest.raises(ValueError):
        parse_rate(bad)


def test_parse_size():
    assert parse_size("128KiB") == 131072
    assert parse_size(1500) == 1500
    assert parse_size("2MiB") == 2 * 1024 * 1024
    with pytest.raises(ValueError):
        parse_size("lots")
