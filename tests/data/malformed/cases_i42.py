"""The corpus cases of issue 42 (make_corpus.py appends them to its lists, so earlier files keep their
numbers): a topology's ``cpu:`` block (the testbed's CPU as part of the scale model) with cpusets this
machine cannot give, overlapping or garbled, capacities beyond the cores or below the kernel's least
quota, booleans for numbers and numbers for booleans, a host ``cpu:`` without the block; and REAL.yaml's
receive costs (``rx_cost_us``). Same tuple as make_corpus.py: (case name, old text, new text, marker on
the defect's line, field)."""

from __future__ import annotations

_CPU = "cpu:\n  hosts_cpus: \"0\"\n  switch_cpus: \"1\"\n  host_cores: 0.25\n  period_ms: 10\n"


def _cpu(old: str, new: str) -> str:
    assert old in _CPU, old
    return _CPU.replace(old, new, 1)


TOPOLOGY_CASES = [
    ("cpu-switch-on-the-hosts-core", "", _cpu('switch_cpus: "1"', 'switch_cpus: "0"'), "switch_cpus", "cpu.switch_cpus"),
    ("cpu-not-on-this-machine", "", _cpu('hosts_cpus: "0"', 'hosts_cpus: "4000"'), "hosts_cpus", "cpu.hosts_cpus"),
    ("cpu-list-garbled", "", _cpu('hosts_cpus: "0"', 'hosts_cpus: "0-"'), "hosts_cpus", "cpu.hosts_cpus"),
    ("cpu-list-backwards", "", _cpu('switch_cpus: "1"', 'switch_cpus: "3-1"'), "switch_cpus", "cpu.switch_cpus"),
    ("cpu-cores-true", "", _cpu("host_cores: 0.25", "host_cores: true"), "host_cores", "cpu.host_cores"),
    ("cpu-cores-beyond-the-cpuset", "", _cpu("host_cores: 0.25", "host_cores: 2"), "host_cores", "cpu.host_cores"),
    ("cpu-quota-below-the-kernels-least", "", _cpu("host_cores: 0.25", "host_cores: 0.05"), "host_cores",
     "cpu.host_cores"),
    ("cpu-period-zero", "", _cpu("period_ms: 10", "period_ms: 0"), "period_ms", "cpu.period_ms"),
    ("cpu-steer-one", "", _cpu("period_ms: 10", "period_ms: 10\n  steer: 1"), "steer", "cpu.steer"),
    ("host-cpu-without-the-block", "  - {name: jp-1, address: 198.18.0.1/24, port: Gi1/0/1}",
     "  - {name: jp-1, address: 198.18.0.1/24, port: Gi1/0/1, cpu: 0.25}", "cpu: 0.25", "hosts[0].cpu"),
]

REAL_CASES = [
    ("rx-cost-true", "cores_per_node: 2", "cores_per_node: 2\nrx_cost_us: true", "rx_cost_us", "rx_cost_us"),
    ("rx-cost-negative", "cores_per_node: 2", "cores_per_node: 2\nrx_cost_us: -5.77", "rx_cost_us", "rx_cost_us"),
    ("testbed-rx-cost-zero", "  uncongested_s: 2.85", "  uncongested_s: 2.85\n  rx_cost_us: 0", "rx_cost_us",
     "testbed.rx_cost_us"),
]
