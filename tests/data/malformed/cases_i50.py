"""The corpus cases of issue 50 (make_corpus.py appends them to its lists, so earlier files keep their
numbers): YAML 1.1's implicit forms that change meaning silently (a sexagesimal ``2:11:12``, digit
separators ``131_072``, hexadecimal ``0x28``, a leading-zero octal ``050``, ``off``/``yes`` for
booleans: a string in YAML 1.2), and each field taking only its own type (a quoted ``"40"`` or a
``40.0`` for an integer, a quoted port ``"9274"``, an Arabic-Indic digit ``"٠"`` as a cpuset). Same
tuple as make_corpus.py: (case name, old text, new text, marker on the defect's line, field)."""

from __future__ import annotations

_CPU = "cpu:\n  hosts_cpus: \"0\"\n  switch_cpus: \"1\"\n  host_cores: 0.25\n  period_ms: 10\n"


def _cpu(old: str, new: str) -> str:
    assert old in _CPU, old
    return _CPU.replace(old, new, 1)


TOPOLOGY_CASES = [
    ("buffer-sexagesimal", "switch_port_bytes: 131072", "switch_port_bytes: 2:11:12", "2:11:12",
     "buffers.switch_port_bytes"),
    ("buffer-digit-separators", "host_bytes: 131072", "host_bytes: 131_072", "131_072", "buffers.host_bytes"),
    ("buffer-hexadecimal", "host_bytes: 131072", "host_bytes: 0x20000", "0x20000", "buffers.host_bytes"),
    ("offloads-off", "  burst_ms: 2.5\n", "  burst_ms: 2.5\n  offloads: off\n", "offloads", "link.offloads"),
    ("br-netfilter-yes", "", _cpu("period_ms: 10", "period_ms: 10\n  br_netfilter: yes"), "br_netfilter",
     "cpu.br_netfilter"),
    ("cpu-hexadecimal", "", _cpu('hosts_cpus: "0"', "hosts_cpus: 0x0"), "hosts_cpus", "cpu.hosts_cpus"),
    ("cpu-arabic-indic-digit", "", _cpu('hosts_cpus: "0"', 'hosts_cpus: "\u0660"'), "hosts_cpus",
     "cpu.hosts_cpus"),
    ("management-port-quoted", "port: 8022}", 'port: "9274"}', '"9274"', "switch.management.port"),
    ("management-port-float", "port: 8022}", "port: 9274.0}", "9274.0", "switch.management.port"),
    ("burst-sexagesimal-float", "burst_ms: 2.5", "burst_ms: 1:30.5", "1:30.5", "link.burst_ms"),
]

FLOOD_CASES = [
    ("payload-hexadecimal", "payload_bytes: 1400", "payload_bytes: 0x578", "0x578", "payload_bytes"),
    ("payload-quoted", "payload_bytes: 1400", 'payload_bytes: "1400"', '"1400"', "payload_bytes"),
    ("ds-byte-octal", "ds_byte: 0", "ds_byte: 0240", "0240", "ds_byte"),
]

PROFILE_CASES = [
    ("set-dscp-quoted", "set_dscp: 40,", 'set_dscp: "40",', '"40"', "rules[0].set_dscp"),
    ("set-dscp-float", "set_dscp: 40,", "set_dscp: 40.0,", "40.0", "rules[0].set_dscp"),
    ("set-dscp-hexadecimal", "set_dscp: 40,", "set_dscp: 0x28,", "0x28", "rules[0].set_dscp"),
    ("set-dscp-octal", "set_dscp: 40,", "set_dscp: 050,", "050", "rules[0].set_dscp"),
    ("acl-base-digit-separators", "acl_base: 100}", "acl_base: 1_00}", "1_00", "rules[0].acl_base"),
    ("mls-qos-on", "mls_qos: true", "mls_qos: on", "mls_qos", "mls_qos"),
]

PLAYBOOK_CASES = [
    ("trials-sexagesimal", "trials: 3", "trials: 1:30", "1:30", "trials"),
    ("congestion-off", "congestion: false, profile: fifo", "congestion: off, profile: fifo", "congestion: off",
     "conditions[0].congestion"),
    ("seed-quoted", "trials: 3", 'trials: 3\nseed: "42"', '"42"', "seed"),
]

