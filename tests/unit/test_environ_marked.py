"""procs.environ_marked: which processes the testbed's clean-up of the hosts counts as qoslab's
(issue 51: it ended a ``squeue`` the operator ran in the login node's namespace)."""

from __future__ import annotations

import os
import subprocess

from qoslab.executors.local import NETNS_MARKER, NetnsExecutor
from qoslab.executors.sshscripts import RUN_MARKER
from qoslab.testbed.procs import environ_marked

MARKERS = {NETNS_MARKER: frozenset({"qoslab-m-jp-1"}), RUN_MARKER: None}


def _sleep(env: dict[str, str]) -> subprocess.Popen:
    base = {k: v for k, v in os.environ.items() if k not in (NETNS_MARKER, RUN_MARKER)}
    return subprocess.Popen(["sleep", "30"], env={**base, **env})


def test_a_marked_process_counts_and_an_unmarked_one_does_not():
    procs = {"netns": _sleep({NETNS_MARKER: "qoslab-m-jp-1"}), "run": _sleep({RUN_MARKER: "anything"}),
             "other-namespace": _sleep({NETNS_MARKER: "qoslab-x-jp-1"}), "none": _sleep({}),
             "prefix-only": _sleep({NETNS_MARKER + "X": "qoslab-m-jp-1"})}
    try:
        got = {k: environ_marked(p.pid, MARKERS) for k, p in procs.items()}
        assert got == {"netns": True, "run": True, "other-namespace": False, "none": False, "prefix-only": False}
    finally:
        for p in procs.values():
            p.kill()
            p.wait()
    assert environ_marked(procs["netns"].pid, MARKERS) is False  # gone


def test_a_netns_executor_marks_every_process_with_its_namespace():
    ex = NetnsExecutor("jp-1", "qoslab-m-jp-1")
    env = ex._env(None)
    assert env is not None and env[NETNS_MARKER] == "qoslab-m-jp-1" and env["PATH"] == os.environ["PATH"]
    assert ex._env({NETNS_MARKER: "caller", "X": "1"}) | {} == {**os.environ, "X": "1", NETNS_MARKER: "qoslab-m-jp-1"}  # the marker wins
    assert ex.as_emulation() is ex
