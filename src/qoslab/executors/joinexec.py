"""A foreground command that joins cgroups and takes a CPU affinity without a ``preexec_fn``
(:meth:`qoslab.executors.local.SubprocessExecutor.run`).

During a trial every command a local executor runs joins the trial's cgroup (:mod:`.cgroups`),
and a host's command its CPU budget (``cgroup.procs`` files) and affinity. A ``preexec_fn`` does
that between fork and exec, but it makes CPython fork the whole campaign process (about 130 MB of
page tables) instead of vfork, and those forks run one after another. A congested trial's stop
runs 12-16 such commands (tc on each flooder, ITGDec on each log); on this project's AMD EPYC
VM (2 cores, kernel 6.18) 8 short ``ip netns exec NS true`` side by side took 0.095 s with a
``preexec_fn`` that joins a cgroup and 0.026 s through this wrapper (mean of 5 rounds each, a
130 MB Python process; issue 48's harness overhead).

The wrapper: ``setpriv --pdeathsig TERM --`` (the parent-death signal, kept across exec) runs
``sh -c SCRIPT``, whose shell joins each cgroup itself (a builtin ``echo 0`` into the
``cgroup.procs`` file moves the writing process: the shell, before it has started anything, so
nothing escapes), then execs ``taskset -c CPUS`` (only with an affinity) and the command. As the
``preexec_fn`` does: a trial cgroup that is gone is ignored, a budget file that cannot be
written ends the command with code 126 before it runs (never a process outside its budget).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

#: Exit code of a command whose CPU budget's ``cgroup.procs`` could not be joined (it did not run);
#: the ``preexec_fn``'s ``os._exit(126)``.
BUDGET_REFUSED = 126
#: ``$0`` of the wrapper's shell (what its own error messages start with).
SHELL_NAME = "qoslab-join"


def join_argv(trial_procs: str | None, budget: Sequence[str], cpus: frozenset[int] | None) -> list[str]:
    """The argv prefix (without ``setpriv``) that joins ``trial_procs`` (the tracked trial's
    ``cgroup.procs``, None: no trial), every ``cgroup.procs`` file of ``budget`` and the CPU
    affinity ``cpus`` (None or empty: unchanged), then execs the argv that follows it. Pure.
    Raises ValueError for a negative CPU number."""
    if cpus and min(cpus) < 0:
        raise ValueError(f"CPU numbers must be >= 0, got {sorted(cpus)}")
    steps = []
    if trial_procs is not None:
        steps.append(f"{{ echo 0 > {shlex.quote(trial_procs)}; }} 2>/dev/null")
    steps += [f"{{ echo 0 > {shlex.quote(f)}; }} 2>/dev/null || exit {BUDGET_REFUSED}" for f in budget]
    argv = ["sh", "-c", "; ".join([*steps, 'exec "$@"']), SHELL_NAME]
    if cpus:
        argv += ["taskset", "-c", ",".join(str(c) for c in sorted(cpus))]
    return argv


def not_found(err: str, command: str) -> bool:
    """Whether ``err`` (a wrapped command's stderr, exit code 127) says ``command`` itself could
    not be executed: by setpriv, by the wrapper's shell (dash: ``qoslab-join: 1: exec: CMD: not
    found``) or by taskset."""
    return (err.startswith(f"setpriv: failed to execute {command}")
            or f"exec: {command}: not found" in err
            or err.startswith(f"taskset: failed to execute {command}"))


__all__ = ["BUDGET_REFUSED", "SHELL_NAME", "join_argv", "not_found"]
