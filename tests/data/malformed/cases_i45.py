"""The corpus cases of issue 45 (make_corpus.py appends them to its lists, so earlier files keep
their numbers): renders that would mean something else (names a platform reserves, a DSCP in two
queues, a SPAN destination on a host's port, a switch model no platform claims), YAML booleans
where numbers belong and numbers or strings where booleans belong, numbers beyond the physical world (a 12.5 GB queue, a seed beyond Java's
long, a sort beyond its heap, a format spec in an mpi template), and REAL.yaml files for
``qoslab testbed scale --from`` (a real cluster's description: playbooks/scale/thesis-cluster.yaml).
Same tuple as make_corpus.py: (case name, old text, new text, marker on the defect's line, field)."""

from __future__ import annotations

SYNTAX = "YAML syntax error"

REAL = """name: corpus-real
link_rate: 1Gbit
switch_port_buffer: 128KiB
rtt_us: 150
rto_min_ms: 200
delack_ms: 40
cores_per_node: 2
uncongested_s: 38.10
flood_load: 1.0
testbed:
  link_rate: 10Mbit
  uncongested_s: 2.85
"""

REAL_CASES = [
    ("link-1-bit", "link_rate: 1Gbit", "link_rate: 1", "link_rate: 1", "link_rate"),
    ("link-inf", "link_rate: 1Gbit", "link_rate: .inf", ".inf", "link_rate"),
    ("link-nan", "link_rate: 1Gbit", "link_rate: .nan", ".nan", "link_rate"),
    ("link-true", "link_rate: 1Gbit", "link_rate: true", "link_rate: true", "link_rate"),
    ("link-word", "link_rate: 1Gbit", "link_rate: fast", "fast", "link_rate"),
    ("link-1000-gbit", "link_rate: 1Gbit", "link_rate: 1000Gbit", "1000Gbit", "link_rate"),
    ("link-400-digits", "link_rate: 1Gbit", "link_rate: \"" + "9" * 400 + "\"", "999", "link_rate"),
    ("buffer-terabyte-queue", "switch_port_buffer: 128KiB", "switch_port_buffer: 1000000000000", "switch_port",
     "switch_port_buffer"),
    ("buffer-beyond-any-switch", "switch_port_buffer: 128KiB", "switch_port_buffer: 4000000000000", "switch_port",
     "switch_port_buffer"),
    ("buffer-yes", "switch_port_buffer: 128KiB", "switch_port_buffer: yes", "switch_port", "switch_port_buffer"),
    ("rtt-zero", "rtt_us: 150", "rtt_us: 0", "rtt_us", "rtt_us"),
    ("rtt-true", "rtt_us: 150", "rtt_us: true", "rtt_us", "rtt_us"),
    ("rto-zero", "rto_min_ms: 200", "rto_min_ms: 0", "rto_min_ms", "rto_min_ms"),
    ("rto-on", "rto_min_ms: 200", "rto_min_ms: on", "rto_min_ms", "rto_min_ms"),
    ("delack-negative", "delack_ms: 40", "delack_ms: -1", "delack_ms", "delack_ms"),
    ("cores-zero", "cores_per_node: 2", "cores_per_node: 0", "cores_per_node", "cores_per_node"),
    ("run-shorter-than-the-testbeds", "uncongested_s: 38.10", "uncongested_s: 0.001", "uncongested_s: 0.001",
     "uncongested_s"),
    ("run-zero", "uncongested_s: 38.10", "uncongested_s: 0", "uncongested_s: 0", "uncongested_s"),
    ("flood-zero", "flood_load: 1.0", "flood_load: 0", "flood_load", "flood_load"),
    ("flood-hundredfold", "flood_load: 1.0", "flood_load: 100", "flood_load", "flood_load"),
    ("testbed-link-1-bit", "  link_rate: 10Mbit", "  link_rate: 1", "  link_rate: 1", "testbed.link_rate"),
    ("testbed-link-too-slow-for-two-frames", "  link_rate: 10Mbit", "  link_rate: 8000", "  link_rate: 8000",
     "testbed.link_rate"),
    ("testbed-run-zero", "  uncongested_s: 2.85", "  uncongested_s: 0", "  uncongested_s: 0", "testbed.uncongested_s"),
    ("typo", "rtt_us: 150", "rtt_usec: 150", "rtt_usec", "rtt_usec"),
    ("alias-bomb", "", "x: &a [1, 2]\ny: *a\n", "*a", SYNTAX),
]

TOPOLOGY_CASES = [
    ("model-no-platform-claims", "model: WS-C3750G-24T", "model: Nexus9000", "Nexus9000", "switch.model"),
    ("rate-inf", "rate: 50Mbit", "rate: .inf", ".inf", "link.rate"),
    ("burst-yes", "burst_ms: 2.5", "burst_ms: yes", "burst_ms", "link.burst_ms"),
    ("management-port-true", "port: 8022}", "port: true}", "port: true", "switch.management.port"),
    ("scale-rto-true", "", "scale:\n  rto_min_ms: true\n", "rto_min_ms", "scale.rto_min_ms"),
    ("scale-queue-12-gb", "link:\n  rate: 50Mbit\n  burst_ms: 2.5\nbuffers:\n  switch_port_bytes: 131072\n",
     "link:\n  rate: 100Gbit\n  burst_ms: 2.5\nscale: {switch_queue_ms: 1000}\nbuffers:\n", "switch_queue_ms",
     "scale.switch_queue_ms"),
    ("scale-queue-on", "", "scale: {host_queue_ms: on}\n", "host_queue_ms", "scale.host_queue_ms"),
]

