"""Arista eAPI's JSON-RPC protocol (pure): a ``runCmds`` request checked and run command by
command through a CLI session, and the response or error object eAPI returns.

The protocol, as Arista's clients use it (pyeapi ``eapilib.EapiConnection.request``/``send``,
which NAPALM's ``eos`` driver calls; the ``arista.eos`` httpapi plugin's ``request_builder``)::

    POST /command-api   Content-Type: application/json-rpc   Authorization: Basic ...
    {"jsonrpc": "2.0", "method": "runCmds", "id": ID,
     "params": {"version": 1, "cmds": ["enable", {"cmd": "enable", "input": "PW"}, "show version"],
                "format": "json" | "text", "autoComplete": false, "expandAliases": false}}

The commands run in order in one new CLI session (privileged commands after ``enable``; config
commands after ``configure`` or ``configure session NAME``); the answer is
``{"jsonrpc": "2.0", "id": ID, "result": [R1, R2, ...]}`` with one object per command: the
command's JSON model (``{}`` for a command with no output) or ``{"output": TEXT}`` with ``format:
text``. The first command that fails ends the request with ``{"jsonrpc": "2.0", "id": ID,
"error": {"code": C, "message": "CLI command N of M 'CMD' failed: WHY", "data": [R1, ...,
{"errors": [TEXT]}]}}`` (code 1002: invalid command; 1003: the command has no JSON model). A
request that is not valid JSON-RPC gets JSON-RPC 2.0's own codes (-32700 parse error, -32600
invalid request, -32601 method not found, -32602 invalid params). Sources: Arista's eAPI
documentation ("Command API Guide", error codes), and what pyeapi's ``_parse_error_message``
reads back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

#: eAPI error codes (Command API Guide) and JSON-RPC 2.0's.
INVALID_COMMAND, UNCONVERTED, PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS = \
    1002, 1003, -32700, -32600, -32601, -32602
#: The most commands one request may carry, and the largest body read (bytes, 16 MiB; larger
#: bodies get HTTP 413): far above what a client sends (a whole config is a few thousand lines,
#: NAPALM's 4,000-entry ACL 400 KB), low enough that a hostile body costs little.
MAX_COMMANDS = 20000
#: The ``params`` keys eAPI takes (pyeapi sends version, cmds, format, autoComplete, expandAliases).
PARAMS = {"version", "cmds", "format", "autoComplete", "expandAliases", "timestamps", "includeErrorDetail"}
MAX_BODY = 16 << 20


class CommandFailed(Exception):
    """A command the CLI refused: ``code`` (1002 invalid, 1003 unconverted), ``why`` (the message's
    tail: ``invalid command``), ``errors`` (the CLI's lines, without EOS's ``% ``)."""

    def __init__(self, code: int, why: str, errors: list[str]) -> None:
        super().__init__(why)
        self.code, self.why, self.errors = code, why, errors


class CliSession(Protocol):
    """What eAPI needs of a CLI session: run one command in a format, close at the end."""

    def run(self, command: str, fmt: str, answer: str | None) -> Any:
        """The command's JSON model (``fmt`` json) or its text (``fmt`` text); ``answer``: what the
        command's prompt is answered with (``enable``'s password). Raises CommandFailed."""
        ...

    def close(self) -> None:
        """End the session (a pending configuration session is left as EOS leaves it)."""
        ...


@dataclass(frozen=True)
class Request:
    """A valid ``runCmds`` request: id, (command, input) pairs, format, version."""

    id: Any
    cmds: tuple[tuple[str, str | None], ...]
    fmt: str
    version: int | str


def _error(rid: Any, code: int, message: str, data: list[Any] | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def _params(rid: Any, p: Any) -> Request | dict[str, Any]:
    if not isinstance(p, dict):
        return _error(rid, INVALID_PARAMS, "Invalid params: params must be an object")
    unknown = set(p) - PARAMS
    if unknown:
        return _error(rid, INVALID_PARAMS, f"Invalid params: unexpected keyword argument '{sorted(unknown)[0]}'")
    version, fmt, cmds = p.get("version", 1), p.get("format", "json"), p.get("cmds")
    if version not in (1, "latest"):
        return _error(rid, INVALID_PARAMS, f"Invalid params: version {version!r} (1 or \"latest\")")
    if fmt not in ("json", "text"):
        return _error(rid, INVALID_PARAMS, f"Invalid params: format {fmt!r} (\"json\" or \"text\")")
    if not isinstance(cmds, list) or not 1 <= len(cmds) <= MAX_COMMANDS:
        return _error(rid, INVALID_PARAMS, f"Invalid params: cmds must be a list of 1-{MAX_COMMANDS} commands")
    out: list[tuple[str, str | None]] = []
    for i, c in enumerate(cmds):
        if isinstance(c, str):
            out.append((c, None))
        elif isinstance(c, dict) and isinstance(c.get("cmd"), str) and isinstance(c.get("input", ""), str) \
                and set(c) <= {"cmd", "input", "revision"}:
            out.append((c["cmd"], c.get("input")))
        else:
            return _error(rid, INVALID_PARAMS, f"Invalid params: cmds[{i}] must be a string or "
                                               "{\"cmd\": ..., \"input\": ...}")
    return Request(rid, tuple(out), fmt, version)


def parse_request(body: bytes) -> Request | dict[str, Any]:
    """The request in ``body``, or the JSON-RPC error object to answer with. Pure."""
    if len(body) > MAX_BODY:
        return _error(None, INVALID_REQUEST, f"Invalid Request: body over {MAX_BODY} bytes")
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return _error(None, PARSE_ERROR, "Parse error: the body is not JSON")
    if not isinstance(doc, dict):
        return _error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC request object")
    rid = doc.get("id")
    if isinstance(rid, (dict, list)):
        rid = None
    if doc.get("jsonrpc") != "2.0":
        return _error(rid, INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"")
    if doc.get("method") != "runCmds":
        return _error(rid, NO_METHOD, f"Method not found: {str(doc.get('method'))[:80]!r} (eAPI has runCmds)")
    return _params(rid, doc.get("params"))


def run_request(req: Request, session: CliSession) -> dict[str, Any]:
    """Run ``req``'s commands in order in ``session``: the response object, or the error object
    of the first command that fails (with the results before it). The session is closed."""
    results: list[Any] = []
    try:
        for n, (cmd, answer) in enumerate(req.cmds, 1):
            try:
                out = session.run(cmd, req.fmt, answer)
            except CommandFailed as e:
                msg = f"CLI command {n} of {len(req.cmds)} '{cmd}' failed: {e.why}"
                return _error(req.id, e.code, msg, results + [{"errors": e.errors}])
            results.append({"output": out} if req.fmt == "text" else out)
    finally:
        session.close()
    return {"jsonrpc": "2.0", "id": req.id, "result": results}
