"""Congestion patterns (trafficgen.patterns): expansion against the topology, rates in bits/s,
packets/s and link multiples, ITGSend options for on-off bursts, and the safety interlock on
every expanded flow. Pure: no packets are sent here."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import ECENET, REPO
from qoslab.errors import ConfigError, UnsafeTarget
from qoslab.topology import Host, Topology, load_topology
from qoslab.trafficgen import load_flood, resolve
from qoslab.trafficgen.ditg import DitgGenerator
from qoslab.trafficgen.patterns import expand, located_flows, traffic_options


def topo() -> Topology:
    return load_topology(ECENET)


def flood(write_yaml, pattern, **extra) -> Path:
    return write_yaml({"name": "p", "rate": "0.3x", **extra, "pattern": pattern}, "flood.yaml")


def test_pairs_reproduce_the_thesis_flood(write_yaml):
    p = flood(write_yaml, {"kind": "pairs", "src": ["jp-5", "jp-6", "jp-7", "jp-8"],
                           "dst": ["jp-1", "jp-2", "jp-3", "jp-4"]}, rate="1.5x")
    thesis = resolve(load_flood(REPO / "traffic-gen" / "thesis-flood.yaml"), topo())
    assert resolve(load_flood(p), topo()) == thesis


def test_incast_all_to_all_and_explicit_flows_expand_in_order(write_yaml):
    p = write_yaml({"name": "p", "flows": [{"src": "jp-8", "dst": "jp-4"}],
                    "pattern": [{"kind": "incast", "src": ["jp-5", "jp-6", "jp-7"], "dst": "jp-1"},
                                {"kind": "all-to-all", "hosts": ["jp-2", "jp-3", "jp-4"], "rate": 100}]}, "f.yaml")
    flows = resolve(load_flood(p), topo())
    assert [(f.src, f.dst) for f in flows] == [
        ("jp-8", "jp-4"), ("jp-5", "jp-1"), ("jp-6", "jp-1"), ("jp-7", "jp-1"),
        ("jp-2", "jp-3"), ("jp-2", "jp-4"), ("jp-3", "jp-2"), ("jp-3", "jp-4"), ("jp-4", "jp-2"), ("jp-4", "jp-3")]
    assert [f.port for f in flows] == list(range(10001, 10011))
    assert flows[-1].pps == 100
    e = expand(load_flood(p), topo())
    assert e.pattern is None and len(e.flows) == 10 and resolve(e, topo()) == flows


@pytest.mark.parametrize("rate,pps", [
    ("0.3x", 0.3 * 10e6 / (1442 * 8)), ("3 Mbit/s", 3e6 / (1442 * 8)), ("500kbit/s", 5e5 / (1442 * 8)),
    ("1000000 bit/s", 1e6 / (1442 * 8)), ("250 pps", 250.0), (250, 250.0)])
def test_rates_in_bits_packets_or_link_multiples(write_yaml, rate, pps):
    assert topo().link.rate == 10e6
    p = flood(write_yaml, {"kind": "incast", "src": ["jp-5"], "dst": "jp-1", "rate": rate})
    assert resolve(load_flood(p), topo())[0].pps == pytest.approx(pps)


def test_on_off_mean_rate_and_itgsend_options(write_yaml):
    p = flood(write_yaml, {"kind": "on-off", "src": ["jp-5"], "dst": ["jp-1"], "rate": 400, "on_ms": 200,
                           "off_ms": 300, "idt": "pareto", "size": "exponential", "shape": 1.5})
    (f,) = resolve(load_flood(p), topo())
    assert f.pps == 400 and f.mean_pps == pytest.approx(160)
    assert traffic_options(f, 400) == ["-V", "1.5", "0.833333", "-e", "1400", "-B", "C", "200", "C", "300"]
    f2 = f.__class__(**{**f.__dict__, "idt": "exponential", "size": "pareto", "periods": "exponential"})
    assert traffic_options(f2, 400) == ["-E", "400", "-v", "1.5", "466.667", "-B", "E", "200", "E", "300"]
    plain = resolve(load_flood(REPO / "traffic-gen" / "thesis-flood.yaml"), topo())[0]
    assert traffic_options(plain, 954) == ["-C", "954", "-c", "1400"]


@pytest.mark.parametrize("pattern,expect", [
    ({"kind": "incast", "src": ["jp-5"], "dst": ["jp-1", "jp-2"]}, "pattern.dst: incast: one receiver"),
    ({"kind": "pairs", "src": ["jp-5", "jp-6"], "dst": ["jp-1"]}, "pattern.dst: pairs: src and dst lists"),
    ({"kind": "all-to-all", "hosts": ["jp-1"]}, "pattern.hosts: all-to-all: a group of at least two"),
    ({"kind": "on-off", "src": ["jp-5"], "dst": ["jp-1"]}, "pattern.on_ms: on-off: on_ms and off_ms"),
    ({"kind": "incast", "src": ["jp-5"], "dst": "jp-1", "rate": "lots"}, "pattern.rate: rate must be"),
    ({"kind": "storm", "src": ["jp-5"], "dst": "jp-1"}, "pattern.kind: Input should be 'pairs'"),
])
def test_bad_patterns_name_file_line_and_field(write_yaml, pattern, expect):
    p = flood(write_yaml, pattern)
    with pytest.raises(ConfigError) as e:
        load_flood(p)
    assert str(e.value).startswith(f"{p}:") and expect in str(e.value), str(e.value)


def test_an_expanded_flow_outside_the_topology_is_refused_with_file_and_line(write_yaml):
    p = flood(write_yaml, [{"kind": "incast", "src": ["jp-5", "jp-6"], "dst": "jp-1"},
                           {"kind": "all-to-all", "hosts": ["jp-2", "jp-3", "mail.example.com"]}])
    with pytest.raises(ConfigError) as e:
        resolve(load_flood(p), topo())
    msg = str(e.value)
    line = 1 + p.read_text().splitlines().index("  - mail.example.com")
    assert msg.startswith(f"{p}:{line}: pattern[1].hosts[2]: no host 'mail.example.com' in topology ecenet"), msg
    assert "refusing flow" in msg


def test_the_interlock_refuses_an_expanded_destination_before_anything_starts(write_yaml):
    """A topology whose host jp-1 sits outside 198.18.0.0/15 (as a hand-edited one could): the
    incast's expanded flows to jp-1 are refused, naming file, line and field, before any process."""
    good = topo()
    hosts = [Host(name=h.name, address="8.8.8.8/24", port=h.port) if h.name == "jp-1" else h for h in good.hosts]
    bad = Topology.model_construct(**{**dict(good), "hosts": hosts})
    p = flood(write_yaml, {"kind": "incast", "src": ["jp-5", "jp-6"], "dst": "jp-1"})
    calls: list[str] = []
    with pytest.raises(UnsafeTarget) as e:
        DitgGenerator(load_flood(p), bad, lambda h: calls.append(h), Path("/nonexistent"))  # type: ignore[arg-type,return-value]
    assert str(e.value).startswith(f"{p}:") and "pattern[0].dst: refusing flood target 8.8.8.8" in str(e.value)
    assert calls == []