PROFILE_CASES = [
    ("rule-class-default", "{name: pairs,", "{name: class-default,", "class-default", "rules[0].name"),
    ("rule-named-like-a-queue-class", "{name: pairs,", "{name: QOSLAB-Q1,", "QOSLAB-Q1", "rules[0].name"),
    ("policy-map-named-like-the-queuing-policy", "policy_map: police-jp", "policy_map: QOSLAB-QUEUING",
     "QOSLAB-QUEUING", "policy_map"),
    ("policy-map-copp", "policy_map: police-jp", "policy_map: system-cpp-policy", "system-cpp", "policy_map"),
    ("span-destination-on-a-hosts-port", "destination: Gi1/0/22,", "destination: Gi1/0/4,", "Gi1/0/4,",
     "span[1].destination"),
    ("port-range-true", "policy_on: workload",
     "  - {name: mpi, kind: ports, protocol: tcp, port_ranges: [[true, 5]], set_dscp: 40}\npolicy_on: workload",
     "port_ranges", "rules[1].port_ranges[0][0]"),
    ("set-dscp-true", "set_dscp: 40", "set_dscp: true", "set_dscp", "rules[0].set_dscp"),
    ("dscp-in-two-queues", "span:", "dscp_output_map: {1: [40], 2: [40]}\nspan:", "dscp_output_map",
     "dscp_output_map[2]"),
    ("group-host-twice", "workload: {first: 4}", "workload: {hosts: [jp-1, jp-2, jp-1]}", "jp-2, jp-1",
     "groups.workload.hosts"),
    ("rule-port-twice", "policy_on: workload",
     "  - {name: rmi, kind: ports, protocol: tcp, ports: [1099, 1099], set_dscp: 40}\npolicy_on: workload",
     "1099, 1099", "rules[1].ports"),
    ("queue-set-key-true", "queue_sets:\n  2:", "queue_sets:\n  true:", "  true:", "queue_sets[True]"),
    ("ingress-bandwidth-on", "bandwidth: [1, 99]", "bandwidth: [on, 99]", "[on, 99]", "ingress.bandwidth[0]"),
    ("mls-qos-one", "mls_qos: true", "mls_qos: 1", "mls_qos: 1", "mls_qos"),
    ("priority-queue-out-quoted", "priority_queue_out: true", "priority_queue_out: \"true\"", "priority_queue_out",
     "egress.priority_queue_out"),
]

#: Device files the playbook cases name (written beside the corpus by make_corpus.py): a platform no
#: driver claims, and the other Cisco platform than the topology's (ecenet: a 3750).
DEVICES = {
    "device-juniper.yaml": "# a device file of a platform no driver claims (playbook/059-device-platform-juniper.yaml)\n"
                           "device: catalyst\nhost: 198.18.0.254\nknown_hosts: /nonexistent/known_hosts\n"
                           "platform: juniper\n",
    "device-9300.yaml": "# a Catalyst 9300's device file for a 3750 topology (playbook/060-device-platform-other-cisco.yaml)\n"
                        "device: catalyst\nhost: 198.18.0.254\nknown_hosts: /nonexistent/known_hosts\n"
                        "platform: catalyst9300\n",
}

_WL = "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}"
PLAYBOOK_CASES = [
    ("mpi-args-format-spec", _WL, "workload: {kind: mpi, hosts: [jp-1, jp-2], args: \"--n {ranks:>999999999}\"}",
     "999999999", "workload.args"),
    ("mpi-program-unknown-variable", _WL, "workload: {kind: mpi, hosts: [jp-1, jp-2], program: \"{head}/osu\"}",
     "{head}", "workload.program"),
    ("seed-beyond-java-long", _WL, "workload: {kind: matmul, hosts: [jp-1, jp-2], seed: 9223372036854775808}",
     "9223372036854775808", "workload.seed"),
    ("sort-size-beyond-its-heap", _WL, "workload: {kind: sort, hosts: [jp-1, jp-2, jp-3], size: 50000000}",
     "50000000", "workload.size"),
    ("timeout-true", _WL, "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1, timeout_s: true}",
     "timeout_s", "workload.timeout_s"),
    ("trials-true", "trials: 3", "trials: true", "trials: true", "trials"),
    ("matmul-size-beyond-its-heap", _WL, "workload: {kind: matmul, hosts: [jp-1, jp-2, jp-3, jp-4], size: 4000}",
     "4000", "workload.size"),
    ("factor-profile-relative-path", "conditions:\n  - {name: no congestion fifo, congestion: false, profile: fifo}\n"
     "  - {name: congestion thesis, congestion: true, profile: thesis}\n",
     "factors:\n  flood: [none, campaign-flood]\n  profile: [fifo, my-profiles/ef.yaml]\nbaseline: {flood: none, "
     "profile: fifo}\n", "  profile: [fifo, my", "factors.profile"),
    ("device-platform-juniper", "device: virtual", "device: tests/data/malformed/device-juniper.yaml", "juniper",
     "device"),
    ("device-platform-other-cisco", "device: virtual", "device: tests/data/malformed/device-9300.yaml", "device-9300",
     "device"),
    # numbers and strings where a boolean belongs (pydantic's lax mode took 1 as true, "no" as false)
    ("congestion-one", "{name: no congestion fifo, congestion: false,", "{name: no congestion fifo, congestion: 0,",
     "congestion: 0", "conditions[0].congestion"),
    ("congestion-quoted-yes", "{name: congestion thesis, congestion: true,", "{name: congestion thesis, congestion: \"yes\",",
     "congestion: \"yes\"", "conditions[1].congestion"),
]
