"""The ``switch`` meter: the switch's QoS counters of the trial's ports, before and after the
trial, as deltas (the reading and the deltas: :mod:`.evidence`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .base import BaseMeter, TrialContext
from .evidence import COLUMNS as SWITCH_COLUMNS
from .evidence import TrialEvidence


class SwitchMeter(BaseMeter):
    """The switch's QoS counters of the trial's ports, before (``begin``) and after (``end``), as
    deltas (:mod:`.evidence`). A switch that cannot be read loses the evidence, never the trial."""

    COLUMNS: ClassVar[Mapping[str, str]] = SWITCH_COLUMNS

    def __init__(self, ctx: TrialContext) -> None:
        super().__init__(ctx)
        self.evidence = TrialEvidence(ctx.switch, ctx.ports)
        self.after_started = False

    def begin(self, ctx: TrialContext) -> None:
        """Start reading the counters before the trial (in the background)."""
        self.evidence.start(background=True)

    def traffic_begin(self, ctx: TrialContext) -> None:
        """The 'before' reading is complete before any trial traffic starts."""
        self.evidence.wait()

    def traffic_end(self, ctx: TrialContext) -> None:
        """Start reading them after (in the background: the capture may still be stopping)."""
        self.after_started = True
        self.evidence.finish(background=True)

    def end(self, ctx: TrialContext) -> None:
        """Have the 'after' reading (read now unless ``traffic_end`` started it); a read error is logged."""
        if not self.after_started:
            self.evidence.finish()
        self.evidence.wait()
        if self.evidence.error:
            ctx.log(self.evidence.error)

    @property
    def seconds(self) -> float:
        """Wall time of the two readings (seconds)."""
        return self.evidence.seconds

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        """``switch_json`` and its numeric summaries."""
        return self.evidence.columns()

    def close(self) -> None:
        """Wait for a reading still running."""
        self.evidence.wait()
