"""Issue 50, item 5: errors that were several lines or named the wrong cause, as one line naming
the device or file and the cause: an unreachable switch (Netmiko's six lines), an unknown host key,
capture refusals naming the file, a ``$...$`` unit in a figure, a store whose meta or a trial's
metrics_json is not JSON under ``campaign status``, a corrupt stats.json computed again (said so)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading

import pytest

from conftest import REPO
from qoslab.errors import QoslabError
from qoslab.switch.push import netmiko_cause

NETMIKO_TEXT = """TCP connection to device failed.

Common causes of this problem are:
1. Incorrect hostname or IP address.
2. Wrong TCP port.
3. Intermediate firewall blocking access.

Device settings: arista_eos 127.0.0.1:8024

"""


def test_netmikos_connection_text_is_one_short_line():
    assert netmiko_cause(NETMIKO_TEXT) == "TCP connection to device failed"
    assert netmiko_cause("Authentication to device failed.\n\nCommon causes of this problem are:\n1. Invalid") == \
        "Authentication to device failed"
    assert "\n" not in netmiko_cause("a\nb\n" * 200) and len(netmiko_cause("x" * 1000)) <= 160


def _qoslab(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qoslab", *argv], capture_output=True, text=True, cwd=REPO,
                          timeout=120, env={**os.environ, **(env or {})})


def _one_line(r: subprocess.CompletedProcess) -> str:
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode != 0 and "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr[-3000:]
    assert len(lines) == 1, r.stderr
    return lines[0]


LOGIN = {"QOSLAB_SWITCH_USERNAME": "u", "QOSLAB_SWITCH_PASSWORD": "p", "QOSLAB_SWITCH_SECRET": "s"}


def _device(tmp_path, port: int, known_hosts: str = "") -> str:
    kh = tmp_path / "known_hosts"
    kh.write_text(known_hosts)
    dev = tmp_path / "dev.yaml"
    dev.write_text(f"device: catalyst\nhost: 127.0.0.1\nport: {port}\nplatform: catalyst3750\nknown_hosts: {kh}\n"
                   "timeout_s: 5\nssh_profile: modern\n")
    return str(dev)


def test_switch_show_on_an_unreachable_switch_is_one_line(tmp_path):
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = _qoslab("switch", "show", "--device", _device(tmp_path, port), env=LOGIN)
    assert _one_line(r) == f"error: switch 127.0.0.1:{port}: unreachable (TCP connection to device failed)"


@pytest.fixture
def ssh_server():
    """An SSH server on loopback (asyncssh) with a fresh host key nobody has pinned; its port."""
    asyncssh = pytest.importorskip("asyncssh")
    loop = asyncio.new_event_loop()
    key = asyncssh.generate_private_key("ssh-ed25519")
    server = loop.run_until_complete(asyncssh.create_server(asyncssh.SSHServer, "127.0.0.1", 0,
                                                            server_host_keys=[key]))
    t = threading.Thread(target=loop.run_forever, daemon=True)
    t.start()
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        t.join(5)
        loop.close()


def test_an_unknown_host_key_is_one_line_naming_the_known_hosts_file(tmp_path, ssh_server):
    r = _qoslab("switch", "show", "--device", _device(tmp_path, ssh_server), env=LOGIN)
    line = _one_line(r)
    assert line.startswith(f"error: switch 127.0.0.1:{ssh_server}: REFUSED") and str(tmp_path / "known_hosts") in line


def test_capture_refusals_name_the_file_or_the_option(tmp_path):
    from qoslab.cli.capture import file_error
    assert file_error("/x/a.pcap", "record header\n cut") == "/x/a.pcap: record header cut"
    assert file_error("/x/a.pcap", "/x/a.pcap: bad") == "/x/a.pcap: bad"
    pcap = tmp_path / "a.pcap"
    pcap.write_bytes(b"\xd4\xc3\xb2\xa1\x02\x00\x04\x00" + bytes(8) + b"\xff\xff\x00\x00\x01\x00\x00\x00")
    blocker = tmp_path / "out-is-a-file"
    blocker.write_text("x")
    line = _one_line(_qoslab("capture", "classify", str(pcap), "--out", str(blocker)))
    assert line == f"error: --out {blocker}: exists and is not a folder"
    line = _one_line(_qoslab("capture", "classify", str(pcap), "--out", str(tmp_path / "o"), "--tunnel", "x"))
    assert line == "error: --tunnel: inner or outer, got 'x'"


def test_a_dollar_unit_is_drawn_as_text_not_mathtext(tmp_path):
    import matplotlib.pyplot as plt

    import qoslab.report.figures  # noqa: F401  (sets text.parse_math off for every report figure)
    fig, ax = plt.subplots()
    ax.set_ylabel("p99 $\\frac{ms")  # unbalanced mathtext: a five-line ValueError when parsed
    ax.set_title("cond $a$ vs $")
    fig.savefig(tmp_path / "f.png")
    plt.close(fig)
    assert (tmp_path / "f.png").stat().st_size > 0


@pytest.fixture
def folder(tmp_path):
    from test_campaign_folders import _campaign
    return _campaign(tmp_path)


@pytest.mark.parametrize("sql,what", [
    ("INSERT OR REPLACE INTO meta VALUES ('sequential', '{\"rule\": ')", "meta 'sequential' is not JSON"),
    ("UPDATE trials SET metrics_json = '[1, 2' WHERE idx = (SELECT MIN(idx) FROM trials)", "metrics_json is not JSON"),
    ("UPDATE trials SET metrics_json = '{\"set\": 1}' WHERE idx = (SELECT MIN(idx) FROM trials)",
     "metrics_json is not a metric set"),
])
def test_campaign_status_on_a_store_with_broken_json_is_one_line(folder, sql, what):
    db = sqlite3.connect(folder / "trials.sqlite")
    with db:
        n = db.execute(sql).rowcount
    db.close()
    assert n == 1
    line = _one_line(_qoslab("campaign", "status", str(folder)))
    assert line.startswith(f"error: {folder}/trials.sqlite: ") and what in line, line


def test_a_corrupt_stats_json_is_named_when_it_is_computed_again(tmp_path):
    from qoslab.report.notebook import _stale_stats
    s = tmp_path / "stats.json"
    assert _stale_stats(s, False) == "missing"
    s.write_text("{not json")
    assert _stale_stats(s, False).startswith("not JSON (")
    s.write_text("[1]")
    assert _stale_stats(s, False) == "not a statistics file (no JSON object)"
    s.write_text(json.dumps({"conditions": {}}))
    assert _stale_stats(s, False) == "of an older schema (no settings)"
    s.write_text(json.dumps({"settings": {}}))
    assert _stale_stats(s, False) is None and _stale_stats(s, True) == "without the metric block its trials declare"


def test_store_meta_not_json_is_a_qoslab_error(folder):
    from qoslab.campaign import Store
    db = sqlite3.connect(folder / "trials.sqlite")
    with db:
        db.execute("UPDATE meta SET value = 'x' WHERE key = 'seed'")
    db.close()
    with Store(folder / "trials.sqlite", readonly=True) as st, pytest.raises(QoslabError, match="meta 'seed'"):
        st.meta("seed")
