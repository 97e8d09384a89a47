"""The one wrapper of the analysis jar (``analysis/``, ``org.qoslab.analysis.Main``: Apache Commons
Math statistics): its path, its ``java`` command line and how a failed run is reported.

Every Java statistics run of qoslab goes through :func:`analysis_argv` and :func:`run_analysis`:
``stats`` (a campaign's trials.csv, :mod:`.campaign`), ``calls`` (call latencies, :mod:`.calls`)
and ``thesis`` (the thesis's Appendix A data, :mod:`qoslab.report.notebook`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from ..errors import QoslabError
from ..topology import repo_root

#: The shaded analysis jar built by ``mvn package`` (its dependencies in ``lib/`` beside it).
ANALYSIS_JAR = repo_root() / "analysis" / "target" / "qoslab-analysis-0.1.0.jar"
MAIN = "org.qoslab.analysis.Main"


def analysis_argv(command: str, *args: str, jar: Path = ANALYSIS_JAR) -> list[str]:
    """``java`` argv of ``qoslab-analysis COMMAND ARGS...`` (command: ``stats``, ``calls`` or
    ``thesis``; args as the tool's picocli options, analysis/README.md)."""
    return ["java", "-cp", f"{jar}:{jar.parent / 'lib'}/*", MAIN, command, *args]


def run_analysis(argv: Sequence[str], what: str, timeout_s: float = 300) -> None:
    """Run an argv from :func:`analysis_argv` (``timeout_s`` seconds at most). Raises QoslabError
    ``"<what> failed: <the tool's last 300 characters of stderr>"`` on a non-zero exit, and names
    the jar when it was never built."""
    if not Path(argv[2].split(":", 1)[0]).exists():
        raise QoslabError(f"{what} failed: {argv[2].split(':', 1)[0]} is missing (run 'make setup' to build it)")
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise QoslabError(f"{what} failed: the analysis tool took over {timeout_s:g} s") from None
    if p.returncode != 0:
        raise QoslabError(f"{what} failed: {p.stderr.strip()[-300:]}")
