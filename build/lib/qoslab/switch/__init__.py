"""The switch, client side: what qoslab does to a Catalyst 3750, real or virtual, over SSH.

- :mod:`.device`: the endpoint (:class:`Device`: host, port, credentials, host key) and the
  generated credentials of the virtual switch;
- :mod:`.backends`: the :class:`SwitchDevice` protocol and its backends ``virtual`` (the
  embedded testbed's virtual Catalyst) and ``catalyst`` (a real switch from a device file),
  registered in :data:`qoslab.registry.switches`; :func:`open_switch`;
- :mod:`.push`: pushing a profile with Netmiko (backup, remediation diff, verify, save, roll back);
- :mod:`.ownership` and :mod:`.ownrecord`: pure: what a push owns (issue 49).

Below it: the platform drivers (:mod:`qoslab.platforms`, with the counters read through TextFSM,
:mod:`qoslab.platforms.counters`) and the QoS config diff (:mod:`qoslab.ios.configdiff`: intended
config, hier-config remediation, IOS ordering).

The virtual Catalyst's server side lives in :mod:`qoslab.vswitch`; nothing here imports it
(tests/unit/test_architecture.py). Names are imported lazily, so importing one module of the
package does not load Netmiko or the others.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .backends import SwitchDevice, device_kind, open_switch
    from .device import Credentials, Device
    from .push import PushError, PushReport, push

_EXPORTS = {
    "Device": ".device", "Credentials": ".device",
    "SwitchDevice": ".backends", "open_switch": ".backends", "device_kind": ".backends",
    "PushReport": ".push", "PushError": ".push", "push": ".push",
}
__all__ = ["Credentials", "Device", "PushError", "PushReport", "SwitchDevice", "device_kind", "open_switch", "push"]


def __getattr__(name: str) -> Any:
    """Lazy export of the package's public names (PEP 562)."""
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
