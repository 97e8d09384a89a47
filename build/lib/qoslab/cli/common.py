"""What every sub-app of the CLI shares: the consoles, the topology option, the testbed."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

import typer
from rich.console import Console

from ..errors import QoslabError
from ..testbed import Testbed
from ..topology import load_topology


def _width(stream: TextIO) -> int | None:
    """Output to a file or pipe (logs, `make run | tee`) is 120 columns wide instead of rich's 80,
    so tables and comparison lines are not wrapped or truncated; COLUMNS still overrides."""
    return None if stream.isatty() or "COLUMNS" in os.environ else 120


console = Console(width=_width(sys.stdout))
err_console = Console(stderr=True, width=_width(sys.stderr))

TopologyOpt = typer.Option(None, "--topology", "-t", help="Topology file (default: playbooks/topologies/ecenet.yaml).",
                           show_default=False)


def testbed_for(topology: Path | None) -> Testbed:
    """The testbed of a topology file (default ecenet). Raises ConfigError/QoslabError."""
    return Testbed(load_topology(topology))


def running_testbed(topology: Path | None) -> Testbed:
    """The testbed of a topology file, which must be up. Raises QoslabError saying how to start it."""
    tb = testbed_for(topology)
    if not tb.is_up():
        raise QoslabError(f"testbed {tb.topo.name} is not up (run `qoslab testbed up`)")
    return tb


def write_output(path: Path, text: str, option: str = "--out", mode: int = 0o644) -> None:
    """Write ``text`` to the file ``path`` the user named with ``option`` (created with ``mode``,
    or truncated). Raises QoslabError naming the option and the path when it cannot be written (a
    missing folder, a folder given for a file, no permission), never an OSError traceback."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w") as f:
            f.write(text)
    except OSError as e:
        why = e.strerror or type(e).__name__
        if isinstance(e, FileNotFoundError) and not path.parent.is_dir():
            why = f"the folder {path.parent} does not exist"
        raise QoslabError(f"{option} {path}: cannot write: {why}") from None

