"""The IOS configuration language of a Catalyst 3750, as far as QoS needs it.

- :mod:`.grammar`: tokens, command templates per mode, :class:`IosError` (the caret);
- :mod:`.acl`: access lists (:class:`AccessList` of :class:`Ace` entries; grammar :mod:`.aclparse`,
  keywords :mod:`.aclnames`, config lines :mod:`.aclinterp`);
- :mod:`.config`: :class:`RunningConfig` (``show running-config``) and :class:`Mode`;
- :mod:`.interpret`: :func:`interpret` (one config line) and :func:`load_config` (a whole text);
  :mod:`.lineinterp`: the console and vty lines (``access-class``, ``login``, ``transport``);
- :mod:`.linekeys`: which setting a QoS line sets (what the push's ownership check compares);
- :mod:`.qoswalk`: which lines of a running-config are QoS on a platform (any platform's
  ``QosRules``), the one walk that classifies them, the split;
- :mod:`.configdiff`: the QoS part of a running-config: the intended config, the hier-config
  remediation in IOS's order (what the push sends);
- :mod:`.qosmodel`: :func:`qos_model`, the QoS meaning of a config (:mod:`.qos`: Catalyst 3750
  ``mls qos`` with its defaults; :mod:`.mqc`: IOS-XE MQC).

All of it is pure: no I/O, no processes.
"""

from __future__ import annotations

from . import (
                  aclinterp,  # registers the access-list handlers  # noqa: F401
                  lineinterp,  # registers the console and vty line handlers  # noqa: F401
)
from .acl import AccessList, Ace, ace_text
from .aclparse import parse_ace
from .config import Mode, RunningConfig, Section
from .grammar import GLOBAL, MODES, IosError
from .interpret import interpret, load_config
from .qos import (
                  DEFAULT_DSCP_OUTPUT_QUEUE,
                  ClassMap,
                  InterfaceQos,
                  Police,
                  PolicyClass,
                  QosConfig,
)
from .qosmodel import qos_model
from .xeinterp import xe_pmapc_line  # registers the IOS-XE handlers  # noqa: F401

__all__ = ["DEFAULT_DSCP_OUTPUT_QUEUE", "GLOBAL", "MODES", "AccessList", "Ace", "ClassMap",
           "InterfaceQos", "IosError", "Mode", "Police", "PolicyClass", "QosConfig", "RunningConfig", "Section",
           "ace_text", "interpret", "load_config", "parse_ace", "qos_model"]
