"""qoslab: network QoS experiment toolkit for cluster traffic.

Components (one module each): ``topology`` (topology files), ``executor`` (run commands on a
node), ``testbed`` (the embedded namespace testbed), and the CLI in ``cli``.
"""

__version__ = "0.1.0"
