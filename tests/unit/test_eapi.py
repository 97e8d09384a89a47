"""The eAPI endpoint (issue 44): the JSON-RPC ``runCmds`` protocol as pyeapi (NAPALM's ``eos``
transport) and Ansible's ``arista.eos`` httpapi build it, eAPI's error objects as pyeapi reads
them back, hostile request bodies, and the HTTPS server (basic auth, 401/404/405) driven by the
real pyeapi client over loopback with a scripted CLI session."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.request

import pytest

from qoslab.switch.device import Credentials
from qoslab.vswitch.eapi import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    MAX_BODY,
    NO_METHOD,
    PARSE_ERROR,
    CommandFailed,
    Request,
    parse_request,
    run_request,
)
from qoslab.vswitch.eapiserver import PATH, ensure_certificate, start_eapi

pyeapi = pytest.importorskip("pyeapi")


class Script:
    """A CLI session that answers ``enable``, ``show version`` and config lines, refuses the rest."""

    opened = 0

    def __init__(self) -> None:
        Script.opened += 1
        self.ran: list[tuple[str, str, str | None]] = []
        self.closed = False

    def run(self, command: str, fmt: str, answer: str | None):
        self.ran.append((command, fmt, answer))
        if command in ("enable", "configure terminal", "hostname leaf2"):
            return {} if fmt == "json" else ""
        if command == "show version":
            return {"modelName": "DCS-7280SR3-48YC8", "version": "4.32.2F"} if fmt == "json" else "Arista\n"
        if command == "show clock":
            raise CommandFailed(1003, "unconverted command", ["unconverted command"])
        raise CommandFailed(1002, "invalid command", [f"Invalid input (at token 0: '{command.split()[0]}')"])

    def close(self) -> None:
        self.closed = True


def test_pyeapi_and_ansible_requests_parse():
    body = pyeapi.eapilib.EapiConnection().request(["enable", {"cmd": "enable", "input": "pw"}, "show version"],
                                                   "json", reqid="7", autoComplete=True)
    req = parse_request(body.encode())
    assert req == Request("7", (("enable", None), ("enable", "pw"), ("show version", None)), "json", 1)
    from ansible_collections.arista.eos.plugins.httpapi.eos import request_builder

    req2 = parse_request(request_builder(["show hostname"], "text", "latest").encode())
    assert isinstance(req2, Request) and req2.fmt == "text" and req2.version == "latest"


@pytest.mark.parametrize(("body", "code", "text"), [
    (b"{not json", PARSE_ERROR, "Parse error"),
    (b"\xff\xfe", PARSE_ERROR, "Parse error"),
    (b"[" * 100000 + b"]" * 100000, PARSE_ERROR, "Parse error"),
    (b"[1, 2]", INVALID_REQUEST, "not a JSON-RPC request object"),
    (b'{"jsonrpc": "1.0", "method": "runCmds", "id": 1}', INVALID_REQUEST, "jsonrpc must be"),
    (b'{"jsonrpc": "2.0", "method": "rm -rf", "id": 1}', NO_METHOD, "Method not found"),
    (b'{"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": []}', INVALID_PARAMS, "params must be an object"),
    (b'{"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"cmds": ["a"], "frob": 1}}', INVALID_PARAMS,
     "unexpected keyword argument 'frob'"),
    (b'{"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"cmds": ["a"], "version": 2}}', INVALID_PARAMS,
     "version 2"),
    (b'{"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"cmds": ["a"], "format": "xml"}}', INVALID_PARAMS,
     "format 'xml'"),
    (b'{"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"cmds": []}}', INVALID_PARAMS, "cmds must be"),
    (b'{"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"cmds": "show version"}}', INVALID_PARAMS,
     "cmds must be"),
    (b'{"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"cmds": [{"cmd": 5}]}}', INVALID_PARAMS,
     "cmds[0] must be"),
    (b'{"jsonrpc": "2.0", "method": "runCmds", "id": 1, "params": {"cmds": ["a", {"cmd": "b", "x": 1}]}}',
     INVALID_PARAMS, "cmds[1] must be"),
    (b" " * (MAX_BODY + 1), INVALID_REQUEST, "body over"),
])
def test_hostile_bodies_get_json_rpc_errors(body, code, text):
    err = parse_request(body)
    assert isinstance(err, dict) and err["jsonrpc"] == "2.0"
    assert err["error"]["code"] == code and text in err["error"]["message"]


def test_run_request_results_and_the_error_object_pyeapi_reads():
    s = Script()
    out = run_request(Request(3, (("enable", None), ("show version", None)), "text", 1), s)
    assert out == {"jsonrpc": "2.0", "id": 3, "result": [{"output": ""}, {"output": "Arista\n"}]} and s.closed
    s = Script()
    err = run_request(Request("x", (("enable", None), ("show vresion", None), ("show version", None)), "json", 1), s)
    assert err["error"] == {"code": 1002, "message": "CLI command 2 of 3 'show vresion' failed: invalid command",
                            "data": [{}, {"errors": ["Invalid input (at token 0: 'show')"]}]}
    assert [r[0] for r in s.ran] == ["enable", "show vresion"] and s.closed  # nothing after the failure ran
    code, msg, errs, output = pyeapi.eapilib.EapiConnection()._parse_error_message(err)
    assert code == 1002 and "failed: invalid command" in msg and "Invalid input" in errs and output[0] == {}
    err = run_request(Request(1, (("show clock", None),), "json", 1), Script())
    assert err["error"]["code"] == 1003 and err["error"]["message"].endswith("failed: unconverted command")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    d = tmp_path_factory.mktemp("eapi")
    cert, key = ensure_certificate(d, "leaf1")
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    loop = asyncio.new_event_loop()
    started: dict = {}
    ready = threading.Event()

    async def main():
        runner = await start_eapi(Script, Credentials("admin", "pw", "s"), "127.0.0.1", 0, cert, key, asyncio.Lock())
        started["port"] = runner.addresses[0][1]
        started["runner"] = runner
        ready.set()

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(main())
        loop.run_forever()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert ready.wait(10)
    yield started["port"]
    asyncio.run_coroutine_threadsafe(started["runner"].cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    t.join(10)


def _node(port: int, password: str = "pw"):
    return pyeapi.connect(transport="https", host="127.0.0.1", port=port, username="admin", password=password,
                          return_node=True)


def test_pyeapi_runs_commands_over_https(server):
    n = _node(server)
    assert n.enable(["show version"])[0]["result"]["modelName"] == "DCS-7280SR3-48YC8"
    assert n.run_commands(["show version"], encoding="text") == [{"output": "Arista\n"}]
    with pytest.raises(pyeapi.eapilib.CommandError, match=r"\[1002\].*'show vresion' failed: invalid command"):
        n.run_commands(["show vresion"])
    assert n.config(["hostname leaf2"]) == [{}]


def test_wrong_credentials_get_401_with_a_basic_challenge(server):
    with pytest.raises(pyeapi.eapilib.ConnectionError, match="Unauthorized"):
        _node(server, "wrong").enable(["show version"])
    import ssl

    ctx = ssl._create_unverified_context()
    req = urllib.request.Request(f"https://127.0.0.1:{server}{PATH}", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, context=ctx, timeout=10)
    assert e.value.code == 401 and e.value.headers["WWW-Authenticate"].startswith("Basic")


@pytest.mark.parametrize(("method", "path", "status"), [("PUT", PATH, 405), ("POST", "/explorer", 404)])
def test_other_methods_and_paths(server, method, path, status):
    import base64
    import ssl

    req = urllib.request.Request(f"https://127.0.0.1:{server}{path}", method=method,
                                 data=b"{}" if method == "POST" else None,
                                 headers={"Authorization": "Basic " + base64.b64encode(b"admin:pw").decode()})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, context=ssl._create_unverified_context(), timeout=10)
    assert e.value.code == status


def test_a_hostile_body_over_https_gets_a_parse_error(server):
    import base64
    import ssl

    req = urllib.request.Request(f"https://127.0.0.1:{server}{PATH}", data=b"\x00\xff{{{", method="POST",
                                 headers={"Authorization": "Basic " + base64.b64encode(b"admin:pw").decode()})
    with urllib.request.urlopen(req, context=ssl._create_unverified_context(), timeout=10) as r:
        doc = json.loads(r.read())
    assert doc["error"]["code"] == PARSE_ERROR
