"""Writes the malformed-file corpus (tests/data/malformed/<kind>/NNN-<case>.yaml) from the cases
below (and cases_i45.py's: issue 45, cases_i42.py's, cases_i51.py's: the slurm: block, and the ``real`` kind, REAL.yaml files for ``testbed scale --from``): each is a valid base file with one defect. Line 1 of every file is ``# expect: LINE FIELD``:
the line of the defect (counted in the file as written) and the field the error must name
(``YAML syntax error``, ``(encoding)``, ``(top level)`` for faults below the field level).
Run it again after changing a case: ``python tests/data/malformed/make_corpus.py``."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
M = "tests/data/malformed"  # corpus paths as playbooks name them (relative to the repository)

TOPOLOGY = """name: ecenet
environment: embedded
link:
  rate: 50Mbit
  burst_ms: 2.5
buffers:
  switch_port_bytes: 131072
  host_bytes: 131072
switch:
  model: WS-C3750G-24T
  hostname: Switch
  management: {host: 127.0.0.1, port: 8022}
  ports: [Gi1/0/1-24]
  span_destinations: [Gi1/0/21, Gi1/0/22]
hosts:
  - {name: jp-1, address: 198.18.0.1/24, port: Gi1/0/1}
  - {name: jp-2, address: 198.18.0.2/24, port: Gi1/0/2}
  - {name: jp-3, address: 198.18.0.3/24, port: Gi1/0/3}
  - {name: jp-4, address: 198.18.0.4/24, port: Gi1/0/4}
"""

FLOOD = """name: corpus-flood
protocol: UDP
payload_bytes: 1400
rate: 1.1x
duration_s: null
ds_byte: 0
pacing: auto
flows:
  - {src: jp-5, dst: jp-1}
  - {src: jp-6, dst: jp-2}
  - {src: jp-7, dst: jp-3}
  - {src: jp-8, dst: jp-4}
"""

PROFILE = """name: corpus
mls_qos: true
groups:
  workload: {first: 4}
policy_map: police-jp
rules:
  - {name: pairs, kind: pairs, group: workload, protocol: ip, set_dscp: 40, acl_base: 100}
policy_on: workload
extra_acls: ["access-list 100 permit ip any any"]
ingress:
  bandwidth: [1, 99]
  buffers: [70, 30]
  priority_queue: {queue: 2, bandwidth: 40}
egress:
  apply_to: workload
  share: [97, 1, 1, 1]
  priority_queue_out: true
  queue_set: 2
queue_sets:
  2:
    buffers: [50, 40, 5, 5]
    thresholds: {1: [400, 400, 100, 400], 2: [40, 60, 100, 200]}
span:
  - {session: 1, source: jp-1, destination: Gi1/0/21, encapsulation: replicate}
  - {session: 2, source: jp-2, destination: Gi1/0/22, encapsulation: replicate}
"""

PLAYBOOK = """name: corpus
topology: playbooks/topologies/ecenet.yaml
device: virtual
workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}
flood: traffic-gen/campaign-flood.yaml
conditions:
  - {name: no congestion fifo, congestion: false, profile: fifo}
  - {name: congestion thesis, congestion: true, profile: thesis}
trials: 3
capture: first
"""

BOMB = """lol1: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
lol2: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
lol3: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
lol4: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
lol5: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
lol6: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
lol7: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""

SYNTAX = "YAML syntax error"

