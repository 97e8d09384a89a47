"""tests/clients/test_acls.py against the virtual Catalyst 9300 (IOS-XE 17.x): the same forms
through Netmiko ``cisco_xe``, the same refusal, ``qoslab switch push`` after other clients'
edits, and Ansible ``ios_acls`` merged twice with sequence numbers (IOS-XE prints them in the
running-config, so cisco.ios compares the entries by number)."""

from __future__ import annotations

from .test_acls import (  # noqa: F401 - the tests run again here, with this module's settings
    conn,
    test_a_taken_sequence_number_is_refused_with_ios_message,
    test_ansible_ios_acls_merged_twice_is_a_noop,
    test_every_form_loads_and_reads_back_as_ios_prints_it,
    test_qoslab_push_works_after_other_clients_acl_edits,
)

SWITCH_MODEL = "C9300-24T"
DEVICE_TYPE = "cisco_xe"
ANSIBLE_SEQUENCES = True