def test_too_many_expanded_flows_and_tcp_bulk_needs_iperf3(write_yaml):
    hosts = [f"jp-{i}" for i in range(1, 9)]
    assert len(located_flows(load_flood(flood(write_yaml, {"kind": "all-to-all", "hosts": hosts})))) == 56
    p = flood(write_yaml, {"kind": "tcp-bulk", "src": ["jp-5"], "dst": ["jp-1"]})
    (f,) = resolve(load_flood(p), topo())
    assert f.bulk and f.protocol == "TCP" and f.pps == pytest.approx(10e6 / (1454 * 8))
    with pytest.raises(Exception, match="tcp-bulk flows .* need the iperf3 generator"):
        DitgGenerator(load_flood(p), topo(), lambda h: None, Path("/nonexistent"))  # type: ignore[arg-type,return-value]


def test_a_flood_needs_flows_or_a_pattern(write_yaml):
    with pytest.raises(ConfigError, match="a flood needs at least one flow or a pattern"):
        load_flood(write_yaml({"name": "x"}, "f.yaml"))


def test_settle_waits_for_what_the_flood_delivers_not_for_a_full_link():
    from qoslab.campaign.trialplan import settle_share

    t = topo()
    thesis = resolve(load_flood(REPO / "traffic-gen" / "thesis-flood.yaml"), t)
    assert settle_share(t, thesis) == pytest.approx(0.95)  # 1.5x: the port is full
    incast = resolve(load_flood(REPO / "traffic-gen" / "incast.yaml"), t)
    assert settle_share(t, incast) == pytest.approx(0.95 * 0.9)  # 3 x 0.3x into jp-1
    onoff = resolve(load_flood(REPO / "traffic-gen" / "on-off.yaml"), t)
    assert settle_share(t, onoff) == pytest.approx(0.95 * 0.4)  # 1x for 200 of every 500 ms
