"""tests/clients/test_push_ownership.py on the virtual Arista 7280R3 (EOS 4.3x): the operator's
management access list, the SSH service ACL that uses it (EOS's counterpart of a VTY
``access-class``: ``management ssh`` / ``ip access-group``), SNMP and a foreign QoS policy-map on a
port survive ``qoslab switch push`` byte for byte; a conflicting ``service-policy`` is refused."""

from __future__ import annotations

from .test_push_ownership import (  # noqa: F401 - the tests run again here, with this module's settings
    conn,
    test_a_push_that_would_change_the_operators_config_is_refused_naming_the_line,
    test_foreign_config_survives_pushes_byte_for_byte,
)

SWITCH_MODEL = "DCS-7280SR3-48YC8"
SSH_PROFILE = "modern"
DEVICE_TYPE = "arista_eos"
FOREIGN = [
    "ip access-list MGMT-EXT", "permit tcp 192.0.2.0 0.0.0.255 any eq 22", "deny ip any any log", "exit",
    "management ssh", "ip access-group MGMT-EXT in", "exit", "snmp-server community public ro",
    "snmp-server location lab", "class-map type qos match-any VOICE", "match dscp 46", "exit",
    "policy-map type quality-of-service FOREIGN-PM", "class VOICE", "set traffic-class 5", "exit", "exit",
    "interface Ethernet10", "service-policy type qos input FOREIGN-PM", "exit"]
KEPT_BLOCKS = ["ip access-list MGMT-EXT\n   10 permit tcp 192.0.2.0/24 any eq 22\n   20 deny ip any any log\n",
               "management ssh\n   ip access-group MGMT-EXT in\n", "snmp-server community public ro\n",
               "policy-map type quality-of-service FOREIGN-PM\n   class VOICE\n      set traffic-class 5\n",
               "interface Ethernet10\n   service-policy type qos input FOREIGN-PM\n"]
CONFLICT = ["interface Ethernet1", "service-policy type qos input FOREIGN-PM", "exit"]
CONFLICT_SHOWN = "interface Ethernet1 / service-policy type qos input FOREIGN-PM"


def connect(sw, device_type: str):
    """Stock Netmiko (the 7280R3 speaks modern SSH)."""
    return sw.stock_netmiko(device_type)
