"""One scheduled trial's attempts (the runner's rules in :mod:`.runner`): an attempt in a fresh
``trials/NNNN/`` under the trial's deadline and cgroup; a failed attempt recorded and retried up to
the playbook's ``retries``; a counted trial the fidelity monitor judged invalid run again within
them; an interrupt leaves the trial pending; two trials in a row that failed every attempt the
same way stop the campaign."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import QoslabError
from ..executors import cgroups, slurmalloc
from ..meters.fidelityjudge import invalid_texts
from ..trials.layout import trial_dir
from ..trials.playbook import Playbook
from ..trials.store import Store
from ..workloads import backend, kind_of
from .portwait import same_failure, wait_ports_free
from .trial import run_trial
from .trialenv import TrialEnv
from .watchdog import TrialTimeout, deadline, interrupt_requested


class TrialAttempts:
    """Runs the attempts of one scheduled trial after another (:meth:`run`) for a campaign
    folder ``out``, recording each in ``store``; ``on_trial(row)`` after each trial with its
    stored values (or ``error``), ``log(text)`` for remarks. ``cgroup`` is the campaign's
    (None without cgroup v2). Keeps what spans trials: whether the next attempt starts workers
    afresh and the last trial that failed every attempt one way."""

    def __init__(self, pb: Playbook, store: Store, out: Path, cgroup: Any,
                 on_trial: Callable[[dict[str, Any]], None], log: Callable[[str], None]) -> None:
        self.pb, self.store, self.out, self.cgroup = pb, store, out, cgroup
        self.on_trial, self.log = on_trial, log
        self.fresh_workers = True  # this run's first workers bind their ports (a killed run's may be in TIME-WAIT)
        self.last_failure: tuple[int, str] | None = None  # (idx, normalised error) of the last trial that failed

    def run(self, env: TrialEnv, idx: int, cname: str, trial: int, warmup: bool, attempts: int) -> None:
        """Run one scheduled trial with its retries; store the outcome. Before an attempt that
        starts workers afresh (the run's first, every retry) the workload's ports are waited out
        of TIME-WAIT (:mod:`.portwait`); when this trial and the one before it used up their
        retries each failing one and the same way, the campaign stops (QoslabError) instead of
        burning every other trial's retries."""
        info = {"idx": idx, "condition": cname, "trial": trial, "warmup": warmup}
        failures = 0  # failed attempts in this run (the retry budget is per run)
        errors: list[str | None] = []
        while True:
            attempts += 1
            if self.fresh_workers:
                self._wait_ports(env, cname)
            due = self.pb.capture == "every" or (self.pb.capture == "first" and cname not in env.captured
                                                 and not warmup)
            tdir = self._fresh_dir(idx)
            self.store.record(idx, status="running", attempts=attempts, started=time.time())
            try:
                with deadline(self.pb.trial_timeout_s), cgroups.trial(self.cgroup, idx, lambda: _kept(env), self.log):
                    row = run_trial(env, self.pb.condition(cname), tdir, due)
            except KeyboardInterrupt:
                self._interrupted(env, idx)
                raise
            except (Exception, TrialTimeout) as e:  # noqa: BLE001 - any failure of a trial is recorded
                if interrupt_requested():  # a clean-up error or the timeout must not replace the interrupt
                    self._interrupted(env, idx)
                    raise KeyboardInterrupt from e
                msg = str(e) if isinstance(e, (QoslabError, TrialTimeout)) else f"{type(e).__name__}: {e}"
                failures += 1
                errors.append(same_failure(msg))
                if self._failed(env, idx, cname, attempts, failures, msg):
                    self.on_trial({**info, "error": msg})
                    self._repeated_failure(idx, errors, msg)
                    break
                continue
            self.last_failure = None
            why = invalid_texts(row) if row.get("fidelity") == "invalid" else None
            if why is not None and not warmup and self.pb.fidelity.retry_invalid and failures < self.pb.retries:
                failures += 1  # an invalid trial is a different experiment: run it again within the retries
                self.store.record(idx, status="running",
                                  error=f"attempt {attempts} judged fidelity invalid: {why}"[:2000])
                self.log(f"trial {idx} ({cname}) attempt {attempts} judged fidelity invalid ({why}): running it again")
                continue
            self.store.record(idx, status="done", finished=time.time(), error=None, **row)
            if due:
                env.captured.add(cname)
            self.on_trial({**info, **row})
            break

    def _interrupted(self, env: TrialEnv, idx: int) -> None:
        """An interrupt (Ctrl-C, SIGTERM) ended trial ``idx``: it is pending again, not a failure
        (``--resume`` runs it), unless a Slurm job's time limit cut it (a failed attempt that stays
        pending, :func:`..executors.slurmalloc.time_limit_cut`); whatever it left running on the
        testbed is ended."""
        cut = slurmalloc.time_limit_cut(env.topo.name)
        if cut:
            self.store.record_failure(idx, f"{cut}; --resume runs it again", time.time(), final=False)
        else:
            self.store.record(idx, status="pending", error="interrupted (Ctrl-C or SIGTERM); --resume runs it again")
        self.log(f"trial {idx} {cut or 'interrupted'}: it runs again on --resume")
        if env.testbed is not None:
            env.testbed.end_survivors()

    def _wait_ports(self, env: TrialEnv, cname: str) -> None:
        """Wait for the condition's workload TCP ports to leave TIME-WAIT on its hosts (testbed
        or cluster alike, through the executors), unless its backend's servers bind with
        ``SO_REUSEADDR`` (``binds_reuse_address``: a socket in TIME-WAIT does not keep them from
        binding; the killed Slurm campaign's resume had waited 58 s for nothing, issue 53)."""
        s = self.pb.workload_of(self.pb.condition(cname))
        if getattr(backend(kind_of(s)), "binds_reuse_address", False):
            self.fresh_workers = False
            return
        ports = [p for _, proto, p in s.listen_ports() if proto == "tcp"]
        waited = wait_ports_free(env.executor_of, list(s.hosts), ports, self.log)
        if waited:
            self.log(f"the workload's ports were free after {waited:.1f} s")
        self.fresh_workers = False

    def _repeated_failure(self, idx: int, errors: list[str | None], msg: str) -> None:
        """Stop the campaign (QoslabError) when every attempt of this trial and of the trial that
        failed before it failed the same way (timeouts excepted: :func:`.portwait.same_failure`)."""
        same = errors[0] if len(set(errors)) == 1 else None
        last, self.last_failure = self.last_failure, (idx, same) if same else None
        if same is not None and last is not None and last[1] == same:
            raise QoslabError(f"stopped: every attempt of trials {last[0]} and {idx} failed the same way "
                              f"({msg[:300]}); fix the cause, then `qoslab campaign run --resume {self.out}`")

    def _fresh_dir(self, idx: int) -> Path:
        """``trials/NNNN`` for a new attempt: an earlier attempt's folder is kept as ``NNNN.attempt-K``."""
        tdir = trial_dir(self.out, idx)
        if tdir.exists():
            k = 1
            while tdir.with_name(f"{tdir.name}.attempt-{k}").exists():
                k += 1
            tdir.rename(tdir.with_name(f"{tdir.name}.attempt-{k}"))
        return tdir

    def _failed(self, env: TrialEnv, idx: int, cname: str, attempts: int, failures: int, msg: str) -> bool:
        """Record a failed attempt and end what it left running; True when no retry is left."""
        final = failures > self.pb.retries
        self.store.record_failure(idx, msg, time.time(), final)
        self.log(f"trial {idx} ({cname}) attempt {attempts} failed: {msg}")
        env.current_config = None  # re-push next time: the switch state is unknown
        self.fresh_workers = True  # the retry's workers bind their ports again
        if env.pool is not None:
            env.pool.close()  # fresh workers for the retry
        if env.testbed is not None:
            env.testbed.end_survivors()  # a flood or capture the failed attempt could not stop
        return final


def _kept(env: TrialEnv) -> list[int]:
    """PIDs of the campaign's kept workers (the pool's): they outlive a trial's cgroup."""
    return [p.pid for p in env.pool.workers.values()] if env.pool is not None else []
