"""The embedded testbed: a whole cluster inside one Linux machine.

Every host of a topology is a network namespace with one interface ``eth0``; the switch is a Linux
bridge in its own namespace with one veth port per host, named after the Catalyst interface it
stands for; SPAN destination ports lead to a namespace where captures listen. Every link is
shaped to the topology's link rate with HTB at both ends (docs/DESIGN.md, "The embedded testbed").
The testbed as data (its names, ``build_plan``, shaping lines, HTB quantum) is the pure base module
:mod:`qoslab.testbedplan`, below this package and the others that name a testbed's parts.

- :mod:`.procs`: PIDs from /proc (namespace_pids, kill_pids, cpu ticks);
- :mod:`.statedir`: /run/qoslab (0700) and the per-testbed campaign lock;
- :mod:`.caps`: root, tools, tc capabilities, ``ip``/``tc`` batches;
- :mod:`.core`: :class:`Testbed` (``up``/``down``, executors of its hosts);
- :mod:`.probes`: status, saturation, ping matrix, iperf3.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .caps import REQUIRED_TC, Capabilities, probe_capabilities, require_root
    from .core import DownReport, Testbed, UpReport
    from .probes import PortStatus, TestbedStatus
    from .procs import list_namespaces, namespace_pids

_EXPORTS = {
    "REQUIRED_TC": ".caps", "Capabilities": ".caps", "probe_capabilities": ".caps", "require_root": ".caps",
    "DownReport": ".core", "Testbed": ".core", "UpReport": ".core",
    "PortStatus": ".probes", "TestbedStatus": ".probes",
    "list_namespaces": ".procs", "namespace_pids": ".procs",
}
__all__ = ["Capabilities", "DownReport", "PortStatus", "REQUIRED_TC", "Testbed", "TestbedStatus", "UpReport",
           "list_namespaces", "namespace_pids", "probe_capabilities", "require_root"]


def __getattr__(name: str) -> Any:
    """Lazy export of the package's public names (PEP 562)."""
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
