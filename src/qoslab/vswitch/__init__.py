"""The virtual Catalyst 3750: an SSH server speaking the IOS CLI whose QoS configuration is
compiled to tc and nftables on the embedded testbed's switch ports.

- :mod:`.server`: the asyncssh server and :func:`serve`;
- :mod:`.session`: one CLI session (modes, prompts, errors);
- :mod:`.catalyst`: :class:`VirtualCatalyst` (running/startup config, applying the tc plan and
  the nftables ruleset);
- :mod:`.show`: show commands in IOS format;
- :mod:`.tcapply`: applying a tc plan and an nftables ruleset;
- :mod:`.counters`: per-port QoS counters (nftables, tc) as plain data for the show commands.
"""

from __future__ import annotations

from .catalyst import VirtualCatalyst
from .server import ensure_identity, serve
from .session import IosSession

__all__ = ["IosSession", "VirtualCatalyst", "ensure_identity", "serve"]
