"""The integration tests' four lanes (issue 53: ``make test`` under 20 minutes without dropping what
it proves): concurrent, paired, idle (:data:`IDLE`) and serial.

- **Concurrent lane** (``-m concurrent``): modules that wait rather than measure (SSH round trips,
  lease and TIME-WAIT timeouts, kill -9 and resume, notebooks) and assert outcomes, not rates,
  shares, latencies or CPU times. ``make test`` runs them in pytest-xdist workers, a module per
  worker (``--dist loadfile``), each worker's testbeds under its own name (``t<pid><suffix>``, see
  conftest.unique_name): testbeds share no interface, address or port of this machine's own
  namespace (a testbed adds only its namespaces there; its virtual switch listens on a loopback
  port of its process's slice, :func:`port_slice`), so several can be up at once.
- **Paired lane** (``-m paired``, :data:`PAIRED`): data-path modules whose rates the kernel sets
  (HTB shapers, tc queues and policers at 10 Mbit/s, kernel-paced floods) and that leave the cores
  mostly idle, two at a time (2 xdist workers, a module per worker, each its own testbed). Measured
  (issue 53, vmstat every 5 s over a serial lane of 768 s on the 2-core machine): these modules used
  8-36 % of the cores one at a time (test_patterns 8 %, test_datapath_9300 13 %, test_datapath_eos
  18 %, test_switch's flooded port 19 %, test_datapath 21 %, test_trafficgen 31 %, test_capture 37
  %), 243 s in all; paired, three runs took 143-145 s, every rate and share assertion passing. Two
  things failed in the first paired run and are why the lane is this one: test_cpu_receive_on
  (which core processes a host's packets: the other testbed's softirq work lands on the same
  cores; it stays serial) and two leak checks that listed every D-ITG or iperf3 process of the
  machine (now those of the test's own testbed: conftest.pids_in_testbed).
- **Idle lane** (``-m idle``, :data:`IDLE`): modules with no testbed and nothing timed that only
  compute (the report notebooks), at nice 19 beside the paired lane only (beside the pool they
  slowed it: 8m09s against 7m08s, ci24 of issue 53's last stop).
- **Serial lane** (everything else): one module at a time with nothing beside it: the floods
  paced by a process's timer, CPU budgets and placement, the fidelity monitor, the on-machine
  derivation, latency agreement, the tests that snapshot every namespace of the machine (a
  testbed of another worker would show in them), and the RayTracer campaigns under congestion
  (test_ssh_campaign, test_campaign, test_slurm_campaign: with the cores busy beside them their
  renders time out: measured, the ssh campaign failed a trial with SocketTimeoutException in the
  pool).

The Slurm modules (issue 53): the quick campaign's smoke and the kill mid-trial run the RayTracer
under the flood through Slurm and stay serial (test_slurm_campaign, and test_slurm_mpi_flood: an
MPI campaign with congested conditions, 31 s); ``campaign submit`` over
Slurm's time limit and the kill of a bare runner wait on Slurm and run a 5 s wait as their
workload, uncongested (test_slurm_submit), and the MPI launches are uncongested
(test_slurm_mpi): those two modules are concurrent, their campaigns with the fidelity monitor's
outside-load check off (the pool's load is not what they prove). test_slurm_mpi runs its campaign
before the direct MPI runs, on hosts with no BTL port in TIME-WAIT: 66 s -> 6-14 s (the runner had
waited 58 s for the direct runs' ports, campaign/portwait.py).

Measured on the 2-core machine (issue 53): make test's pool (the unit and client tests and this
lane, 3 xdist workers) 2170 passed in 404 s with the cores 81 % busy, where the unit and client
tests alone took 194-197 s and these modules about 490 s one at a time. Most of them use the CPU
more than they wait, so the pool gains what their waits leave idle, not their whole time. With
test_slurm_submit and test_slurm_mpi moved here (280 s of the serial lane: submit 210 s, MPI
70 s), the pool took 490 s (3 workers) and 462 s (4 workers) on the shared machine, both Slurm
modules passing (submit 133 s and 141 s, MPI 67 s).

Reviewed for issue 53's last criterion (make test <= 20 min on a clean clone; serial lane 13m13s
at 1e8f0b9 on the quiet machine), no module moved: test_interrupt bounds the campaign's end at
10 s after the signal under the flood, test_rtt_meter and test_scale_knobs measure, test_testbed
snapshots every namespace, the kill-and-resume campaigns (test_campaign, test_ssh_campaign,
test_slurm_campaign) run the RayTracer under the flood. A testbed's own set-up is about 1 s here
(ecenet up 0.9-1.0 s, down 0.4-0.5 s), so one testbed per session reset between modules would
save little; the module set-ups that cost 15-16 s were flood calibrations, now shared by the
ecenet platform variants (conftest.calibrated).

A module is in the concurrent lane only when listed here, with why it may share the machine; a
test of it that measures stays serial (SERIAL_TESTS).
"""

