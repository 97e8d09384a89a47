"""Parsing of rates and sizes as written in topology and flood files.

Rates are returned in bits/s (int), sizes in bytes (int). Decimal SI prefixes for rates
(k = 10^3, M = 10^6, G = 10^9), as tc and switch datasheets use them.
"""

from __future__ import annotations

import math
import re

_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:bit|bps|b)?(?:/s)?\s*$", re.IGNORECASE | re.ASCII)
_SIZE = re.compile(r"^\s*(\d+)\s*(b|kb|kib|mb|mib)?\s*$", re.IGNORECASE | re.ASCII)
_RATE_MULT = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_SIZE_MULT = {"": 1, "b": 1, "kb": 1000, "kib": 1024, "mb": 10**6, "mib": 1024**2}


def parse_rate(value: float | str) -> int:
    """Parse a link or traffic rate to bits/s.

    Accepts a number (already bits/s) or a string like ``"50Mbit"``, ``"50 Mbit/s"``, ``"1G"``,
    ``"100mbps"``. Raises ValueError for anything else, for a rate <= 0 and for an infinite or
    NaN one (``.inf``, ``.nan``, a string of 400 digits).
    """
    if isinstance(value, bool):
        raise ValueError(f"not a rate: {value!r}")
    if isinstance(value, (int, float)):
        number = float(value)
    else:
        m = _RATE.match(value)
        if not m:
            raise ValueError(f"not a rate: {value!r} (write e.g. 50Mbit, 1Gbit, 100000000)")
        number = float(m.group(1)) * _RATE_MULT[m.group(2).lower()]
    if not math.isfinite(number):
        raise ValueError(f"not a finite rate: {str(value)[:40]!r}")
    bits = int(value) if isinstance(value, int) else int(number)
    if bits <= 0:
        raise ValueError(f"rate must be positive, got {value!r}")
    return bits


def parse_size(value: int | str) -> int:
    """Parse a buffer size to bytes: an int, or ``"128KiB"``, ``"64kb"``, ``"2MiB"``.

    Raises ValueError for anything else or for a size <= 0.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int):
        size = value
    else:
        m = _SIZE.match(str(value))
        if not m:
            raise ValueError(f"not a size: {value!r} (write e.g. 131072, 128KiB, 2MiB)")
        size = int(m.group(1)) * _SIZE_MULT[(m.group(2) or "").lower()]
    if size <= 0:
        raise ValueError(f"size must be positive, got {value!r}")
    return size


def format_rate(bits_per_s: float) -> str:
    """Human form of a rate in bits/s, e.g. ``50.0 Mbit/s``."""
    for unit, mult in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bits_per_s >= mult:
            return f"{bits_per_s / mult:.1f} {unit}"
    return f"{bits_per_s:.0f} bit/s"
