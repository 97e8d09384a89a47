"""Cisco pyATS/Genie's parsers (``genie.libs.parser``, pinned in pyproject.toml's test extra) run
offline on text, as an operator's script runs them on a switch: a Genie ``Device`` of the
platform's OS (``ios`` for the 3750, ``iosxe`` with platform ``cat9k`` for the 9300, and model
``c9300`` where genieparser has 9300-only parsers) and ``device.parse(command, output=text)``.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

#: Genie device settings per qoslab platform: (os, platform, model).
GENIE = {"catalyst3750": ("ios", None, None), "catalyst9300": ("iosxe", "cat9k", None),
         "catalyst9300/c9300": ("iosxe", "cat9k", "c9300")}


def genie_device(which: str) -> Any:
    """A Genie device (no connection) for ``which`` (a key of :data:`GENIE`)."""
    warnings.filterwarnings("ignore", module="genie")
    logging.getLogger("genie").setLevel(logging.ERROR)
    from genie.conf.base import Device

    os_, platform, model = GENIE[which]
    d = Device(f"qoslab-{which.replace('/', '-')}", os=os_)
    order = ["os"]
    if platform:
        d.platform = platform
        order.append("platform")
    if model:
        d.model = model
        order.append("model")
    d.custom.setdefault("abstraction", {})["order"] = order
    return d


def parse(dev: Any, command: str, text: str) -> dict[str, Any]:
    """Genie's parse of ``text`` as the output of ``command``."""
    return dict(dev.parse(command, output=text))


def paths(d: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every key path of a nested dict (dict keys only, values left out)."""
    out: set[tuple[str, ...]] = set()
    if isinstance(d, dict):
        for k, v in d.items():
            out.add((*prefix, str(k)))
            out |= paths(v, (*prefix, str(k)))
    return out
