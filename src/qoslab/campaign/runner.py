"""The campaign runner: runs the trials of a campaign folder that are not done, each stored as it ends.

Rules (also in playbooks/README.md, "Resume and retries"):

- ``qoslab campaign run --resume DIR`` runs every trial that is not done: pending ones, ones a
  killed run left ``running``, and ones that failed; a done trial never runs again.
- A trial that fails (any error, expected or not, or overrunning ``trial_timeout_s``) is
  recorded with its message and tried again at once, up to ``retries`` more times in this run;
  then it is ``failed`` and the campaign goes on. A counted trial the fidelity monitor judged
  ``invalid`` (its flood off its rate across the link rate, the machine's CPU taken by others or
  the hypervisor) is run again the same way (playbook ``fidelity: retry_invalid``, on by
  default); when the retries are used up its last attempt is kept, judged invalid, and the
  statistics leave it out and say so. A killed attempt is not a failure: it counts
  against nothing.
- Every attempt gets a fresh ``trials/NNNN/``; an earlier attempt's folder is kept as
  ``trials/NNNN.attempt-K``.
- The runner reads the campaign's snapshot of its inputs (:mod:`.folder`), never the working
  tree, and adds a segment (commit, time, host facts) to provenance.json on every run.
- One campaign per testbed at a time (an exclusive lock in /run/qoslab). Processes a killed run
  left in the hosts are ended by PID first; after a failed attempt, whatever it left too.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import QoslabError
from ..executors import cgroups
from ..executors.nodes import Nodes
from ..executors.ssh import run_id_for
from ..profiles import Profile, load_profile
from ..switch.backends import check_device_files, device_kind, open_switch
from ..testbed import Testbed
from ..testbed.cpuplace import set_affinity
from ..testbed.statedir import campaign_lock, release_campaign_lock
from ..topology import Topology, load_topology
from ..trafficgen import Calibration, FloodDefinition, calibrate, confirm_cluster_flood, load_flood
from ..trafficgen.definitions import check_cluster_flood
from ..trafficgen.ditgpacing import kernel_paced
from ..trafficgen.ditgsched import sender_prefix
from ..trafficgen.patterns import expand, resolve
from ..trials.playbook import Playbook, resolve_path
from ..trials.store import Store
from ..workloads import backend
from .attempts import TrialAttempts
from .folder import FolderLock, check_folder, process_commit, record_preflight, record_segment, record_segment_fact
from .trialenv import TrialEnv
from .trialplan import trial_lifetime

#: Pooled worker JVMs live at most this many trial lifetimes (``trial_timeout_s`` + margin) and
#: are restarted before a trial when less than one is left (see :class:`qoslab.workloads.base.Pool`).
POOL_LIFETIME_TRIALS = 10
#: A sequential campaign's stopping check, the statistics' (:func:`qoslab.stats.stopping.check`),
#: handed to the runner by its caller: (playbook, store) -> the indices of the trials it skipped
#: (empty while the campaign goes on); it records its checks in the store's meta.
StopCheck = Callable[[Playbook, Store], list[int]]


def tear_down(steps: list[tuple[str, Callable[[], Any]]], log: Callable[[str], None], *,
               failing: bool = False) -> None:
    """Run every clean-up step of ``steps`` (``(what, fn)``, in order), each tried whatever the
    ones before it raised, so one failed close leaves no namespace, cgroup or process behind. The
    first failure is raised after all ran, a QoslabError naming its step (``QoslabError`` as is;
    a KeyboardInterrupt during one is raised once all ran);
    when ``failing`` (the run itself is raising) each failure is only logged (``log``), so the run's own
    error is the one reported."""
    first: QoslabError | None = None
    interrupt: BaseException | None = None
    for what, fn in steps:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every step gets its turn
            err = e if isinstance(e, QoslabError) else QoslabError(f"{what} failed: {type(e).__name__}: {e}")
            if failing:
                log(f"warning: {what} failed too: {err}")
            first = first or err
        except BaseException as e:  # Ctrl-C during the clean-up: finish it, then stop
            interrupt = interrupt or e
    if interrupt is not None:
        raise interrupt
    if first is not None and not failing:
        raise first


def short_commit(commit: str) -> str:
    """A commit id as the log shows it: 12 hex digits and the ``+dirty`` mark when the working tree
    had changes (``5ab8f2b43943+dirty``); without the mark two runs of one commit, one of them
    with local changes, read as the same."""
    head, _, tail = commit.partition("+")
    return head[:12] + (f"+{tail}" if tail else "")

class Runner:
    """Runs the trials of a campaign folder that are not done (see the module doc).

    ``on_start(done, total)`` is called once the testbed is ready; ``on_trial(row)`` after each
    trial with its stored values (or ``error``); ``on_skip(idxs)`` when a sequential campaign
    stops with the trials it will not run; ``log(text)`` for remarks. ``stop_check`` is a sequential
    campaign's stopping check (:data:`StopCheck`; QoslabError when such a campaign has none).
    Raises QoslabError (ConfigError naming the file) with the folder unchanged when the folder
    does not hold what it was made with (:func:`.folder.check_folder`: store, playbook, input
    snapshot, workload files, conditions) or its device file does not fit its topology: every
    check comes before the store is opened for writing (and migrated) or anything is started.
    The folder's :class:`.folder.FolderLock` is taken after those checks and held until
    :meth:`run` ends (QoslabError when another run of the folder holds it).
    """

    def __init__(self, out: Path, on_trial: Callable[[dict[str, Any]], None] = lambda r: None,
                 on_start: Callable[[int, int], None] = lambda done, total: None,
                 log: Callable[[str], None] = lambda s: None,
                 on_skip: Callable[[list[int]], None] = lambda idxs: None,
                 stop_check: StopCheck | None = None) -> None:
        self.out = out
        self.on_skip, self.stop_check = on_skip, stop_check
        self.on_trial, self.on_start, self.log = on_trial, on_start, log
        # every check before the first write (issue 45): store, playbook, snapshot, conditions, inputs, device
        process_commit()  # the code this process started with, read before its first trial
        self.pb, self.manifest = check_folder(out)
        if self.pb.sequential is not None and stop_check is None:
            raise QoslabError(f"campaign {out} is sequential: its runner needs the statistics' stopping check "
                              "(qoslab.stats.stopping.check as stop_check)")
        self._folder_lock = FolderLock(out)  # before the first write: one run of a folder at a time
        if self._folder_lock.unsupported:
            log(f"campaign folder {out} cannot be locked ({self._folder_lock.unsupported}): a second run of it "
                "at the same time would not be refused")
        try:
            self._cgroup = cgroups.campaign_cgroup(out)  # the trials' process tracking (None without cgroup v2)
            self.topo, self.floods, self.profiles, self.device = self._inputs()
            if device_kind(self.device) == "catalyst":
                check_device_files(self.device, self.topo)
            #: the first flood (None without congestion): the cluster confirmation and pre-flight ask for one
            self.flood = next(iter(self.floods.values()), None)
            self.store = Store(out / "trials.sqlite")  # the first write: an older store is migrated now
            self.attempts = TrialAttempts(self.pb, self.store, out, self._cgroup, on_trial, log)
        except BaseException:
            self._folder_lock.release()
            raise

    def _inputs(self) -> tuple[Topology, dict[str, FloodDefinition], dict[str, Profile], str]:
        """Topology, floods (file reference -> definition with its patterns expanded), profiles and
        device spec from the snapshot (or, for a folder made before snapshots existed, from the
        working tree)."""
        pb, m = self.pb, self.manifest
        if m is None:
            self.log("this campaign folder has no input snapshot (made by an older qoslab): reading the "
                     "topology, flood and profiles from the working tree")
            topo = load_topology(resolve_path(pb.topology))
            floods = {ref: expand(load_flood(resolve_path(ref)), topo) for ref in pb.floods()}
            return topo, floods, {c.profile: load_profile(c.profile) for c in pb.conditions}, pb.device
        base = self.out.resolve()  # snapshot files by absolute path: references resolve against the repository
        topo = load_topology(base / m["topology"]["file"])
        files = m.get("floods") or ({pb.flood: m["flood"]} if "flood" in m else {})
        floods = {ref: expand(load_flood(base / files[ref]["file"]), topo) for ref in pb.floods()}
        profiles = {ref: load_profile(base / e["file"]) for ref, e in m["profiles"].items()}
        device = str(base / m["device"]["file"]) if "device" in m else pb.device
        return topo, floods, profiles, device

    def run(self) -> Store:
        """Run every trial that is not done; returns the store. Raises QoslabError when the
        campaign cannot start (testbed, switch, lock, pre-flight); trial failures are recorded, not raised.
        The testbed's campaign lock is held for the whole run and its file removed at the end."""
        try:
            self._lock = campaign_lock(self.topo.name)
            try:
                return self._run_locked()
            finally:
                release_campaign_lock(self._lock, self.topo.name)
        finally:
            self._folder_lock.release()

    def _run_locked(self) -> Store:
        """:meth:`run` with the campaign lock held."""
        if self.topo.environment == "cluster" and self.flood is not None:  # refused before anything starts
            confirm_cluster_flood(self.topo, self.store.meta("confirm_flood"))
            check_cluster_flood(self.topo)
        tb = Testbed(self.topo) if self.topo.environment == "embedded" else None
        if self.store.meta("testbed_built") is None:  # first run: remember whether the campaign builds it
            self.store.set_meta("testbed_built", tb is not None and not tb.is_up(), replace=False)
        self._segment()
        if tb is not None:
            tb.up(end_survivors=False)
            if self.pb.executor == "ssh":
                tb.sshd_up()
            elif self.pb.executor == "slurm":
                tb.slurm_up()
        # with a cpu: block the harness runs on the switch's cores (on a real cluster: another machine)
        affinity = set_affinity(tb.cpu.switch_cpus()) if tb is not None else None
        built = bool(self.store.meta("testbed_built"))
        nodes = Nodes(self.pb.executor, self.topo, testbed=tb, local_root=self.out,
                      run_id=run_id_for(self.pb.name, self.out))
        env = None
        # without one it joins the testbed's CPU shield (testbed/cpushield.py), once this machine's
        # answer to "may ITGSend run in the real-time class" is known (it is asked outside the shield)
        if tb is not None and tb.cpu.shielded:
            sender_prefix()
        home = tb.cpu.join_shield() if tb is not None else None
        if tb is not None:  # the v1 cpu group the run's testbed processes were in (None: unshielded)
            shield = tb.cpu.shield.group if tb.cpu.shield is not None and home is not None else None
            record_segment_fact(self.out, "cpu_shield", None if shield is None else str(shield))
        try:
            self._end_leftovers(tb, nodes)
            self._record_executor_facts(nodes)
            if self.pb.executor == "ssh" or tb is None:
                self._preflight(nodes)
            env = self._env(tb, nodes)
            self._loop(env)
        finally:
            steps: list[tuple[str, Callable[[], Any]]] = []
            if env is not None:
                if env.pool is not None:
                    steps.append(("closing the trial pool", env.pool.close))
                steps += [("closing the switch's show session", env.switch.close),  # the switch evidence's
                          ("closing the trial environment", env.close)]
            steps.append(("closing the nodes' executors", nodes.close))
            if self._cgroup is not None:  # the pool's workers are closed: nothing of the run stays
                cg = self._cgroup
                steps += [("ending the run's cgroup", lambda: cgroups.end_all(cg)),
                          ("removing the run's cgroup", lambda: cgroups.remove(cg))]
            if tb is not None:
                steps.append(("leaving the CPU shield", lambda: tb.cpu.leave_shield(home)))
                if built:
                    steps.append(("taking the testbed down", tb.down))
            if affinity is not None:
                steps.append(("restoring the CPU affinity", lambda: set_affinity(affinity)))
            tear_down(steps, self.log, failing=sys.exc_info()[1] is not None)
        return self.store

    def _segment(self) -> None:
        """Record this run in provenance.json; remark on a code version other than the first run's."""
        killed = self.store.reset_interrupted()
        seg = record_segment(self.out, {"pending": len(self.store.pending()), "interrupted": killed})
        try:
            first = json.loads((self.out / "provenance.json").read_text()).get("qoslab_commit")
        except (OSError, ValueError):
            first = None
        if first and seg["qoslab_commit"] != first:
            self.log(f"note: this run's qoslab commit {short_commit(seg['qoslab_commit'])} differs from the one "
                     f"the campaign was made with ({short_commit(first)}); both are in provenance.json")
        if killed:
            self.log(f"{len(killed)} trial(s) interrupted by a killed run will run again (not counted as failures)")

    def _end_leftovers(self, tb: Testbed | None, nodes: Nodes) -> None:
        """A killed run may have left trial processes (JVMs, D-ITG, iperf3, the capture) in the hosts
        and the SPAN namespace: this campaign holds the testbed's lock, so those its executors
        started (their environment's marker, :meth:`..testbed.Testbed.end_survivors`) are its own;
        end them by PID (the testbed's sshd and an operator's processes stay). Over SSH also the
        processes marked with this campaign's run id and its old work roots on every node."""
        killed = cgroups.end_all(self._cgroup)
        if killed:
            self.log(f"ended {len(killed)} processes an interrupted run left in its trials' cgroups: "
                     + ", ".join(sorted({p.comm for p in killed})))
        if tb is not None:
            left = tb.end_survivors()
            if left:
                self.log(f"ended {len(left)} processes left in the hosts by an interrupted run")
        if callable(getattr(nodes.factory, "end_leftovers", None)):
            ended = nodes.parallel(lambda ex: ex.end_leftovers(), self.topo.host_names)  # type: ignore[attr-defined]
            n = sum(len(v) for v in ended.values())
            if n:
                self.log(f"ended {n} processes an interrupted run left on the nodes")

    def _record_executor_facts(self, nodes: Nodes) -> None:
        """The executor's own facts (``slurm``: job ID, host -> node binding, node facts) into
        this run's provenance segment, under the executor's name."""
        first = nodes.executor_of(self.topo.host_names[0])
        facts = getattr(first, "facts", None)
        if callable(facts):
            known = facts()
            record_segment_fact(self.out, self.pb.executor, known)
            said = ", ".join(f"{k} {known[k]}" for k in ("allocation", "job_id") if k in known)
            self.log(f"{self.pb.executor}: {said}")

    def _preflight(self, nodes: Nodes) -> None:
        """The pre-flight checks (the first step of every SSH or cluster campaign) on the
        campaign's snapshot of its inputs; their facts go into this run's provenance segment.
        Raises QoslabError listing every failed check."""
        from ..preflight import preflight

        report = preflight(self.pb, nodes, flood=self.flood, device=self.device, log=self.log)
        record_preflight(self.out, report.to_json())
        report.raise_for_failures()

    def _env(self, tb: Testbed | None, nodes: Nodes) -> TrialEnv:
        pb = self.pb
        life = trial_lifetime(pb)
        pool = backend(pb.workload.kind).open_pool(nodes.executor_of, lambda h: self.topo.host(h).ip,
                                                   self.out / "workers", lifetime_s=POOL_LIFETIME_TRIALS * life,
                                                   renew_below_s=life) \
            if pb.workers == "per-campaign" else None
        env = TrialEnv(pb=pb, topo=self.topo, out=self.out, testbed=tb, executor_of=nodes.executor_of,
                       switch=open_switch(self.device, self.topo), flood=self.flood,  # type: ignore[arg-type]
                       floods=self.floods, pool=pool, log=self.log, captured=self.store.captured_conditions(),
                       profiles=self.profiles)
        cals = {}
        for flood in self.floods.values():
            if (pb.generator or flood.generator) == "ditg" and tb is not None and flood.payload_bytes not in cals:
                cals[flood.payload_bytes] = self._calibration(tb, flood)
        if len(self.floods) == 1:  # several floods: each D-ITG flood loads the stored calibration of its payload
            env.calibration = next(iter(cals.values()), None)
        return env

    def _calibration(self, tb: Testbed, flood: FloodDefinition) -> Calibration | None:
        cal = Calibration.load(self.topo.name, flood.payload_bytes)
        kernel = kernel_paced(flood, resolve(flood, self.topo, require_confirmation=False), self.topo.link.rate,
                              self.topo.environment == "embedded")
        # a flood that is (or asks to be) kernel-paced needs no calibration
        if cal is None and flood.pacing != "poll" and not (flood.pacing == "kernel" or isinstance(kernel, dict)):
            self.log(f"calibrating the flood {flood.name} (qoslab flood calibrate) ...")
            cal = calibrate(self.topo, tb.executor, [(f.src, f.dst) for f in flood.flows],
                            self.out / "calibration", payload_bytes=flood.payload_bytes)
            cal.save()
        return cal

    def _loop(self, env: TrialEnv) -> None:
        self._stop_check()  # a resumed sequential campaign may be due a check already
        pending = self.store.pending()
        counts = self.store.counts()
        total = sum(counts.values()) - counts.get("skipped", 0)
        self.on_start(total - len(pending), total)
        skipped: set[int] = set()
        for idx, cname, trial, warmup, attempts in pending:
            if idx in skipped:
                continue
            self.attempts.run(env, idx, cname, trial, warmup, attempts)
            skipped.update(self._stop_check())

    def _stop_check(self) -> list[int]:
        """A sequential campaign's stopping check (:data:`StopCheck`); the trials it skipped."""
        if self.pb.sequential is None or self.stop_check is None:
            return []
        skipped = self.stop_check(self.pb, self.store)
        if skipped:
            self.log(f"sequential stop: {(self.store.meta('sequential') or {}).get('stopped', {}).get('reason')}; "
                     f"{len(skipped)} trial(s) skipped")
            self.on_skip(skipped)
        return skipped
