"""The eAPI endpoint of the virtual Arista 7280R3 as clients reach it (issue 49), the real
``qoslab switch serve`` process with its EOS CLI sessions: runCmds bodies of 1 KB to 8 MB (a
configuration's long lines) parse and run every time, 20 tries each size, written in pieces; a
body over the limit gets 413; ``HEAD /command-api`` (ANTA's reachability check) is answered 200
with the switch's credentials and 401 without; no Python/aiohttp ``Server`` banner; pyeapi and a
4,000-entry access list pushed through a configuration session, 5 times."""

from __future__ import annotations

import json

import pytest

from httpwire import read_response, tls
from qoslab.vswitch.eapi import MAX_BODY

SWITCH_MODEL = "DCS-7280SR3-48YC8"
SSH_PROFILE = "modern"
EAPI = True


def _auth(sw) -> str:
    import base64

    return "Basic " + base64.b64encode(f"{sw.username}:{sw.password}".encode()).decode()


def _post(sw, body: bytes, pieces: int = 8, method: str = "POST", auth: bool = True):
    import time

    with tls(sw.eapi_port) as s:
        s.sendall((f"{method} /command-api HTTP/1.1\r\nHost: switch\r\nContent-Type: application/json-rpc\r\n"
                   f"Content-Length: {len(body)}\r\n" + (f"Authorization: {_auth(sw)}\r\n" if auth else "") +
                   "Connection: close\r\n\r\n").encode())
        step = max(1, -(-len(body) // pieces))
        for i in range(0, len(body), step):
            s.sendall(body[i:i + step])
            time.sleep(0.005)
        return read_response(s)


def _config_body(size: int) -> tuple[bytes, int]:
    n = max(1, size // 1010)
    cmds = ["enable", "configure"] + ["! " + "x" * 998] * n + ["end", "show version"]
    doc = {"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"version": 1, "cmds": cmds, "format": "json"}}
    return json.dumps(doc).encode(), len(cmds)


@pytest.mark.parametrize("size", [1 << 10, 64 << 10, 1 << 20, 8 << 20])
def test_bodies_of_1kb_to_8mb_parse_and_run_every_time(vswitch, size):
    body, n = _config_body(size)
    for _ in range(20):
        status, headers, out = _post(vswitch, body)
        doc = json.loads(out)
        assert status == 200 and "error" not in doc, doc.get("error")
        assert len(doc["result"]) == n and doc["result"][-1]["modelName"] == SWITCH_MODEL
        assert headers["server"] == "nginx"


def test_over_the_limit_413_head_answered_no_banner(vswitch):
    with tls(vswitch.eapi_port) as s:
        s.sendall((f"POST /command-api HTTP/1.1\r\nHost: switch\r\nAuthorization: {_auth(vswitch)}\r\n"
                   f"Content-Length: {MAX_BODY + 1}\r\n\r\n").encode())
        assert read_response(s)[0] == 413
    status, headers, body = _post(vswitch, b"", method="HEAD")
    assert status == 200 and body == b""
    assert _post(vswitch, b"", method="HEAD", auth=False)[0] == 401
    assert all("python" not in v.lower() and "aiohttp" not in v.lower() for v in headers.values())


def test_pyeapi_pushes_a_4000_entry_access_list_every_time(vswitch):
    pyeapi = pytest.importorskip("pyeapi")
    node = pyeapi.connect(transport="https", host=vswitch.host, port=vswitch.eapi_port, username=vswitch.username,
                          password=vswitch.password, return_node=True, timeout=120)
    node.enable_authentication(vswitch.secret)
    entries = [f"{10 * (i + 1)} permit udp host 198.18.{i // 250}.{i % 250 + 1} any eq {1024 + i}"
               for i in range(4000)]
    for n in range(5):
        node.config([f"ip access-list BIG{n}", *entries])
        acl = node.run_commands(["show running-config"], encoding="text")[0]["output"]
        assert f"ip access-list BIG{n}\n" in acl and "   40000 permit udp host 198.18.15.250 any eq 5023" in acl
    node.config([f"no ip access-list BIG{n}" for n in range(5)])


def test_control_bytes_sent_over_eapi_are_dropped_from_a_description(vswitch):
    pyeapi = pytest.importorskip("pyeapi")
    node = pyeapi.connect(transport="https", host=vswitch.host, port=vswitch.eapi_port, username=vswitch.username,
                          password=vswitch.password, return_node=True)
    node.enable_authentication(vswitch.secret)
    node.config(["interface Ethernet3", "description \x1b[31mUPLINK\x1b[0m\x07 to\x00 spine\x1b]0;owned\x07"])
    run = node.run_commands(["show running-config"], encoding="text")[0]["output"]
    assert "interface Ethernet3\n   description UPLINK to spine\n" in run
    assert not any(ord(c) < 32 and c != "\n" for c in run)


def test_pyeapi_reads_ports_from_show_running_config_all(vswitch):
    """pyeapi reads ``show running-config all``, which lists the defaults: the ports are up
    (``no shutdown``) switched access ports in VLAN 1 (before: every port read as shut down,
    ``switchports.getall()`` raised AttributeError); ``ip routing`` is taken."""
    pyeapi = pytest.importorskip("pyeapi")
    node = pyeapi.connect(transport="https", host=vswitch.host, port=vswitch.eapi_port, username=vswitch.username,
                          password=vswitch.password, return_node=True)
    node.enable_authentication(vswitch.secret)
    eth1 = node.api("interfaces").get("Ethernet1")
    assert eth1["shutdown"] is False and eth1["description"] in (None, "", "UPLINK to spine")
    ports = node.api("switchports").getall()
    assert ports["Ethernet1"]["mode"] == "access" and ports["Ethernet1"]["access_vlan"] == "1"
    assert ports["Ethernet2"]["trunk_allowed_vlans"] == "1-4094"
    node.config(["ip routing"])
    assert "\nip routing\n" in node.run_commands(["show running-config"], encoding="text")[0]["output"]
    node.config(["no ip routing"])
