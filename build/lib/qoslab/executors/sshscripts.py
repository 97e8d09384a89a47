"""The POSIX shell scripts the ``ssh`` executor runs on a node (pure: text in, text out).

Every script runs under ``/bin/sh`` whatever the login shell is. Layout of a node's work root
``R`` (``/tmp/qoslab-<run>/<node>``): ``R/.procs/PID.pid`` while a background process runs,
``R/.procs/PID.rc`` its exit status once it ended (written by a waiter shell outside its process
group), ``R/.lease`` touched by the runner every few seconds, ``R/.guard.pid`` the guard.

A background process (:func:`start_script`) runs as ``setsid env QOSLAB_RUN=<run> ... sh -c
'<timer slack>; exec "$@"' [timeout -k 5 LIFETIME] argv``: the PID reported is the session and
process-group leader (GNU ``timeout`` with a lifetime, else the command itself), the environment
marker lets a later run find it, the timer slack is set through ``/proc/self/timerslack_ns``
(inherited across exec and fork, see prctl(2)). The guard (:func:`guard_script`) ends every
process group listed in ``R/.procs`` and removes ``R`` once the lease is older than its limit:
a runner that died (kill -9, power, network) leaves nothing running for longer than that.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

#: Environment variable marking every background process qoslab starts over SSH (value: run id).
RUN_MARKER = "QOSLAB_RUN"
#: Seconds between a lifetime's SIGTERM and its SIGKILL (``timeout --kill-after``).
KILL_AFTER_S = 5
#: Exit status the scripts use for "could not prepare the command" (cd, mkdir failed).
PREPARE_FAILED = 111


def q(s: object) -> str:
    """One shell word (``shlex.quote``)."""
    return shlex.quote(str(s))


def sh(script: str) -> str:
    """The SSH command line running ``script`` under /bin/sh (the login shell may be any)."""
    return f"exec /bin/sh -c {q(script)}"


def _env(env: Mapping[str, str] | None) -> str:
    if not env:
        return ""
    for k in env:
        if not k.replace("_", "").isalnum() or k[0].isdigit():
            raise ValueError(f"not an environment variable name: {k!r}")
    return "env " + " ".join(q(f"{k}={v}") for k, v in env.items()) + " "


def run_script(argv: Sequence[str], timeout_s: float, cwd: str | None = None,
               env: Mapping[str, str] | None = None) -> str:
    """Run ``argv`` in the foreground under GNU ``timeout`` (its process group gets SIGTERM after
    ``timeout_s`` seconds, SIGKILL 2 s later; exit status 124 or 137 then)."""
    cd = f"cd {q(cwd)} || exit {PREPARE_FAILED}; " if cwd else ""
    return f"{cd}exec {_env(env)}timeout --kill-after=2 {timeout_s:.3f} {' '.join(q(a) for a in argv)}"


def start_script(argv: Sequence[str], *, root: str, run_id: str, stdout: str | None, stderr: str | None,
                 cwd: str | None = None, env: Mapping[str, str] | None = None, timer_slack_ns: int | None = None,
                 lifetime_s: float | None = None) -> str:
    """Start ``argv`` in the background in its own session (see the module doc); the script
    prints the PID of the session leader. Output is appended to ``stdout``/``stderr`` (node
    paths) or discarded."""
    procs = f"{root}/.procs"
    slack = f"echo {int(timer_slack_ns)} > /proc/self/timerslack_ns 2>/dev/null; " if timer_slack_ns else ""
    life = f"timeout --kill-after={KILL_AFTER_S} {lifetime_s:.3f} " if lifetime_s is not None else ""
    marker = {RUN_MARKER: run_id, **(env or {})}
    inner = q(slack + 'exec "$@"')
    cmd = (f"setsid {_env(marker)}sh -c {inner} qoslab {life}"
           f"{' '.join(q(a) for a in argv)} </dev/null >>{q(stdout or '/dev/null')} 2>>{q(stderr or '/dev/null')}")
    cd = f" && cd {q(cwd)}" if cwd else ""
    p = q(procs)
    return (f"mkdir -p {p}{cd} || exit {PREPARE_FAILED}\n"
            f"( {cmd} &\n"
            f"  c=$!; echo $c > {p}/$c.pid; i=0\n"
            f"  while kill -0 $c 2>/dev/null && ! kill -0 -$c 2>/dev/null && [ $i -lt 400 ]; do sleep 0.005; "
            f"i=$((i+1)); done\n"  # its own process group (setsid done) before anyone signals it
            f"  echo $c; exec >/dev/null 2>&1\n"
            f"  wait $c; echo $? > {p}/$c.rc.tmp; mv {p}/$c.rc.tmp {p}/$c.rc; rm -f {p}/$c.pid ) </dev/null &\n")


def _await_rc(procs: str, pid: int, tries: int, step_s: float = 0.05) -> str:
    """Shell lines: wait up to ``tries`` x ``step_s`` seconds for PID's rc file, then print it or
    ``gone`` (no waiter wrote one)."""
    rc = f"{q(procs)}/{pid}.rc"
    return (f"i=0; while [ ! -e {rc} ] && [ $i -lt {tries} ]; do sleep {step_s}; i=$((i+1)); done\n"
            f"cat {rc} 2>/dev/null || echo gone\n")


def poll_script(root: str, pid: int) -> str:
    """Print PID's exit status, ``running``, or ``gone``."""
    procs = f"{root}/.procs"
    return (f"if [ -e {q(procs)}/{pid}.rc ]; then cat {q(procs)}/{pid}.rc; exit 0; fi\n"
            f"if [ -e {q(procs)}/{pid}.pid ] && kill -0 {pid} 2>/dev/null; then echo running; exit 0; fi\n"
            + _await_rc(procs, pid, 20))