# (case name, old text, new text, marker on the defect's line, field). old "" = append new.
TOPOLOGY_CASES = [
    ("alias-bomb-ports", "  ports: [Gi1/0/1-24]\n  span_destinations: [Gi1/0/21, Gi1/0/22]\n",
     "  ports: &p [Gi1/0/1-24]\n  span_destinations: *p\n", "*p", SYNTAX),
    ("billion-laughs", "", BOMB, "*a", SYNTAX),
    ("alias-bomb-expanding-ports", "switch:\n", BOMB + "lol8: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\nswitch:\n",
     "*a", SYNTAX),  # with ports: [..., *h] below (see main): 9^8 strings when a validator str()s it
    ("duplicate-name", "", "name: other\n", "name: other", "name"),
    ("duplicate-key-in-host", "{name: jp-2, address", "{name: jp-2, name: jp-9, address", "jp-9", "hosts[1].name"),
    ("not-utf8", "name: ecenet\n", "name: ecenet\ndescription: \"caf\xe9\"\n", "caf", "(encoding)"),
    ("control-character", "name: ecenet\n", "name: ecenet\ndescription: \"bell\x07\"\n", "bell", SYNTAX),
    ("unclosed-bracket", "  ports: [Gi1/0/1-24]", "  ports: [Gi1/0/1-24", "ports: [Gi1", SYNTAX),
    ("tab-indent", "  burst_ms: 2.5", "\tburst_ms: 2.5", "burst_ms", SYNTAX),
    ("top-level-list", TOPOLOGY, "- name: ecenet\n- hosts: []\n", "- name", "(top level)"),
    ("typo-field", "environment: embedded", "enviroment: embedded", "enviroment", "enviroment"),
    ("name-upper-case", "name: ecenet", "name: ECENET", "ECENET", "name"),
    ("name-too-long", "name: ecenet", "name: ecenetwithaverylongname", "ecenetwith", "name"),
    ("environment-unknown", "environment: embedded", "environment: cloud", "cloud", "environment"),
    ("rate-word", "rate: 50Mbit", "rate: fast", "fast", "link.rate"),
    ("rate-zero", "rate: 50Mbit", "rate: 0", "rate: 0", "link.rate"),
    ("rate-absurd", "rate: 50Mbit", "rate: 1000000000000000", "rate: 1000", "link.rate"),
    ("rate-bool", "rate: 50Mbit", "rate: true", "rate: true", "link.rate"),
    ("burst-zero", "burst_ms: 2.5", "burst_ms: 0", "burst_ms", "link.burst_ms"),
    ("burst-huge", "burst_ms: 2.5", "burst_ms: 1000", "burst_ms", "link.burst_ms"),
    ("buffer-negative", "host_bytes: 131072", "host_bytes: -1", "host_bytes", "buffers.host_bytes"),
    ("buffer-terabyte", "switch_port_bytes: 131072", "switch_port_bytes: 2000000000000", "switch_port",
     "buffers.switch_port_bytes"),
    ("management-localhost", "host: 127.0.0.1", "host: localhost", "localhost", "switch.management.host"),
    ("management-not-loopback", "host: 127.0.0.1", "host: 10.0.0.1", "10.0.0.1", "switch.management.host"),
    ("management-host-injection", "host: 127.0.0.1", "host: '127.0.0.1; reboot'", "reboot",
     "switch.management.host"),
    ("management-port-range", "port: 8022", "port: 70000", "70000", "switch.management.port"),
    ("port-range-bomb", "ports: [Gi1/0/1-24]", "ports: [Gi1/0/1-100000000]", "100000000", "switch.ports"),
    ("port-listed-twice", "ports: [Gi1/0/1-24]", "ports: [Gi1/0/1-24, Gi1/0/3]", "Gi1/0/3]", "switch.ports"),
    ("span-not-a-port", "span_destinations: [Gi1/0/21, Gi1/0/22]", "span_destinations: [Gi1/0/21, Gi1/0/30]",
     "span_destinations", "switch.span_destinations[1]"),
    ("hostname-newline", "hostname: Switch", "hostname: \"Switch\\nusername evil\"", "hostname",
     "switch.hostname"),
    ("model-with-space", "model: WS-C3750G-24T", "model: WS C3750", "WS C3750", "switch.model"),
    ("address-outside-range", "address: 198.18.0.2/24", "address: 10.0.0.2/24", "10.0.0.2", "hosts[1].address"),
    ("address-network", "address: 198.18.0.3/24", "address: 198.18.0.0/24", "198.18.0.0", "hosts[2].address"),
    ("address-other-subnet", "address: 198.18.0.2/24", "address: 198.18.1.2/24", "198.18.1.2", "hosts[1].address"),
    ("address-garbage", "address: 198.18.0.4/24", "address: 198.18.0.400/24", "0.400", "hosts[3].address"),
    ("port-twice", "port: Gi1/0/2}", "port: Gi1/0/1}", "jp-2", "hosts[1].port"),
    ("port-is-span", "port: Gi1/0/3}", "port: Gi1/0/21}", "jp-3", "hosts[2].port"),
    ("port-not-interface", "port: Gi1/0/1}", "port: eth0}", "eth0", "hosts[0].port"),
    ("host-name-upper", "{name: jp-2,", "{name: JP-2,", "JP-2", "hosts[1].name"),
    ("host-name-twice", "{name: jp-3,", "{name: jp-1,", "198.18.0.3", "hosts[2].name"),
    ("host-missing-port", "{name: jp-4, address: 198.18.0.4/24, port: Gi1/0/4}", "{name: jp-4, address: 198.18.0.4/24}",
     "jp-4", "hosts[3].port"),
    ("no-hosts", None, None, "hosts: []", "hosts"),
    ("deep-nesting", "name: ecenet\n", "name: ecenet\ndescription: " + "[" * 60 + "]" * 60 + "\n", "description",
     "description[0][0]..."),
    ("description-list", "name: ecenet\n", "name: ecenet\ndescription: [a, b]\n", "description", "description"),
]

