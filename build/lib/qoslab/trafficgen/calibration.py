"""Calibration of D-ITG's plain pacing: ITGSend ``-C`` (without ``-poll``) -> packets/s it
really sends on this testbed, measured with the flood's own flows sending at once. Stored per
topology under ``results/calibration/`` (machine-specific, never committed) and invalidated by a
change of kernel, payload size or sender set-up."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..errors import QoslabError
from ..topology import repo_root
from .ditgsched import sender_id


@dataclass
class Calibration:
    """Measured ITGSend ``-C`` (without -poll) -> achieved packets/s on this testbed, for one payload
    size. ``points``: ``[(C, achieved_pps, cpu_percent_of_one_core)]`` sorted by C."""

    topology: str
    payload_bytes: int
    points: list[tuple[int, float, float]]
    poll: dict = field(default_factory=dict)
    kernel: str = ""
    sender: str = ""

    def covers(self, pps: float) -> bool:
        """True when some measured point reached at least ``pps``."""
        return any(a >= pps for _, a, _ in self.points)

    def rate_for(self, pps: float) -> int:
        """The -C to ask for ``pps`` packets/s: log-linear interpolation between the two measured
        points around it, proportional below the first point. Raises QoslabError when no point reached ``pps``."""
        pts = sorted(self.points)
        if not self.covers(pps):
            raise QoslabError(f"calibration reaches at most {max(a for _, a, _ in pts):.0f} packets/s, "
                              f"{pps:.0f} asked")
        prev = (pts[0][0], 0.0)
        for c, a, _ in pts:
            if a >= pps:
                c0, a0 = prev
                if a0 == 0.0:  # below the first point: proportional (plain pacing is near linear there)
                    return int(math.ceil(c * pps / a))
                if a <= a0:  # noisy non-monotone points: scale the covering one
                    return int(math.ceil(c * max(1.0, pps / a)))
                lc = math.log(c0) + (math.log(c) - math.log(c0)) * (pps - a0) / (a - a0)
                return int(math.ceil(math.exp(lc)))
            prev = (c, a)
        raise AssertionError("unreachable")

    @staticmethod
    def path(topology: str) -> Path:
        """Where the calibration of ``topology`` is stored (machine-specific, not committed)."""
        return repo_root() / "results" / "calibration" / f"flood-{topology}.json"

    def save(self) -> Path:
        p = self.path(self.topology)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(asdict(self), indent=1))
        return p

    @classmethod
    def load(cls, topology: str, payload_bytes: int) -> Calibration | None:
        """The stored calibration, or None when absent, unreadable, for another payload size,
        another kernel or another sender set-up (sender_id(): the pacing it measured is not today's)."""
        try:
            d = json.loads(cls.path(topology).read_text())
            c = cls(**d)
            c.points = [(int(p[0]), float(p[1]), float(p[2])) for p in c.points]
        except (OSError, ValueError, TypeError):
            return None
        if (c.payload_bytes != payload_bytes or c.kernel != os.uname().release
                or c.sender != sender_id()):
            return None
        return c
