"""The virtual Catalyst 3750: an SSH server speaking the IOS CLI whose QoS configuration is
compiled to tc and nftables on the embedded testbed's switch ports.

- :mod:`.server`: the asyncssh server and :func:`serve` (IOS keys: ``?``, Ctrl-Z, Ctrl-C);
- :mod:`.sshprofile`: the SSH algorithms announced per dialect (a 3750 on 12.2(55)SE by default);
- :mod:`.session`: one CLI session (modes, prompts, errors); :mod:`.fileprompt` (``file prompt``
  questions) and :mod:`.cli_help` (``?``), both pure;
- :mod:`.core`: :class:`VirtualCatalyst` (running/startup config, applying the tc plan and
  the nftables ruleset);
- :mod:`.execparse`: pure: EXEC commands and output modifiers (``| include`` ...);
- :mod:`.archive`: pure: ``show archive config differences``, configure replace/merge;
- :mod:`.show`: show commands in IOS format, from the renderers :mod:`.show_mqc` (policy-map
  counters), :mod:`.show_sys` (version, inventory, dir, privilege), :mod:`.show_l2` and
  :mod:`.show_ports` (MAC table, ARP, CDP/LLDP, env, SNMP, switchport, counters, CPU), all pure, and
  :mod:`qoslab.ios.show_qos` (the ``mls qos`` model and its renderers);
- :mod:`.flash`: the ``flash:`` file system;
- :mod:`.tccompile`: pure: QoS model + topology -> tc plan (egress queues, WTD, SPAN);
- :mod:`.nftcompile`: pure: QoS model + topology -> nftables ruleset (marking, policing, trust);
- :mod:`.apply`: applying a tc plan and an nftables ruleset;
- :mod:`.counters`: per-port QoS counters (nftables, tc) as plain data for the show commands.

The client side (pushing, device files, counters parsing) is :mod:`qoslab.switch`.
"""

from __future__ import annotations

from .core import VirtualCatalyst
from .server import ensure_identity, serve
from .session import IosSession

__all__ = ["IosSession", "VirtualCatalyst", "ensure_identity", "serve"]