FLOOD_CASES = [
    ("rate-0x", "rate: 1.1x", "rate: 0x", "rate: 0x", "rate"),
    ("rate-million-x", "rate: 1.1x", "rate: 1000000x", "1000000x", "rate"),
    ("rate-true", "rate: 1.1x", "rate: true", "rate: true", "rate"),
    ("rate-zero", "rate: 1.1x", "rate: 0", "rate: 0", "rate"),
    ("rate-negative", "rate: 1.1x", "rate: -1", "rate: -1", "rate"),
    ("rate-too-many-pps", "rate: 1.1x", "rate: 2000000", "2000000", "rate"),
    ("rate-word", "rate: 1.1x", "rate: fast", "fast", "rate"),
    ("rate-float", "rate: 1.1x", "rate: 1.5", "rate: 1.5", "rate"),
    ("duration-1e15", "duration_s: null", "duration_s: 1.0e+15", "duration_s", "duration_s"),
    ("duration-zero", "duration_s: null", "duration_s: 0", "duration_s", "duration_s"),
    ("duration-negative", "duration_s: null", "duration_s: -5", "duration_s", "duration_s"),
    ("payload-tiny", "payload_bytes: 1400", "payload_bytes: 10", "payload_bytes", "payload_bytes"),
    ("payload-huge", "payload_bytes: 1400", "payload_bytes: 70000", "payload_bytes", "payload_bytes"),
    ("protocol-icmp", "protocol: UDP", "protocol: ICMP", "ICMP", "protocol"),
    ("ds-byte-256", "ds_byte: 0", "ds_byte: 256", "ds_byte", "ds_byte"),
    ("pacing-unknown", "pacing: auto", "pacing: fast", "pacing", "pacing"),
    ("generator-unknown", "pacing: auto", "pacing: auto\ngenerator: trex", "generator", "generator"),
    ("no-flows", None, None, "flows: []", "flows"),
    ("flow-to-itself", "{src: jp-6, dst: jp-2}", "{src: jp-6, dst: jp-6}", "dst: jp-6", "flows[1].dst"),
    ("flow-unknown-dst", "{src: jp-7, dst: jp-3}", "{src: jp-7, dst: jp-42}", "jp-42", "flows[2].dst"),
    ("flow-unknown-src", "{src: jp-5, dst: jp-1}", "{src: jp-55, dst: jp-1}", "jp-55", "flows[0].src"),
    ("flow-rate-bad", "{src: jp-6, dst: jp-2}", "{src: jp-6, dst: jp-2, rate: 2y}", "2y", "flows[1].rate"),
    ("flow-rate-0x", "{src: jp-6, dst: jp-2}", "{src: jp-6, dst: jp-2, rate: 0x}", "0x", "flows[1].rate"),
    ("flow-delay-huge", "{src: jp-5, dst: jp-1}", "{src: jp-5, dst: jp-1, start_delay_s: 1.0e+9}", "start_delay",
     "flows[0].start_delay_s"),
    ("flow-payload-tiny", "{src: jp-8, dst: jp-4}", "{src: jp-8, dst: jp-4, payload_bytes: 1}", "payload_bytes: 1}",
     "flows[3].payload_bytes"),
    ("flow-typo", "{src: jp-8, dst: jp-4}", "{src: jp-8, dst: jp-4, rat: 1x}", "rat:", "flows[3].rat"),
    ("typo-flows", "flows:", "flowz:", "flowz", "flowz"),
    ("alias-bomb", "", BOMB, "*a", SYNTAX),
    ("duplicate-key-in-flow", "{src: jp-8, dst: jp-4}", "{src: jp-8, dst: jp-4, dst: jp-3}", "dst: jp-4, dst: jp-3",
     "flows[3].dst"),
    ("name-with-newline", "name: corpus-flood", "name: \"corpus\\nflood\"", "corpus", "name"),
    ("not-utf8", "protocol: UDP\n", "protocol: UDP\ndescription: \"\xff\xfe\"\n", "description", "(encoding)"),
    ("flows-mapping", FLOOD[FLOOD.index("flows:"):], "flows: {src: jp-5, dst: jp-1}\n", "flows:", "flows"),
    # issue 35: a pattern's error names its sub-field and line, a NaN is called one
    ("pattern-on-ms-negative", FLOOD[FLOOD.index("flows:"):],
     "pattern:\n  kind: on-off\n  src: [jp-5]\n  dst: [jp-1]\n  on_ms: -5\n  off_ms: 300\n", "on_ms: -5",
     "pattern.on_ms"),
    ("pattern-shape-nan", FLOOD[FLOOD.index("flows:"):],
     "pattern:\n  kind: incast\n  src: [jp-5, jp-6]\n  dst: jp-1\n  idt: pareto\n  shape: .nan\n", "shape:",
     "pattern.shape"),
]

