"""The corpus cases of issue 51 (the topology's ``slurm:`` block, make_corpus.py appends them so
earlier files keep their numbers): a partition, account or node name that would be a shell
command or a second option, a time limit Slurm would not read, a binding qoslab does not know, a
node named twice, a misspelt key. Same tuple as make_corpus.py: (case name, old text, new text,
marker on the defect's line, field)."""

from __future__ import annotations

LAST_HOST = "  - {name: jp-4, address: 198.18.0.4/24, port: Gi1/0/4}\n"


def _block(*lines: str) -> str:
    return LAST_HOST + "slurm:\n" + "".join(f"  {line}\n" for line in lines)


TOPOLOGY_CASES = [
    ("slurm-partition-injection", LAST_HOST, _block("partition: 'debug; scancel -u root'"), "scancel",
     "slurm.partition"),
    ("slurm-partition-option", LAST_HOST, _block("partition: --exclusive"), "--exclusive", "slurm.partition"),
    ("slurm-partition-empty", LAST_HOST, _block("partition: ''"), "partition: ''", "slurm.partition"),
    ("slurm-time-hours-word", LAST_HOST, _block("time_limit: 1h"), "1h", "slurm.time_limit"),
    ("slurm-time-negative", LAST_HOST, _block("time_limit: '-5'"), "-5", "slurm.time_limit"),
    ("slurm-bind-unknown", LAST_HOST, _block("bind: random"), "random", "slurm.bind"),
    ("slurm-node-twice", LAST_HOST, _block("nodes: [n1, n2, n1, n3]"), "n1, n2", "slurm.nodes"),
    ("slurm-node-space", LAST_HOST, _block("nodes: ['n1 n2', n3, n4, n5]"), "n1 n2", "slurm.nodes"),
    ("slurm-account-injection", LAST_HOST, _block("account: 'proj$(id)'"), "proj", "slurm.account"),
    ("slurm-typo-key", LAST_HOST, _block("partiton: batch"), "partiton", "slurm.partiton"),
    ("slurm-not-a-mapping", LAST_HOST, LAST_HOST + "slurm: [batch]\n", "slurm: [batch]", "slurm"),
]

_WL = "workload: {hosts: [jp-1, jp-2, jp-3, jp-4], size: A, frames: 1}"

#: The mpi workload's launcher (srun --mpi=X or mpirun in a Slurm allocation): a launcher qoslab
#: does not know, and srun asked for on an executor without Slurm.
PLAYBOOK_CASES = [
    ("mpi-launcher-unknown", _WL, "workload: {kind: mpi, hosts: [jp-1, jp-2], launcher: pdsh}", "kind: mpi",
     "workload.launcher"),
    ("mpi-launcher-srun-on-netns", _WL, "workload: {kind: mpi, hosts: [jp-1, jp-2], launcher: srun}", "kind: mpi",
     "workload.launcher"),
]
