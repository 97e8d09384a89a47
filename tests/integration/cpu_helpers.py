"""The two-core CPU block the CPU-placement tests share (test_cpu_budgets, test_cpu_receive_on):
the workload hosts on CPU 0 with 0.25 cores each, the switch on CPU 1, and a copy of ecenet with
it at 20 Mbit/s."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from conftest import ECENET

from .conftest import free_port, unique_name

#: Skip a module on a machine with one CPU or without the cgroup v1 ``cpu`` hierarchy.
NEEDS_CPU_BUDGETS = pytest.mark.skipif(
    (os.cpu_count() or 1) < 2 or not Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").exists(),
    reason="CPU budgets need two CPUs and the cgroup v1 cpu hierarchy")

HOSTS_CPU, SWITCH_CPU = 0, 1
BLOCK = {"hosts_cpus": str(HOSTS_CPU), "switch_cpus": str(SWITCH_CPU), "host_cores": 0.25, "period_ms": 10}


def cpu_topology(tmp: Path, suffix: str, **cpu: object) -> Path:
    """A copy of ecenet in ``tmp`` under a unique name, with :data:`BLOCK` (``cpu`` overriding
    its fields), a free management port and a 20 Mbit/s link; returns its path."""
    data = yaml.safe_load(ECENET.read_text())
    data.update(name=unique_name(suffix), cpu={**BLOCK, **cpu})
    data["switch"]["management"]["port"] = free_port()
    data["link"]["rate"] = "20Mbit"
    p = tmp / f"{data['name']}.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p