#: issue 50's device files (tests/data/malformed/device/, checked by ``campaign plan`` as the push
#: would read them: test_malformed_devices.py); paths relative to the repository (the tests' cwd).
DEVICE_DIR = "tests/data/malformed/device"
DEVICE = f"""device: catalyst
host: 198.18.0.254
port: 22
platform: catalyst3750
known_hosts: {DEVICE_DIR}/files/known_hosts
timeout_s: 20
"""

DEVICE_CASES = [
    ("host-shell-metacharacters", "host: 198.18.0.254", 'host: "127.0.0.1; touch /tmp/qoslab-pwned"', "host:", "host"),
    ("host-empty", "host: 198.18.0.254", 'host: ""', "host:", "host"),
    ("host-command-substitution", "host: 198.18.0.254", "host: $(reboot)", "host:", "host"),
    ("platform-empty", "platform: catalyst3750", 'platform: ""', "platform:", "platform"),
    ("credentials-mode-0644", "timeout_s: 20", f"timeout_s: 20\ncredentials_file: {DEVICE_DIR}/files/credentials-0644.json",
     "credentials_file", "credentials_file"),
    ("credentials-a-folder", "timeout_s: 20", f"timeout_s: 20\ncredentials_file: {DEVICE_DIR}/files",
     "credentials_file", "credentials_file"),
    ("credentials-missing", "timeout_s: 20", "timeout_s: 20\ncredentials_file: /nonexistent/credentials.json",
     "credentials_file", "credentials_file"),
    ("known-hosts-dev-zero", f"known_hosts: {DEVICE_DIR}/files/known_hosts", "known_hosts: /dev/zero",
     "known_hosts", "known_hosts"),
    ("known-hosts-a-folder", f"known_hosts: {DEVICE_DIR}/files/known_hosts", f"known_hosts: {DEVICE_DIR}",
     "known_hosts", "known_hosts"),
    ("known-hosts-missing", f"known_hosts: {DEVICE_DIR}/files/known_hosts", "known_hosts: /nonexistent/known_hosts",
     "known_hosts", "known_hosts"),
    ("port-quoted", "port: 22", 'port: "22"', "port:", "port"),
    ("port-hexadecimal", "port: 22", "port: 0x16", "port:", "port"),
    ("timeout-sexagesimal", "timeout_s: 20", "timeout_s: 1:00", "timeout_s", "timeout_s"),
]

#: topology cases of the management block's eAPI port (appended to TOPOLOGY_CASES by make_corpus.py)
TOPOLOGY_CASES += [
    ("eapi-port-on-a-3750", "port: 8022}", "port: 8022, eapi_port: 8443}", "eapi_port", "switch.management.eapi_port"),
    ("eapi-port-is-the-ssh-port", "port: 8022}", "port: 8022, eapi_port: 8022}", "eapi_port",
     "switch.management.eapi_port"),
]

_WL = "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}"

#: round 5's leftovers: a NUL byte in an mpi program or a command head, an empty program, mpi on ssh
PLAYBOOK_CASES += [
    ("mpi-program-nul", _WL, 'workload: {kind: mpi, hosts: [jp-1, jp-2], program: "osu\\0-bw"}', "kind: mpi",
     "workload.program"),
    ("mpi-args-nul", _WL, 'workload: {kind: mpi, hosts: [jp-1, jp-2], args: "--iters\\x001"}', "kind: mpi",
     "workload.args"),
    ("command-head-nul", _WL, 'workload: {kind: command, hosts: [jp-1, jp-2], head: "echo\\0 x"}', "kind: command",
     "workload.head"),
    ("command-head-empty-quotes", _WL, "workload: {kind: command, hosts: [jp-1, jp-2], head: \"'' x\"}",
     "kind: command", "workload.head"),
    ("command-worker-empty-quotes", _WL,
     "workload: {kind: command, hosts: [jp-1, jp-2], head: \"echo hi\", worker: '\"\"'}", "kind: command",
     "workload.worker"),
    ("mpi-on-the-ssh-executor", _WL, "workload: {kind: mpi, hosts: [jp-1, jp-2]}\nexecutor: ssh", "executor: ssh",
     "executor"),
]

PLAYBOOK_CASES += [
    ("workload-port-quoted", _WL, 'workload: {kind: matmul, hosts: [jp-1, jp-2], port: "9274"}', "kind: matmul",
     "workload.port"),
]