PROFILE_CASES = [
    ("policy-map-newline", "policy_map: police-jp", "policy_map: \"police-jp\\nusername evil privilege 15 secret x\"",
     "police-jp", "policy_map"),
    ("rule-name-newline", "{name: pairs,", "{name: \"pairs\\nusername evil\",", "username evil", "rules[0].name"),
    ("span-destination-injection", "destination: Gi1/0/21,",
     "destination: \"Gi1/0/21\\nusername evil privilege 15 secret x\",", "username evil",
     "span[0].destination"),
    ("span-source-unknown", "{session: 2, source: jp-2,", "{session: 2, source: jp-42,", "jp-42", "span[1].source"),
    ("span-destination-not-a-port", "destination: Gi1/0/22,", "destination: Gi2/0/22,", "Gi2/0/22",
     "span[1].destination"),
    ("span-session-99", "{session: 2,", "{session: 99,", "session: 99", "span[1].session"),
    ("span-destination-twice", "{session: 2, source: jp-2, destination: Gi1/0/22,",
     "{session: 2, source: jp-2, destination: Gi1/0/21,", "session: 2", "span[1].destination"),
    ("extra-acl-username", "extra_acls: [\"access-list 100 permit ip any any\"]",
     "extra_acls: [\"username evil privilege 15 secret x\"]", "username", "extra_acls[0]"),
    ("extra-acl-standard-number", "access-list 100 permit", "access-list 99 permit", "access-list 99",
     "extra_acls[0]"),
    ("extra-acl-collides", "access-list 100 permit ip any any", "access-list 112 permit ip any any", "kind: pairs",
     "rules[0].acl_base"),
    ("set-dscp-64", "set_dscp: 40", "set_dscp: 64", "set_dscp", "rules[0].set_dscp"),
    ("rule-kind-unknown", "kind: pairs", "kind: pairz", "pairz", "rules[0].kind"),
    ("acl-base-out-of-range", "acl_base: 100", "acl_base: 170", "acl_base", "rules[0].acl_base"),
    ("rules-collide", "policy_on: workload",
     "  - {name: pairs2, kind: pairs, group: workload, set_dscp: 46}\npolicy_on: workload", "pairs2",
     "rules[1].acl_base"),
    ("rule-ports-ip", "policy_on: workload",
     "  - {name: rmi, kind: ports, protocol: ip, ports: [1099], set_dscp: 40}\npolicy_on: workload", "rmi",
     "rules[1].protocol"),
    ("rule-port-70000", "policy_on: workload",
     "  - {name: rmi, kind: ports, protocol: tcp, ports: [70000], set_dscp: 40}\npolicy_on: workload", "rmi",
     "rules[1].ports"),
    ("rule-name-digit", "{name: pairs,", "{name: 1pairs,", "1pairs", "rules[0].name"),
    ("rule-group-unknown", "group: workload, protocol", "group: cluster, protocol", "cluster", "rules[0].group"),
    ("share-three", "share: [97, 1, 1, 1]", "share: [97, 1, 1]", "share", "egress.share"),
    ("share-zero", "share: [97, 1, 1, 1]", "share: [97, 0, 1, 1]", "share", "egress.share"),
    ("shape-huge", "share: [97, 1, 1, 1]", "shape: [70000, 1, 1, 1]", "shape", "egress.shape"),
    ("queue-set-3", "queue_set: 2", "queue_set: 3", "queue_set", "egress.queue_set"),
    ("egress-group-unknown", "apply_to: workload", "apply_to: nobody", "nobody", "egress.apply_to"),
    ("queue-sets-key-3", "queue_sets:\n  2:", "queue_sets:\n  3:", "  3:", "queue_sets[3]"),
    ("queue-set-buffers-100", "buffers: [50, 40, 5, 5]", "buffers: [50, 40, 5, 100]", "5, 100",
     "queue_sets[2].buffers"),
    ("threshold-queue-5", "thresholds: {1:", "thresholds: {5:", "thresholds", "queue_sets[2].thresholds[5]"),
    ("threshold-reserved-200", "[40, 60, 100, 200]", "[40, 60, 200, 200]", "thresholds", "queue_sets[2].thresholds[2]"),
    ("ingress-bandwidth-zero", "bandwidth: [1, 99]", "bandwidth: [0, 100]", "[0, 100]", "ingress.bandwidth"),
    ("ingress-buffers-three", "buffers: [70, 30]", "buffers: [70, 30, 0]", "[70, 30, 0]", "ingress.buffers"),
    ("priority-bandwidth-50", "{queue: 2, bandwidth: 40}", "{queue: 2, bandwidth: 50}", "bandwidth: 50",
     "ingress.priority_queue.bandwidth"),
    ("dscp-map-queue-5", "span:", "dscp_output_map: {5: [40]}\nspan:", "dscp_output_map", "dscp_output_map[5]"),
    ("group-too-big", "workload: {first: 4}", "workload: {first: 20}", "first: 20", "groups.workload.first"),
    ("group-hosts-and-first", "workload: {first: 4}", "workload: {first: 4, hosts: [jp-1]}", "first: 4",
     "groups.workload"),
    ("group-unknown-host", "workload: {first: 4}", "workload: {hosts: [jp-1, jp-42]}", "jp-42", "groups.workload"),
    ("trust-value", "policy_on: workload", "policy_on: workload\ntrust: {workload: precedence}", "trust",
     "trust.workload"),
    ("policy-on-unknown", "policy_on: workload", "policy_on: everyone", "everyone", "policy_on"),
    ("name-with-slash", "name: corpus", "name: ../corpus", "../corpus", "name"),
    ("alias-bomb", "", BOMB, "*a", SYNTAX),
]

