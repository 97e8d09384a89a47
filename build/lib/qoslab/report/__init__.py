"""The report: the notebook runner (:mod:`.notebook`: :func:`campaign_report`,
:func:`thesis_report`) and the notebook's pure helpers (:mod:`.lib`: formatting, order, colours,
tables; :mod:`.calls`: call latency; :mod:`.factors`: the factorial section; :mod:`.fidelity`: the
fidelity warning and table; :mod:`.mechanisms`: seed 000's and 002's mechanisms under congestion;
:mod:`.seedmpj`: seed 003's MPJ per operation; :mod:`.seeds`: which of them a campaign shows;
:mod:`.trialresults`: the counted trials' workload results).
"""

from __future__ import annotations

from .notebook import campaign_report, thesis_report

__all__ = ["campaign_report", "thesis_report"]
