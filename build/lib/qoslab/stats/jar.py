"""The one wrapper of the analysis jar (``analysis/``, ``org.qoslab.analysis.Main``: Apache Commons
Math statistics): its path, its ``java`` command line and how a failed run is reported.

Every Java statistics run of qoslab goes through :func:`run_analysis` (its argv from
:func:`analysis_argv`):
``stats`` (a campaign's trials.csv, :mod:`.campaign`), ``calls`` (call latencies, :mod:`.calls`)
and ``thesis`` (the thesis's Appendix A data, :mod:`qoslab.report.notebook`).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import QoslabError
from ..topology import repo_root

#: The shaded analysis jar built by ``mvn package`` (its dependencies in ``lib/`` beside it).
ANALYSIS_JAR = repo_root() / "analysis" / "target" / "qoslab-analysis-0.1.0.jar"
MAIN = "org.qoslab.analysis.Main"


def analysis_argv(command: str, *args: str, jar: Path = ANALYSIS_JAR) -> list[str]:
    """``java`` argv of ``qoslab-analysis COMMAND ARGS...`` (command: ``stats``, ``calls`` or
    ``thesis``; args as the tool's picocli options, analysis/README.md)."""
    return ["java", "-cp", f"{jar}:{jar.parent / 'lib'}/*", MAIN, command, *args]


def run_analysis(tool_args: Sequence[str], what: str, out: Path, timeout_s: float = 300,
                 jar: Path = ANALYSIS_JAR) -> dict[str, Any]:
    """Run ``qoslab-analysis TOOL_ARGS...`` (``tool_args``: the command then its options, see
    :func:`analysis_argv`) with ``jar`` for at most ``timeout_s`` seconds; the tool writes the JSON
    file ``out`` (one of its options), whose ``source`` is then made portable
    (:func:`portable_source`). Returns that JSON. Raises QoslabError ``"<what> failed: ..."``
    naming the jar when it was never built, the tool's last 300 characters of stderr on a non-zero
    exit, or the timeout."""
    if not jar.exists():
        raise QoslabError(f"{what} failed: {jar} is missing (run 'make setup' to build it)")
    if not tool_args:
        raise QoslabError(f"{what} failed: no analysis command given")
    argv = analysis_argv(tool_args[0], *tool_args[1:], jar=jar)
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise QoslabError(f"{what} failed: the analysis tool took over {timeout_s:g} s") from None
    if p.returncode != 0:
        raise QoslabError(f"{what} failed: {p.stderr.strip()[-300:]}")
    try:
        return portable_source(out)
    except (OSError, ValueError) as e:
        raise QoslabError(f"{what} failed: the analysis tool wrote no readable {out.name}: {e}") from None


def _portable(path: str, folder: Path) -> str:
    """``path`` relative to ``folder`` when inside it, else to the repository when inside that,
    else its file name: no absolute path of the machine that ran it."""
    p = Path(path)
    if not p.is_absolute():
        return path
    for base in (folder.resolve(), repo_root().resolve(), repo_root().parent.resolve()):
        try:
            return str(p.resolve().relative_to(base))
        except ValueError:
            continue
    return p.name


def portable_source(out: Path) -> dict[str, Any]:
    """Rewrite the ``source`` of the JSON file ``out`` the analysis tool wrote (a path, a list of
    paths or a mapping of them) so that no absolute path remains (see :func:`_portable`, relative
    to ``out``'s folder); returns the JSON. Raises OSError/ValueError for a missing or broken file."""
    data: dict[str, Any] = json.loads(out.read_text())

    def fix(v: Any) -> Any:
        if isinstance(v, str):
            return _portable(v, out.parent)
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        return v

    if "source" in data:
        data["source"] = fix(data["source"])
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(json.dumps(data, separators=(",", ":")))
        os.replace(tmp, out)
    return data
