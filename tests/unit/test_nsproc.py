"""The UDP receive-queue reader of the flood's drain (:mod:`qoslab.testbed.nsproc`): a real
``/proc/net/udp`` table parsed, and tables that are not one refused naming the file and line.

The table below is written here in the kernel's format (net/ipv4/udp.c ``udp4_format_sock``,
the header line of ``udp4_seq_show``; the values are made up: a receiver's socket holding two
1400-byte datagrams, ``rx_queue`` 0x1200 = 4608 bytes of allocated memory, and an idle DNS stub
socket); the running kernel's own table is parsed too, and the integration test
``test_a_datagram_its_receiver_has_not_read_holds_the_drain`` reads a real socket's queue."""

from __future__ import annotations

import pytest

from qoslab.errors import QoslabError
from qoslab.testbed.nsproc import queued_bytes

HEADER = ("   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref "
          "pointer drops            ")
TABLE = "\n".join([
    HEADER,
    "  101: 0112C6C6:2328 00000000:0000 07 00000000:00001200 00:00000000 00000000     0        0 51023 2 "
    "00000000b8d2c1e5 0         ",
    "  205: 3500007F:0035 00000000:0000 07 00000000:00000000 00:00000000 00000000   101        0 17002 2 "
    "000000004f6a93c1 0         ",
]) + "\n"


def test_the_receive_queues_of_a_table_are_summed():
    assert queued_bytes(TABLE) == 0x1200
    assert queued_bytes(HEADER + "\n") == 0  # no socket: nothing to read


def test_the_running_kernels_own_table_parses():
    with open("/proc/net/udp", encoding="ascii") as fh:
        assert queued_bytes(fh.read()) >= 0


@pytest.mark.parametrize("text, where", [
    ("", "no rx_queue column"),
    ("garbage\n", "no rx_queue column"),
    (HEADER + "\n  101: 0112C6C6:2328 00000000:0000 07\n", "line 2"),
    (HEADER + "\n  101: 0112C6C6:2328 00000000:0000 07 00000000:zz 00:00000000\n", "line 2"),
    (TABLE + "  7: truncated\n", "line 4"),
])
def test_a_table_that_is_not_one_is_refused_naming_the_line(text, where):
    with pytest.raises(QoslabError, match=where) as e:
        queued_bytes(text, "/proc/net/udp of qoslab-x-jp-2")
    assert "/proc/net/udp of qoslab-x-jp-2" in str(e.value)