def wait_script(root: str, pid: int, timeout_s: float) -> str:
    """Wait at most ``timeout_s`` seconds for PID to end; print its exit status, or ``running``."""
    rc = f"{q(root + '/.procs')}/{pid}.rc"
    tries = max(1, int(timeout_s / 0.05))
    return (f"i=0; while [ ! -e {rc} ] && [ $i -lt {tries} ]; do sleep 0.05; i=$((i+1)); done\n"
            f"cat {rc} 2>/dev/null || echo running\n")


def stop_script(root: str, pid: int, grace_s: float) -> str:
    """SIGTERM to PID's process group, SIGKILL after ``grace_s`` seconds (also when PID already
    ended: children left in its group); print its exit status or ``gone``."""
    tries = max(1, int(grace_s / 0.02))
    rc = f"{q(root + '/.procs')}/{pid}.rc"
    return (f"kill -TERM -{pid} 2>/dev/null; i=0\n"
            f"while [ ! -e {rc} ] && kill -0 {pid} 2>/dev/null && [ $i -lt {tries} ]; do sleep 0.02; i=$((i+1)); done\n"
            f"kill -KILL -{pid} 2>/dev/null\n" + _await_rc(f"{root}/.procs", pid, 40))


def kill_groups_lines(root: str, grace_s: float) -> str:
    """Shell lines ending every process group listed in ``root/.procs`` (SIGTERM, ``grace_s``
    seconds, SIGKILL)."""
    p = q(f"{root}/.procs")
    each = f'for f in {p}/*.pid; do [ -e "$f" ] && kill -{{sig}} -$(basename "$f" .pid) 2>/dev/null && n=1; done'
    return f"n=0; {each.format(sig='TERM')}\n[ $n = 0 ] || sleep {grace_s:g}\n{each.format(sig='KILL')}\n"