from __future__ import annotations

import re
from typing import Any

#: module name -> (seconds it took alone, why it may run beside other concurrent modules). The
#: seconds (setup, calls, teardown; a serial run on the quiet 2-core machine) order the lane:
#: longest first, so the workers finish together.
CONCURRENT: dict[str, tuple[float, str]] = {
    "test_push_faults": (80, "no testbed: faults injected into pushes to an in-process switch (apply=False)"),
    "test_timewait": (76, "waits for TIME-WAIT to clear (60 s); asserts trial counts and no burned retry; its flood's invalid verdicts are "
                                 "not re-run (fidelity.retry_invalid false)"),
    "test_ansible": (70, "ansible-playbook twice over SSH: idempotence (changed=0), no timing"),
    "test_workloads": (67, "workload validity, kill -9 + resume to N trials; no timing assertion"),
    "test_report": (19, "no testbed: the notebook and its HTML in headless Chromium"),
    "test_preflight": (17, "preflight checks over SSH: pass, or fail naming host and check"),
    "test_executor": (17, "the executor contract on netns (a 0.5 s timeout bounded by 5 s)"),
    "test_seed_workloads": (16, "workload validity and DSCP on the wire; no timing assertion"),
    "test_cgroups": (12, "a trial's cgroup ends its daemon; the pool survives"),
    "test_switch_ping": (10, "ping/traceroute answers from the switch namespace (counts, not times)"),
    "test_ssh": (8, "the executor contract over SSH (a 0.5 s timeout bounded by 5 s)"),
    "test_datapath_acl": (8, "ACL forms classify packets: per-class counts, no rate"),
    "test_switch": (45, "Netmiko pushes, rollbacks and show commands (the flooded-port test stays serial)"),
    "test_workload": (18, "RayTracer validity, DSCP, a killed worker (35 s bound); supersampling stays serial"),
    "test_slurm_submit": (160, "waits on Slurm: a 1-minute time limit, follow-up jobs, a killed runner's steps; "
                               "a 5 s wait as the workload, no flood; asserts job states and trial counts"),
    "test_slurm_mpi": (15, "MPI launches through srun and mpirun, an uncongested MPI campaign: which launcher, "
                           "which nodes, Slurm's accounting; no rate or time"),
}

#: The paired lane: module name -> (seconds it took alone in the serial lane, why it may run beside
#: one other module of this lane). Its tests that are concurrent (lanes.is_concurrent) stay there.
PAIRED: dict[str, tuple[float, str]] = {
    "test_trafficgen": (42, "D-ITG floods at 10 Mbit/s, kernel-paced and calibrated; 31 % of the cores alone"),
    "test_datapath_9300": (40, "queue shares and counters of a flooded 9300 port (HTB, tc); 13 % of the cores"),
    "test_datapath": (38, "DSCP rewrite, WTD thresholds, policers: tc and nftables counters; 21 % of the cores"),
    "test_capture": (33, "a SPAN capture of a 10 Mbit/s flood agrees with tshark; 37 % of the cores"),
    "test_patterns": (28, "incast and TCP bulk on 10 Mbit/s links, kernel-paced; 8 % of the cores "
                          "(its timer-paced on-off bursts stay serial: UNPAIRED_TESTS)"),
    "test_datapath_eos": (21, "the EOS profile's queue shares and drop counters (tc); 18 % of the cores"),
    "test_switch": (19, "the flooded port's TCP share under the thesis profile (HTB, tc); 19 % of the cores"),
    "test_generators": (14, "an iperf3 flood's rates on 10 Mbit/s links; 42 % of the cores"),
    "test_scale_knobs": (7, "route metrics (rto_min, quickack) and bfifo limits: tc and ip route state"),
}
# (test_factorial was paired in make test's CI of 2026-11-30 10:07, its outside-load check off: it took
# 48.7 s beside another module against 25 s alone, and the paired lane 180 s against 135 s: it is
# back in the serial lane.)


