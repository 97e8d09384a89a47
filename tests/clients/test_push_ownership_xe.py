"""tests/clients/test_push_ownership.py on the virtual Catalyst 9300 (IOS-XE 17.x): the operator's
configuration survives ``qoslab switch push`` byte for byte, as IOS-XE prints it (sequence
numbers, DSCP names); a conflicting ``service-policy`` on a profile port is refused."""

from __future__ import annotations

from .test_push_ownership import (  # noqa: F401 - the tests run again here, with this module's settings
    conn,
    test_a_push_that_would_change_the_operators_config_is_refused_naming_the_line,
    test_foreign_config_survives_pushes_byte_for_byte,
)

SWITCH_MODEL = "C9300-24T"
DEVICE_TYPE = "cisco_xe"
KEPT_BLOCKS = ["ip access-list extended MGMT-EXT\n 10 permit tcp 192.0.2.0 0.0.0.255 any eq 22\n"
               " 20 deny   ip any any log\n", "line vty 0 4\n access-class MGMT-EXT in\n login\n",
               "snmp-server community public RO\n", "policy-map FOREIGN-PM\n class FOREIGN-CM\n  set dscp ef\n",
               "interface GigabitEthernet1/0/10\n service-policy input FOREIGN-PM\n"]
CONFLICT = ["interface GigabitEthernet1/0/1", "service-policy input FOREIGN-PM", "exit"]
CONFLICT_SHOWN = "interface GigabitEthernet1/0/1 / service-policy input FOREIGN-PM"
