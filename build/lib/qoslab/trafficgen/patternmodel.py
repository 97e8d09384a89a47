"""The ``pattern:`` model of a flood file (what :mod:`.patterns` expands; see there)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..yamlio import StrictModel, SubFieldProblem

#: Longest flood duration and start delay (seconds): a day.
MAX_FLOOD_S = 86_400
#: Largest flood rate a flow may ask for: packets/s (one D-ITG sender reaches ~100 k here), as a
#: multiple of the link rate (a flood of 10x saturates any port; the campaigns use 1.1-1.5x) and
#: as bits/s on the wire.
MAX_PPS = 1_000_000
MAX_LINK_MULTIPLE = 10.0
MAX_BPS = 100e9
_RATE_X = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*x\s*\Z", re.IGNORECASE)
_RATE_BPS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kMG]?)bit/s\s*\Z")
_RATE_PPS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*pps\s*\Z")
_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}


def check_rate(v: object) -> str | int:
    """A flood rate as written: packets/s (an integer 1..MAX_PPS or ``"800 pps"``), a link-rate
    multiple ``"1.5x"`` (0 < m <= MAX_LINK_MULTIPLE) or bits/s on the wire (``"20 Mbit/s"``,
    ``"500kbit/s"``, ``"1000000 bit/s"``). Raises ValueError for anything else (booleans included)."""
    what = f"rate must be packets/s (1-{MAX_PPS} or '800 pps'), a link-rate multiple like '1.5x' (at most " \
           f"{MAX_LINK_MULTIPLE:g}x) or bits/s on the wire like '20 Mbit/s', got {v!r}"
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ValueError(what)
    if isinstance(v, int):
        if not 1 <= v <= MAX_PPS:
            raise ValueError(what)
        return v
    if (m := _RATE_X.match(v)) is not None:
        ok = 0 < float(m.group(1)) <= MAX_LINK_MULTIPLE
    elif (m := _RATE_BPS.match(v)) is not None:
        ok = 0 < float(m.group(1)) * _PREFIX[m.group(2)] <= MAX_BPS
    elif (m := _RATE_PPS.match(v)) is not None:
        ok = 0 < float(m.group(1)) <= MAX_PPS
    else:
        ok = False
    if not ok:
        raise ValueError(what)
    return v


def rate_pps(rate: str | int, frame_bytes: int, link_bps: float) -> float:
    """Packets/s on the wire of a checked rate (:func:`check_rate`) for frames of ``frame_bytes``
    (L2, as tc counts them) on links of ``link_bps``."""
    if isinstance(rate, int):
        return float(rate)
    if (m := _RATE_X.match(rate)) is not None:
        return float(m.group(1)) * link_bps / (frame_bytes * 8)
    if (m := _RATE_BPS.match(rate)) is not None:
        return float(m.group(1)) * _PREFIX[m.group(2)] / (frame_bytes * 8)
    if (m := _RATE_PPS.match(rate)) is not None:
        return float(m.group(1))
    raise ValueError(f"unchecked rate {rate!r}")

Dist = Literal["constant", "exponential", "pareto"]
#: Most flows one pattern may produce (all-to-all among n hosts makes n (n - 1)).
MAX_PATTERN_FLOWS = 64


class Pattern(StrictModel):
    """One congestion pattern (see the module doc)."""

    kind: Literal["pairs", "incast", "all-to-all", "on-off", "tcp-bulk"]
    src: list[str] = Field(default_factory=list, description="senders (pairs, incast, on-off, tcp-bulk)")
    dst: list[str] | str = Field(default_factory=list, description="receivers zipped with src; incast: one host")
    hosts: list[str] = Field(default_factory=list, description="the group of an all-to-all")
    protocol: Literal["UDP", "TCP"] | None = None
    payload_bytes: int | None = Field(None, ge=16, le=65000)
    rate: str | int | None = None
    ds_byte: int | None = Field(None, ge=0, le=255)
    start_delay_s: float | None = Field(None, ge=0, le=MAX_FLOOD_S)
    idt: Dist = "constant"
    size: Dist = "constant"
    shape: float = Field(1.5, gt=1, le=10, description="Pareto shape (idt or size pareto)")
    on_ms: float | None = Field(None, gt=0, le=3_600_000)
    off_ms: float | None = Field(None, gt=0, le=3_600_000)
    periods: Literal["constant", "exponential"] = "constant"

    @field_validator("rate", mode="before")
    @classmethod
    def _rate(cls, v: object) -> object:
        return v if v is None else check_rate(v)

    @model_validator(mode="after")
    def _shape(self) -> Pattern:
        if self.kind == "incast":
            if not isinstance(self.dst, str) and len(self.dst) != 1:
                raise SubFieldProblem(("dst",), "incast: one receiver (a host name)")
            if not self.src:
                raise SubFieldProblem(("src",), "incast: at least one sender")
        elif self.kind == "all-to-all":
            if len(self.hosts) < 2:
                raise SubFieldProblem(("hosts",), "all-to-all: a group of at least two hosts")
        else:
            dst = [self.dst] if isinstance(self.dst, str) else self.dst
            if not self.src or len(dst) != len(self.src):
                raise SubFieldProblem(("dst",), f"{self.kind}: src and dst lists of the same length "
                                                f"({len(self.src)} senders, {len(dst)} receivers)")
        if self.kind == "on-off" and (self.on_ms is None or self.off_ms is None):
            raise SubFieldProblem(("on_ms",), "on-off: on_ms and off_ms (milliseconds) are needed")
        if self.kind != "on-off" and (self.on_ms is not None or self.off_ms is not None):
            raise SubFieldProblem(("on_ms",), f"on_ms/off_ms belong to an on-off pattern, not {self.kind}")
        if self.kind == "tcp-bulk" and self.protocol == "UDP":
            raise SubFieldProblem(("protocol",), "tcp-bulk is TCP")
        return self

    def pairs(self) -> list[tuple[str, str, tuple[Any, ...], tuple[Any, ...]]]:
        """``(src, dst, src field location, dst field location)`` of every flow, in order."""
        if self.kind == "incast":
            one = self.dst if isinstance(self.dst, str) else self.dst[0]
            return [(s, one, ("src", i), ("dst",)) for i, s in enumerate(self.src)]
        if self.kind == "all-to-all":
            return [(a, b, ("hosts", i), ("hosts", j)) for i, a in enumerate(self.hosts)
                    for j, b in enumerate(self.hosts) if i != j]
        dst = [self.dst] if isinstance(self.dst, str) else self.dst
        return [(s, d, ("src", i), ("dst", i)) for i, (s, d) in enumerate(zip(self.src, dst, strict=True))]
