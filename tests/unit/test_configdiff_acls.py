"""The push's diff (qoslab.ios.configdiff) over access lists that other clients changed: the
remediation, typed into the virtual switch's interpreter line by line, must give the intended
configuration on both platforms, whatever sequence numbers, remarks and forms the switch holds
(issue 43: after a duplicate entry every ``qoslab switch push`` failed with DuplicateChildError)."""

from __future__ import annotations

import pytest

from qoslab.ios import Mode, RunningConfig, interpret
from qoslab.ios.configdiff import canonical_acls, normalized_config, remediation
from qoslab.portnames import expand_ports

PORTS = expand_ports("Gi1/0/1-4")

#: What a profile wants (as the profile renderer writes it: no numbers, port numbers).
WANT = ["ip access-list extended rmi", " permit tcp any any eq 1099", " permit tcp any eq 1099 any",
        " permit tcp any any eq 80", "access-list 112 permit ip host 198.18.0.1 host 198.18.0.2",
        "access-list 112 permit ip host 198.18.0.1 host 198.18.0.3", "class-map match-all rmi",
        " match access-group name rmi", "policy-map p", " class rmi", "  set dscp 40"]

#: What other clients left on the switch before the push (typed as they type it).
CLIENT_EDITS = {
    "nothing": [],
    "inserted entry": ["ip access-list extended rmi", "15 permit udp any any eq 9", "exit"],
    "remarks twice": ["ip access-list extended rmi", "remark rmi registry", "remark rmi registry", "exit"],
    "renumbered": ["ip access-list resequence rmi 7 3"],
    "entry removed": ["ip access-list extended rmi", "no 20", "exit"],
    "same entry again": ["ip access-list extended rmi", "40 permit tcp any any eq 1099", "exit"],
    "numbered list changed": ["access-list 112 permit ip host 198.18.0.9 host 198.18.0.2"],
    "extra list": ["ip access-list standard mgmt", "permit 10.0.0.1", "exit"],
}


def _apply(rc: RunningConfig, lines: list[str]) -> None:
    mode = Mode()
    for line in lines:
        mode = interpret(rc, mode, line)


@pytest.mark.parametrize("dialect", ["c3750", "c9300"])
@pytest.mark.parametrize("edit", sorted(CLIENT_EDITS))
def test_the_remediation_typed_into_the_switch_gives_the_intended_config(dialect, edit):
    rc = RunningConfig.factory("Switch", PORTS, dialect)
    _apply(rc, [line.strip() for line in WANT])
    _apply(rc, CLIENT_EDITS[edit])
    want_rc = RunningConfig.factory("Switch", PORTS, dialect)
    _apply(want_rc, [line.strip() for line in WANT])
    intended = want_rc.render()
    lines = remediation(rc.render(), intended)
    _apply(rc, [line.strip() for line in lines])
    assert normalized_config(rc.render()) == normalized_config(intended), lines
    # entry order too (normalized_config is a set): the switch evaluates entries in order
    assert rc.acls["rmi"].aces() == want_rc.acls["rmi"].aces()
    assert remediation(rc.render(), intended) == []  # and a second push sends nothing


def test_one_form_for_every_way_of_writing_an_entry():
    old = "ip access-list extended a\n remark x\n deny   tcp any any eq www\naccess-list 10 permit host 10.0.0.1\n"
    xe = "ip access-list extended a\n 10 remark x\n 10 deny tcp any any eq 80\naccess-list 10 permit 10.0.0.1\n"
    assert canonical_acls(old) == canonical_acls(xe) == (
        "ip access-list extended a\n deny tcp any any eq www\naccess-list 10 permit 10.0.0.1\n")


def test_a_config_with_a_line_twice_is_a_clear_error_not_a_traceback():
    from qoslab.errors import QoslabError

    with pytest.raises(QoslabError, match="a line twice in one section"):
        remediation("policy-map p\n class c\n  set dscp 40\n  set dscp 40\n", "policy-map p\n")
