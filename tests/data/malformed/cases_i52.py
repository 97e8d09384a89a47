"""The corpus cases of issue 52 (make_corpus.py appends them after issue 51's, so earlier files keep their
numbers): a topology's ``cpu.receive_on`` (where the host interfaces' receive path runs) naming no
placement, given as a boolean, and asking for the hosts' cores while ``steer: false`` turns RPS off. Same
tuple as make_corpus.py: (case name, old text, new text, marker on the defect's line, field)."""

from __future__ import annotations

_CPU = "cpu:\n  hosts_cpus: \"0\"\n  switch_cpus: \"1\"\n  host_cores: 0.25\n  period_ms: 10\n"

TOPOLOGY_CASES = [
    ("cpu-receive-on-host-singular", "", _CPU + "  receive_on: host\n", "receive_on", "cpu.receive_on"),
    ("cpu-receive-on-true", "", _CPU + "  receive_on: true\n", "receive_on", "cpu.receive_on"),
    ("cpu-receive-on-hosts-without-steer", "", _CPU + "  steer: false\n  receive_on: hosts\n", "receive_on",
     "cpu.receive_on"),
]
