"""One package per platform CLI on the virtual switch, behind :class:`Dialect` (:mod:`.base`):

- :mod:`.catalyst3750`: ``c3750``, a Catalyst 3750 on IOS 12.2(55)SE;
- :mod:`.catalyst9300`: ``c9300``, a Catalyst 9300 on IOS-XE 17.x;
- :mod:`.ioscommon`: what both Catalyst dialects print alike (the IOS family's EXEC table,
  configuration displays, files, access lists, layer-2 tables).

Dialects are registered by name in :data:`qoslab.registry.dialects` (entry-point group
``qoslab.dialects``); :func:`get_dialect` gives one by name, :func:`dialect_for_model` the one a
topology's ``switch.model`` means. A new platform's CLI is one more package here (or in another
distribution) and one registration.
"""

from __future__ import annotations

from ...errors import ConfigError
from ...registry import dialects
from .base import Dialect, Reply, ShowContext


def get_dialect(name: str) -> Dialect:
    """The dialect registered as ``name`` (an instance). Raises ConfigError listing the known ones."""
    d = dialects.get(name)()
    if not isinstance(d, Dialect):
        raise ConfigError(f"dialect {name!r} is not a qoslab.vswitch.dialects.Dialect")
    return d


def dialect_for_model(model: str) -> Dialect:
    """The dialect whose ``model_prefixes`` claim ``model`` (a topology's ``switch.model``, e.g.
    ``WS-C3750G-24T`` -> ``c3750``, ``C9300-24T`` -> ``c9300``). Raises ConfigError for a model
    no registered dialect claims."""
    for name in dialects.names():
        d = get_dialect(name)
        if model.upper().startswith(d.model_prefixes):
            return d
    raise ConfigError(f"switch model {model!r}: no dialect of the virtual switch claims it "
                      f"(dialects: {', '.join(dialects.names())})")


__all__ = ["Dialect", "Reply", "ShowContext", "dialect_for_model", "get_dialect"]
