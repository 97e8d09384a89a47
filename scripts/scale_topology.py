#!/usr/bin/env python3
"""Write a scale-test topology of N hosts (issue 25): n1..nN on 198.18.0.1..N/24, 48 ports per
stack member (Gi1/0/1-48, Gi2/0/1-48, ...), two SPAN destinations on the next member, the
ecenet link and buffers. Usage: scripts/scale_topology.py N [NAME] [MGMT_PORT] > topology.yaml"""

from __future__ import annotations

import sys

import yaml


def scale_topology(n: int, name: str, mgmt_port: int = 8022) -> dict:
    """The topology as YAML data (1 <= n <= 250: one /24, at most 5 stack members of 48 ports)."""
    if not 1 <= n <= 250:
        raise ValueError("1 to 250 hosts")
    members = (n + 47) // 48
    port = [f"Gi{i // 48 + 1}/0/{i % 48 + 1}" for i in range(n)]
    span = f"Gi{members + 1}/0"
    return {"name": name, "description": f"scale test: {n} hosts on a stack of {members + 1} 3750s",
            "environment": "embedded",
            "link": {"rate": "10Mbit", "burst_ms": 2.5, "offloads": False},
            "buffers": {"switch_port_bytes": 131072, "host_bytes": 131072},
            "switch": {"model": "WS-C3750G-48TS", "hostname": "Switch",
                       "management": {"host": "127.0.0.1", "port": mgmt_port},
                       "ports": [f"Gi{m}/0/1-48" for m in range(1, members + 1)] + [f"{span}/1-2"],
                       "span_destinations": [f"{span}/1", f"{span}/2"]},
            "hosts": [{"name": f"n{i + 1}", "address": f"198.18.0.{i + 1}/24", "port": port[i]} for i in range(n)]}


if __name__ == "__main__":
    n = int(sys.argv[1])
    name = sys.argv[2] if len(sys.argv) > 2 else f"scale{n}"
    mgmt = int(sys.argv[3]) if len(sys.argv) > 3 else 8022
    sys.stdout.write(f"# generated: scripts/scale_topology.py {n} {name} {mgmt}\n")
    sys.stdout.write(yaml.safe_dump(scale_topology(n, name, mgmt), sort_keys=False, width=120))