def guard_script(root: str, lease_s: float) -> str:
    """The guard's loop (see the module doc): once a second, check the lease's age; past
    ``lease_s`` seconds end every listed process group, remove ``root`` (and its parent when
    empty) and exit. It also exits when ``root`` is gone."""
    r = q(root)
    parent = q(root.rsplit("/", 1)[0])
    return (f"while sleep 1; do\n"
            f"  [ -d {r} ] || exit 0\n"
            f"  age=$(( $(date +%s) - $(stat -c %Y {r}/.lease 2>/dev/null || echo 0) ))\n"
            f"  [ $age -le {int(lease_s)} ] && continue\n"
            + "  " + kill_groups_lines(root, KILL_AFTER_S).replace("\n", "\n  ")
            + f"sleep 0.5; rm -rf {r}; rmdir {parent} 2>/dev/null; exit 0\n"
            f"done\n")


def ensure_guard_lines(root: str, run_id: str, lease_s: float) -> str:
    """Shell lines: touch the lease and start the guard unless one runs (silent). Every start
    runs them, so a guard ended by someone else (a clean-up of the node) comes back with the
    next process it has to watch."""
    r = q(root)
    g = f"{r}/.guard.pid"
    return (f"mkdir -p {r}/.procs && touch {r}/.lease || exit {PREPARE_FAILED}\n"
            f"if ! {{ [ -e {g} ] && kill -0 $(cat {g}) 2>/dev/null; }}; then\n"
            f"  setsid env {RUN_MARKER}={q(run_id)} sh -c {q(guard_script(root, lease_s))} qoslab-guard "
            f"</dev/null >/dev/null 2>&1 &\n"
            f"  echo $! > {g}\nfi\n")


def start_guard_script(root: str, run_id: str, lease_s: float) -> str:
    """Touch the lease and start the guard unless one runs; print its PID."""
    return ensure_guard_lines(root, run_id, lease_s) + f"cat {q(root)}/.guard.pid\n"


def close_script(root: str, grace_s: float = 1.0) -> str:
    """End the guard and every listed process group, remove ``root`` (and its parent when empty)."""
    r = q(root)
    parent = q(root.rsplit("/", 1)[0])
    return (f"[ -d {r} ] || exit 0\n"
            f"[ -e {r}/.guard.pid ] && kill -TERM $(cat {r}/.guard.pid) 2>/dev/null\n"
            + kill_groups_lines(root, grace_s)
            + f"sleep 0.1; rm -rf {r}; rmdir {parent} 2>/dev/null; exit 0\n")


def leftovers_script(run_id: str | None) -> str:
    """Print the PIDs (one per line) of processes marked with ``QOSLAB_RUN=<run_id>`` (any run
    when None) in this node's network namespace (the embedded testbed's nodes share one process
    table), except the shell running this script."""
    pat = f"^{RUN_MARKER}={run_id}$" if run_id is not None else f"^{RUN_MARKER}="
    return (f"me=$(readlink /proc/$$/ns/net)\n"
            f"for e in /proc/[0-9]*/environ; do\n"
            f"  grep -qz {q(pat)} \"$e\" 2>/dev/null || continue\n"
            f"  p=${{e#/proc/}}; p=${{p%/environ}}; [ \"$p\" = $$ ] && continue\n"
            f"  [ \"$(readlink /proc/$p/ns/net 2>/dev/null)\" = \"$me\" ] && echo $p\n"
            f"done; exit 0\n")


def end_pids_script(pids: Sequence[int], grace_s: float = 2.0) -> str:
    """SIGTERM each PID, SIGKILL after ``grace_s`` seconds what is left."""
    ps = " ".join(str(int(p)) for p in pids)
    return f"kill -TERM {ps} 2>/dev/null; sleep {grace_s:g}; kill -KILL {ps} 2>/dev/null; exit 0\n"


def facts_script() -> str:
    """Print what this node permits: ``timer_slack=0|1`` (a process may set its own timer slack
    to 1 ns) and ``realtime=0|1`` (``chrt -f 1`` is allowed)."""
    return ("s=0; (echo 1 > /proc/self/timerslack_ns && [ \"$(cat /proc/self/timerslack_ns)\" = 1 ]) "
            "2>/dev/null && s=1; echo timer_slack=$s\n"
            "r=0; chrt -f 1 true 2>/dev/null && r=1; echo realtime=$r\n")
