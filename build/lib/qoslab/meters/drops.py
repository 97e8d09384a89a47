"""A captured trial's packet accounting as store columns (``capture_*``), read from the capture's
summary.json ``drops`` block.

Two layouts are read (``capture/README.md``):

- the accounted capture (dumpcap or pcap4j engine): ``received``, ``captured``,
  ``dropped_kernel``, ``dropped_interface``, ``dropped_own``, ``dropped_total``, ``lossless``;
- the older pcap4j capture: ``pcap_received``, ``pcap_dropped`` (kernel ring full),
  ``pcap_dropped_by_interface``; it had no own drops (it classified inline) and no captured count.

Columns (packets; NULL when the trial had no capture or the summary does not say):
``capture_received`` (what the kernel handed to the capture), ``capture_drops`` (all drops: kernel +
interface + own), ``capture_drops_kernel``, ``capture_drops_interface``, ``capture_drops_own``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .base import BaseMeter, TrialContext

#: The per-trial columns (name -> SQL type), for the store's ADDED_COLUMNS.
COLUMNS = {"capture_received": "INTEGER", "capture_drops": "INTEGER", "capture_drops_kernel": "INTEGER",
           "capture_drops_interface": "INTEGER", "capture_drops_own": "INTEGER"}

#: column -> the summary fields that can hold it, newest layout first
_SOURCES = {"capture_received": ("received", "pcap_received"),
            "capture_drops_kernel": ("dropped_kernel", "pcap_dropped"),
            "capture_drops_interface": ("dropped_interface", "pcap_dropped_by_interface"),
            "capture_drops_own": ("dropped_own",)}


def _int(v: Any) -> int | None:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def drop_columns(summary: dict | None) -> dict[str, int | None]:
    """The ``capture_*`` columns of a capture summary (see the module doc); all None for no
    summary or a summary without a ``drops`` block (an offline classification). ``capture_drops``
    is the summary's ``dropped_total`` when given, else the sum of the parts it has. Pure."""
    d = (summary or {}).get("drops")
    if not isinstance(d, dict):
        return dict.fromkeys(COLUMNS)
    out: dict[str, int | None] = {}
    for col, keys in _SOURCES.items():
        out[col] = next((v for k in keys if (v := _int(d.get(k))) is not None), None)
    parts = [out[c] for c in ("capture_drops_kernel", "capture_drops_interface", "capture_drops_own")]
    total = _int(d.get("dropped_total"))
    out["capture_drops"] = total if total is not None else (
        sum(p for p in parts if p is not None) if any(p is not None for p in parts) else None)
    return {c: out[c] for c in COLUMNS}


class CaptureDropsMeter(BaseMeter):
    """The live capture's packet accounting (this module): what the kernel handed it and what
    was dropped where. Pure over ``ctx.capture_summary``."""

    COLUMNS: ClassVar[Mapping[str, str]] = COLUMNS

    def columns(self, ctx: TrialContext) -> dict[str, Any]:
        """The ``capture_*`` columns (None without a capture)."""
        return drop_columns(ctx.capture_summary)