#: The idle lane: modules with no testbed, no timing and no rate asserted, that only compute. make
#: test runs them at nice 19 beside the paired lane (a second pytest process), on the cycles its two
#: data-path modules leave idle (8-42 % of the cores each, above): a nice-19 process gets about 1.5 %
#: of a core against a nice-0 one (the kernel's CFS weights 15 : 1024) and the floods' rates are set
#: by HTB in softirq, which no process's nice delays. Beside the pool too (tried in make test's CI
#: of 2026-11-30 10:32) it slowed the pool from 6m27s to 8m09s (likely: the pool's testbeds and
#: Slurm run processes in cgroups of their own, and a nice level ranks a process only in its
#: group). test_report_readonly renders 14 notebooks: 112 CPU-seconds, the pool's largest (per-test
#: CPU in its xdist workers' cgroups, issue 53).
IDLE: dict[str, tuple[float, str]] = {
    "test_report_readonly": (109, "no testbed: reports of the committed campaigns change no byte; "
                                  "112 CPU-seconds, nothing timed"),
}


def is_idle(module: str, test: str) -> bool:
    """True when test ``test`` of integration module ``module`` runs in the idle lane."""
    return module in IDLE


#: Tests of a paired module whose flood a process's timer paces (the kernel cannot express the
#: pattern): they stay in the serial lane (module -> names). The on-off bursts' mean rate, paced
#: by ITGSend's timer, came out at 0.866 of the asked beside another data-path module in make
#: test's CI of 2026-11-30 (1.0 +- 0.05 alone).
UNPAIRED_TESTS: dict[str, frozenset[str]] = {
    "test_patterns": frozenset({"test_on_off_bursts_mean_rate"}),
}


def is_paired(module: str, test: str) -> bool:
    """True when test ``test`` of integration module ``module`` runs in the paired lane."""
    return (module in PAIRED and not is_concurrent(module, test)
            and test.split("[")[0] not in UNPAIRED_TESTS.get(module, frozenset()))


#: Tests of a concurrent module that measure, and so stay in the serial lane (module -> names):
#: their module's testbed is built once in each lane.
SERIAL_TESTS: dict[str, frozenset[str]] = {
    "test_switch": frozenset({"test_thesis_profile_wins_back_the_link_for_cluster_traffic"}),  # TCP share
    "test_workload": frozenset({"test_supersampling_grows_compute_not_bytes"}),  # workers' busy wall time
}


def is_concurrent(module: str, test: str) -> bool:
    """True when test ``test`` (its name; parameters in brackets ignored) of integration module
    ``module`` runs in the concurrent lane."""
    return module in CONCURRENT and test.split("[")[0] not in SERIAL_TESTS.get(module, frozenset())


def _module(item: Any) -> str:
    return str(item.path.stem)


def longest_first(items: list[Any]) -> None:
    """Reorder the concurrent lane's items, and the paired lane's, in place, longest module first (pytest-xdist's
    ``--dist loadfile --no-loadscope-reorder`` hands modules to the workers in collection order;
    without ``--no-loadscope-reorder`` it orders them by their number of tests), leaving every other
    item where it is and each module's tests in their order."""
    for member, seconds in ((is_concurrent, CONCURRENT), (is_paired, PAIRED)):
        slots = [i for i, it in enumerate(items) if "integration" in str(it.path) and member(_module(it), it.name)]
        lane = sorted((items[i] for i in slots), key=lambda it: -seconds[_module(it)][0])  # stable
        for i, it in zip(slots, lane, strict=True):
            items[i] = it


def named_by(ns: str, process_name: str) -> bool:
    """True when namespace ``ns`` belongs to a testbed named by the pytest process whose
    unique_name() is ``process_name`` (``t1234``): ``qsl-t1234m-jp-1`` and ``qsl-t1234@switch``
    are, ``qsl-t12345m-jp-1`` (process 12345, say another xdist worker) is not: every name a test
    gives continues the process's digits with a letter."""
    return re.match(rf"qsl-{re.escape(process_name)}(?![0-9])", ns) is not None


#: Loopback ports the integration tests give their virtual switches: below the kernel's ephemeral
#: range (32768-60999 on Linux by default), where port-0 binds and outgoing connections take theirs.
PORT_BASE, PORT_SLICE, PORT_SLICES = 20000, 1000, 12


def port_slice(xdist_worker: str | None) -> range:
    """The management ports of the pytest process ``xdist_worker`` (``PYTEST_XDIST_WORKER``:
    ``gw0``, ``gw1``, ...; None without xdist): a slice of PORT_SLICE ports of its own (workers
    past PORT_SLICES - 1 share slices modulo)."""
    k = 0 if not xdist_worker else 1 + int(xdist_worker.removeprefix("gw") or 0) % (PORT_SLICES - 1)
    return range(PORT_BASE + k * PORT_SLICE, PORT_BASE + (k + 1) * PORT_SLICE)
