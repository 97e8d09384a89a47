"""The virtual switch: an SSH server speaking a platform's CLI (a Catalyst 3750 on IOS 12.2, a
Catalyst 9300 on IOS-XE) whose QoS configuration is compiled to tc and nftables on the embedded
testbed's switch ports.

The core is dialect-neutral:

- :mod:`.server`: the asyncssh server and :func:`serve` (IOS keys: ``?``, Ctrl-Z, Ctrl-C);
- :mod:`.sshprofile`: SSH algorithm profiles (each platform's live with its dialect);
- :mod:`.session`: one CLI session (modes, prompts, errors); :mod:`.fileprompt` (``file prompt``
  questions) and :mod:`.cli_help` (``?``), both pure;
- :mod:`.core`: :class:`VirtualSwitch` (running/startup config, applying the tc plan and
  the nftables ruleset, the kernel's readings);
- :mod:`.execparse`: pure: EXEC lines against a dialect's command table, output modifiers
  (``| include`` ...);
- :mod:`.archive`: pure: ``show archive config differences``, configure replace/merge;
- :mod:`.flash`: the ``flash:`` file system;
- :mod:`.tccompile`: pure: QoS model + topology -> tc plan (egress queues, WTD, SPAN);
- :mod:`.nftcompile`: pure: QoS model + topology -> nftables ruleset (marking, policing, trust);
- :mod:`.apply`: applying a tc plan and an nftables ruleset;
- :mod:`.counters`: the kernel's counters (nftables, tc, the bridge's MAC table) as plain data;
- :mod:`.facts`: pure: the plain data show renderers take (device facts, port views, counters).

What a platform prints and accepts is its dialect's (:mod:`.dialects`: one package per platform,
:mod:`.dialects.catalyst3750`, :mod:`.dialects.catalyst9300`, registered in
:data:`qoslab.registry.dialects`). The client side (pushing, device files, counters parsing) is
:mod:`qoslab.switch`.
"""

from __future__ import annotations

from .core import VirtualSwitch
from .server import ensure_identity, serve
from .session import IosSession

__all__ = ["IosSession", "VirtualSwitch", "ensure_identity", "serve"]
