"""The command outputs the documentation site shows (docs/snippets/*.txt), produced here.

Only fast commands that need no testbed, no root and no machine-local state: ``--help`` texts,
``qoslab topology validate``, ``qoslab switch render``. (``qoslab campaign plan`` is left out: its
ETA comes from the campaigns this machine ran, so its output differs between machines.)
Each snippet is the command line (``$ qoslab ...``) and its output, run from the repository's
root with a fixed terminal (100 columns, no colour). Pages include them with
``--8<-- "NAME.txt"`` (pymdownx.snippets, base docs/snippets).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: snippet name -> the qoslab arguments. Add a line here to show another output on the site.
COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "campaign-run-help": ["campaign", "run", "--help"],
    "switch-help": ["switch", "--help"],
    "topology-validate": ["topology", "validate", "playbooks/topologies/ecenet.yaml"],
    "topology-validate-quick": ["topology", "validate", "playbooks/topologies/ecenet-quick.yaml"],
    "topology-validate-9300": ["topology", "validate", "playbooks/topologies/ecenet9300.yaml"],
    "topology-validate-eos": ["topology", "validate", "playbooks/topologies/eceneteos.yaml"],
    "switch-render-fifo": ["switch", "render", "fifo"],
    "switch-render-thesis": ["switch", "render", "thesis"],
    "switch-render-thesis-9300": ["switch", "render", "thesis", "--platform", "catalyst9300"],
    "switch-render-thesis-eos": ["switch", "render", "thesis", "--platform", "arista_eos"],
}
TIMEOUT_S = 60


class CommandFailed(Exception):
    """A documented command exited non-zero or timed out (message: the command and its stderr's last line)."""


def run(root: Path, args: list[str]) -> str:
    """``$ qoslab ARGS`` and its standard output, run in ``root``. Raises CommandFailed."""
    env = {**os.environ, "COLUMNS": "100", "LINES": "50", "TERM": "dumb", "NO_COLOR": "1",
           "PYTHONPATH": str(root / "src")}
    env.pop("FORCE_COLOR", None)
    # the program name the usage lines print is argv[0]'s: the installed command's, `qoslab`
    cmd = [sys.executable, "-c", "import sys; sys.argv[0] = 'qoslab'; from qoslab.cli import main; main()", *args]
    try:
        p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as e:
        raise CommandFailed(f"qoslab {' '.join(args)}: no answer within {TIMEOUT_S} s") from e
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise CommandFailed(f"qoslab {' '.join(args)}: exit code {p.returncode}: {last}")
    text = "\n".join(line.rstrip() for line in p.stdout.replace(str(root), ".").splitlines()).strip("\n")
    return f"$ qoslab {' '.join(args)}\n{text}\n"


def render_all(root: Path) -> dict[Path, str]:
    """Every snippet: path relative to the repository -> text."""
    return {Path(f"docs/snippets/{name}.txt"): run(root, args) for name, args in COMMANDS.items()}
