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
"""

from __future__ import annotations

import shlex
import threading
from pathlib import Path
from typing import Any

from ..errors import QoslabError

#: The go file's name in the trial's workload folder.
GO_FILE = "go"


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
            if not self._shared():
                ex.run(["rm", "-f", node], check=False, timeout=10)
            if self.aborted:
                self._write("abort\n")
            self.armed.set()
        return node

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
        """Let the manager's run begin. Raises QoslabError before :meth:`arm`."""
        with self._lock:
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