PLAYBOOK_CASES = [
    ("frames-many", "frames: 1}", "frames: many}", "many", "workload.frames"),
    ("hosts-string", "hosts: [jp-1, jp-2, jp-3, jp-4]", "hosts: \"jp-1\"", "hosts", "workload.hosts"),
    ("hosts-unknown", "jp-3, jp-4]", "jp-3, jp-9]", "jp-9", "workload.hosts"),
    ("hosts-twice", "jp-3, jp-4]", "jp-3, jp-3]", "jp-3, jp-3", "workload.hosts"),
    ("size-c", "size: A", "size: C", "size: C", "workload.size"),
    ("capture-host-unknown", "capture: first", "capture: first\ncapture_host: jp-42", "jp-42", "capture_host"),
    ("capture-port-not-span", "capture: first", "capture: first\ncapture_port: Gi1/0/5", "Gi1/0/5", "capture_port"),
    ("capture-port-garbage", "capture: first", "capture: first\ncapture_port: eth0", "eth0", "capture_port"),
    ("capture-sometimes", "capture: first", "capture: sometimes", "sometimes", "capture"),
    ("name-traversal", "name: corpus", "name: ../../etc", "../../etc", "name"),
    ("name-slash", "name: corpus", "name: a/b", "a/b", "name"),
    ("condition-name-comma", "{name: no congestion fifo,", "{name: \"no congestion, fifo\",", "no congestion,",
     "conditions[0].name"),
    ("condition-name-twice", "{name: congestion thesis,", "{name: no congestion fifo,", "congestion: true",
     "conditions[1].name"),
    ("no-conditions", None, None, "conditions: []", "conditions"),
    ("profile-unknown", "profile: thesis}", "profile: thesiss}", "thesiss", "conditions[1].profile"),
    ("profile-malformed", "profile: thesis}", f"profile: {M}/profile/001-policy-map-newline.yaml}}", "001-",
     "conditions[1].profile"),
    ("profile-rendering-fails", "profile: thesis}", f"profile: {M}/profile/004-span-source-unknown.yaml}}", "004-",
     "conditions[1].profile"),
    ("topology-missing", "topology: playbooks/topologies/ecenet.yaml", "topology: playbooks/topologies/nope.yaml",
     "nope.yaml", "topology"),
    ("topology-malformed", "topology: playbooks/topologies/ecenet.yaml", f"topology: {M}/topology/001-alias-bomb-ports.yaml",
     "001-alias", "topology"),
    ("flood-missing", "flood: traffic-gen/campaign-flood.yaml", "flood: traffic-gen/nope.yaml", "nope", "flood"),
    ("flood-malformed", "flood: traffic-gen/campaign-flood.yaml", f"flood: {M}/flood/001-rate-0x.yaml", "001-rate",
     "flood"),
    ("flood-unknown-host", "flood: traffic-gen/campaign-flood.yaml", f"flood: {M}/flood/020-flow-unknown-dst.yaml",
     "020-", "flood"),
    ("device-unknown", "device: virtual", "device: cisco", "cisco", "device"),
    ("device-file-malformed", "device: virtual", f"device: {M}/device-bad.yaml", "device-bad", "device"),
    ("executor-unknown", "device: virtual", "device: virtual\nexecutor: ssh2", "ssh2", "executor"),
    ("generator-unknown", "device: virtual", "device: virtual\ngenerator: trex", "trex", "generator"),
    ("baseline-unknown", "trials: 3", "trials: 3\nbaseline: nothing", "nothing", "baseline"),
    ("trials-one", "trials: 3", "trials: 1", "trials: 1", "trials"),
    ("trials-negative", "trials: 3", "trials: -5", "trials: -5", "trials"),
    ("seed-negative", "trials: 3", "trials: 3\nseed: -1", "seed", "seed"),
    ("retries-1000", "trials: 3", "trials: 3\nretries: 1000", "retries", "retries"),
    ("trial-timeout-zero", "trials: 3", "trials: 3\ntrial_timeout_s: 0", "trial_timeout_s", "trial_timeout_s"),
    ("order-random", "trials: 3", "trials: 3\norder: random", "random", "order"),
    ("settle-forever", "trials: 3", "trials: 3\nsettle_s: 1.0e+9", "settle_s", "settle_s"),
    ("warmup-1000", "trials: 3", "trials: 3\nwarmup: 1000", "warmup", "warmup"),
    ("margin-two", "trials: 3", "trials: 3\nequivalence_margin: 2", "equivalence", "equivalence_margin"),
    ("override-typo", "profile: fifo}", "profile: fifo, workload: {framez: 2}}", "framez",
     "conditions[0].workload.framez"),
    ("override-bad-value", "profile: fifo}", "profile: fifo, workload: {frames: 0}}", "frames: 0",
     "conditions[0].workload.frames"),
    ("ports-equal", "frames: 1}", "frames: 1, registry_port: 1100}", "registry_port", "workload.export_port"),
    ("port-is-ditg-signalling", "frames: 1}", "frames: 1, registry_port: 9000}", "9000", "workload.registry_port"),
    ("alias-bomb-in-hosts", "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}\n",
     "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}\n" + BOMB.replace("lol1:", "x1:"), "*a",
     SYNTAX),
    ("duplicate-key", "trials: 3", "trials: 3\ntrials: 4", "trials: 4", "trials"),
    ("not-utf8", "name: corpus\n", "name: corpus\ndescription: \"na\xefve\"\n", "description", "(encoding)"),
    ("empty", None, None, None, "(top level)"),
    # issue 35: YAML booleans are not flood files, a factor's error names the factor's line, a NaN is
    # called one, a huge value is not echoed whole
    ("factor-flood-yaml-boolean", "conditions:\n  - {name: no congestion fifo, congestion: false, profile: fifo}\n  - {name: congestion thesis, congestion: true, profile: thesis}\n", "factors:\n  flood: [no, yes]\n  profile: [fifo, thesis]\n",
     "flood: [no", "factors.flood[0]"),
    ("factor-workload-typo", "conditions:\n  - {name: no congestion fifo, congestion: false, profile: fifo}\n  - {name: congestion thesis, congestion: true, profile: thesis}\n",
     "factors:\n  flood: [none, campaign-flood]\n  profile: [fifo]\n  workload.framez: [1, 2]\n", "framez",
     "factors.workload.framez"),
    ("settle-nan", "trials: 3", "trials: 3\nsettle_s: .nan", "settle_s", "settle_s"),
    ("name-20kb", "name: corpus", "name: " + "x" * 20000, "name: xxx", "name"),
    # issue 35: a command template is checked without being formatted
    ("command-format-spec", "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}", "workload: {kind: command, hosts: [jp-1, jp-2], head: \"echo {port:>999999999}\"}",
     "999999999", "workload.head"),
    ("command-attribute-access", "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}",
     "workload: {kind: command, hosts: [jp-1, jp-2], head: \"echo {ip.__class__.__mro__}\"}", "__mro__",
     "workload.head"),
]

