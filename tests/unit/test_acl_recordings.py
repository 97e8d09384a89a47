"""Access lists recorded on real switches (tests/data/acl-recordings/, sources in its README):
the virtual switch loads each and prints it back as the real switch printed it, on the dialect
the recording came from (IOS-XE: numbers in the running-config; IOS 12.2: none)."""

from __future__ import annotations

from conftest import REPO
from qoslab.ios import RunningConfig, load_config

DATA = REPO / "tests" / "data" / "acl-recordings"


def _lists(text: str) -> list[str]:
    """The access-list lines of a ``show running-config partition access-list``."""
    return [line for line in text.splitlines() if line.startswith((" ", "ip access-list", "access-list"))]


def test_ios_xe_recording_loads_and_prints_back_byte_for_byte():
    text = (DATA / "iosxe-running-config-partition-access-list.txt").read_text()
    rc = RunningConfig.factory("Switch", ["Gi1/0/1"], "c9300")
    assert load_config(text, rc) == []
    assert rc.acl_lines() == _lists(text)


def test_classic_ios_recording_loads_as_a_3750_prints_it():
    text = (DATA / "ios-running-config-partition-access-list.txt").read_text()
    rc = RunningConfig.factory("Switch", ["Gi1/0/1"])
    errors = load_config(text, rc)
    assert [e.line.split(": ", 1)[1] for e in errors] == [  # time-range is not emulated
        "permit tcp 10.1.6.16 0.0.0.3 host 10.3.139.134 range 13001 13191 log time-range test",
        "access-list 101 permit tcp host 10.1.1.1 eq ftp any eq tacacs log time-range test"]
    printed = rc.acls["sample"].config_lines(seqs=False)
    recorded = _lists(text)
    start = recorded.index("ip access-list extended sample")
    want = [line for line in recorded[start:start + len(printed) + 1] if "time-range" not in line]
    assert printed == want
    # the lines the template's authors edited: what IOS prints for them
    assert rc.acls["199"].config_lines(seqs=False) == ["access-list 199 permit tcp host 10.16.5.19 any eq www",
                                                       "access-list 199 permit udp any any eq 1000"]
    assert rc.acls["97"].config_lines(seqs=False) == [line for line in _lists(text) if line.startswith("access-list 97 ")]
    assert rc.acls["stdacl"].config_lines(seqs=False) == ["ip access-list standard stdacl", " permit 10.1.1.1"]
