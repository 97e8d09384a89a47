"""qoslab.executors.joinexec: the wrapper that joins cgroups and an affinity without a
preexec_fn, as an argv (pure) and run for real (plain files stand in for ``cgroup.procs``: the
shell's write is the same; the real cgroup is tests/integration/test_cgroups.py's)."""

from __future__ import annotations

import os
import subprocess

import pytest

from qoslab.executors.joinexec import BUDGET_REFUSED, SHELL_NAME, join_argv, not_found
from qoslab.executors.local import SubprocessExecutor


def test_the_argv_joins_in_order_then_execs_the_command():
    argv = join_argv("/cg/trial-3/cgroup.procs", ["/cg/host a/cgroup.procs"], frozenset({3, 1}))
    assert argv[:2] == ["sh", "-c"] and argv[3] == SHELL_NAME and argv[4:] == ["taskset", "-c", "1,3"]
    script = argv[2]
    assert script.index("trial-3") < script.index("'/cg/host a/cgroup.procs'") < script.index('exec "$@"')
    assert f"|| exit {BUDGET_REFUSED}" in script and script.count("exit") == 1  # only the budget is required
    assert join_argv(None, [], None) == ["sh", "-c", 'exec "$@"', SHELL_NAME]
    assert join_argv(None, [], frozenset())[-1] == SHELL_NAME  # no affinity: no taskset
    with pytest.raises(ValueError, match="CPU numbers must be >= 0"):
        join_argv(None, [], frozenset({-1}))


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def test_the_shell_writes_its_own_pid_then_becomes_the_command(tmp_path):
    trial, budget = tmp_path / "trial.procs", tmp_path / "budget.procs"
    budget.write_text("")
    r = _run([*join_argv(str(trial), [str(budget)], None), "sh", "-c", "echo $$"])
    assert r.returncode == 0, r.stderr
    assert trial.read_text() == budget.read_text() == "0\n"  # "0": the writing process itself
    r = _run([*join_argv(str(tmp_path / "gone" / "cgroup.procs"), [], None), "echo", "ran"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "ran\n", "")  # a trial cgroup that is gone: ignored


def test_a_budget_that_cannot_be_joined_ends_the_command_before_it_runs(tmp_path):
    marker = tmp_path / "ran"
    r = _run([*join_argv(None, [str(tmp_path / "no-such-cgroup" / "cgroup.procs")], None), "touch", str(marker)])
    assert r.returncode == BUDGET_REFUSED and not marker.exists() and r.stderr == ""


def test_the_affinity_is_the_commands(tmp_path):
    cpu = min(os.sched_getaffinity(0))
    r = _run([*join_argv(None, [], frozenset({cpu})), "grep", "Cpus_allowed_list", "/proc/self/status"])
    assert r.returncode == 0 and r.stdout.split()[-1] == str(cpu)


def test_a_missing_command_is_named_through_the_wrapper(tmp_path):
    for cpus in (None, frozenset({min(os.sched_getaffinity(0))})):
        r = _run([*join_argv(None, [], cpus), "no-such-command-qsl"])
        assert r.returncode == 127 and not_found(r.stderr, "no-such-command-qsl"), r.stderr
        assert not not_found(r.stderr, "other-command")
    ex = SubprocessExecutor("n1", cgroups=[str(tmp_path / "budget.procs")])  # a budget: the wrapper is used
    from qoslab.errors import QoslabError
    with pytest.raises(QoslabError, match="on n1: command not found: no-such-command-qsl"):
        ex.run(["no-such-command-qsl"])
    assert ex.run(["echo", "ok"]).stdout == "ok\n" and (tmp_path / "budget.procs").read_text() == "0\n"
    refused = SubprocessExecutor("n2", cgroups=[str(tmp_path / "none" / "cgroup.procs")])
    assert refused.run(["true"], check=False).returncode == BUDGET_REFUSED