DEVICE_BAD = """# a device file with an unknown field (referenced by playbook/024-device-file-malformed.yaml)
device: catalyst
host: 198.18.0.254
known_hosts: /nonexistent/known_hosts
passwd: secret
"""


def _make(base: str, case: tuple) -> tuple[str, int | None, str]:
    name, old, new, marker, field = case
    if old is None:  # a whole-line replacement given by the marker
        if marker is None:
            return "", None, field
        key = marker.split(":")[0] + ":"
        lines = base.splitlines(keepends=True)
        i = next(i for i, l in enumerate(lines) if l.startswith(key))
        j = i + 1
        while j < len(lines) and lines[j].startswith((" ", "-")):
            j += 1
        text = "".join(lines[:i] + [marker + "\n"] + lines[j:])
    elif old == "":
        text = base + new
    else:
        assert old in base, (name, old)
        text = base.replace(old, new, 1)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if marker in l)
    return text, line, field


def main() -> None:
    import cases_i42 as i42  # issue 42's cases (the cpu: block), after issue 45's
    import cases_i45 as i45  # issue 45's cases, appended so that earlier files keep their numbers
    import cases_i48 as i48  # issue 48's rule 3b (derive: network_share, rays; workload rays), after 51's
    import cases_i50 as i50  # issue 50's (YAML 1.1 forms, each field its own type), after the others
    import cases_i51 as i51  # issue 51's cases (the slurm: block), after issue 50's
    import cases_i52 as i52  # issue 52's (cpu.receive_on), after issue 51's

    for kind, base, cases in (("topology", TOPOLOGY, TOPOLOGY_CASES + i45.TOPOLOGY_CASES + i42.TOPOLOGY_CASES
                               + i50.TOPOLOGY_CASES + i51.TOPOLOGY_CASES + i52.TOPOLOGY_CASES),
                              ("flood", FLOOD, FLOOD_CASES + i50.FLOOD_CASES),
                              ("profile", PROFILE, PROFILE_CASES + i45.PROFILE_CASES + i50.PROFILE_CASES),
                              ("playbook", PLAYBOOK, PLAYBOOK_CASES + i45.PLAYBOOK_CASES + i50.PLAYBOOK_CASES
                               + i51.PLAYBOOK_CASES + i48.PLAYBOOK_CASES),
                              ("real", i45.REAL, i45.REAL_CASES + i42.REAL_CASES)):
        d = HERE / kind
        d.mkdir(exist_ok=True)
        for old in d.glob("*.yaml"):
            old.unlink()
        for n, case in enumerate(cases, 1):
            text, line, field = _make(base, case)
            if case[0] == "alias-bomb-expanding-ports":
                text = text.replace("ports: [Gi1/0/1-24]", "ports: [Gi1/0/1-24, *h]")
            head = f"# expect: {line + 1 if line else 1} {field}\n"
            (d / f"{n:03d}-{case[0]}.yaml").write_bytes((head + text).encode("utf-8", "surrogateescape")
                                                        .replace("\xe9".encode(), b"\xe9")
                                                        .replace("\xff\xfe".encode(), b"\xff\xfe")
                                                        .replace("\xef".encode(), b"\xef"))
    d = HERE / "device"  # issue 50's device files, each one defect (test_malformed_devices.py)
    d.mkdir(exist_ok=True)
    for old in d.glob("*.yaml"):
        old.unlink()
    for n, case in enumerate(i50.DEVICE_CASES, 1):
        text, line, field = _make(i50.DEVICE, case)
        (d / f"{n:03d}-{case[0]}.yaml").write_text(f"# expect: {line + 1} {field}\n" + text)
    (HERE / "device-bad.yaml").write_text(DEVICE_BAD)
    for name, text in i45.DEVICES.items():
        (HERE / name).write_text(text)


if __name__ == "__main__":
    main()
