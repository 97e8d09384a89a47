"""Statistics of campaigns: everything computed from stored trials, nothing that runs a trial.

- :mod:`.campaign`: trials.csv (and its network-wait variant) from the store and the Java
  statistics over it (``stats.json``); :mod:`.jar`: the one wrapper of the analysis jar
  (``analysis/``, Apache Commons Math);
- :mod:`.recovery`: the recovery ratio, its one definition and its one bootstrap;
- :mod:`.calls`: per-call latency statistics (``calls.jsonl``, ``calls-stats.json``);
- :mod:`.factorial`: the QoS factor's recovery at each level of the other factors;
- :mod:`.censoring`: failed attempts with a right-censored time and the censoring sensitivity;
- :mod:`.fidelity`: the fidelity verdicts over a campaign (which trials the statistics leave out);
- :mod:`.sequential` (the precision rule, pure), :mod:`.stopping` (the runner's checks of it on the
  store) and :mod:`.seqsim` (simulated sequential campaigns).
"""

from __future__ import annotations

from .campaign import (
    METRICS,
    campaign_stats,
    censoring_stats,
    export_csv,
    plan_comparisons,
    run_stats,
)
from .jar import ANALYSIS_JAR, analysis_argv, run_analysis

__all__ = ["ANALYSIS_JAR", "METRICS", "campaign_stats", "censoring_stats", "export_csv", "plan_comparisons",
           "run_stats", "analysis_argv", "run_analysis"]
