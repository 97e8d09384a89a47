"""Campaigns: many trials over a matrix of conditions, stored as they end, resumable.

- :mod:`.playbook`: playbooks (validated, every reference checked by :mod:`.checks`) and the schedule;
- :mod:`.folder`: making a campaign folder (resolved playbook, provenance, schedule);
- :mod:`.store`: the SQLite results store;
- :mod:`.trial`: one trial, phase by phase; :mod:`.runner`: all pending trials, retries, resume;
- :mod:`.stats`: trials.csv and the Java statistics; :mod:`.censoring`: failed attempts with a
  right-censored render time (call timeouts) and the censoring sensitivity;
- :mod:`.cpu`: per-trial CPU time of flood, forwarding, workers and other load (``cpu_*`` columns);
  :mod:`.drops`: a captured trial's packet accounting (``capture_*`` columns);
- :mod:`.sweep`: one playbook at several link rates (topology variants) and the sweep table.

The campaign folder holds ``playbook.yaml`` (resolved), ``provenance.json`` (tool versions,
kernel, qoslab commit, seed), ``trials.sqlite`` (the schedule and one row per trial), per-trial
artifacts under ``trials/NNNN/``, and after the last trial ``trials.csv`` and ``stats.json``.
"""

from __future__ import annotations

from .folder import create, load_campaign_playbook, provenance
from .playbook import Condition, Playbook, ScheduledTrial, load_playbook, schedule
from .runner import Runner
from .stats import (
           ANALYSIS_JAR,
           METRICS,
           campaign_stats,
           censoring_stats,
           export_csv,
           plan_comparisons,
           run_stats,
)
from .store import SCHEMA, Store

__all__ = ["ANALYSIS_JAR", "METRICS", "SCHEMA", "Condition", "Playbook", "Runner", "ScheduledTrial", "Store",
           "campaign_stats", "censoring_stats", "create", "export_csv", "load_campaign_playbook", "load_playbook",
           "plan_comparisons",
           "provenance", "run_stats", "schedule"]
