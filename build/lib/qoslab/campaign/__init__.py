"""Campaigns: many trials over a matrix of conditions, stored as they end, resumable.

- :func:`load_playbook` (:mod:`.checks`): a playbook (the model and the schedule are
  :mod:`qoslab.trials.playbook`'s) with every reference checked;
- :mod:`.folder`: making a campaign folder (resolved playbook, provenance, schedule);
- the SQLite results store is :mod:`qoslab.trials.store` (below the runner and the statistics);
- :mod:`.trial`: one trial, phase by phase; :mod:`.runner`: all pending trials and resume;
  :mod:`.attempts`: one trial's attempts, retries and invalid re-runs;
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

from ..trials.playbook import Condition, Playbook, ScheduledTrial, schedule
from ..trials.store import SCHEMA, Store
from .checks import load_playbook
from .folder import create, load_campaign_playbook, provenance
from .runner import Runner

__all__ = ["SCHEMA", "Condition", "Playbook", "Runner", "ScheduledTrial", "Store", "create",
           "load_campaign_playbook", "load_playbook", "provenance", "schedule"]
