"""The embedded testbed: a whole cluster inside one Linux machine.

Every host of a topology is a network namespace with one interface ``eth0``; the switch is a Linux
bridge in its own namespace with one veth port per host, named after the Catalyst interface it
stands for; SPAN destination ports lead to a namespace where captures listen. Every link is
shaped to the topology's link rate with HTB at both ends (DESIGN.md, "The embedded testbed").

- :mod:`qoslab.netplan`: the pure plan (names, ``build_plan``, shaping lines);
- :mod:`.caps`: root, tools, tc capabilities, ``ip``/``tc`` batches;
- :mod:`.core`: :class:`Testbed` (``up``/``down``, executors of its hosts);
- :mod:`.probes`: status, saturation, ping matrix, iperf3.
"""

from __future__ import annotations

from ..procs import list_namespaces, namespace_pids
from .caps import REQUIRED_TC, Capabilities, probe_capabilities, require_root
from .core import DownReport, Testbed, UpReport
from .probes import PortStatus, TestbedStatus

__all__ = ["REQUIRED_TC", "Capabilities", "DownReport", "PortStatus", "Testbed", "TestbedStatus", "UpReport",
           "list_namespaces", "namespace_pids", "probe_capabilities", "require_root"]
