"""The go gate: a workload's manager JVM starts while the trial still prepares, and its measured
run begins when the trial says so.

A congested trial starts its flood and waits until every flooded port is saturated (about 0.1 s
here); the manager JVM's start (0.2-0.3 s) is workload time the trial had to wait for after that.
With a gate the workload backend starts the manager with ``--go-file NODE_PATH``
(java-workload :class:`GoGate`): the JVM boots meanwhile and waits, and :meth:`GoGate.open`
creates the file once the flood is established. Nothing the manager measures changes (its run,
lookups included, starts after the go); it reports the seconds it waited (``go_wait_s``), which
the trial counts as its own overhead, not the workload's.

A backend that supports the gate has ``gated = True`` and passes ``gate`` to its manager
(``raytracer``, ``matmul``, ``pingpong``; ``command`` runs the user's program after the flood has
settled, as before).

**Boot outside the host's CPU budget** (issue 53): on the embedded testbed with a ``cpu:`` block a
host has a fraction of a core (0.15 in thesis-faithful-cpu), and a manager JVM that booted in it
took 4.2-5.6 s a trial (``manager_start_s``, the medians of the committed on-machine run's
conditions; 0.34-0.42 s at full speed), time that is neither the workload nor the network's and that
outlasted the congested trials' preparation, so part of it fell inside the meters' window. The
backend starts the manager with :meth:`GoGate.executor` (the host's boot group: its cores, no quota;
:mod:`qoslab.testbed.cpuplace`), the manager creates ``go.ready`` when it waits (java-workload
``GoGate``), and the trial (:meth:`GoGate.wait_booted`, then :meth:`GoGate.open`) moves it into the
host's budget before the go: its run, lookups included, is measured in the budget as before. With a
boot group every trial of a gated backend is gated, with a flood or not; elsewhere (SSH, real nodes,
no ``cpu:`` block) nothing changes.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import QoslabError

#: The go file's name in the trial's workload folder.
GO_FILE = "go"
#: The file the manager creates beside the go file when it starts to wait (its boot is done).
READY_SUFFIX = ".ready"
#: Seconds the trial waits for a booting manager's ready file before it gives the go anyway (a
#: manager JVM boots in 0.3-0.4 s here at full speed; a jar without the ready file never makes one).
BOOT_WAIT_S = 60.0
#: Seconds between two looks for the ready file.
BOOT_POLL_S = 0.005


class GoGate:
    """The go file of one trial's manager: ``local`` is its path in the trial's folder; the
    backend :meth:`arm` s it with the head node's executor (the path there is returned for
    ``--go-file``), the trial :meth:`open` s it (or :meth:`abort` s: the manager then ends without
    a run). ``armed`` is set once the manager is about to start."""

    def __init__(self, local: Path) -> None:
        self.local = local
        self.node: str | None = None
        self.ex: Any = None
        self.armed = threading.Event()
        self.opened = False
        self.aborted = False
        self._lock = threading.Lock()

    def arm(self, ex: Any) -> str:
        """Remember the head node's executor; remove a stale go file (or write ``abort`` when the
        trial has given up already); return the node path."""
        self.local.parent.mkdir(parents=True, exist_ok=True)
        node = f"{ex.node_dir(self.local.parent)}/{self.local.name}"
        with self._lock:
            self.node, self.ex = node, ex
            self.local.unlink(missing_ok=True)
            self.local.with_name(self.local.name + READY_SUFFIX).unlink(missing_ok=True)
            if not self._shared():
                ex.run(["rm", "-f", node], check=False, timeout=10)
            if self.aborted:
                self._write("abort\n")
            self.armed.set()
        return node

    def executor(self, ex: Any) -> Any:
        """The executor to start the manager with: ``ex``'s booting variant when it has one (the
        host's boot group, see the module's doc), else ``ex``."""
        as_booting = getattr(ex, "as_booting", None)
        return as_booting() if as_booting is not None else ex

    def wait_booted(self, alive: Callable[[], bool], timeout_s: float = BOOT_WAIT_S) -> float:
        """For a manager started outside its host's budget (:meth:`executor`; nothing to wait for
        otherwise): wait until it has booted (its ready file, on this machine's folder), while
        ``alive()``, at most ``timeout_s``; returns the seconds waited. Call after :attr:`armed`."""
        if getattr(self.ex, "admit_boot", None) is None or not self._shared():
            return 0.0
        ready = self.local.with_name(self.local.name + READY_SUFFIX)
        t0 = time.monotonic()
        while not ready.exists() and alive() and time.monotonic() - t0 < timeout_s:
            time.sleep(BOOT_POLL_S)
        return time.monotonic() - t0

    def _shared(self) -> bool:
        return self.node == str(self.local)  # the node writes into this machine's folder

    def _write(self, text: str) -> None:
        if self.node is None:
            raise QoslabError("go gate opened before the workload armed it")
        if self._shared():
            tmp = self.local.with_suffix(".tmp")
            tmp.write_text(text)
            tmp.replace(self.local)  # appears whole: the manager may read it at once
        else:
            node, part = shlex.quote(self.node), shlex.quote(self.node + ".tmp")
            self.ex.run(["sh", "-c", f"printf %s {shlex.quote(text)} > {part} && mv {part} {node}"], timeout=30)

    def open(self) -> None:
        """Let the manager's run begin: a manager that booted outside its host's budget is moved
        into it first. Raises QoslabError before :meth:`arm` or when the move fails."""
        with self._lock:
            admit = getattr(self.ex, "admit_boot", None)
            if admit is not None:
                admit()
            self._write("go\n")
            self.opened = True

    def abort(self) -> None:
        """End a waiting manager without a run (the trial failed before its go): at once when it is
        armed, else as soon as it is; nothing once the gate is open."""
        with self._lock:
            if self.opened:
                return
            self.aborted = True
            if self.armed.is_set():
                try:
                    self._write("abort\n")
                except QoslabError:
                    pass
