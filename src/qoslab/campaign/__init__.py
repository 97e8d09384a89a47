"""Campaigns: many trials over a matrix of conditions, stored as they end, resumable.

- :mod:`.playbook`: playbooks (validated, every reference checked by :mod:`.checks`) and the schedule;
- :mod:`.folder`: making a campaign folder (resolved playbook, provenance, schedule);
- :mod:`.store`: the SQLite results store;
- :mod:`.trial`: one trial, phase by phase; :mod:`.runner`: all pending trials, retries, resume;
- :mod:`.trialplan`: one trial resolved, purely, into what it will do (:class:`TrialPlan`);
- :mod:`.preview`: a campaign's plan before it runs (``qoslab campaign plan``, ``--dry-run``);
- :mod:`.eta`: per-condition ETAs; :mod:`.watchdog`: the trial timeout; :mod:`.linkcal`: the link
  rate chosen by measurement;
- :mod:`.sweep`: one playbook at several link rates (topology variants) and the sweep table.

The campaign folder holds ``playbook.yaml`` (resolved), ``provenance.json`` (tool versions,
kernel, qoslab commit, seed), ``trials.sqlite`` (the schedule and one row per trial), per-trial
artifacts under ``trials/NNNN/``, and after the last trial ``trials.csv`` and ``stats.json``.
"""

from __future__ import annotations

from .folder import create, load_campaign_playbook, provenance
from .playbook import Condition, Playbook, ScheduledTrial, load_playbook, schedule
from .runner import Runner
from .store import SCHEMA, Store

__all__ = ["SCHEMA", "Condition", "Playbook", "Runner", "ScheduledTrial", "Store", "create",
           "load_campaign_playbook", "load_playbook", "provenance", "schedule"]
