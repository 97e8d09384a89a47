"""The Arista EOS configuration language, as far as QoS needs it (pure: no I/O, no processes).

Below both the EOS platform driver (:mod:`qoslab.platforms.arista_eos`, which checks every line
it renders here) and the virtual EOS switch (which keeps its running-config here):

- :mod:`.names`: interface names, and qoslab's neutral port names <-> EOS's;
- :mod:`.grammar`: the template matcher and EOS's errors (:class:`EosError`);
- :mod:`.commands`: the config commands per mode, the prompts;
- :mod:`.acl`: IP access list entries;
- :mod:`.config`: :class:`EosConfig` and its ``show running-config`` form;
- :mod:`.interpret`: :func:`interpret` (one line) and :func:`load_config` (a text).
"""

from __future__ import annotations

from .config import DEFAULT_COS_TC, DEFAULT_DSCP_TC, EosConfig, Interface, Monitor
from .grammar import EosError
from .interpret import Mode, interpret, load_config
from .names import eos_port, interface_name, neutral_port, short_name

__all__ = ["DEFAULT_COS_TC", "DEFAULT_DSCP_TC", "EosConfig", "EosError", "Interface", "Mode", "Monitor", "eos_port",
           "interface_name", "interpret", "load_config", "neutral_port", "short_name"]
